# SPDX-License-Identifier: Apache-2.0
# Ctrl-C in the middle of a run, and memory over 10^5 submits.
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import streampipe as sp

CHILD = textwrap.dedent("""
    import os, signal, sys, threading, time
    import numpy as np
    import streampipe as sp

    # Ctrl-C's handler, even when this test runs with SIGINT ignored (a background job's
    # children inherit that, and Python then installs no handler of its own).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    running = threading.Event()

    def slow(x, out):
        running.set()
        time.sleep(0.001)
        out[:] = x

    backend = sys.argv[1]
    n, size = (20000, 1 << 18) if backend == "gpu" else (20000, 16)
    op = sp.ops.affine(1.0, 0.0) if backend == "gpu" else sp.ops.from_function(slow, np.float32)
    before = threading.active_count()
    e = sp.Engine(op, backend=backend, lanes=2, depth=1, batch_items=1)
    x, out = np.ones(size, np.float32), np.empty(size, np.float32)

    def interrupt_once_running():
        if backend == "gpu":
            while e._core is None:  # map() has planned and started the engine
                time.sleep(0.001)
            time.sleep(1.0)
        else:
            running.wait()
            time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends

    threading.Thread(target=interrupt_once_running, daemon=True).start()
    try:
        e.map([x] * n, out=[out] * n)
        print("finished before the interrupt", flush=True)
    except KeyboardInterrupt:
        stats = e.drain()
        e.close()
        time.sleep(0.2)
        assert stats["submitted"] < n, stats  # it stopped submitting: items never sent are not run
        assert stats["done"] + stats["failed"] + stats["cancelled"] == stats["submitted"], stats
        assert threading.active_count() == before, (threading.active_count(), before)
        print("interrupted", stats, flush=True)
        raise
""")


def _interrupt(backend):
    r = subprocess.run([sys.executable, "-c", CHILD, backend], capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def test_ctrl_c_cancels_cleanly_and_raises_keyboard_interrupt():
    code, out, err = _interrupt("host")
    assert "interrupted" in out, err
    assert "KeyboardInterrupt" in err
    assert code != 0


@pytest.mark.gpu
def test_ctrl_c_on_the_gpu_leaves_nothing_running():
    code, out, err = _interrupt("gpu")
    assert "interrupted" in out, err
    assert "KeyboardInterrupt" in err and code != 0


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _leak_slope(backend, total=100_000, chunk=10_000):
    """RSS growth per 10^5 submits, measured after a warm-up chunk."""
    x = np.ones(256, np.float32)
    outs = [np.empty(256, np.float32) for _ in range(64)]
    samples = []
    with sp.Engine(sp.ops.affine(2.0, 1.0), backend=backend, lanes=4, depth=2, batch_items=1,
                   record_timeline=False) as e:
        for k in range(total // chunk + 1):
            futures = [e.submit(x, out=outs[i % 64]) for i in range(chunk)]
            e.drain()
            assert all(f.done() and f.exception() is None for f in futures)
            del futures
            samples.append(_rss_bytes())
    grown = samples[-1] - samples[1]  # samples[0] is the warm-up
    return grown * 100_000 / (total - chunk)


def test_100k_submits_leave_rss_flat_on_the_host_backend():
    slope = _leak_slope("host")
    assert slope < 8 << 20, f"RSS grew {slope / 2**20:.1f} MiB per 10^5 submits"


@pytest.mark.gpu
def test_100k_submits_leave_rss_and_pinned_memory_flat_on_the_gpu():
    slope = _leak_slope("gpu")
    assert slope < 8 << 20, f"RSS grew {slope / 2**20:.1f} MiB per 10^5 submits"
    free_before, _ = sp.device_memory(0)
    _leak_slope("gpu", total=20_000)
    free_after, _ = sp.device_memory(0)
    assert abs(free_before - free_after) < 64 << 20

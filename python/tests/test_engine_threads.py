# SPDX-License-Identifier: Apache-2.0
# One engine, several Python threads. close() from another thread while map(), submit() or
# drain() runs: the call in progress ends with a full result or ValueError("the engine is
# closed"), the items it submitted run to their end, and nothing crashes or hangs (the loops
# run in a child process with a time limit, so that a crash or a hang fails the test instead
# of the whole run). Threads that start, or map on, one engine at once.
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import streampipe as sp

STRESS = """
import re, sys, threading, time
import numpy as np, streampipe as sp

call, iterations = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(int(sys.argv[3]))
n = 300
xs = [np.full(16, k, np.float32) for k in range(n)]
want = [2 * x + 1 for x in xs]

def slow(x, out):
    if x[0] % 50 == 0:
        time.sleep(0.0005)  # some items hold a lane, so a close() finds work in flight
    out[:] = 2 * x + 1

# How long a whole call takes here: the close() comes anywhere from its start to past its end.
with sp.Engine(sp.ops.from_function(slow, np.float32), backend="host") as probe:
    probe.map(xs)
    t0 = time.perf_counter()
    probe.map(xs)
    span = time.perf_counter() - t0

outcomes = {"full": 0, "closed": 0, "closed before": 0}
for it in range(iterations):
    op = sp.ops.affine(2.0, 1.0) if it % 2 else sp.ops.from_function(slow, np.float32)
    e = sp.Engine(op, backend="host", lanes=int(rng.integers(1, 4)))
    if rng.random() < 0.8:
        e.map(xs[:1])  # started; else the close() may come while map() starts it
    delay = float(rng.uniform(0, 1.5 * span))
    closer = threading.Thread(target=lambda: (time.sleep(delay), e.close()))
    outs = [np.zeros(16, np.float32) for _ in range(n)]
    futures = []
    closer.start()
    try:
        if call == "map":
            ys = e.map(xs, out=outs)
            assert all(y is o for y, o in zip(ys, outs))
        else:
            for x, o in zip(xs, outs):
                futures.append(e.submit(x, out=o))
            if call == "drain":
                e.drain()
            for f, o in zip(futures, outs):
                assert f.result(timeout=60) is o
        done = n
        outcomes["full"] += 1
    except ValueError as ex:
        message = str(ex)
        assert message.startswith("the engine is closed"), message
        m = re.search(r"its first (\\d+) of (\\d+) items", message)
        if m:
            done = int(m.group(1))
            assert int(m.group(2)) == n and done < n, message
            outcomes["closed"] += 1
        else:  # closed before the call (or the item) reached the engine
            done = len(futures)
            for f in futures:
                f.result(timeout=60)  # every item submitted resolves
            outcomes["closed before"] += 1
    closer.join(60)
    assert not closer.is_alive(), "close() hung"
    for k in range(done):
        assert (outs[k] == want[k]).all(), (it, k, outs[k])
    for k in range(done, n):
        assert not outs[k].any(), (it, k, "an item not submitted was run")
    assert e._closed
print(outcomes, flush=True)
"""


def run_stress(call, iterations, seed, timeout=240):
    try:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(STRESS), call, str(iterations), str(seed)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"hung for {timeout} s:\nstdout: {e.stdout}\nstderr: {e.stderr}")


@pytest.mark.parametrize("call", ["map", "submit", "drain"])
def test_close_from_another_thread_at_random_moments(call):
    r = run_stress(call, 150, seed=11)
    assert r.returncode == 0, f"exit {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}"
    outcomes = eval(r.stdout.strip().splitlines()[-1])  # the child's own dict
    assert sum(outcomes.values()) == 150
    if call == "map":
        # Both ends seen: maps that finished and maps that the close() stopped midway.
        assert outcomes["full"] > 0 and outcomes["closed"] > 0, outcomes


def host_engine(op=None, **kw):
    return sp.Engine(op or sp.ops.affine(2.0, 1.0), backend="host", **kw)


def test_map_stopped_by_close_reports_how_far_it_got():
    started, go = threading.Event(), threading.Event()

    def gated(x, out):
        if x[0] == 5:
            started.set()
            go.wait(30)  # the close() comes while item 5 runs
        out[:] = x

    e = host_engine(sp.ops.from_function(gated, np.float32), lanes=1, depth=1, batch_items=1)
    xs = [np.full(4, k, np.float32) for k in range(400)]
    outs = [np.zeros(4, np.float32) for _ in xs]
    closer = threading.Thread(target=lambda: (started.wait(30), e.close()))
    closer.start()
    # The close() waits for this map(); the map() ends once item 5 may finish.
    threading.Timer(0.3, go.set).start()
    with pytest.raises(ValueError, match=r"the engine is closed: close\(\) was called while map\(\) ran; "
                                         r"its first (\d+) of 400 items") as info:
        e.map(xs, out=outs)
    closer.join(30)
    done = int(info.value.args[0].split("its first ")[1].split(" ")[0])
    assert 5 < done < 400
    for k in range(done):
        np.testing.assert_array_equal(outs[k], k)
    assert not any(o.any() for o in outs[done:])
    with pytest.raises(ValueError, match="the engine is closed"):
        e.map(xs)


def test_two_threads_mapping_on_one_engine_each_get_their_own_results():
    with host_engine(lanes=2) as e:
        e.map([np.ones(4, np.float32)])
        results = {}

        def run(tag):
            xs = [np.full(8, 1000 * tag + k, np.float32) for k in range(300)]
            results[tag] = (xs, [e.map(xs) for _ in range(5)])

        threads = [threading.Thread(target=run, args=(tag,)) for tag in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        for xs, runs in results.values():
            for ys in runs:
                for x, y in zip(xs, ys):
                    np.testing.assert_array_equal(y, 2 * x + 1)
        assert len(results) == 2


def test_threads_starting_one_engine_at_once_share_it():
    e = host_engine()
    barrier = threading.Barrier(4)
    cores, outputs = [], []

    def run(k):
        barrier.wait()
        outputs.append((k, e.map([np.full(4, k, np.float32)])[0]))
        cores.append(e._core)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(cores) == 4 and all(c is cores[0] for c in cores)
    for k, y in outputs:
        np.testing.assert_array_equal(y, 2 * k + 1)
    assert e.drain()["submitted"] == 4
    e.close()

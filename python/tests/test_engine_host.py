# SPDX-License-Identifier: Apache-2.0
# The engine from Python on the host backend: what it returns, how it fails, how it stops.
import asyncio
import concurrent.futures
import json
import threading

import numpy as np
import pytest

import streampipe as sp
from streampipe import _core


def host_engine(op=None, **kw):
    return sp.Engine(op or sp.ops.affine(2.0, 1.0), backend="host", **kw)


def test_map_returns_every_output_in_order():
    xs = [np.arange(1000, dtype=np.float32) + k for k in range(50)]
    with host_engine() as e:
        ys = e.map(xs)
    assert len(ys) == 50
    for x, y in zip(xs, ys):
        np.testing.assert_array_equal(y, 2 * x + 1)


def test_map_fills_given_outputs():
    xs = [np.full((4, 8), k, np.float32) for k in range(6)]
    outs = [np.zeros((4, 8), np.float32) for _ in xs]
    with host_engine() as e:
        ys = e.map(xs, out=outs)
    assert all(y is o for y, o in zip(ys, outs))
    assert all((o == 2 * k + 1).all() for k, o in enumerate(outs))


def test_gray_takes_rgb_and_gives_one_byte_per_pixel():
    rgb = np.random.default_rng(1).integers(0, 256, (16, 24, 3), dtype=np.uint8)
    with host_engine(sp.ops.gray()) as e:
        (g,) = e.map([rgb])
    ref = (rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114)
    assert g.shape == (16, 24) and g.dtype == np.uint8
    assert np.abs(g.astype(int) - ref).max() <= 1


@pytest.mark.parametrize("bad, what", [
    (np.zeros(8, np.float64), "takes float32, not float64"),
    (np.zeros((8, 2), np.float32)[:, 0], "not C-contiguous"),
    (np.zeros(0, np.float32), "empty"),
])
def test_bad_items_raise_value_error_naming_the_item(bad, what):
    good = np.zeros(8, np.float32)
    with host_engine() as e:
        with pytest.raises(ValueError, match=f"item 2: .*{what}"):
            e.map([good, good, bad])


def test_wrong_output_shape_names_the_item():
    with host_engine(sp.ops.gray()) as e:
        with pytest.raises(ValueError, match=r"item 0: gray takes \(\.\.\., 3\)"):
            e.map([np.zeros((4, 4), np.uint8)])
        with pytest.raises(ValueError, match=r"item 0: the output must be \(4, 4\) uint8"):
            e.map([np.zeros((4, 4, 3), np.uint8)], out=[np.zeros((4, 5), np.uint8)])


def test_submit_gives_futures_with_results_and_item_details():
    x = np.arange(64, dtype=np.float32)
    with host_engine() as e:
        futures = [e.submit(x + k, label=f"x{k}") for k in range(20)]
        stats = e.drain()
        assert stats["submitted"] == 20 and stats["done"] == 20
        for k, f in enumerate(futures):
            np.testing.assert_array_equal(f.result(timeout=10), 2 * (x + k) + 1)
            assert f.item.ok and f.item.label == f"x{k}" and f.item.lane >= 0


def test_futures_are_awaitable_from_asyncio():
    x = np.ones(32, np.float32)

    async def main(e):
        return await asyncio.gather(*(e.submit(x * k) for k in range(8)))

    with host_engine() as e:
        ys = asyncio.run(main(e))
    assert [float(y[0]) for y in ys] == [2 * k + 1 for k in range(8)]


def test_on_complete_runs_once_per_item_and_may_fail_without_losing_results(monkeypatch):
    import sys
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda args: reported.append(args.exc_value))
    seen = []
    lock = threading.Lock()

    def callback(item):
        with lock:
            seen.append(item.index)
        if item.index == 3:
            raise RuntimeError("a broken callback")

    x = np.ones(16, np.float32)
    with host_engine(on_complete=callback) as e:
        futures = [e.submit(x) for _ in range(10)]
        e.drain()
    assert sorted(seen) == list(range(10))
    assert all(f.result(timeout=10)[0] == 3 for f in futures)
    assert [str(e) for e in reported] == ["a broken callback"]


def test_a_failing_host_function_fails_its_item_with_its_own_exception():
    def host(x, out):
        if x[0] == 5:
            raise KeyError("five")
        out[:] = x

    op = sp.ops.from_function(host, np.float32, name="picky")
    xs = [np.full(4, k, np.float32) for k in range(8)]
    with host_engine(op) as e:
        futures = [e.submit(x) for x in xs]
        e.drain()
        with pytest.raises(KeyError, match="five"):
            futures[5].result(timeout=10)
        assert futures[4].result(timeout=10)[0] == 4
        with pytest.raises(KeyError):
            e.map(xs)


def test_cancel_resolves_every_future():
    gate = threading.Event()

    def slow(x, out):
        gate.wait(10)
        out[:] = x

    op = sp.ops.from_function(slow, np.float32)
    with host_engine(op, lanes=1, depth=1) as e:
        futures = [e.submit(np.ones(4, np.float32))]
        e.cancel()
        gate.set()
        e.drain()
    for f in futures:
        assert f.done()
    with pytest.raises(concurrent.futures.CancelledError):
        e2 = host_engine(op)
        e2.cancel()
        e2.submit(np.ones(4, np.float32)).result(timeout=10)


def test_report_timeline_and_exports():
    xs = [np.ones(1 << 12, np.float32)] * 16
    with host_engine() as e:
        e.map(xs)
        rep = e.report()
        assert rep.items == 16 and rep.wall_ms > 0 and rep.bottleneck
        stages = {r.stage for r in e.timeline()}
        assert "compute" in stages
        trace = json.loads(e.trace_json())
        assert trace["traceEvents"]
        assert e.gantt_svg().lstrip().startswith("<")


def test_a_device_only_operation_is_refused_on_the_host_backend():
    k = sp.ElementwiseKernel("const float* x, float* y", "y[i] = x[i]")
    op = sp.ops.from_elementwise(k, np.float32)
    with pytest.raises(ValueError, match="no host form"):
        sp.Engine(op, backend="host")


def test_closed_engine_refuses_work():
    e = host_engine()
    e.map([np.ones(4, np.float32)])
    e.close()
    with pytest.raises(ValueError, match="closed"):
        e.submit(np.ones(4, np.float32))


def test_a_last_partly_filled_batch_is_sent_by_map_and_by_drain():
    # 10 items in batches of 4: the last batch holds 2 and must not wait for more.
    xs = [np.full(16, k, np.float32) for k in range(10)]
    with host_engine(batch_items=4, lanes=2) as e:
        done = concurrent.futures.ThreadPoolExecutor(1).submit(e.map, xs)
        ys = done.result(timeout=30)
        assert [float(y[0]) for y in ys] == [2 * k + 1 for k in range(10)]
        futures = [e.submit(x) for x in xs[:3]]
        drained = concurrent.futures.ThreadPoolExecutor(1).submit(e.drain)
        assert drained.result(timeout=30)["done"] == 13
        assert all(f.done() for f in futures)


def test_simulated_devices_share_the_items_and_each_result_names_its_device():
    xs = [np.full(20000, k, np.float32) for k in range(60)]
    with host_engine(devices=[0, 1, 2], lanes=1, depth=1) as e:
        futures = [e.submit(x) for x in xs]
        e.drain()
        results = [f.item for f in futures]
        records = e.timeline()
    assert e.devices == [0, 1, 2]
    assert {r.device for r in results} <= {0, 1, 2}
    assert len({r.device for r in results}) > 1
    for k, f in enumerate(futures):
        np.testing.assert_array_equal(f.result(), 2 * xs[k] + 1)
    assert {r.device for r in records if r.stage == "compute"} == {r.device for r in results}


def test_devices_must_be_a_list_of_indices():
    with pytest.raises(ValueError, match="devices"):
        host_engine(devices=[0, -1])
    with pytest.raises(ValueError, match="devices"):
        host_engine(devices=["0"])


def test_python_options_default_to_the_libraries_engine_options():
    """Python binds EngineOptions itself: an engine made with nothing given runs C++'s
    defaults (the planner's knobs aside)."""
    e = sp.Engine(sp.ops.affine(2.0, 1.0))
    cpp = _core.EngineOptions()
    for name in ("backend", "devices", "cpu_lanes", "depth", "use_graphs", "in_order", "host_threads",
                 "record_timeline", "simulate_gpus", "rerun_on_device_loss", "expected_items", "gpu_start_ms",
                 "gpu_stop_ms", "lanes", "batch_items", "batch_bytes", "staging_bytes"):
        assert getattr(e._options, name) == getattr(cpp, name), name
    assert cpp.backend == "auto" and cpp.devices == []  # the CPU and every GPU, as in C++


def test_the_cpu_beside_simulated_gpus_shares_the_items():
    xs = [np.full(20000, k, np.float32) for k in range(80)]
    with sp.Engine(sp.ops.affine(2.0, 1.0), devices=[0, 1], simulate_gpus=True, lanes=1, cpu_lanes=1, depth=1) as e:
        ys = e.map(xs)
        report = e.device_report(wait=True)
    for k, y in enumerate(ys):
        np.testing.assert_array_equal(y, 2 * xs[k] + 1)
    assert [d.device for d in report] == ["cpu", 0, 1]
    assert all(d.state == "ready" for d in report), report
    assert sum(d.items for d in report) == len(xs)
    # What the scheduler measured, per kind of work (Python's items are all kind 0).
    assert all(len(d.ms_per_unit) == 4 and d.ms_per_unit[1:] == (0.0, 0.0, 0.0) for d in report), report
    assert any(d.ms_per_unit[0] > 0 for d in report), report
    assert e.backend == "auto"


def test_plan_reason_repr_and_describe_say_what_the_engine_is():
    e = sp.Engine(sp.ops.gray())  # the default backend: on a machine without a GPU, the host's
    assert "not started" in e.plan_reason and "not started" in repr(e)
    with e:
        e.map([np.zeros((4, 4, 3), np.uint8)])
        assert e.plan_reason, "the docs print plan_reason: it must say something on every backend"
        if sp.device_count() == 0:
            assert e.plan_reason.startswith("not planned: no usable GPU") and "lanes" in e.plan_reason
        r = repr(e)
        assert r.startswith("<streampipe.Engine gray, backend=") and "running, 1 submitted>" in r
    assert repr(e).endswith("closed, 1 submitted>")
    with host_engine(lanes=2, depth=3, batch_items=1) as h:
        h.map([np.zeros(4, np.float32)])
        assert h.plan_reason == "all given: lanes 2, depth 3, batch_items 1"
        assert repr(h).startswith("<streampipe.Engine affine") and "backend='host' (the CPU)" in repr(h)
    with host_engine() as h:
        h.map([np.zeros(4, np.float32)])
        assert h.plan_reason.startswith("not planned: the host backend; the library's defaults: lanes ")
    assert sp.Engine.describe.__doc__ and "lanes" in sp.Engine.describe.__doc__


def test_gpus_never_looked_for_are_said_to_be_left_out():
    """The CPU and every GPU, none named: without a GPU the search finds none and says why;
    with one it is looked for, and nothing is said. Named (simulated) GPUs report their own."""
    e = sp.Engine(sp.ops.affine(2.0, 1.0))
    assert e.gpus_left_out == ""  # not started
    with e:
        e.map([np.zeros(1000, np.float32)])
        e.device_report(wait=True)
        why = e.gpus_left_out
    if sp.device_count() == 0:
        assert why.startswith("no usable GPU") or "no NVIDIA driver found" in why, why
    else:
        assert why == "", why
    with sp.Engine(sp.ops.affine(2.0, 1.0), devices=[0], simulate_gpus=True) as s:
        s.map([np.zeros(1000, np.float32)])
        assert s.gpus_left_out == ""

# SPDX-License-Identifier: Apache-2.0
# Engine.map over mixed kinds of arrays (the C++ fast path for plain numpy arrays, the
# package's description for the rest), and its contract now that items are submitted while
# later ones are still being prepared.
import array
import threading
import time

import numpy as np
import pytest

import streampipe as sp


def host_engine(op=None, **kw):
    return sp.Engine(op or sp.ops.affine(2.0, 1.0), backend="host", **kw)


class Sub(np.ndarray):
    """A numpy subclass: not the fast path's exact type."""


def test_numpy_pinned_subclass_and_buffer_objects_mix_in_one_call():
    xs = [np.full(64, k, np.float32) for k in range(8)]
    readonly = xs[5].copy()
    readonly.flags.writeable = False  # an input may be read-only
    inputs = [xs[0], sp.pinned_copy(xs[1]), array.array("f", xs[2].tolist()), xs[3].view(Sub),
              memoryview(xs[4]), readonly, xs[6], sp.pinned_copy(xs[7])]
    outs = [np.zeros(64, np.float32), sp.pinned_empty(64, np.float32), array.array("f", [0.0] * 64),
            np.zeros(64, np.float32).view(Sub), None, None, array.array("f", [0.0] * 64), None]
    with host_engine() as e:
        ys = e.map(inputs, out=outs)
        again = e.map(inputs)  # every output allocated: numpy arrays, whatever the input
    for k, y in enumerate(ys):
        if outs[k] is not None:
            assert y is outs[k]
        np.testing.assert_array_equal(np.asarray(y, np.float32), 2 * k + 1)
    for k, y in enumerate(again):
        assert type(y) is np.ndarray and y.shape == (64,) and y.dtype == np.float32
        np.testing.assert_array_equal(y, 2 * k + 1)


def test_plain_numpy_items_skip_the_python_description():
    xs = [np.full(32, k, np.float32) for k in range(6)]
    inputs = [xs[0], xs[1].view(Sub), xs[2], array.array("f", xs[3].tolist()), xs[4], xs[5]]
    outs = [None, None, np.zeros(32, np.float32), None, np.zeros(32, np.float32).view(Sub), np.zeros(32, np.float32)]
    with host_engine() as e:
        e.map(xs[:1])  # started: map() no longer describes the first item itself
        described = []
        prepare = e._prepare_span
        e._prepare_span = lambda k, a, o: described.append(k) or prepare(k, a, o)
        ys = e.map(inputs, out=outs)
        assert described == [1, 3, 4]  # the subclass, the array.array, the subclass output
        e.map(xs + [sp.pinned_copy(x) for x in xs])
        assert described == [1, 3, 4]
    for k, y in enumerate(ys):
        np.testing.assert_array_equal(np.asarray(y), 2 * k + 1)


def test_every_distinct_input_shape_gets_its_own_output():
    # More distinct shapes than the fast path remembers in one call, and repeats of each.
    shapes = [(h, 5 + h % 3, 3) for h in range(1, 25)] * 2
    rng = np.random.default_rng(2)
    imgs = [rng.integers(0, 256, s, dtype=np.uint8) for s in shapes]
    with host_engine(sp.ops.gray()) as e:
        grays = e.map(imgs)
        want = [e.map([i])[0] for i in imgs]
    for s, g, w in zip(shapes, grays, want):
        assert g.shape == s[:2] and g.dtype == np.uint8
        np.testing.assert_array_equal(g, w)


def test_a_non_contiguous_item_is_refused_by_index_after_the_items_before_it_ran():
    xs = [np.full(8, k, np.float32) for k in range(10)]
    xs[6] = np.zeros((8, 2), np.float32)[:, 0]
    outs = [np.zeros(8, np.float32) for _ in xs]
    with host_engine() as e:
        with pytest.raises(ValueError, match="item 6: the input is not C-contiguous"):
            e.map(xs, out=outs)
        for k in range(6):
            np.testing.assert_array_equal(outs[k], 2 * k + 1)  # submitted before item 6: run
        for k in range(6, 10):
            assert not outs[k].any()  # never submitted
        assert e.drain()["submitted"] == 6 and "6 submitted" in repr(e)
        ys = e.map(xs[:6])  # the engine goes on: nothing was cancelled
        np.testing.assert_array_equal(ys[5], 11)


@pytest.mark.parametrize("index", [0, 3])
def test_a_read_only_output_is_refused_by_index(index):
    xs = [np.ones(16, np.float32) for _ in range(5)]
    outs = [np.zeros(16, np.float32) for _ in xs]
    outs[index].flags.writeable = False
    with host_engine() as e:
        with pytest.raises(ValueError, match=f"item {index}: the output must be C-contiguous and writable"):
            e.map(xs, out=outs)


@pytest.mark.parametrize("out, what", [
    (np.zeros(16, np.float64), r"the output must be \(16,\) float32, not \(16,\) float64"),
    (np.zeros(15, np.float32), r"the output must be \(16,\) float32, not \(15,\) float32"),
    (np.zeros(32, np.float32)[::2], "the output must be C-contiguous and writable"),
])
def test_a_wrong_output_is_refused_by_index(out, what):
    xs = [np.ones(16, np.float32) for _ in range(4)]
    outs = [np.zeros(16, np.float32) for _ in xs]
    outs[2] = out
    with host_engine() as e:
        with pytest.raises(ValueError, match=f"item 2: {what}"):
            e.map(xs, out=outs)


def test_on_complete_sees_every_item_of_a_map_in_order():
    seen = []
    with host_engine(on_complete=seen.append) as e:
        e.map([np.ones(4, np.float32)] * 3)
        e.map([np.full(4, k, np.float32) for k in range(7)])
    assert [r.index for r in seen] == list(range(10))
    assert all(r.ok and r.status == "done" for r in seen)


def failing_at(value):
    """A host operation copying its item, and failing the item whose first element is `value`."""
    def copy_unless(x, out):
        if x[0] == value:
            raise KeyError(f"item of {value}")
        out[:] = x

    return sp.ops.from_function(copy_unless, np.float32, name="failing")


def test_the_first_failed_item_raises_naming_its_place_in_this_map():
    with host_engine(failing_at(5)) as e:
        e.map([np.ones(4, np.float32)] * 3)  # later items' engine indices start past these
        with pytest.raises(KeyError, match="item of 5") as raised:
            e.map([np.full(4, k, np.float32) for k in range(9)])
    assert any("item 5 of this map() failed" in n for n in raised.value.__notes__)


def test_an_earlier_failed_item_is_raised_before_a_later_invalid_one():
    xs = [np.full(4, k, np.float32) for k in range(5)]
    xs[3] = np.zeros(4, np.float64)
    with host_engine(failing_at(1)) as e:
        with pytest.raises(KeyError, match="item of 1"):
            e.map(xs)


class Watched(np.ndarray):
    """Records when map() prepares it (describe() asks every array for the CUDA interface)."""
    log = None

    @property
    def __cuda_array_interface__(self):
        Watched.log.append(("prepared", int(self[0])))
        time.sleep(0.002)
        raise AttributeError("__cuda_array_interface__")


def test_the_engine_runs_the_first_items_while_later_ones_are_prepared():
    log = []
    lock = threading.Lock()
    Watched.log = log

    def record(x, out):
        with lock:
            log.append(("ran", int(x[0])))
        out[:] = x

    xs = [np.full(4, k, np.float32).view(Watched) for k in range(60)]
    with host_engine(sp.ops.from_function(record, np.float32)) as e:
        ys = e.map(xs)
    assert [int(y[0]) for y in ys] == list(range(60))
    first_run = log.index(("ran", 0))
    last_prepared = max(i for i, (what, _) in enumerate(log) if what == "prepared")
    assert first_run < last_prepared, log


class Reentering(np.ndarray):
    """Calls the engine that map() prepares it for (submit(), close()) from inside map()."""
    engine = None
    call = None

    @property
    def __cuda_array_interface__(self):
        Reentering.call(Reentering.engine)
        raise AssertionError("a call that would wait for map(), from inside it, must not return")


@pytest.mark.parametrize("what, call", [("submit", lambda e: e.submit(np.ones(4, np.float32))),
                                        ("close", lambda e: e.close())])
def test_python_code_run_by_map_may_not_submit_to_or_close_its_engine(what, call):
    xs = [np.ones(4, np.float32) for _ in range(6)]
    xs[4] = xs[4].view(Reentering)
    with host_engine() as e:
        Reentering.engine, Reentering.call = e, call
        with pytest.raises(RuntimeError, match=f"{what}\\(\\) from Python code that this engine's map\\(\\) runs"):
            e.map(xs)
        assert e.drain()["submitted"] == 4
        e.submit(np.ones(4, np.float32)).result(timeout=10)  # outside map(): allowed again, and still open


class Interrupting(np.ndarray):
    """Ctrl-C while map() prepares it."""

    @property
    def __cuda_array_interface__(self):
        raise KeyboardInterrupt


def test_ctrl_c_while_items_are_prepared_cancels_and_raises():
    xs = [np.ones(1 << 14, np.float32) for _ in range(8)]
    xs[5] = xs[5].view(Interrupting)
    e = host_engine()
    with pytest.raises(KeyboardInterrupt):
        e.map(xs)
    stats = e.drain()
    assert stats["submitted"] == 5, stats
    assert stats["done"] + stats["failed"] + stats["cancelled"] == 5, stats
    e.close()

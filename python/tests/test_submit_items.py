# SPDX-License-Identifier: Apache-2.0
# Engine.submit() of plain numpy arrays through the C++ description map() uses, against
# the package's Python description (the first item, numpy subclasses, other arrays): the
# same outputs, futures in order, the same errors naming the item.
import gc
import threading
import weakref

import numpy as np
import pytest

import streampipe as sp


class Sub(np.ndarray):
    """A numpy subclass: not the C++ path's exact type, so the package describes it."""


def host_engine(op=None, **kw):
    return sp.Engine(op or sp.ops.affine(2.0, 1.0), backend="host", **kw)


def counting_prepare(e):
    """Counts the items the package describes in Python."""
    described = []
    prepare = e._prepare
    e._prepare = lambda k, a, o, label: described.append(k) or prepare(k, a, o, label)
    return described


def test_submit_equals_map_and_the_python_description():
    rng = np.random.default_rng(3)
    xs = [rng.random(n, dtype=np.float32) for n in (1, 7, 64, 1000, 64, 7)]
    with host_engine(sp.ops.gray()) as gray_engine:
        rgb = [rng.integers(0, 256, (h, 5, 3), dtype=np.uint8) for h in (1, 4, 9)]
        gray_engine.submit(rgb[0]).result(timeout=30)  # started by the Python description
        described = counting_prepare(gray_engine)
        submitted = [gray_engine.submit(i).result(timeout=30) for i in rgb]
        assert described == []
        for got, want in zip(submitted, gray_engine.map(rgb)):
            assert got.shape == want.shape and got.dtype == np.uint8
            np.testing.assert_array_equal(got, want)
    with host_engine() as e:
        e.submit(xs[0]).result(timeout=30)
        described = counting_prepare(e)
        outs = [np.empty_like(x) for x in xs]
        fast = [e.submit(x, out=o) for x, o in zip(xs, outs)]
        fast_none = [e.submit(x) for x in xs]
        pinned = [e.submit(sp.pinned_copy(x), out=sp.pinned_empty(x.shape, x.dtype)) for x in xs]
        assert described == []  # plain numpy and pinned arrays: described in C++
        python = [e.submit(x.view(Sub)) for x in xs]
        assert described == list(range(1 + 3 * len(xs), 1 + 4 * len(xs)))
        mapped = e.map(xs)
        for k, x in enumerate(xs):
            want = 2 * x + 1
            assert fast[k].result(timeout=30) is outs[k]
            y = fast_none[k].result(timeout=30)
            assert type(y) is np.ndarray and y.shape == x.shape and y.dtype == np.float32
            for got in (outs[k], y, pinned[k].result(timeout=30), python[k].result(timeout=30), mapped[k]):
                np.testing.assert_array_equal(np.asarray(got), want)


def test_futures_resolve_in_order_with_their_labels():
    order = []
    with host_engine(in_order=True, lanes=4, on_complete=lambda r: order.append(("callback", r.index))) as e:
        futures = []
        for k in range(200):
            f = e.submit(np.full(16, k, np.float32), label=f"x{k}")
            f.add_done_callback(lambda f, k=k: order.append(("future", k)))
            futures.append(f)
        e.drain()
    assert [k for what, k in order if what == "future"] == list(range(200))
    assert [k for what, k in order if what == "callback"] == list(range(200))
    for k, f in enumerate(futures):
        assert f.item.index == k and f.item.label == f"x{k}" and f.item.ok
        np.testing.assert_array_equal(f.result(), 2 * k + 1)


@pytest.mark.parametrize("started", [False, True])
@pytest.mark.parametrize("out, what", [
    (np.zeros(16, np.float64), r"the output must be \(16,\) float32, not \(16,\) float64"),
    (np.zeros(15, np.float32), r"the output must be \(16,\) float32, not \(15,\) float32"),
    (np.zeros(32, np.float32)[::2], "the output must be C-contiguous and writable"),
    ("readonly", "the output must be C-contiguous and writable"),
])
def test_a_wrong_output_is_refused_naming_the_item(started, out, what):
    if isinstance(out, str):
        out = np.zeros(16, np.float32)
        out.flags.writeable = False
    with host_engine() as e:
        if started:
            for _ in range(3):
                e.submit(np.ones(16, np.float32)).result(timeout=30)
        index = 3 if started else 0
        with pytest.raises(ValueError, match=f"item {index}: {what}"):
            e.submit(np.ones(16, np.float32), out=out)
        assert e.drain()["submitted"] == index  # refused: never submitted
        np.testing.assert_array_equal(e.submit(np.ones(16, np.float32)).result(timeout=30), 3)


@pytest.mark.parametrize("array, what", [
    (np.ones(16, np.float64), "affine takes float32, not float64"),
    (np.ones((16, 2), np.float32)[:, 0], "the input is not C-contiguous"),
    (np.ones(0, np.float32), "the input is empty"),
])
def test_a_wrong_input_is_refused_naming_the_item(array, what):
    with host_engine() as e:
        e.submit(np.ones(16, np.float32)).result(timeout=30)
        with pytest.raises(ValueError, match=f"item 1: {what}"):
            e.submit(array)


def test_the_engine_keeps_a_submitted_input_alive_until_it_is_resolved():
    go = threading.Event()

    def held(x, out):
        go.wait(30)
        out[:] = x

    with host_engine(sp.ops.from_function(held, np.float32), lanes=1) as e:
        go.set()
        e.submit(np.ones(4, np.float32)).result(timeout=30)
        go.clear()
        x = np.full(1 << 16, 5, np.float32)
        alive = weakref.ref(x)
        future = e.submit(x)
        del x
        gc.collect()
        assert alive() is not None  # the engine reads it still
        go.set()
        np.testing.assert_array_equal(future.result(timeout=30), 5)
        e.drain()
    gc.collect()
    assert alive() is None  # and lets it go once resolved


def test_a_closed_engine_refuses_submit_on_either_path():
    e = host_engine()
    e.submit(np.ones(4, np.float32)).result(timeout=30)
    e.close()
    with pytest.raises(ValueError, match="the engine is closed"):
        e.submit(np.ones(4, np.float32))
    with pytest.raises(ValueError, match="the engine is closed"):
        e._core.submit_array(np.ones(4, np.float32), None, "", sp.engine.ItemFuture(), None)
    with pytest.raises(ValueError, match="the engine is closed"):
        e.submit(np.ones(4, np.float32).view(Sub))

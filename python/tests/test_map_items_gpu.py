# SPDX-License-Identifier: Apache-2.0
# Engine.map and Engine.submit on a GPU over mixed kinds of arrays: where the C++ fast path
# takes an item (pageable and pinned numpy arrays) and where memory must be asked about (a
# numpy array over device memory is no host array, whatever its type).
import ctypes

import numpy as np
import pytest

import streampipe as sp

pytestmark = pytest.mark.gpu


def affine_reference(xs):
    with sp.Engine(sp.ops.affine(2.0, 1.0), backend="host") as e:
        return e.map([np.asarray(x) for x in xs])


def counting(engine):
    """The indices map() hands to the package's description (the fast path's refusals)."""
    described = []
    prepare = engine._prepare_span
    engine._prepare_span = lambda k, a, o: described.append(k) or prepare(k, a, o)
    return described


def numpy_over(d: sp.DeviceArray) -> np.ndarray:
    """An exact numpy array whose pointer is device memory (never to be read on the host)."""
    pointer = ctypes.cast(ctypes.c_void_p(d.ptr), ctypes.POINTER(ctypes.c_float))
    return np.ctypeslib.as_array(pointer, shape=d.shape)


@pytest.mark.parametrize("backend", ["gpu", "auto"])
def test_pageable_pinned_and_device_items_mix_in_one_call(backend):
    xs = [np.full(4096, k, np.float32) for k in range(6)]
    want = affine_reference(xs)
    with sp.Engine(sp.ops.affine(2.0, 1.0), backend=backend) as e:
        e.map(xs[:1])
        described = counting(e)
        inputs = [xs[0], sp.pinned_copy(xs[1]), sp.to_device(xs[2]), xs[3], sp.pinned_copy(xs[4]), xs[5]]
        ys = e.map(inputs)
        assert described == [2]
        outs = [sp.pinned_empty(4096, np.float32), np.empty(4096, np.float32), sp.empty(4096, np.float32),
                sp.pinned_empty(4096, np.float32), sp.empty(4096, np.float32), np.empty(4096, np.float32)]
        filled = e.map(inputs, out=outs)
        assert described == [2, 2, 4]
    assert [type(y) for y in ys] == [np.ndarray, np.ndarray, sp.DeviceArray, np.ndarray, np.ndarray, np.ndarray]
    for k in range(6):
        np.testing.assert_array_equal(np.asarray(ys[k].get() if k == 2 else ys[k]), want[k])
        assert filled[k] is outs[k]
        got = filled[k].get() if isinstance(filled[k], sp.DeviceArray) else filled[k]
        np.testing.assert_array_equal(got, want[k])


def test_a_read_only_pinned_output_is_refused_by_index():
    xs = [sp.pinned_copy(np.ones(256, np.float32)) for _ in range(4)]
    outs = [sp.pinned_empty(256, np.float32) for _ in xs]
    outs[1].flags.writeable = False
    with sp.Engine(sp.ops.affine(2.0, 1.0), backend="gpu") as e:
        with pytest.raises(ValueError, match="item 1: the output must be C-contiguous and writable"):
            e.map(xs, out=outs)


def test_a_numpy_array_over_device_memory_is_classified_in_every_call():
    d = sp.to_device(np.arange(1024, dtype=np.float32))
    wrapped = numpy_over(d)
    assert type(wrapped) is np.ndarray and sp.describe(wrapped).place == "device"
    host_items = [np.ones(1024, np.float32), np.ones(1024, np.float32)]
    with sp.Engine(sp.ops.affine(2.0, 1.0), backend="host") as h:
        h.map(host_items)
        with pytest.raises(ValueError, match="item 1: the input is in GPU memory"):
            h.map([host_items[0], wrapped])
        h.map(host_items)  # and plain numpy arrays still go through
    with sp.Engine(sp.ops.affine(2.0, 1.0), backend="gpu") as g:
        ys = g.map(host_items + [wrapped])
    assert isinstance(ys[2], sp.DeviceArray)
    np.testing.assert_array_equal(ys[2].get(), 2 * np.arange(1024, dtype=np.float32) + 1)


@pytest.mark.parametrize("backend", ["gpu", "auto"])
def test_submit_takes_host_arrays_in_cpp_and_describes_device_arrays(backend):
    xs = [np.full(4096, k, np.float32) for k in range(6)]
    want = [2 * x + 1 for x in xs]
    with sp.Engine(sp.ops.affine(2.0, 1.0), backend=backend) as e:
        e.submit(xs[0]).result(timeout=60)  # started (planned) from the package's description
        described = []
        prepare = e._prepare
        e._prepare = lambda k, a, o, label: described.append(k) or prepare(k, a, o, label)
        d = sp.to_device(xs[4])
        inputs = [xs[0], sp.pinned_copy(xs[1]), xs[2], sp.pinned_copy(xs[3]), d, numpy_over(d)]
        outs = [None, sp.pinned_empty(4096, np.float32), sp.pinned_empty(4096, np.float32), np.empty(4096, np.float32),
                None, None]
        futures = [e.submit(x, out=o) for x, o in zip(inputs, outs)]
        ys = [f.result(timeout=60) for f in futures]
        assert described == [5, 6]  # the device array, the numpy array over device memory
    for k, y in enumerate(ys):
        if outs[k] is not None:
            assert y is outs[k]
        got = y.get() if isinstance(y, sp.DeviceArray) else y
        np.testing.assert_array_equal(got, want[min(k, 4)])

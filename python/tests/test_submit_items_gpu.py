# SPDX-License-Identifier: Apache-2.0
# Engine.submit() on a GPU: pageable and pinned numpy arrays are described in C++, device
# arrays (and a numpy array over device memory) by the package, and every output is right.
import ctypes

import numpy as np
import pytest

import streampipe as sp

pytestmark = pytest.mark.gpu


def numpy_over(d: sp.DeviceArray) -> np.ndarray:
    """An exact numpy array whose pointer is device memory (never to be read on the host)."""
    pointer = ctypes.cast(ctypes.c_void_p(d.ptr), ctypes.POINTER(ctypes.c_float))
    return np.ctypeslib.as_array(pointer, shape=d.shape)


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

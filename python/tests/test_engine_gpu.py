# SPDX-License-Identifier: Apache-2.0
# The engine on the GPU from every kind of array, and CuPy/PyTorch interop without host copies.
import numpy as np
import pytest

import streampipe as sp

pytestmark = pytest.mark.gpu


def rgb_images(n, h=64, w=96, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for _ in range(n)]


def gray_reference(rgb):
    with sp.Engine(sp.ops.gray(), backend="host") as e:
        return e.map(rgb)


def test_gray_from_numpy_pinned_and_device_arrays_agrees_with_the_host_backend():
    imgs = rgb_images(12)
    want = gray_reference(imgs)
    with sp.Engine(sp.ops.gray(), backend="gpu") as e:
        got_numpy = e.map(imgs)
        got_pinned = e.map([sp.pinned_copy(i) for i in imgs], out=[sp.pinned_empty(i.shape[:2], np.uint8) for i in imgs])
        got_device = e.map([sp.to_device(i) for i in imgs])
    assert e.plan_reason
    for w, a, b, c in zip(want, got_numpy, got_pinned, got_device):
        np.testing.assert_array_equal(a, w)
        np.testing.assert_array_equal(b, w)
        assert isinstance(c, sp.DeviceArray)
        np.testing.assert_array_equal(c.get(), w)


def test_pinned_arrays_are_page_locked():
    a = sp.pinned_empty((1000,), np.float32)
    assert sp.describe(a).place == "pinned"
    assert sp.describe(np.empty(1000, np.float32)).place == "pageable"


def test_device_array_on_another_gpu_or_host_backend_is_refused_by_item():
    d = sp.to_device(np.ones(8, np.float32))
    with sp.Engine(sp.ops.affine(1, 0), backend="host") as e:
        with pytest.raises(ValueError, match="item 1: the input is in GPU memory"):
            e.map([np.ones(8, np.float32), d])


def test_multiply_divide_200_arrays_matches_numpy():
    xs = [np.random.default_rng(k).random(1 << 14, dtype=np.float32) + 1 for k in range(200)]
    with sp.Engine(sp.ops.multiply_divide()) as e:
        ys = e.map(xs)
    with sp.Engine(sp.ops.multiply_divide(), backend="host") as h:
        want = h.map(xs)
    for y, w in zip(ys, want):
        np.testing.assert_allclose(y, w, rtol=1e-5)


def test_a_runtime_kernel_as_an_operation_with_host_form():
    mod = sp.SourceModule("""
    __global__ void scale(const float* in, float* out, long long n, float a) {
      long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
      if (i < n) out[i] = a * in[i];
    }""")
    op = sp.ops.from_kernel(mod.get_function("scale"), np.float32, args=[np.float32(3)], block=128,
                            host=lambda x, out: np.multiply(x, 3, out=out))
    xs = [np.arange(1000 + k, dtype=np.float32) for k in range(10)]
    with sp.Engine(op) as e:
        ys = e.map(xs)
    with sp.Engine(op, backend="host") as h:
        hs = h.map(xs)
    for x, y, z in zip(xs, ys, hs):
        np.testing.assert_array_equal(y, 3 * x)
        np.testing.assert_array_equal(z, 3 * x)


def test_an_elementwise_kernel_as_an_operation_changing_dtype():
    k = sp.ElementwiseKernel("const unsigned char* x, float* y", "y[i] = x[i] / 255.0f")
    op = sp.ops.from_elementwise(k, np.uint8, np.float32)
    xs = [np.arange(256, dtype=np.uint8)] * 4
    with sp.Engine(op) as e:
        ys = e.map(xs)
    np.testing.assert_allclose(ys[0], np.arange(256) / 255.0, rtol=1e-6)


def test_submit_futures_and_reports_on_the_gpu():
    x = np.ones(1 << 16, np.float32)
    with sp.Engine(sp.ops.affine(2, 1), lanes=4, depth=2) as e:
        fs = [e.submit(x) for _ in range(32)]
        e.drain()
        assert all(f.result()[0] == 3 for f in fs)
        rep = e.report()
        assert rep.items == 32 and rep.h2d_gbps > 0
        assert {"H2D", "compute", "D2H"} <= {r.stage for r in e.timeline()}


def test_cupy_arrays_through_the_engine_and_back_without_host_copies():
    cp = pytest.importorskip("cupy")
    xs = [cp.arange(4096, dtype=cp.float32) * k for k in range(8)]
    outs = [cp.empty(4096, dtype=cp.float32) for _ in xs]
    with sp.Engine(sp.ops.affine(2, 1)) as e:
        ys = e.map(xs, out=outs)
    assert all(y is o for y, o in zip(ys, outs))
    cp.testing.assert_array_equal(ys[3], xs[3] * 2 + 1)
    d = sp.to_device(np.arange(10, dtype=np.float32))
    back = cp.asarray(d)                      # __cuda_array_interface__, no copy
    assert back.data.ptr == d.ptr
    back2 = cp.from_dlpack(d)                 # DLPack, no copy
    assert back2.data.ptr == d.ptr
    s = cp.cuda.Stream(non_blocking=True)
    assert sp.stream_handle(s) == s.ptr


def test_torch_tensors_through_the_engine_and_back_without_host_copies():
    torch = pytest.importorskip("torch")
    xs = [torch.full((64, 64, 3), k, dtype=torch.uint8, device="cuda") for k in range(4)]
    with sp.Engine(sp.ops.gray()) as e:
        ys = e.map(xs)
    t = torch.from_dlpack(ys[2])              # our output, read by torch in place
    assert t.device.type == "cuda" and t.data_ptr() == ys[2].ptr
    assert int(t[0, 0]) == 2
    out = torch.empty((64, 64), dtype=torch.uint8, device="cuda")
    with sp.Engine(sp.ops.gray()) as e:
        (same,) = e.map([xs[1]], out=[out])
    assert same is out and int(out[5, 5]) == 1
    s = torch.cuda.Stream()
    assert sp.stream_handle(s) == s.cuda_stream

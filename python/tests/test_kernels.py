# SPDX-License-Identifier: Apache-2.0
# Runtime kernels: what works without a GPU (NVRTC, the disk cache, errors), then launches.
import subprocess
import sys

import numpy as np
import pytest

import streampipe as sp

ADD = """
__global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"""


def test_compile_needs_no_gpu_and_gives_a_cubin(cache_dir):
    r = sp.compile('extern "C" ' + ADD.strip(), arch="sm_90", name="add.cu")
    assert r.kind == "cubin" and r.arch == "sm_90" and len(r.binary) > 100
    assert r.stats.origin == "compiled" and r.stats.compile_ms > 0
    again = sp.compile('extern "C" ' + ADD.strip(), arch="sm_90", name="add.cu")
    assert again.stats.origin == "disk" and again.binary == r.binary


def test_disk_cache_is_shared_between_processes(cache_dir):
    code = ("import streampipe as sp, sys; src = sys.stdin.read(); "
            "print(sp.compile(src, arch='sm_90').stats.origin)")
    run = lambda: subprocess.run([sys.executable, "-c", code], input=ADD, capture_output=True, text=True,
                                 timeout=120, check=True).stdout.strip()
    assert run() == "compiled"
    assert run() == "disk"
    assert len(list(cache_dir.rglob("*"))) > 0


def test_compile_error_carries_the_log_and_numbered_lines(cache_dir):
    bad = "__global__ void broken(float* x) {\n  x[0] = undefined_name;\n}\n"
    with pytest.raises(sp.CompileError) as e:
        sp.compile(bad, arch="sm_90", name="broken.cu")
    assert "undefined_name" in e.value.log
    assert "2 |" in str(e.value) or "   2" in str(e.value)
    assert e.value.api == "NVRTC" and e.value.status_name


def test_generated_kernels_check_their_declarations_without_a_gpu():
    with pytest.raises(ValueError):
        sp.ElementwiseKernel("const float* x, float* y,", "y[i] = x[i]")
    k = sp.ElementwiseKernel("const float* x, float* y, float a", "y[i] = a * x[i]")
    assert [p[0] for p in k.params] == ["x", "y", "a"]
    assert "y[i] = a * x[i]" in k.source


@pytest.mark.gpu
def test_source_module_launch_with_in_out_and_sized_scalars(cache_dir):
    mod = sp.SourceModule(ADD)
    add = mod.get_function("add")
    assert add.param_sizes == [8, 8, 8, 4]
    n = 1000
    a, b = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    c = np.zeros(n, np.float32)
    add(sp.In(a), sp.In(b), sp.Out(c), n, grid=(n + 255) // 256, block=256)
    np.testing.assert_array_equal(c, a + b)
    with pytest.raises(ValueError, match="kernel argument 0: a host array in pageable memory"):
        add(a, b, c, np.int32(n), grid=4, block=256)


@pytest.mark.gpu
def test_a_second_module_from_the_same_source_is_a_cache_hit(cache_dir):
    sp.clear_kernel_memory_cache()  # an earlier test's module would be found in memory
    assert sp.SourceModule(ADD).load_stats.origin == "compiled"
    sp.clear_kernel_memory_cache()
    assert sp.SourceModule(ADD).load_stats.origin == "disk"
    assert sp.SourceModule(ADD).load_stats.origin == "memory"


@pytest.mark.gpu
def test_elementwise_and_reduction_on_device_arrays_and_streams():
    n = 1 << 20
    x = sp.to_device(np.arange(n, dtype=np.float32) / n)
    y = sp.empty(n, np.float32)
    axpb = sp.ElementwiseKernel("const float* x, float* y, float a, float b", "y[i] = a * x[i] + b")
    s = sp.Stream()
    axpb(x, y, 2.0, 1.0, stream=s)
    s.synchronize()
    np.testing.assert_allclose(y.get(), 2 * (np.arange(n, dtype=np.float32) / n) + 1, rtol=1e-6)
    total = sp.ReductionKernel(np.float64, "0.0", "a + b", "(double)x[i]", "const float* x")
    assert total(x) == pytest.approx((np.arange(n, dtype=np.float64) / n).sum(), rel=1e-9)


@pytest.mark.gpu
def test_cuda_errors_carry_status_name_call_and_sticky_flag():
    with pytest.raises(sp.CudaError) as e:
        sp.DeviceArray((1 << 50,), np.uint8)
    assert e.value.status_name == "cudaErrorMemoryAllocation" and e.value.sticky is False
    assert "cudaMalloc" in e.value.call


@pytest.mark.gpu
def test_events_time_a_kernel():
    n = 1 << 22
    x = sp.zeros(n, np.float32)
    k = sp.ElementwiseKernel("float* x", "x[i] = sqrtf(x[i] + 1.0f)")
    k.prepare()
    s = sp.Stream()
    start, stop = sp.Event(), sp.Event()
    start.record(s.handle)
    k(x, stream=s)
    stop.record(s.handle)
    stop.synchronize()
    assert 0 < start.elapsed_ms(stop) < 1000

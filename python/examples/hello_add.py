# SPDX-License-Identifier: Apache-2.0
"""Hello, GPU: multiply two arrays with a SourceModule kernel and with an ElementwiseKernel,
and find out why one of them looked 200x "faster" in the chapter: its first call paid for
the NVRTC compile, the other's did not. Timed properly (events, after a warm-up call, with
the launches queued before the GPU reaches them), the two kernels take the same time.

    python hello_add.py            # on the GPU when there is one
    python hello_add.py --host     # the host backend: compile timing, the product on the CPU
"""
import time
from typing import Callable

import numpy as np

import streampipe as sp
from _common import check, parse

SOURCE = """
__global__ void multiply_them(float* dest, const float* a, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dest[i] = a[i] * b[i];
}
"""

# Keeps a stream busy for a while. A launch from Python takes tens of microseconds, as long as
# this kernel on 16M floats; timed as they are launched, the events would time Python.
HOLD = """
__global__ void hold(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}
"""


def gpu_time_ms(launch: Callable[[sp.Stream], object], hold: Callable[[sp.Stream], object],
                repeats: int = 20) -> float:
    """The GPU's time per launch: the stream is held while the launches are queued behind it."""
    stream = sp.Stream()
    start, stop = sp.Event(), sp.Event()
    hold(stream)
    start.record(stream.handle)
    for _ in range(repeats):
        launch(stream)
    stop.record(stream.handle)
    stop.synchronize()
    return start.elapsed_ms(stop) / repeats


def main() -> None:
    args = parse(__doc__)
    n = 400 if args.quick else 1 << 24
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)

    if not args.gpu:
        t0 = time.perf_counter()
        compiled = sp.compile(SOURCE, arch="sm_90", cache=False)
        print(f"NVRTC compile of multiply_them: {1e3 * (time.perf_counter() - t0):.1f} ms "
              f"({len(compiled.binary)} bytes of sm_90 code); a first call on a GPU pays this")
        op = sp.ops.from_function(lambda x, out: np.multiply(x[: x.size // 2], x[x.size // 2:], out=out),
                                  np.float32, out_shape=lambda s: (s[0] // 2,), name="multiply")
        with sp.Engine(op, backend="host") as e:
            (dest,) = e.map([np.concatenate([a, b])])
        check(np.array_equal(dest, a * b), "dest == a * b (host backend)")
        return

    d_a, d_b, d_dest = sp.to_device(a), sp.to_device(b), sp.empty(n, np.float32)
    block, grid = 256, (n + 255) // 256

    t0 = time.perf_counter()
    multiply_them = sp.SourceModule(SOURCE, cache=False).get_function("multiply_them")
    multiply_them(d_dest, d_a, d_b, np.int32(n), grid=grid, block=block)
    sp.synchronize()
    first_source = time.perf_counter() - t0
    check(np.array_equal(d_dest.get(), a * b), "SourceModule: dest == a * b")

    product = sp.ElementwiseKernel("float* dest, const float* a, const float* b", "dest[i] = a[i] * b[i]",
                                   name="multiply_elementwise")
    t0 = time.perf_counter()
    product.prepare()  # the compile, separately
    compile_ms = 1e3 * (time.perf_counter() - t0)
    t0 = time.perf_counter()
    product(d_dest, d_a, d_b)
    sp.synchronize()
    first_elementwise = time.perf_counter() - t0
    check(np.array_equal(d_dest.get(), a * b), "ElementwiseKernel: dest == a * b")

    print(f"first call, wall clock: SourceModule {1e3 * first_source:.1f} ms (compile + load + launch), "
          f"ElementwiseKernel {1e3 * first_elementwise:.2f} ms (compiled beforehand in {compile_ms:.1f} ms)")
    print(f"  ratio {first_source / first_elementwise:.0f}x: the compile, not the kernel")
    hold_kernel = sp.SourceModule(HOLD).get_function("hold")

    def hold(stream: sp.Stream) -> None:  # 50M cycles: 25-50 ms at a GPU's clocks
        hold_kernel(np.int64(50_000_000), grid=1, block=1, stream=stream)

    t_source = gpu_time_ms(lambda s: multiply_them(d_dest, d_a, d_b, np.int32(n), grid=grid, block=block, stream=s),
                           hold)
    t_elem = gpu_time_ms(lambda s: product(d_dest, d_a, d_b, stream=s), hold)
    print(f"warm, timed with events: SourceModule {t_source:.3f} ms, ElementwiseKernel {t_elem:.3f} ms "
          f"({3 * 4 * n / t_source / 1e6:.0f} GB/s)")
    if args.quick:  # 400 elements: both are a launch's few microseconds, not the kernel
        print("  (--quick: too small to compare the kernels' times)")
    else:
        check(0.5 < t_source / t_elem < 2.0, "the two kernels take about the same time once compiled")


if __name__ == "__main__":
    main()

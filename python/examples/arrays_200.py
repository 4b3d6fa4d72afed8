# SPDX-License-Identifier: Apache-2.0
"""The chapter's 200-array experiment: a single-block kernel over each of 200 arrays, run
serially on one stream, on a stream per array, and through the engine. Events time each
kernel; the mean and standard deviation of the kernel times show that streams do not make
a kernel faster, they make kernels and copies overlap.

    python arrays_200.py [--host]
"""
import statistics
import time
from typing import List, Tuple

import numpy as np

import streampipe as sp
from _common import check, parse

KERNEL = r"""
__global__ void multiply_divide(const float* in, float* out, size_t n, int repeats) {
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
    float x = in[i];
    for (int r = 0; r < repeats; ++r) { x = x * 2.0f; x = x / 2.0f; }
    out[i] = x;
  }
}
"""


def main() -> None:
    args = parse(__doc__)
    count, elems = (20, 1 << 12) if args.quick else (200, 1 << 20)
    rng = np.random.default_rng(11)
    xs = [sp.pinned_copy(rng.random(elems, dtype=np.float32)) for _ in range(count)]
    if not args.gpu:
        with sp.Engine(sp.ops.multiply_divide(), backend="host") as e:
            t0 = time.perf_counter()
            ys = e.map(xs)
            print(f"engine, host backend: {1e3 * (time.perf_counter() - t0):.1f} ms for {count} arrays")
        check(all(np.array_equal(y, x) for x, y in zip(xs, ys)), "x * 2 / 2 == x for every array")
        return
    kernel = sp.SourceModule(KERNEL).get_function("multiply_divide")
    d_in = [sp.empty(elems, np.float32) for _ in xs]
    d_out = [sp.empty(elems, np.float32) for _ in xs]
    outs = [sp.pinned_empty(elems, np.float32) for _ in xs]

    def run(streams: List[sp.Stream]) -> Tuple[float, float, float]:
        events = [(sp.Event(), sp.Event()) for _ in xs]
        t0 = time.perf_counter()
        for k, x in enumerate(xs):
            s = streams[k % len(streams)]
            sp.copy(d_in[k], x, stream=s)
            events[k][0].record(s.handle)
            kernel(d_in[k], d_out[k], elems, 50, grid=1, block=64, stream=s)
            events[k][1].record(s.handle)
            sp.copy(outs[k], d_out[k], stream=s)
        for s in streams:
            s.synchronize()
        wall = 1e3 * (time.perf_counter() - t0)
        kernel_ms = [a.elapsed_ms(b) for a, b in events]
        return wall, statistics.mean(kernel_ms), statistics.pstdev(kernel_ms)

    run([sp.Stream()])  # warm-up
    for name, streams in (("serial, one stream", [sp.Stream()]), ("a stream per array", [sp.Stream() for _ in xs])):
        for o in outs:
            o.fill(np.nan)
        wall, mean, std = run(streams)
        print(f"{name:<22} {wall:8.1f} ms total, kernel {mean:.3f} +- {std:.3f} ms")
        check(all(np.array_equal(o, x) for o, x in zip(outs, xs)), f"{name}: every array back unchanged")
    with sp.Engine(sp.ops.multiply_divide()) as e:
        e.map(xs, out=outs)  # warm-up and plan
        for o in outs:
            o.fill(np.nan)
        t0 = time.perf_counter()
        e.map(xs, out=outs)
        print(f"{'engine (batched)':<22} {1e3 * (time.perf_counter() - t0):8.1f} ms total; {e.plan_reason}")
    check(all(np.array_equal(o, x) for o, x in zip(outs, xs)), "engine: every array back unchanged")


if __name__ == "__main__":
    main()

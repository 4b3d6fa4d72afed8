# SPDX-License-Identifier: Apache-2.0
"""Conway's Life three ways, as in the chapter: a global-memory kernel, a shared-memory
kernel whose tiles wait for each other with __syncthreads, and four universes stepping at
once on four streams. Every board is checked against numpy after its generations, and
the final boards are saved as PNGs.

    python life.py [-o out] [--host]
"""
import os

import numpy as np
import numpy.typing as npt

import streampipe as sp
from _common import check, parse

KERNELS = r"""
__device__ int alive_next(int alive, int neighbours) { return neighbours == 3 || (alive && neighbours == 2); }

// Global memory: each thread reads its 8 neighbours (a torus) straight from the board.
__global__ void step_global(const unsigned char* board, unsigned char* next, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  int n = 0;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx)
      if (dx || dy) n += board[((y + dy + h) % h) * w + (x + dx + w) % w];
  next[y * w + x] = alive_next(board[y * w + x], n);
}

// Shared memory: a 16x16 block loads its tile and a one-cell halo, waits (__syncthreads),
// then counts neighbours from shared memory.
#define T 16
__global__ void step_shared(const unsigned char* board, unsigned char* next, int w, int h) {
  __shared__ unsigned char tile[T + 2][T + 2];
  int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
  for (int ty = threadIdx.y; ty < T + 2; ty += T)
    for (int tx = threadIdx.x; tx < T + 2; tx += T) {
      int gx = (blockIdx.x * T + tx - 1 + w) % w, gy = (blockIdx.y * T + ty - 1 + h) % h;
      tile[ty][tx] = board[gy * w + gx];
    }
  __syncthreads();
  if (x >= w || y >= h) return;
  int n = 0;
  for (int dy = 0; dy <= 2; ++dy)
    for (int dx = 0; dx <= 2; ++dx)
      if (dx != 1 || dy != 1) n += tile[threadIdx.y + dy][threadIdx.x + dx];
  next[y * w + x] = alive_next(tile[threadIdx.y + 1][threadIdx.x + 1], n);
}
"""


def numpy_step(board: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    n = sum(np.roll(np.roll(board, dy, 0), dx, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dx or dy)
    alive: npt.NDArray[np.uint8] = ((n == 3) | ((board == 1) & (n == 2))).astype(np.uint8)
    return alive


def numpy_run(board: npt.NDArray[np.uint8], generations: int) -> npt.NDArray[np.uint8]:
    for _ in range(generations):
        board = numpy_step(board)
    return board


def main() -> None:
    args = parse(__doc__, default_out="life-out")
    size, generations = (64, 50) if args.quick else (1024, 500)
    rng = np.random.default_rng(5)
    boards = [(rng.random((size, size)) < 0.3).astype(np.uint8) for _ in range(4)]
    want = [numpy_run(b, generations) for b in boards]
    os.makedirs(args.out, exist_ok=True)
    if not args.gpu:
        op = sp.ops.from_function(lambda b, out: out.__setitem__(slice(None), numpy_run(
            b.reshape(size, size), generations).ravel()), np.uint8, name="life")
        with sp.Engine(op, backend="host") as e:
            results = e.map(boards)
        check(all(np.array_equal(r, w) for r, w in zip(results, want)), "four universes on the host backend")
    else:
        mod = sp.SourceModule(KERNELS)
        block, grid = (16, 16), ((size + 15) // 16, (size + 15) // 16)
        for name in ("step_global", "step_shared"):
            step = mod.get_function(name)
            a, b = sp.to_device(boards[0]), sp.empty((size, size), np.uint8)
            start, stop, s = sp.Event(), sp.Event(), sp.Stream()
            start.record(s.handle)
            for _ in range(generations):
                step(a, b, size, size, grid=grid, block=block, stream=s)
                a, b = b, a
            stop.record(s.handle)
            s.synchronize()
            ms = start.elapsed_ms(stop)
            print(f"{name}: {generations} generations of {size}x{size} in {ms:.2f} ms "
                  f"({size * size * generations / ms / 1e6:.2f} Gcell updates/s)")
            check(np.array_equal(a.get(), want[0]), f"{name} matches numpy")
        step = mod.get_function("step_shared")
        streams = [sp.Stream() for _ in boards]
        pairs = [(sp.to_device(b), sp.empty((size, size), np.uint8)) for b in boards]
        for _ in range(generations):
            for k, s in enumerate(streams):
                a, b = pairs[k]
                step(a, b, size, size, grid=grid, block=block, stream=s)
                pairs[k] = (b, a)
        for s in streams:
            s.synchronize()
        results = [a.get() for a, _ in pairs]
        check(all(np.array_equal(r.reshape(size, size), w) for r, w in zip(results, want)),
              "four universes on four streams match numpy")
    for k, r in enumerate(results):
        path = os.path.join(args.out, f"universe-{k}.png")
        sp.imwrite(path, 255 * np.asarray(r).reshape(size, size))
    check(all(os.path.getsize(os.path.join(args.out, f"universe-{k}.png")) > 0 for k in range(4)), "PNGs written")


if __name__ == "__main__":
    main()

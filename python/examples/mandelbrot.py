# SPDX-License-Identifier: Apache-2.0
"""Mandelbrot with an ElementwiseKernel: one thread per pixel iterates z = z^2 + c and
records when |z| escapes; the image is saved as a PNG. Checked against numpy doing the
same float32 iteration (pixels on the set's boundary may differ by fused multiply-adds).

    python mandelbrot.py [-o out] [--host]
"""
import os

import numpy as np
import numpy.typing as npt

import streampipe as sp
from _common import check, parse

ITERATE = """
float zr = 0.0f, zi = 0.0f;
int k = 0;
while (k < max_iter && zr * zr + zi * zi <= 4.0f) {
  float t = zr * zr - zi * zi + re[i];
  zi = 2.0f * zr * zi + im[i];
  zr = t;
  ++k;
}
count[i] = k;
"""


def numpy_escape(re: npt.NDArray[np.float32], im: npt.NDArray[np.float32], max_iter: int) -> npt.NDArray[np.int32]:
    """The kernel's loop in numpy: count the steps taken while |z| <= 2 before each step."""
    zr, zi = np.zeros_like(re), np.zeros_like(im)
    count = np.zeros(re.shape, np.int32)
    for _ in range(max_iter):
        alive = zr * zr + zi * zi <= np.float32(4)
        t = zr * zr - zi * zi + re
        zi = np.where(alive, np.float32(2) * zr * zi + im, zi)
        zr = np.where(alive, t, zr)
        count += alive
    return count


def known_points_hold(count: npt.NDArray[np.int32], re: npt.NDArray[np.float32], im: npt.NDArray[np.float32],
                      max_iter: int) -> bool:
    """Independent of any implementation: the main cardioid and the period-2 bulb never
    escape; points with |c| > 2 escape after the first step; the set mirrors in the real axis."""
    q = (re - 0.25) ** 2 + im ** 2
    inside = (q * (q + (re - 0.25)) < 0.25 * im ** 2 * 0.95) | ((re + 1) ** 2 + im ** 2 < 0.0625 * 0.95)
    outside = re ** 2 + im ** 2 > 4.5
    return bool((count[inside] == max_iter).all() and (count[outside] == 1).all() and inside.any() and outside.any())


def main() -> None:
    args = parse(__doc__, default_out="mandelbrot-out")
    width, height, max_iter = (320, 240, 64) if args.quick else (3840, 2160, 256)
    xs = np.linspace(-2.2, 1.0, width, dtype=np.float32)
    ys = np.linspace(-1.2, 1.2, height, dtype=np.float32)
    re, im = (a.astype(np.float32).ravel() for a in np.meshgrid(xs, ys))
    if args.gpu:
        kernel = sp.ElementwiseKernel("const float* re, const float* im, int* count, int max_iter", ITERATE,
                                      name="mandelbrot")
        d_count = sp.empty(re.size, np.int32)
        start, stop, stream = sp.Event(), sp.Event(), sp.Stream()
        d_re, d_im = sp.to_device(re), sp.to_device(im)
        kernel.prepare()
        start.record(stream.handle)
        kernel(d_re, d_im, d_count, max_iter, stream=stream)
        stop.record(stream.handle)
        stream.synchronize()
        count = d_count.get()
        print(f"{width}x{height}, {max_iter} iterations: {start.elapsed_ms(stop):.2f} ms on {sp.info()['devices'][0]['name']}")
    else:
        with sp.Engine(sp.ops.from_function(lambda z, out: out.__setitem__(slice(None), numpy_escape(
                z[: z.size // 2], z[z.size // 2:], max_iter)), np.float32, np.int32,
                out_shape=lambda s: (s[0] // 2,), name="mandelbrot"), backend="host") as e:
            (count,) = e.map([np.concatenate([re, im])])
    check(known_points_hold(count, re, im, max_iter), "cardioid and bulb never escape, |c| > 2 escapes at once")
    grid = count.reshape(height, width)
    check(bool(np.array_equal(grid, grid[::-1])), "the image mirrors in the real axis")
    if args.gpu:
        # numpy on a band of rows (quick at full size); fused multiply-adds on the GPU may
        # move a few boundary pixels by an iteration.
        rows = slice(0, min(height, 240) * width)
        want = numpy_escape(re[rows], im[rows], max_iter)
        differ = np.count_nonzero(count[rows] != want)
        check(bool(differ <= 0.002 * want.size), f"escape counts match numpy ({differ} of {want.size} pixels differ)")
    os.makedirs(args.out, exist_ok=True)
    image = (255 * (count.reshape(height, width) / max_iter) ** 0.5).astype(np.uint8)
    path = os.path.join(args.out, "mandelbrot.png")
    sp.imwrite(path, image)
    check(bool(np.array_equal(sp.imread(path), image)), f"{path} reads back exactly")


if __name__ == "__main__":
    main()

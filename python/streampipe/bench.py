# SPDX-License-Identifier: Apache-2.0
"""python -m streampipe.bench: the 200-array and 64-image jobs from Python, against CuPy and
PyTorch written the usual way, and against the C++ engine's same rows in the same run.

    python -m streampipe.bench --json python-bench.json --cpp build/release/streampipe

Each row runs the whole job (every array in, every output back) `--runs` times after a
warm-up, verifies every output, and reports the median, min and max wall time. Peers that
are not installed are left out and said so. Without a GPU it runs the streampipe rows on
the host backend, smaller."""
from __future__ import annotations

import argparse
import functools
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional

import numpy as np

import streampipe as sp

print = functools.partial(print, flush=True)  # noqa: A001 - rows appear as they are measured

# The chapter's kernel as a CuPy user writes it: one block of 64 threads over the array,
# each element multiplied and divided by 2, 50 times.
CHAPTER_KERNEL = r"""
extern "C" __global__ void multiply_divide(const float* in, float* out, size_t n, int repeats) {
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
    float x = in[i];
    for (int r = 0; r < repeats; ++r) { x = x * 2.0f; x = x / 2.0f; }
    out[i] = x;
  }
}
"""


def gray_reference(rgb: np.ndarray) -> np.ndarray:
    r, g, b = (rgb[..., k].astype(np.uint32) for k in range(3))
    return ((4899 * r + 9617 * g + 1868 * b + 8192) >> 14).astype(np.uint8)


class Row:
    def __init__(self, job: str, name: str, peer: bool, times_ms: List[float], verified: bool, note: str = ""):
        self.job, self.name, self.peer, self.verified, self.note = job, name, peer, verified, note
        self.median, self.min, self.max = statistics.median(times_ms), min(times_ms), max(times_ms)
        self.times_ms = times_ms

    def as_dict(self) -> Dict:
        return dict(job=self.job, name=self.name, peer=self.peer, verified=self.verified, note=self.note,
                    summary=dict(median_ms=self.median, min_ms=self.min, max_ms=self.max, runs=len(self.times_ms)),
                    times_ms=self.times_ms)


def timed(job: str, name: str, runs: int, run: Callable[[], None], poison: Callable[[], None],
          verify: Callable[[], bool], peer: bool = False, note: str = "") -> Row:
    poison()
    run()  # warm-up: module loads, pools, plans
    ok = verify()
    times = []
    for _ in range(runs):
        poison()
        t0 = time.perf_counter()
        run()
        times.append(1e3 * (time.perf_counter() - t0))
        ok = ok and verify()
    row = Row(job, name, peer, times, ok, note)
    print(f"  {name:<46} {row.median:9.2f} ms  (min {row.min:.2f}, max {row.max:.2f})  "
          f"{'verified' if ok else 'WRONG OUTPUT'}", flush=True)
    return row


def engine_rows(job: str, runs: int, engine, inputs: list, outs: list, poison, verify, gpu: bool):
    """The engine over numpy arrays and, on a GPU, over pinned copies of them: its rows, and
    the pinned inputs and outputs (None without a GPU)."""
    rows = [timed(job, "streampipe, numpy arrays", runs, lambda: engine.map(inputs, out=outs), poison(outs),
                  verify(outs))]
    if not gpu:
        return rows, None, None
    pin_in = [sp.pinned_copy(a) for a in inputs]
    pin_out = [sp.pinned_empty(o.shape, o.dtype) for o in outs]
    rows.append(timed(job, "streampipe, pinned arrays", runs, lambda: engine.map(pin_in, out=pin_out),
                      poison(pin_out), verify(pin_out)))
    return rows, pin_in, pin_out


def arrays_job(n: int, elems: int, runs: int, gpu: bool, cp) -> List[Row]:
    job = f"{n} arrays x {elems >> 20}M float32, single-block kernel"
    print(job)
    rng = np.random.default_rng(7)
    xs = [rng.random(elems, dtype=np.float32) for _ in range(n)]
    outs = [np.empty(elems, np.float32) for _ in range(n)]
    poison = lambda arrays: (lambda: [o.fill(np.nan) for o in arrays])
    verify = lambda arrays: (lambda: all(np.array_equal(o, x) for o, x in zip(arrays, xs)))
    engine = sp.Engine(sp.ops.multiply_divide(), backend="gpu" if gpu else "host")
    rows, _, _ = engine_rows(job, runs, engine, xs, outs, poison, verify, gpu)
    if gpu and cp is not None:
        d_x = [cp.asarray(x) for x in xs]
        d_o = [cp.empty(elems, dtype=cp.float32) for _ in xs]
        rows.append(timed(job, "streampipe, CuPy device arrays", runs, lambda: engine.map(d_x, out=d_o),
                          lambda: [o.fill(cp.nan) for o in d_o],
                          lambda: all(bool((o == x).all()) for o, x in zip(d_o, d_x)), note="no copies over PCIe"))
        kernel = cp.RawKernel(CHAPTER_KERNEL, "multiply_divide")
        streams = [cp.cuda.Stream(non_blocking=True) for _ in xs]
        d_in = [cp.empty(elems, dtype=cp.float32) for _ in xs]
        d_out = [cp.empty(elems, dtype=cp.float32) for _ in xs]

        def cupy_streams():
            for k, s in enumerate(streams):
                d_in[k].set(xs[k], stream=s)
                kernel((1,), (64,), (d_in[k], d_out[k], np.uint64(elems), np.int32(50)), stream=s)
                d_out[k].get(stream=s, out=outs[k])
            for s in streams:
                s.synchronize()

        rows.append(timed(job, "CuPy, stream per array, numpy arrays", runs, cupy_streams, poison(outs),
                          verify(outs), peer=True, note="RawKernel, the chapter's loop"))
    engine.close()
    return rows


# The user's own kernel as issue 33 gives it: (in, out, n), a single block of 64 threads.
USER_KERNEL = r"""
extern "C" __global__ void multiply_divide(const float* in, float* out, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    float x = in[i];
    for (int r = 0; r < 50; ++r) { x = x * 2.0f; x = x / 2.0f; }
    out[i] = x;
  }
}
"""


def user_kernel_job(n: int, elems: int, runs: int) -> List[Row]:
    """The arrays through a kernel the user wrote, as the docs show it: SourceModule and
    ops.from_kernel with every engine option left to the planner; beside it the same user
    writing a stream per array by hand."""
    job = f"{n} arrays x {elems >> 20}M float32, your own single-block kernel"
    print(job)
    rng = np.random.default_rng(13)
    xs = [rng.random(elems, dtype=np.float32) for _ in range(n)]
    pin_x = [sp.pinned_copy(x) for x in xs]
    pin_o = [sp.pinned_empty(elems, np.float32) for _ in xs]
    outs = [np.empty(elems, np.float32) for _ in xs]
    poison = lambda arrays: (lambda: [o.fill(np.nan) for o in arrays])
    verify = lambda arrays: (lambda: all(np.array_equal(o, x) for o, x in zip(arrays, xs)))
    f = sp.SourceModule(USER_KERNEL).get_function("multiply_divide")
    rows = []
    with sp.Engine(sp.ops.from_kernel(f, np.float32, block=64, grid=1)) as engine:
        rows.append(timed(job, "streampipe, your kernel, pinned arrays", runs, lambda: engine.map(pin_x, out=pin_o),
                          poison(pin_o), verify(pin_o), note=engine.plan_reason))
        rows.append(timed(job, "streampipe, your kernel, numpy arrays", runs, lambda: engine.map(xs, out=outs),
                          poison(outs), verify(outs)))
    streams = [sp.Stream() for _ in xs]
    d_in = [sp.empty(elems, np.float32) for _ in xs]
    d_out = [sp.empty(elems, np.float32) for _ in xs]

    def by_hand():
        for k, s in enumerate(streams):
            sp.copy(d_in[k], pin_x[k], stream=s)
            f(d_in[k], d_out[k], np.int32(elems), grid=1, block=64, stream=s)
            sp.copy(pin_o[k], d_out[k], stream=s)
        for s in streams:
            s.synchronize()

    rows.append(timed(job, "Python, a stream per array by hand, pinned arrays", runs, by_hand, poison(pin_o),
                      verify(pin_o), peer=True, note="sp.copy, launch, sp.copy on each array's stream"))
    return rows


def gray_job(n: int, height: int, width: int, runs: int, gpu: bool, cp, torch) -> List[Row]:
    job = f"{n} RGB {width}x{height} images -> gray"
    print(job)
    rng = np.random.default_rng(3)
    imgs = [rng.integers(0, 256, (height, width, 3), dtype=np.uint8) for _ in range(n)]
    want = [gray_reference(i) for i in imgs]
    outs = [np.empty((height, width), np.uint8) for _ in imgs]
    poison = lambda arrays: (lambda: [o.fill(7) for o in arrays])
    verify = lambda arrays: (lambda: all(np.array_equal(np.asarray(o), w) for o, w in zip(arrays, want)))
    engine = sp.Engine(sp.ops.gray(), backend="gpu" if gpu else "host")
    rows, pin_i, pin_o = engine_rows(job, runs, engine, imgs, outs, poison, verify, gpu)
    if gpu:
        if torch is not None:
            t_i = [torch.from_numpy(i).cuda() for i in imgs]
            t_o = [torch.empty((height, width), dtype=torch.uint8, device="cuda") for _ in imgs]
            rows.append(timed(job, "streampipe, PyTorch CUDA tensors", runs, lambda: engine.map(t_i, out=t_o),
                              lambda: [o.fill_(7) for o in t_o],
                              lambda: all(np.array_equal(o.cpu().numpy(), w) for o, w in zip(t_o, want)),
                              note="no copies over PCIe"))
        if cp is not None:
            luma = cp.ElementwiseKernel("uint8 r, uint8 g, uint8 b", "uint8 y",
                                        "y = (4899u * r + 9617u * g + 1868u * b + 8192u) >> 14", "luma")
            streams = [cp.cuda.Stream(non_blocking=True) for _ in imgs]
            d_in = [cp.empty((height, width, 3), dtype=cp.uint8) for _ in imgs]
            d_out = [cp.empty((height, width), dtype=cp.uint8) for _ in imgs]

            def cupy_streams(src, dst):
                for k, s in enumerate(streams):
                    d_in[k].set(src[k], stream=s)
                    with s:
                        luma(d_in[k][..., 0], d_in[k][..., 1], d_in[k][..., 2], d_out[k])
                    d_out[k].get(stream=s, out=dst[k])
                for s in streams:
                    s.synchronize()

            rows.append(timed(job, "CuPy, stream per image, numpy arrays", runs, lambda: cupy_streams(imgs, outs),
                              poison(outs), verify(outs), peer=True))
            rows.append(timed(job, "CuPy, stream per image, pinned arrays", runs,
                              lambda: cupy_streams(pin_i, pin_o), poison(pin_o), verify(pin_o), peer=True))
        if torch is not None:
            tstreams = [torch.cuda.Stream() for _ in range(8)]

            def torch_streams(src, dst):
                for k, img in enumerate(src):
                    with torch.cuda.stream(tstreams[k % 8]):
                        t = img.to("cuda", non_blocking=True)
                        y = ((t[..., 0].int() * 4899 + t[..., 1].int() * 9617 + t[..., 2].int() * 1868 + 8192)
                             >> 14).to(torch.uint8)
                        dst[k].copy_(y, non_blocking=True)
                torch.cuda.synchronize()

            src_pageable = [torch.from_numpy(i) for i in imgs]
            dst_pageable = [torch.from_numpy(o) for o in outs]
            rows.append(timed(job, "PyTorch, 8 streams, numpy arrays", runs,
                              lambda: torch_streams(src_pageable, dst_pageable), poison(outs), verify(outs),
                              peer=True))
            src_pinned = [torch.from_numpy(i).pin_memory() for i in imgs]
            dst_pinned = [torch.empty((height, width), dtype=torch.uint8).pin_memory() for _ in imgs]
            rows.append(timed(job, "PyTorch, 8 streams, pinned tensors", runs,
                              lambda: torch_streams(src_pinned, dst_pinned), lambda: [o.fill_(7) for o in dst_pinned],
                              lambda: all(np.array_equal(o.numpy(), w) for o, w in zip(dst_pinned, want)), peer=True))
    engine.close()
    return rows


def cpp_rows(binary: str, runs: int, n_arrays: int, n_images: int) -> List[Dict]:
    """The C++ engine's rows from `bench streams` run now, on the same machine."""
    with tempfile.TemporaryDirectory() as d:
        out = f"{d}/streams.json"
        cmd = [binary, "bench", "streams", "--runs", str(runs), "--arrays", str(n_arrays), "--images", str(n_images),
               "--json", out]
        rows = []
        for experiment in ("gray", "arrays", "user-kernel"):
            subprocess.run(cmd + ["--experiment", experiment, "--force"], check=True, stdout=subprocess.DEVNULL)
            with open(out) as f:
                doc = json.load(f)
            for table in doc.get("tables", []):
                for row in table.get("rows", []):
                    rows.append(dict(experiment=experiment, name=row.get("name"), summary=row.get("summary")))
        return rows


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m streampipe.bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=7, help="timed runs per row (default 7, at least 5 for results)")
    p.add_argument("--arrays", type=int, default=200)
    p.add_argument("--images", type=int, default=64)
    p.add_argument("--json", help="write the rows as JSON to this file")
    p.add_argument("--cpp", help="the streampipe CLI, to run the C++ engine's same rows in this run")
    p.add_argument("--no-peers", action="store_true", help="leave CuPy and PyTorch out")
    args = p.parse_args(argv)
    gpu = sp.device_count() > 0
    cp = torch = None
    missing = []
    if gpu and not args.no_peers:
        try:
            import cupy as cp
        except ImportError:
            missing.append("cupy")
        try:
            import torch
        except ImportError:
            missing.append("torch")
    device = sp.info()["devices"][0]["name"] if gpu else "host backend (no GPU)"
    print(f"streampipe {sp.__version__} on {device}; peers: {', '.join(m for m in ('cupy', 'torch') if m not in missing) if gpu else 'none'}"
          + (f"; missing: {', '.join(missing)}" if missing else ""))
    elems = 1 << 20 if gpu else 1 << 16
    size = (1080, 1920) if gpu else (270, 480)
    rows = arrays_job(args.arrays if gpu else 16, elems, args.runs, gpu, cp)
    rows += gray_job(args.images if gpu else 8, size[0], size[1], args.runs, gpu, cp, torch)
    if gpu:
        rows += user_kernel_job(args.arrays, elems, args.runs)
    cpp = cpp_rows(args.cpp, args.runs, args.arrays, args.images) if args.cpp else []
    for r in cpp:
        s = r["summary"] or {}
        print(f"  C++ {r['experiment']}: {r['name']:<40} {s.get('median', float('nan')):9.2f} ms")
    doc = dict(benchmark="python", device=device, host=platform.node(), version=sp.__version__, runs=args.runs,
               missing_peers=missing, rows=[r.as_dict() for r in rows], cpp_rows=cpp)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
    return 0 if all(r.verified for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

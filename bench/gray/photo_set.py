#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A set of real photographs for `streampipe bench gray --inputs DIR`, made from the small
source folder that scripts/photo-sources writes (a device call carries that folder; the set
is made where it runs).

  python3 bench/gray/photo_set.py --out DIR [--sources .photos/sources] [--count 1000]
                                  [--seed 1] [--processes N] [--force]

Each file is a crop of one source photograph (sources taken in turn), resized to 2-10 Mpx
(triangular, mode 3: about 5 Mpx on average), about a third portrait, at 4:3, 3:2, 16:9 or
1:1, any width and height. About 90% are JPEGs at quality 75-95: a tenth of them grayscale,
the others 4:2:0, 4:2:2 or 4:4:4 (2:1:1), about 30% progressive, half the baseline ones with
optimized Huffman tables, none with EXIF; the rest are PNGs (level 1 or 6): RGB, RGBA with a
soft alpha, and 16-bit RGB. Everything follows from --seed: the same seed and sources give the same
files, whatever --processes. Files are photo-NNNN.jpg / .png; DIR/photo_set.json lists each
file (source, crop, kind, encoder settings, bytes) and the summary printed at the end.
Needs Pillow only. Exit status: 0 written, 1 a file failed, 2 bad usage.
"""
import argparse
import json
import multiprocessing
import os
import random
import struct
import sys
import time
import zlib
from pathlib import Path

from PIL import Image

ASPECTS = {(4, 3): 4, (3, 2): 3, (16, 9): 2, (1, 1): 1}  # long:short -> weight
SUBSAMPLING = {"4:2:0": 2, "4:2:2": 1, "4:4:4": 1}
PILLOW_SUBSAMPLING = {"4:4:4": 0, "4:2:2": 1, "4:2:0": 2}
PNG_KINDS = {"rgb": 7, "rgba": 2, "rgb16": 1}


def weighted(rng, options):
    return rng.choices(list(options), list(options.values()))[0]


def plan(i, seed, source, source_size):
    """What file i is: its source, crop box, size and encoding. A function of (seed, i) alone."""
    rng = random.Random(f"{seed}:{i}")
    mpx = rng.triangular(2.0, 10.0, 3.0)
    long_side, short_side = weighted(rng, ASPECTS)
    portrait = rng.random() < 1 / 3
    ratio = short_side / long_side if portrait else long_side / short_side  # width / height
    width = max(1, round((mpx * 1e6 * ratio) ** 0.5))
    height = max(1, round(mpx * 1e6 / width))
    # The largest window of that shape in the source, then 60-100% of it, anywhere.
    sw, sh = source_size
    win_w, win_h = (sw, sw / ratio) if sw / sh < ratio else (sh * ratio, sh)
    scale = rng.uniform(0.6, 1.0)
    cw, ch = win_w * scale, win_h * scale
    x, y = rng.uniform(0, sw - cw), rng.uniform(0, sh - ch)
    job = {"index": i, "name": f"photo-{i:04d}", "source": source, "crop": [round(v, 1) for v in (x, y, x + cw, y + ch)],
           "width": width, "height": height, "orientation": "portrait" if portrait else "landscape"}
    if rng.random() < 0.10:
        # Level 1 as OpenCV writes by default, 6 as libpng and Pillow do.
        job.update(format="png", mode=weighted(rng, PNG_KINDS), compress_level=rng.choice([1, 6]))
    else:
        job.update(format="jpeg", quality=rng.randint(75, 95), progressive=rng.random() < 0.3)
        job["optimize"] = job["progressive"] or rng.random() < 0.5
        if rng.random() < 0.10:
            job.update(mode="gray", subsampling="gray")
        else:
            job.update(mode="rgb", subsampling=weighted(rng, SUBSAMPLING))
    return job


def kind(job):
    if job["format"] == "png":
        return f"png {job['mode']}"
    return f"jpeg {'progressive' if job['progressive'] else 'baseline'} {job['subsampling']}"


_cache = {}  # the sources this worker decoded last: tasks come grouped by source


def source_image(path):
    if path not in _cache:
        if len(_cache) >= 2:
            _cache.pop(next(iter(_cache)))
        with Image.open(path) as im:
            im.load()
            _cache[path] = im.convert("RGB")
    return _cache[path]


def png_rgb16(path, bands, width, height, level):
    """Writes a 16-bit RGB PNG (Pillow writes none) from three float bands of 0-255."""
    n = width * height
    pixels = bytearray(6 * n)
    for c, band in enumerate(bands):
        raw = band.point(lambda v: v * 257.0).convert("I").tobytes("raw", "I;16B")
        pixels[2 * c::6] = raw[0::2]
        pixels[2 * c + 1::6] = raw[1::2]
    stride = 6 * width
    rows = b"".join(b"\x00" + pixels[y * stride:(y + 1) * stride] for y in range(height))

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 16, 2, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(rows, level)) + chunk(b"IEND", b""))


def make(args):
    """Writes one planned file; returns its record, or raises naming the file."""
    job, sources_dir, out_dir = args
    try:
        src = source_image(str(Path(sources_dir) / job["source"]))
        size, box = (job["width"], job["height"]), tuple(job["crop"])
        path = Path(out_dir) / (job["name"] + (".png" if job["format"] == "png" else ".jpg"))
        if job["format"] == "png" and job["mode"] == "rgb16":
            bands = [b.convert("F").resize(size, Image.Resampling.BICUBIC, box=box) for b in src.split()]
            png_rgb16(path, bands, *size, job["compress_level"])
        else:
            im = src.resize(size, Image.Resampling.BICUBIC, box=box)
            if job["format"] == "png":
                if job["mode"] == "rgba":
                    alpha = Image.radial_gradient("L").resize(size, Image.Resampling.BILINEAR)
                    im.putalpha(alpha.point(lambda v: 255 - v // 2))
                im.save(path, "PNG", compress_level=job["compress_level"])
            else:
                if job["mode"] == "gray":
                    im = im.convert("L")
                options = {"quality": job["quality"], "progressive": job["progressive"], "optimize": job["optimize"]}
                if job["mode"] == "rgb":
                    options["subsampling"] = PILLOW_SUBSAMPLING[job["subsampling"]]
                im.save(path, "JPEG", **options)
        return dict(job, file=path.name, bytes=path.stat().st_size)
    except Exception as e:  # the parent names the file and fails the run
        raise RuntimeError(f"{job['name']} (from {job['source']}): {type(e).__name__}: {e}") from e


def summarize(records, seconds):
    kinds = {}
    for r in records:
        kinds.setdefault(kind(r), []).append(r)
    mpx = [r["width"] * r["height"] / 1e6 for r in records]
    return {
        "files": len(records),
        "portrait": sum(r["orientation"] == "portrait" for r in records),
        "mpx_mean": sum(mpx) / len(mpx), "mpx_min": min(mpx), "mpx_max": max(mpx),
        "bytes": sum(r["bytes"] for r in records),
        "seconds": seconds,
        "kinds": {k: {"files": len(v), "mpx_mean": sum(r["width"] * r["height"] for r in v) / 1e6 / len(v),
                      "bytes": sum(r["bytes"] for r in v)} for k, v in sorted(kinds.items())},
    }


def print_summary(s, out_dir, processes):
    print(f"{'kind':<28}{'files':>7}{'Mpx mean':>10}{'MB':>9}")
    for k, v in s["kinds"].items():
        print(f"{k:<28}{v['files']:>7}{v['mpx_mean']:>10.2f}{v['bytes'] / 1e6:>9.1f}")
    print(f"{'all':<28}{s['files']:>7}{s['mpx_mean']:>10.2f}{s['bytes'] / 1e6:>9.1f}")
    print(f"{s['files']} files in {out_dir}: {s['portrait']} portrait; Mpx mean {s['mpx_mean']:.2f}, min "
          f"{s['mpx_min']:.2f}, max {s['mpx_max']:.2f}; {s['bytes'] / 1e6:.1f} MB; {s['seconds']:.1f} s on "
          f"{processes} processes")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="the folder written (new or empty, or --force)")
    p.add_argument("--sources", default=".photos/sources", help="scripts/photo-sources' folder")
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--processes", type=int, default=os.cpu_count())
    p.add_argument("--force", action="store_true", help="replace an earlier set's files in --out")
    a = p.parse_args()
    if a.count < 1 or a.processes < 1:
        p.error("--count and --processes must be at least 1")
    sources = sorted(f.name for f in Path(a.sources).glob("*.jpg")) if Path(a.sources).is_dir() else []
    if not sources:
        p.error(f"--sources {a.sources}: no *.jpg there (scripts/photo-sources writes them)")
    out = Path(a.out)
    if out.exists() and any(out.iterdir()):
        if not a.force:
            p.error(f"--out {out}: the folder is not empty (an empty or new folder, or --force)")
        for f in list(out.glob("photo-*.jpg")) + list(out.glob("photo-*.png")) + [out / "photo_set.json"]:
            f.unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)

    sizes = {}
    for name in sources:
        with Image.open(Path(a.sources) / name) as im:
            sizes[name] = im.size
    order = sources[:]
    random.Random(a.seed).shuffle(order)
    jobs = [plan(i, a.seed, order[i % len(order)], sizes[order[i % len(order)]]) for i in range(a.count)]
    # Grouped by source, so that each worker decodes a source once per run of its files.
    tasks = sorted(((j, a.sources, str(out)) for j in jobs), key=lambda t: (t[0]["source"], t[0]["index"]))
    chunk = max(1, a.count // (len(order) * 4))
    start = time.perf_counter()
    try:
        with multiprocessing.Pool(a.processes) as pool:
            records = sorted(pool.imap_unordered(make, tasks, chunksize=chunk), key=lambda r: r["index"])
    except RuntimeError as e:
        print(f"photo_set: {e}", file=sys.stderr)
        return 1
    summary = summarize(records, time.perf_counter() - start)
    (out / "photo_set.json").write_text(json.dumps(
        {"seed": a.seed, "count": a.count, "sources": str(a.sources), "summary": summary, "files": records}, indent=1))
    print_summary(summary, out, a.processes)
    return 0


if __name__ == "__main__":
    sys.exit(main())

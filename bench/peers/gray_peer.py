# SPDX-License-Identifier: Apache-2.0
"""What the gray peers of `streampipe bench gray` share: their command line, the files they
convert, and the process pool that Pillow's and OpenCV's run on.
  python3 <peer>.py IN_DIR OUT_DIR --format png|jpeg [--quality 90] [--compression 1] [--processes N]
The files are IN_DIR's *.png, *.jpg and *.jpeg (any case), as `streampipe gray` takes a
folder; each becomes OUT_DIR/<name>.png or .jpg. A peer prints the number of files converted
and exits 1 when any file failed (the exception names it).
"""
import argparse
import os
from multiprocessing import Pool


def parse(description, extra=None):
    """The peers' arguments; `extra(parser)` adds a peer's own."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--format", choices=["png", "jpeg"], required=True)
    p.add_argument("--quality", type=int, default=90)
    p.add_argument("--compression", type=int, default=1)
    p.add_argument("--processes", type=int, default=os.cpu_count())
    if extra:
        extra(p)
    return p.parse_args()


def jobs(a):
    """(source, target) of every image in a.input, sorted; makes a.output."""
    os.makedirs(a.output, exist_ok=True)
    ext = ".png" if a.format == "png" else ".jpg"
    names = sorted(n for n in os.listdir(a.input) if n.lower().endswith((".png", ".jpg", ".jpeg")))
    return [(os.path.join(a.input, n), os.path.join(a.output, os.path.splitext(n)[0] + ext)) for n in names]


def pool_main(convert, description):
    """Runs convert((source, target, format, quality, compression)) for every file, one file
    per task in a pool of --processes processes."""
    a = parse(description)
    work = [(source, target, a.format, a.quality, a.compression) for source, target in jobs(a)]
    with Pool(a.processes) as pool:
        pool.map(convert, work, chunksize=1)  # an exception in any file fails the run
    print(len(work))
    return 0

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The peer of `streampipe gray` that `streampipe bench gray` times: what a Python user writes
# to turn a folder of images gray on every core - Pillow, one file per task in a process pool.
#   python3 pillow_gray.py IN_DIR OUT_DIR --format png|jpeg [--quality 90] [--compression 1] [--processes N]
# Prints the number of files converted; exits 1 when any file failed.
import argparse
import os
import sys
from multiprocessing import Pool

from PIL import Image


def convert(job):
    source, target, fmt, quality, compression = job
    with Image.open(source) as image:
        gray = image.convert("L")
    if fmt == "png":
        gray.save(target, "PNG", compress_level=compression)
    else:
        gray.save(target, "JPEG", quality=quality)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--format", choices=["png", "jpeg"], required=True)
    p.add_argument("--quality", type=int, default=90)
    p.add_argument("--compression", type=int, default=1)
    p.add_argument("--processes", type=int, default=os.cpu_count())
    a = p.parse_args()
    os.makedirs(a.output, exist_ok=True)
    ext = ".png" if a.format == "png" else ".jpg"
    names = sorted(n for n in os.listdir(a.input) if n.lower().endswith((".png", ".jpg", ".jpeg")))
    jobs = [(os.path.join(a.input, n), os.path.join(a.output, os.path.splitext(n)[0] + ext), a.format, a.quality,
             a.compression) for n in names]
    with Pool(a.processes) as pool:
        pool.map(convert, jobs, chunksize=1)  # an exception in any file fails the run
    print(len(jobs))


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The peer of `streampipe gray` that `streampipe bench gray` times: what a Python user writes
# to turn a folder of images gray on every core - Pillow, one file per task in a process pool.
#   python3 pillow_gray.py IN_DIR OUT_DIR --format png|jpeg [--quality 90] [--compression 1] [--processes N]
# Prints the number of files converted; exits 1 when any file failed (gray_peer.py).
import sys

from PIL import Image

import gray_peer


def convert(job):
    source, target, fmt, quality, compression = job
    with Image.open(source) as image:
        gray = image.convert("L")
    if fmt == "png":
        gray.save(target, "PNG", compress_level=compression)
    else:
        gray.save(target, "JPEG", quality=quality)


if __name__ == "__main__":
    sys.exit(gray_peer.pool_main(convert, "Pillow: a folder of images to gray, a process per core"))

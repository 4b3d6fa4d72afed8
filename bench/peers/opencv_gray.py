#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A peer of `streampipe gray` that `streampipe bench gray` times: what a Python user writes
# with OpenCV to turn a folder of images gray on every core - one file per task in a process
# pool, cv2.imread with IMREAD_GRAYSCALE (libjpeg-turbo then decodes a JPEG's luma only, and
# libpng converts a colour PNG to gray), cv2.imwrite at the level or quality asked.
#   python3 opencv_gray.py IN_DIR OUT_DIR --format png|jpeg [--quality 90] [--compression 1] [--processes N]
# Prints the number of files converted; exits 1 when any file failed (gray_peer.py).
import sys

import cv2

import gray_peer


def convert(job):
    source, target, fmt, quality, compression = job
    # gray does not turn images by their EXIF orientation; neither does this.
    gray = cv2.imread(source, cv2.IMREAD_GRAYSCALE | cv2.IMREAD_IGNORE_ORIENTATION)
    if gray is None:
        raise RuntimeError(f"{source}: cv2.imread could not read it")
    params = [cv2.IMWRITE_PNG_COMPRESSION, compression] if fmt == "png" else [cv2.IMWRITE_JPEG_QUALITY, quality]
    if not cv2.imwrite(target, gray, params):
        raise RuntimeError(f"{target}: cv2.imwrite failed")


if __name__ == "__main__":
    sys.exit(gray_peer.pool_main(convert, "OpenCV: a folder of images to gray, a process per core"))

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A peer of `streampipe gray` that `streampipe bench gray` times: what a Python user writes
# with NVIDIA's nvImageCodec to turn a folder of images gray on the GPU. Files are read and
# decoded in batches (--batch) straight to luma (ColorSpec.GRAY: a JPEG's Y plane from nvJPEG's
# hardware engines or CUDA decoder, as nvImageCodec routes each file; PNGs on its CPU
# decoder), then encoded by nvImageCodec - JPEG by nvJPEG on the GPU at --quality, PNG by its
# CPU encoder at --compression - and every output written. A file the decoder cannot give as
# gray is decoded to RGB and its BT.601 luma (the tool's weights) taken on the GPU with CuPy.
# --processes is nvImageCodec's number of CPU threads.
#   python3 nvimagecodec_gray.py IN_DIR OUT_DIR --format png|jpeg [--quality 90] [--compression 1]
#                                [--processes N] [--batch 64] [--device 0]
# Prints the number of files converted; exits 1 when any file failed, naming it, or when
# nvJPEG (libnvjpeg.so.13) is nowhere to be found: nvImageCodec would then decode every
# file on the CPU, which is not the peer this is.
import ctypes
import glob
import os
import sys

import gray_peer

NVJPEG = "libnvjpeg.so.13"


def load_nvjpeg():
    """Makes nvJPEG loadable by its name for nvImageCodec: already on the loader's path, or
    from the nvidia-nvjpeg wheel or a CUDA toolkit, loaded here first."""
    try:
        ctypes.CDLL(NVJPEG, mode=ctypes.RTLD_GLOBAL)
        return
    except OSError:
        pass
    import nvidia  # the namespace package of NVIDIA's wheels: nvidia-nvjpeg's is nvidia/cu13/lib

    wheels = [path for d in nvidia.__path__ for path in glob.glob(os.path.join(d, "*", "lib", NVJPEG))]
    roots = [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""), "/usr/local/cuda"]
    candidates = list(dict.fromkeys(wheels + [os.path.join(root, lib, NVJPEG) for root in roots if root
                                              for lib in ("lib64", "targets/x86_64-linux/lib")]))
    for path in candidates:
        if os.path.exists(path):
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            return
    raise SystemExit(f"nvimagecodec_gray: {NVJPEG} is not on the loader's path nor in {', '.join(candidates)}: "
                     "install the nvidia-nvjpeg wheel or CUDA 13's toolkit")


def luma_on_gpu(nv, image):
    """The tool's BT.601 luma of a decoded RGB image, on the GPU, as a one-channel image."""
    import cupy as cp

    rgb = cp.asarray(image.cuda()).astype(cp.uint32)
    y = (4899 * rgb[..., 0] + 9617 * rgb[..., 1] + 1868 * rgb[..., 2] + 8192) >> 14
    return nv.as_image(cp.ascontiguousarray(y.astype(cp.uint8)[..., None]))


def main():
    def extra(p):
        p.add_argument("--batch", type=int, default=64, help="files decoded and encoded per call")
        p.add_argument("--device", type=int, default=0)

    a = gray_peer.parse("nvImageCodec: a folder of images to gray on the GPU, in batches", extra)
    if a.batch < 1:
        raise SystemExit("nvimagecodec_gray: --batch must be at least 1")
    work = gray_peer.jobs(a)
    load_nvjpeg()
    from nvidia import nvimgcodec as nv

    decoder = nv.Decoder(device_id=a.device, max_num_cpu_threads=a.processes)
    encoder = nv.Encoder(device_id=a.device, max_num_cpu_threads=a.processes)
    # gray does not turn images by their EXIF orientation; neither does this.
    as_gray = nv.DecodeParams(color_spec=nv.ColorSpec.GRAY, apply_exif_orientation=False)
    as_rgb = nv.DecodeParams(color_spec=nv.ColorSpec.SRGB, apply_exif_orientation=False)
    if a.format == "png":  # the CPU encoder reads host memory; nvJPEG's encoder device memory
        codec, params, place = ".png", nv.EncodeParams(quality_type=nv.QualityType.LOSSLESS,
                                                       quality_value=a.compression), "cpu"
    else:
        codec, params, place = ".jpg", nv.EncodeParams(quality_type=nv.QualityType.QUALITY,
                                                       quality_value=a.quality), "cuda"
    failed, by_cupy = [], 0
    for start in range(0, len(work), a.batch):
        batch = work[start:start + a.batch]
        images = decoder.read([nv.CodeStream(source) for source, _ in batch], params=as_gray)
        for k, image in enumerate(images):
            if image is None or image.num_channels != 1:
                rgb = decoder.read(nv.CodeStream(batch[k][0]), params=as_rgb)
                if rgb is None:
                    failed.append(f"{batch[k][0]}: nvImageCodec could not decode it")
                    continue
                images[k] = luma_on_gpu(nv, rgb)
                by_cupy += 1
        ready = [(target, getattr(image, place)()) for (_, target), image in zip(batch, images) if image is not None]
        written = encoder.write([t for t, _ in ready], [i for _, i in ready], codec=codec, params=params)
        failed += [f"{t}: nvImageCodec could not encode it" for (t, _), w in zip(ready, written) if w is None]
    if failed:
        print("nvimagecodec_gray: " + "\n  ".join(failed), file=sys.stderr)
        return 1
    print(len(work))
    if by_cupy:
        print(f"nvimagecodec_gray: {by_cupy} file(s) decoded to RGB, luma by CuPy", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

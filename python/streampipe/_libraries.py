# SPDX-License-Identifier: Apache-2.0
"""Where the extension finds the NVIDIA libraries it loads at run time. The CUDA runtime is
linked into the extension (private to it); NVRTC is loaded when a kernel first compiles: the
copy already in the process (PyTorch's, CuPy's), else NVIDIA's nvidia-cuda-nvrtc wheel (a
dependency of this package), else the system's (LD_LIBRARY_PATH, the loader's cache,
$CUDA_HOME, $CUDA_PATH, /usr/local/cuda). Nothing is loaded here: the folders are only named."""
from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import List


def nvidia_wheel_dirs(cuda_major: int, search_path: List[str]) -> List[str]:
    """The library folders of NVIDIA's CUDA wheels under `search_path` (sys.path), first found
    first: nvidia/cu13/lib for CUDA 13's wheels, nvidia/cuda_nvrtc/lib for CUDA 12's."""
    subdirs = [os.path.join("nvidia", f"cu{cuda_major}", "lib"), os.path.join("nvidia", "cuda_nvrtc", "lib")]
    found: List[str] = []
    for base in search_path:
        if not base or not os.path.isdir(base):
            continue
        for sub in subdirs:
            d = os.path.join(os.path.abspath(base), sub)
            if d not in found and os.path.isfile(os.path.join(d, f"libnvrtc.so.{cuda_major}")):
                found.append(d)
    return found


def register(core: ModuleType) -> None:
    """Names the wheels' folders to the extension (before its first compile)."""
    core.set_nvrtc_search_dirs(nvidia_wheel_dirs(core.cuda_major, sys.path))

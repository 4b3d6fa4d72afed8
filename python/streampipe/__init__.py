# SPDX-License-Identifier: Apache-2.0
"""streampipe: batches of arrays and images through NVIDIA GPUs at the speed of the
hardware, overlapping copies and kernels across CUDA streams. Imports without a GPU (the
engine then runs on the host backend); info() says which."""
from __future__ import annotations

import os
from typing import Any, Dict

# The engine's lanes are streams, which share CUDA_DEVICE_MAX_CONNECTIONS hardware queues
# (8 by default): ask for 32 unless the user chose. It counts only if set before the CUDA
# driver reads it, which can be before the extension's own first call; the driver reads it
# once for the whole process, so it is the one change importing makes to the environment
# (docs/python.md, "What importing does").
os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "32")

from . import _core, _libraries, ops  # noqa: E402
from ._arguments import In, InOut, Out
from ._arrays import LEGACY_STREAM, ArrayInfo, describe, stream_handle
from ._core import CompileError, CudaError, Error, Event, ImageError, Stream
from .engine import Engine, ItemFuture, ItemResult, Report, StageRecord
from .images import imread, imwrite
from .kernels import (DEFAULT_ARCH, CompileResult, ElementwiseKernel, Function, LoadStats, ReductionKernel,
                      SourceModule, c_type, compile)
from .memory import (DeviceArray, copy, empty, pinned_copy, pinned_empty, pinned_zeros, to_device, zeros)

_libraries.register(_core)

# The C++ library's version (the wheel's too: both come from CMakeLists.txt).
__version__: str = _core.__version__


def info() -> Dict[str, Any]:
    """Version, CUDA runtime/driver/NVRTC versions (and the NVRTC file in use, None when it
    is not installed), the usable GPUs, and the backend an engine gets by default ("gpu", or
    "host" with the reason)."""
    return _core.info()


def device_count() -> int:
    return _core.device_count()


def synchronize(device: int = 0) -> None:
    """Waits for all work on the device (every stream); the GIL is released."""
    _core.device_synchronize(device)


def set_device(device: int) -> None:
    """Makes `device` this thread's current device (its primary context)."""
    _core.set_device(device)


def get_device() -> int:
    return _core.current_device()


def device_memory(device: int = 0):
    """(free, total) bytes of the device."""
    return _core.device_memory(device)


def clear_kernel_memory_cache() -> None:
    """Forgets the in-memory kernel cache (the disk cache stays)."""
    _core.clear_memory_cache()


__all__ = ["info", "device_count", "synchronize", "set_device", "get_device", "device_memory", "Engine",
           "ItemFuture", "ItemResult", "Report", "StageRecord", "ops", "SourceModule", "Function",
           "ElementwiseKernel", "ReductionKernel", "compile", "CompileResult", "LoadStats", "c_type", "In", "Out",
           "InOut", "DeviceArray", "empty", "zeros", "to_device", "pinned_empty", "pinned_zeros", "pinned_copy",
           "copy", "describe", "ArrayInfo", "stream_handle", "LEGACY_STREAM", "Stream", "Event", "Error",
           "CudaError", "CompileError", "ImageError", "clear_kernel_memory_cache", "imread", "imwrite",
           "DEFAULT_ARCH"]

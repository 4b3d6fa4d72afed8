# SPDX-License-Identifier: Apache-2.0
"""What an array is, wherever it lives: numpy and buffer-protocol objects (host memory),
objects with ``__cuda_array_interface__`` (CuPy, PyTorch CUDA tensors, Numba, our
DeviceArray) and DLPack producers (``__dlpack__``). No data is copied to find out."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Tuple

import numpy as np

from . import _core

# DLPack device types (dlpack.h): what a producer's __dlpack_device__ says.
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_CODES = {0: "i", 1: "u", 2: "f", 6: "b"}


@dataclass(frozen=True)
class ArrayInfo:
    ptr: int
    shape: Tuple[int, ...]
    dtype: np.dtype
    place: str              # "pageable", "pinned", "device" or "managed"
    device: int             # the GPU for device/managed memory, else -1
    contiguous: bool        # C order, no gaps
    readonly: bool
    owner: Any              # keeps the memory alive while the engine or a kernel uses it
    nbytes: int = -1        # computed from shape and dtype

    def __post_init__(self):
        if self.nbytes < 0:
            count = 1
            for n in self.shape:
                count *= int(n)
            object.__setattr__(self, "nbytes", count * self.dtype.itemsize)

    @property
    def on_device(self) -> bool:
        return self.place in ("device", "managed")


def _c_contiguous(shape, strides_bytes, itemsize) -> bool:
    if strides_bytes is None:
        return True
    expected = itemsize
    for n, s in zip(reversed(shape), reversed(strides_bytes)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def _host_place(ptr: int) -> Tuple[str, int]:
    if _core.device_count() == 0:
        return "pageable", -1
    return _core.pointer_place(ptr)


def describe(obj: Any) -> ArrayInfo:
    """An ArrayInfo for obj; TypeError when obj is no array streampipe can read."""
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        ptr, readonly = cai["data"]
        shape = tuple(int(n) for n in cai["shape"])
        dtype = np.dtype(cai["typestr"])
        strides = cai.get("strides")
        place, device = _core.pointer_place(ptr) if ptr else ("device", -1)
        return ArrayInfo(ptr, shape, dtype, place, device, _c_contiguous(shape, strides, dtype.itemsize),
                         bool(readonly), obj)
    if isinstance(obj, np.ndarray):
        ptr = obj.__array_interface__["data"][0]
        place, device = _host_place(ptr)
        return ArrayInfo(ptr, obj.shape, obj.dtype, place, device, obj.flags.c_contiguous,
                         not obj.flags.writeable, obj)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        dev_type, dev_id = obj.__dlpack_device__()
        if dev_type in (_DL_CPU, _DL_CUDA_HOST):
            return describe(np.from_dlpack(obj))
        ptr, shape, strides, (code, bits, lanes), _, _ = _core.dlpack_describe(obj)
        if lanes != 1 or code not in _DL_CODES:
            raise TypeError(f"DLPack dtype (code {code}, {bits} bits, {lanes} lanes) is not supported")
        dtype = np.dtype("?" if code == 6 else f"{_DL_CODES[code]}{bits // 8}")
        strides_bytes = tuple(s * dtype.itemsize for s in strides) if strides else None
        place = "managed" if dev_type == _DL_CUDA_MANAGED else "device"
        return ArrayInfo(ptr, tuple(shape), dtype, place, int(dev_id),
                         _c_contiguous(shape, strides_bytes, dtype.itemsize), False, obj)
    try:
        view = np.asarray(memoryview(obj))
    except TypeError:
        raise TypeError(f"{type(obj).__name__} is not an array streampipe can read: it has no "
                        "__cuda_array_interface__, __dlpack__ or buffer interface") from None
    return describe(view)


def stream_handle(stream: Optional[Any]) -> int:
    """The cudaStream_t of a stream given as an int, or an object with __cuda_stream__
    (streampipe, CuPy, CUDA Python) or .cuda_stream (PyTorch). None: the legacy default
    stream, said explicitly (handle 1, cudaStreamLegacy), which synchronous copies wait for."""
    if stream is None:
        return LEGACY_STREAM
    if isinstance(stream, int):
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        version_and_handle = protocol() if callable(protocol) else protocol
        return int(version_and_handle[1])
    for attribute in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attribute, None)
        if isinstance(value, int):
            return value
    raise TypeError(f"{type(stream).__name__} is not a CUDA stream (no __cuda_stream__, cuda_stream or ptr)")


LEGACY_STREAM = 1  # cudaStreamLegacy

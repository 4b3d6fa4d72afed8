# SPDX-License-Identifier: Apache-2.0
"""Device arrays, pinned host arrays and copies between any of them.

A DeviceArray is a C-contiguous array in GPU memory that CuPy, PyTorch and numba read
without a copy (``__cuda_array_interface__`` and ``__dlpack__``). Pinned arrays are numpy
arrays over page-locked blocks of streampipe's pool: the engine sends them to the GPU
without staging."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _core
from ._arrays import describe, stream_handle

Shape = Union[int, Sequence[int]]

_DLPACK_CODE = {"i": 0, "u": 1, "f": 2, "b": 6}


def _shape(shape: Shape) -> tuple:
    return (int(shape),) if np.isscalar(shape) else tuple(int(n) for n in shape)


class DeviceArray:
    """C-contiguous device memory with a shape and dtype (cudaMalloc, freed with the object)."""

    def __init__(self, shape: Shape, dtype: Any = np.float32, device: int = 0):
        self.shape = _shape(shape)
        self.dtype = np.dtype(dtype)
        if any(n < 0 for n in self.shape):
            raise ValueError(f"negative dimension in shape {self.shape}")
        self._allocation = _core.DeviceAllocation(max(self.nbytes, 1), device)

    @property
    def ptr(self) -> int:
        return self._allocation.ptr

    @property
    def device(self) -> int:
        return self._allocation.device

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, device={self.device})"

    @property
    def __cuda_array_interface__(self) -> dict:
        # Stream None: no stream to synchronize with; our copies and launches without a
        # stream run on the legacy default stream, which other streams' work waits for.
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                "version": 3, "strides": None, "stream": None}

    def __dlpack_device__(self):
        return (2, self.device)  # kDLCUDA

    def __dlpack__(self, stream: Optional[int] = None, **kwargs):
        if self.dtype.kind not in _DLPACK_CODE:
            raise TypeError(f"dtype {self.dtype} has no DLPack code")
        # A fresh DLPack capsule whose deleter keeps this array alive; the data stays where it is.
        return _core.dlpack_view(self.ptr, list(self.shape), [], _DLPACK_CODE[self.dtype.kind],
                                 self.dtype.itemsize * 8, self.device, self)

    def get(self, out: Optional[np.ndarray] = None, stream: Any = None) -> np.ndarray:
        """The contents as a numpy array (into `out` when given). With a stream, the copy is
        enqueued there and the caller synchronizes before reading `out`."""
        if out is None:
            out = np.empty(self.shape, self.dtype)
        copy(out, self, stream=stream)
        return out

    def set(self, array: Any, stream: Any = None) -> "DeviceArray":
        """Copies `array` (host or device, same shape and dtype) into this one."""
        copy(self, array, stream=stream)
        return self

    def fill_zero(self, stream: Any = None) -> "DeviceArray":
        _core.fill_bytes(self.ptr, 0, self.nbytes, 0 if stream is None else stream_handle(stream), self.device)
        return self


def empty(shape: Shape, dtype: Any = np.float32, device: int = 0) -> DeviceArray:
    return DeviceArray(shape, dtype, device)


def zeros(shape: Shape, dtype: Any = np.float32, device: int = 0) -> DeviceArray:
    return DeviceArray(shape, dtype, device).fill_zero()


def to_device(array: Any, device: int = 0, stream: Any = None) -> DeviceArray:
    """A DeviceArray holding a copy of `array` (numpy or any array streampipe reads)."""
    info = describe(array)
    out = DeviceArray(info.shape, info.dtype, device)
    copy(out, array, stream=stream)
    return out


def pinned_empty(shape: Shape, dtype: Any = np.float32) -> np.ndarray:
    """A numpy array over page-locked memory from streampipe's pool (plain memory when no
    GPU is usable: the host backend needs no pinning). The block returns to the pool when
    the array and all its views are gone."""
    shape = _shape(shape)
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if _core.device_count() == 0:
        return np.empty(shape, dtype)
    raw = _core.pinned_bytes(max(nbytes, 1))
    return raw[:nbytes].view(dtype).reshape(shape)


def pinned_zeros(shape: Shape, dtype: Any = np.float32) -> np.ndarray:
    a = pinned_empty(shape, dtype)
    a.fill(0)
    return a


def pinned_copy(array: Any) -> np.ndarray:
    """A pinned copy of a host array."""
    a = np.asarray(array)
    out = pinned_empty(a.shape, a.dtype)
    out[...] = a
    return out


def copy(dst: Any, src: Any, stream: Any = None) -> None:
    """Copies src into dst: any pair of host (pageable or pinned) and device arrays of the
    same size in bytes, both C-contiguous. Without a stream the copy is synchronous."""
    d, s = describe(dst), describe(src)
    if not d.contiguous or not s.contiguous:
        raise ValueError("copy needs C-contiguous arrays")
    if d.readonly:
        raise ValueError("the destination is read-only")
    if d.nbytes != s.nbytes:
        raise ValueError(f"copy of {s.nbytes} bytes into {d.nbytes}")
    if d.nbytes == 0:
        return
    if not d.on_device and not s.on_device and _core.device_count() == 0:
        np.copyto(np.asarray(dst).reshape(-1).view(np.uint8), np.asarray(src).reshape(-1).view(np.uint8))
        return
    device = d.device if d.on_device else (s.device if s.on_device else 0)
    _core.copy(d.ptr, s.ptr, d.nbytes, 0 if stream is None else stream_handle(stream), device)

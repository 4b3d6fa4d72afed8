# SPDX-License-Identifier: Apache-2.0
"""Kernel arguments classified for the C++ side (python/src/arguments.hpp): device arrays
become pointers, numpy scalars keep their size, Python ints and floats take the size of
the parameter they are passed to."""
from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np

from ._arrays import describe


class _HostTransfer:
    """A host array copied to the device for one launch (PyCUDA's In/Out/InOut)."""

    copy_in = False
    copy_out = False

    def __init__(self, array: np.ndarray):
        if not isinstance(array, np.ndarray):
            raise TypeError(f"{type(self).__name__} takes a numpy array, not {type(array).__name__}")
        if not array.flags.c_contiguous:
            raise ValueError(f"{type(self).__name__} needs a C-contiguous array")
        self.array = array


class In(_HostTransfer):
    """Copied to the device before the launch."""
    copy_in = True


class Out(_HostTransfer):
    """Copied back to the host after the launch (which then waits for the stream)."""
    copy_out = True


class InOut(_HostTransfer):
    """Copied in before and back after the launch."""
    copy_in = True
    copy_out = True


def classify(arg: Any, position: int, device: int) -> Tuple:
    """One argument as ("p", address, itemsize), ("i"|"u"|"f", value, size) or ("b", bytes)."""
    if isinstance(arg, (bool, np.bool_)):
        return ("u", int(arg), 1 if isinstance(arg, np.bool_) else 0)
    if isinstance(arg, np.generic):
        kind = arg.dtype.kind
        if kind in "iuf":
            return (kind, arg.item(), arg.dtype.itemsize)
        return ("b", arg.tobytes())
    if isinstance(arg, int):
        return ("i" if arg < 0 or arg < 2**63 else "u", arg, 0)
    if isinstance(arg, float):
        return ("f", arg, 0)
    if isinstance(arg, (bytes, bytearray)):
        return ("b", bytes(arg))
    if arg is None:
        return ("p", 0, 0)
    info = describe(arg)
    if info.on_device:
        if info.device != device and info.place == "device":
            raise ValueError(f"kernel argument {position}: an array on GPU {info.device}, the kernel is on GPU {device}")
        return ("p", info.ptr, info.dtype.itemsize)
    if info.place == "pinned":
        return ("p", info.ptr, info.dtype.itemsize)  # mapped: the kernel reads it over the link
    raise ValueError(f"kernel argument {position}: a host array in pageable memory; pass a device array, "
                     "a pinned array, or wrap it in streampipe.In/Out/InOut")


def classify_all(args: List[Any], device: int) -> List[Tuple]:
    return [classify(a, k, device) for k, a in enumerate(args)]

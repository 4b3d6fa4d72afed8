# SPDX-License-Identifier: Apache-2.0
"""Operations an Engine applies to every item: the built-in ones (each with a GPU and a
host form), or a runtime kernel with its launch rule, its output's dtype and shape, and
optionally a host form written with numpy.

A kernel operation's kernel takes (const T* in, U* out, n, extra...) and is launched once
per item with n the item's output element count (count="in": its input's), a 1-D grid of
ceil(n / block) blocks unless grid= fixes it. An elementwise operation's kernel takes
(in array, out array, extra...) and runs over the same n. A host form is fn(x, out) with
flat numpy views of one item's input and output."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, Tuple

import numpy as np

from . import _core
from ._arguments import classify_all
from .kernels import ElementwiseKernel, Function

ShapeRule = Callable[[Tuple[int, ...]], Tuple[int, ...]]


@dataclass(frozen=True)
class Operation:
    """An operation with what the engine checks before an item is submitted."""
    core: Any                                # _core.Operation
    name: str
    in_dtype: Optional[np.dtype]             # None: any dtype
    out_dtype: Optional[np.dtype]            # None: the input's
    out_shape_rule: ShapeRule
    keep: Any = field(default=None, repr=False, compare=False)  # e.g. the module a kernel lives in

    @property
    def has_device(self) -> bool:
        return self.core.has_device

    @property
    def has_host(self) -> bool:
        return self.core.has_host

    def output_for(self, shape: Tuple[int, ...], dtype: np.dtype) -> Tuple[Tuple[int, ...], np.dtype]:
        """The output's shape and dtype for an input; ValueError when the input does not fit."""
        if self.in_dtype is not None and dtype != self.in_dtype:
            raise ValueError(f"{self.name} takes {self.in_dtype}, not {dtype}")
        return tuple(self.out_shape_rule(tuple(shape))), (self.out_dtype if self.out_dtype is not None else dtype)


def _same(shape):
    return shape


def _rgb_to_gray(shape):
    if len(shape) < 1 or shape[-1] != 3:
        raise ValueError(f"gray takes (..., 3) RGB arrays, not shape {shape}")
    return shape[:-1]


def gray() -> Operation:
    """Interleaved RGB uint8 (..., 3) -> luma uint8 (...)."""
    return Operation(_core.gray_operation(), "gray", np.dtype(np.uint8), np.dtype(np.uint8), _rgb_to_gray)


def multiply_divide(blocks: int = 1, threads: int = 64, repeats: int = 50) -> Operation:
    """The chapter's single-block kernel over float32 arrays (several arrays batch into one launch)."""
    return Operation(_core.multiply_divide_operation(blocks, threads, repeats), "multiply_divide",
                     np.dtype(np.float32), np.dtype(np.float32), _same)


def affine(a: float, b: float) -> Operation:
    """y = a x + b over float32."""
    return Operation(_core.affine_operation(float(a), float(b)), "affine", np.dtype(np.float32),
                     np.dtype(np.float32), _same)


def _host_adapter(fn: Optional[Callable], in_dtype: np.dtype, out_dtype: np.dtype):
    if fn is None:
        return None

    def run(inp, out, index):
        fn(np.frombuffer(inp, in_dtype), np.frombuffer(out, out_dtype))

    return run


def _dtypes(in_dtype, out_dtype):
    i = np.dtype(in_dtype)
    return i, (np.dtype(out_dtype) if out_dtype is not None else i)


def from_kernel(function: Function, in_dtype: Any, out_dtype: Any = None, out_shape: Optional[ShapeRule] = None,
                block: int = 256, grid: Optional[int] = None, shared: int = 0, count: str = "out",
                args: Sequence[Any] = (), host: Optional[Callable] = None, name: Optional[str] = None) -> Operation:
    """A SourceModule kernel (in, out, n, *args) as an operation."""
    i, o = _dtypes(in_dtype, out_dtype)
    if count not in ("in", "out"):
        raise ValueError("count is 'in' or 'out'")
    name = name or function.name
    core = _core.kernel_operation(name, function._kernel, int(block), int(grid or 0), int(shared), count == "out",
                                  i.itemsize, o.itemsize, classify_all(list(args), function._kernel.device),
                                  _host_adapter(host, i, o))
    return Operation(core, name, i, o, out_shape or _same, keep=function)


def from_elementwise(kernel: ElementwiseKernel, in_dtype: Any, out_dtype: Any = None,
                     out_shape: Optional[ShapeRule] = None, count: str = "out", args: Sequence[Any] = (),
                     host: Optional[Callable] = None) -> Operation:
    """An ElementwiseKernel with parameters (in array, out array, *args) as an operation."""
    i, o = _dtypes(in_dtype, out_dtype)
    if count not in ("in", "out"):
        raise ValueError("count is 'in' or 'out'")
    core = _core.elementwise_operation(kernel.name, kernel._kernel, count == "out", i.itemsize, o.itemsize,
                                       classify_all(list(args), 0), _host_adapter(host, i, o))
    return Operation(core, kernel.name, i, o, out_shape or _same)


def from_function(fn: Callable, in_dtype: Any, out_dtype: Any = None, out_shape: Optional[ShapeRule] = None,
                  name: str = "function") -> Operation:
    """A numpy function fn(x, out) as a host-backend-only operation."""
    i, o = _dtypes(in_dtype, out_dtype)
    return Operation(_core.host_operation(name, _host_adapter(fn, i, o)), name, i, o, out_shape or _same)


__all__ = ["Operation", "gray", "multiply_divide", "affine", "from_kernel", "from_elementwise", "from_function"]

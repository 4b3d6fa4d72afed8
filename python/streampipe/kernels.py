# SPDX-License-Identifier: Apache-2.0
"""Runtime kernels, PyCUDA- and CuPy-shaped, compiled by NVRTC through the same memory and
disk caches as C++ (a kernel compiled here is a cache hit from C++ and back). Compiling
releases the GIL; a source that does not compile raises CompileError with NVRTC's log and
the offending lines, numbered.

    mod = SourceModule('__global__ void add(const float* a, const float* b, float* c, int n)'
                       '{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }')
    add = mod.get_function("add")
    add(a, b, c, np.int32(n), grid=((n + 255) // 256,), block=(256,))

    axpb = ElementwiseKernel("const float* x, float* y, float a, float b", "y[i] = a * x[i] + b")
    axpb(x, y, 2.0, 1.0)

    dot = ReductionKernel(np.float32, "0.0f", "a + b", "x[i] * y[i]", "const float* x, const float* y")
    value = dot(x, y)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._arguments import In, InOut, Out, _HostTransfer, classify_all
from ._arrays import describe, stream_handle
from .memory import DeviceArray, copy

Dim = Union[int, Sequence[int]]

_C_TYPES = {
    np.dtype(np.float32): "float", np.dtype(np.float64): "double",
    np.dtype(np.int8): "signed char", np.dtype(np.uint8): "unsigned char",
    np.dtype(np.int16): "short", np.dtype(np.uint16): "unsigned short",
    np.dtype(np.int32): "int", np.dtype(np.uint32): "unsigned int",
    np.dtype(np.int64): "long long", np.dtype(np.uint64): "unsigned long long",
}


def c_type(dtype: Any) -> str:
    """The CUDA C type of a numpy dtype (a string is taken as the C type itself)."""
    if isinstance(dtype, str) and not dtype.startswith(("float", "int", "uint")):
        return dtype
    dt = np.dtype(dtype)
    if dt not in _C_TYPES:
        raise ValueError(f"no CUDA C type for dtype {dt}")
    return _C_TYPES[dt]


def _dim3(d: Dim) -> Tuple[int, int, int]:
    t = (int(d),) if np.isscalar(d) else tuple(int(x) for x in d)
    if not 1 <= len(t) <= 3 or any(x < 1 for x in t):
        raise ValueError(f"a grid or block is 1 to 3 positive sizes, not {d!r}")
    return t + (1,) * (3 - len(t))


@dataclass(frozen=True)
class LoadStats:
    """How a kernel was obtained: origin is "memory", "disk" or "compiled"."""
    origin: str
    key: str
    compile_ms: float
    total_ms: float
    cache_warning: str = ""

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "LoadStats":
        return cls(d["origin"], d["key"], d["compile_ms"], d["total_ms"], d["cache_warning"])


@dataclass(frozen=True)
class CompileResult:
    arch: str
    kind: str                 # "cubin" or "ptx"
    log: str
    binary: bytes
    lowered: Dict[str, str]
    stats: LoadStats = field(repr=False)


# What compile() targets without `arch` where the process has no GPU to take it from: the
# architecture the C++ library is built for by default (CMakeLists.txt), so that a kernel
# compiled on a build machine matches the library's own.
DEFAULT_ARCH = "sm_90"


def compile(source: str, arch: Optional[str] = None, name: str = "module.cu", options: Sequence[str] = (),
            include_dirs: Sequence[str] = (), name_expressions: Sequence[str] = (), cache: bool = True,
            device: int = 0) -> CompileResult:
    """NVRTC alone, through the disk cache; no GPU needed. `arch` ("sm_90", "compute_90")
    defaults to `device`'s architecture, or DEFAULT_ARCH where the process has no GPU."""
    if arch is None:
        arch = _core.default_arch(device) if _core.device_count() > 0 else DEFAULT_ARCH
    d = _core.compile(source, name, list(options), list(include_dirs), list(name_expressions), arch, cache)
    return CompileResult(d["arch"], d["kind"], d["log"], d["binary"], dict(d["lowered"]), LoadStats.from_dict(d))


class Function:
    """A kernel of a SourceModule: call it with its arguments, grid, block, shared memory
    and stream. Python ints and floats take the size of their parameter; In/Out/InOut copy
    host arrays around the launch (and make the call wait for the stream)."""

    def __init__(self, kernel: "_core.Kernel", module: "SourceModule"):
        self._kernel = kernel
        self._module = module  # keeps the module loaded

    @property
    def name(self) -> str:
        return self._kernel.name

    @property
    def param_sizes(self):
        return self._kernel.param_sizes

    def max_active_blocks_per_sm(self, block: int, dynamic_shared: int = 0) -> int:
        return self._kernel.max_active_blocks_per_sm(block, dynamic_shared)

    def __call__(self, *args: Any, grid: Dim = 1, block: Dim = 1, shared: int = 0, stream: Any = None) -> None:
        device = self._kernel.device
        handle = stream_handle(stream)
        staged = []
        launch_args = []
        for a in args:
            if isinstance(a, _HostTransfer):
                d = DeviceArray(a.array.shape, a.array.dtype, device)
                if a.copy_in:
                    copy(d, a.array, stream=handle)
                staged.append((a, d))
                launch_args.append(d)
            else:
                launch_args.append(a)
        self._kernel.launch(_dim3(grid), _dim3(block), int(shared), handle, classify_all(launch_args, device))
        outs = [(a, d) for a, d in staged if a.copy_out]
        for a, d in outs:
            copy(a.array, d, stream=handle)
        if staged:
            _core.stream_synchronize(handle, device)  # the temporaries must outlive the launch


class SourceModule:
    """CUDA source compiled (or found in the caches) and loaded on a device. Like PyCUDA's,
    the source is wrapped in extern "C" so that kernels keep their names; pass
    no_extern_c=True for C++ kernels (then look them up by name expression)."""

    def __init__(self, source: str, options: Sequence[str] = (), no_extern_c: bool = False, name: str = "module.cu",
                 include_dirs: Sequence[str] = (), name_expressions: Sequence[str] = (), device: int = 0,
                 cache: bool = True):
        self.source = source if no_extern_c else f'extern "C" {{\n{source}\n}}\n'
        self._module = _core.Module(self.source, name, list(options), list(include_dirs), list(name_expressions),
                                    device, cache)
        self.load_stats = LoadStats.from_dict(self._module.load_stats)

    @property
    def device(self) -> int:
        return self._module.device

    @property
    def log(self) -> str:
        return self._module.log

    def get_function(self, name: str) -> Function:
        return Function(self._module.function(name), self)

    def kernel_names(self):
        return list(self._module.kernel_names())


def _extent(name: str, args: Sequence[Any], n: Optional[int]) -> Tuple[int, int]:
    """(device, n) of a generated kernel's launch: the first array's GPU (else 0) and size."""
    first = next((describe(a) for a in args if hasattr(a, "__cuda_array_interface__") or hasattr(a, "__dlpack__")
                  or isinstance(a, np.ndarray)), None)
    if first is None and n is None:
        raise ValueError(f"{name}: no array argument to take n from; pass n=")
    device = first.device if first is not None and first.on_device else 0
    return device, (int(n) if n is not None else int(np.prod(first.shape, dtype=np.int64)))


class ElementwiseKernel:
    """A kernel from a parameter list and a per-element operation over i in [0, n); n is the
    first array's size unless given. Compiled per device on first use."""

    def __init__(self, arguments: str, operation: str, name: str = "sp_elementwise", preamble: str = "",
                 options: Sequence[str] = (), block: int = 256, cache: bool = True):
        self._kernel = _core.ElementwiseKernel(arguments, operation, name, preamble, list(options), block, cache)
        self.name = name

    @property
    def source(self) -> str:
        return self._kernel.source

    @property
    def params(self):
        return self._kernel.params

    def prepare(self, device: int = 0) -> LoadStats:
        """Compiles (or loads) for `device` ahead of the first call."""
        return LoadStats.from_dict(self._kernel.prepare(device))

    def __call__(self, *args: Any, n: Optional[int] = None, stream: Any = None) -> None:
        device, count = _extent(self.name, args, n)
        self._kernel.launch(stream_handle(stream), device, count, classify_all(list(args), device))


class ReductionKernel:
    """A reduction (PyCUDA's argument order): map_expr gives element i's value, reduce_expr
    combines a and b, neutral is the identity. Returns a numpy scalar (waiting for the
    stream), or writes into `out` (a one-element device array) without waiting."""

    def __init__(self, dtype_out: Any, neutral: str, reduce_expr: str, map_expr: str, arguments: str,
                 post_map: str = "a", name: str = "sp_reduction", preamble: str = "", options: Sequence[str] = (),
                 block: int = 256, cache: bool = True):
        self.dtype = np.dtype(dtype_out) if not isinstance(dtype_out, str) else None
        self._kernel = _core.ReductionKernel(c_type(dtype_out), arguments, map_expr, reduce_expr, str(neutral),
                                             post_map, name, preamble, list(options), block, cache)
        self.name = name

    @property
    def source(self) -> str:
        return self._kernel.source

    def prepare(self, device: int = 0) -> LoadStats:
        return LoadStats.from_dict(self._kernel.prepare(device))

    def __call__(self, *args: Any, n: Optional[int] = None, stream: Any = None, out: Any = None):
        device, count = _extent(self.name, args, n)
        handle = stream_handle(stream)
        size = self._kernel.result_size(device)
        if out is not None:
            target = out
        elif self.dtype is not None:
            target = DeviceArray((1,), self.dtype, device)
        else:  # a C type of the preamble's: its bytes
            target = DeviceArray((size,), np.uint8, device)
        info = describe(target)
        if info.nbytes != size:
            raise ValueError(f"{self.name}: out holds {info.nbytes} bytes, the result is {size}")
        self._kernel.launch(handle, device, count, info.ptr, size, classify_all(list(args), device))
        if out is not None:
            return out
        host = np.empty(info.shape, info.dtype)
        copy(host, target, stream=handle)
        _core.stream_synchronize(handle, device)
        return host[0] if self.dtype is not None else host.tobytes()


__all__ = ["SourceModule", "Function", "ElementwiseKernel", "ReductionKernel", "compile", "CompileResult",
           "LoadStats", "In", "Out", "InOut", "c_type", "DEFAULT_ARCH"]

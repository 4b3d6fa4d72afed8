# SPDX-License-Identifier: Apache-2.0
"""The pipeline engine over arrays: items go host -> device -> host on several lanes,
overlapping both copy directions, the kernels and the host staging of other items.

    with Engine(ops.gray()) as engine:
        grays = engine.map(images)                 # outputs in order
        fut = engine.submit(image)                 # a Future (awaitable from asyncio)
        gray = fut.result()
        print(engine.report().bottleneck)

Inputs may be numpy arrays (staged through the pinned ring), pinned arrays
(pinned_empty), or device arrays (CuPy, PyTorch, DeviceArray: copied on the device, no
host round trip); outputs likewise, allocated like the input when not given. Lanes, depth
and batching come from the planner unless given. The GIL is released while the engine
works; Ctrl-C in map() or drain() cancels, waits until nothing is running, and raises
KeyboardInterrupt. An engine's own threads (on_complete, a host function) may submit but
never wait: close(), drain() or map() there, or a submit() that finds no room, raises
RuntimeError. Closed means closed: every later call raises ValueError, as a closed file
does; after fork() the child's copy of a started engine raises RuntimeError."""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

import numpy as np

from . import _core
from ._arrays import ArrayInfo, describe
from .memory import DeviceArray
from .ops import Operation


@dataclass(frozen=True)
class ItemResult:
    index: int
    label: str
    status: str                     # "done", "failed" or "cancelled"
    error: str
    exception: Optional[BaseException]
    lane: int                       # engine-wide: device position x lanes + the device's lane
    device: int                     # the GPU (or simulated device) that ran it; -1: none did
    batch_size: int
    timing: Dict[str, float] = field(repr=False)

    @property
    def ok(self) -> bool:
        return self.status == "done"


@dataclass(frozen=True)
class StageRecord:
    stage: str                      # "queue", "stage in", "H2D", "compute", "D2H", "stage out"
    lane: int                       # -1: a host worker
    first_item: int
    items: int
    start_ms: float
    end_ms: float
    bytes: int
    device: int = -1                # the device of a device stage; -1: a host stage


@dataclass(frozen=True)
class Report:
    wall_ms: float
    items: int
    bytes_in: int
    bytes_out: int
    h2d_gbps: float
    d2h_gbps: float
    bottleneck: str
    overlap_efficiency: float
    stages: List[Dict[str, Any]]


class ItemFuture(concurrent.futures.Future):
    """The output array of one item; `item` holds its ItemResult once resolved."""

    item: Optional[ItemResult] = None

    def __await__(self):
        return asyncio.wrap_future(self).__await__()


def _item_exception(r: ItemResult) -> BaseException:
    if r.status == "cancelled":
        return concurrent.futures.CancelledError(r.error)
    if r.exception is not None:
        return r.exception
    return RuntimeError(r.error)


@dataclass
class _Prepared:
    source: ArrayInfo
    target: ArrayInfo
    out: Any
    label: str

    def span(self):
        return (self.source.ptr, self.source.nbytes, self.target.ptr, self.target.nbytes, self.label)


class Engine:
    """An engine applying `operation` to arrays. Options left as None are chosen by the
    planner from the first items (GPU) or take the library's defaults (host backend).
    `devices` (default: [device]) spreads the items over several GPUs, each item to the one
    expected to finish it first; on the host backend it names simulated devices."""

    _closed: bool = False  # close() was called: every later use raises

    def __init__(self, operation: Operation, *, backend: str = "auto", device: int = 0,
                 devices: Optional[Sequence[int]] = None, lanes: Optional[int] = None,
                 depth: Optional[int] = None, batch_items: Optional[int] = None, batch_bytes: Optional[int] = None,
                 staging_bytes: Optional[int] = None, use_graphs: bool = False, in_order: bool = False,
                 host_threads: int = 0, record_timeline: bool = True,
                 on_complete: Optional[Callable[[ItemResult], None]] = None):
        if backend not in ("auto", "gpu", "host"):
            raise ValueError(f"backend must be 'auto', 'gpu' or 'host', not {backend!r}")
        if backend == "auto":
            backend = "gpu" if _core.device_count() > 0 and operation.has_device else "host"
        if backend == "gpu" and _core.device_count() == 0:
            raise RuntimeError(f"backend 'gpu' asked for, but no GPU is usable: {_core.device_unavailable_reason()}")
        if backend == "gpu" and not operation.has_device:
            raise ValueError(f"{operation.name} has no device form")
        if backend == "host" and not operation.has_host:
            why = "" if _core.device_count() > 0 else f" (no GPU: {_core.device_unavailable_reason()})"
            raise ValueError(f"{operation.name} has no host form, so the host backend cannot run it{why}; "
                             "give the operation host=")
        self.operation = operation
        self.backend = backend
        chosen = [device] if devices is None else list(devices)
        if not chosen or any(not isinstance(d, int) or d < 0 for d in chosen):
            raise ValueError(f"devices must be a non-empty list of GPU indices (or, on the host backend, simulated "
                             f"devices), not {devices!r}")
        # The GPUs the engine spreads items over (each to the one expected to finish it first).
        self.devices = chosen
        self.device = chosen[0] if backend == "gpu" else -1
        self.plan_reason = ""
        self._options = dict(lanes=lanes, depth=depth, batch_items=batch_items, batch_bytes=batch_bytes,
                             staging_bytes=staging_bytes)
        self._settings = _core.EngineSettings()
        self._settings.backend = backend
        self._settings.devices = chosen
        self._settings.use_graphs = use_graphs
        self._settings.in_order = in_order
        self._settings.host_threads = host_threads
        self._settings.record_timeline = record_timeline
        self._on_complete = on_complete
        self._core: Optional[Any] = None
        self._submitted = 0

    # ---- the engine itself --------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("the engine is closed")

    def _start(self, sample: Optional[_Prepared], count: int) -> Any:
        self._check_open()
        if self._core is not None:
            return self._core
        s = self._settings
        given = {k: v for k, v in self._options.items() if v is not None}
        for k, v in given.items():
            setattr(s, k, int(v))
        unplanned = [k for k in ("lanes", "depth", "batch_items") if k not in given]
        if self.backend == "gpu" and unplanned and sample is not None:
            plan = _core.plan(self.operation.core, sample.source.ptr, sample.source.nbytes, sample.target.nbytes,
                              max(count, 1), s)
            for k in unplanned + [k for k in ("batch_bytes", "staging_bytes") if k not in given]:
                setattr(s, k, int(plan[k]))
            self.plan_reason = plan["reason"]
        self._core = _core.Engine(self.operation.core, s, _resolve)
        return self._core

    def describe(self) -> str:
        return self._start(None, 0).describe()

    # ---- items --------------------------------------------------------------------------

    def _prepare(self, index: int, array: Any, out: Any, label: str) -> _Prepared:
        try:
            source = describe(array)
        except TypeError as e:
            raise ValueError(f"item {index}: {e}") from None
        if not source.contiguous:
            raise ValueError(f"item {index}: the input is not C-contiguous (use np.ascontiguousarray)")
        if source.nbytes == 0:
            raise ValueError(f"item {index}: the input is empty")
        self._check_place(index, "input", source)
        try:
            shape, dtype = self.operation.output_for(source.shape, source.dtype)
        except ValueError as e:
            raise ValueError(f"item {index}: {e}") from None
        if out is None:
            out = DeviceArray(shape, dtype, source.device) if source.on_device else np.empty(shape, dtype)
        target = describe(out)
        if target.shape != shape or target.dtype != dtype:
            raise ValueError(f"item {index}: the output must be {shape} {dtype}, not {target.shape} {target.dtype}")
        if not target.contiguous or target.readonly:
            raise ValueError(f"item {index}: the output must be C-contiguous and writable")
        self._check_place(index, "output", target)
        return _Prepared(source, target, out, label or "")

    def _check_place(self, index: int, what: str, info: ArrayInfo) -> None:
        if not info.on_device:
            return
        if self.backend == "host":
            raise ValueError(f"item {index}: the {what} is in GPU memory, but this engine runs on the host backend")
        if info.place == "device" and info.device not in self.devices:
            gpus = ", ".join(str(d) for d in self.devices)
            raise ValueError(f"item {index}: the {what} is on GPU {info.device}, the engine on GPU(s) {gpus}")

    def map(self, arrays: Iterable[Any], out: Optional[Sequence[Any]] = None) -> List[Any]:
        """Runs every array through the engine and returns the outputs in order (`out`, when
        given, is filled and returned). Raises the first failed item's exception, naming it."""
        self._check_open()
        arrays = list(arrays)
        outs = list(out) if out is not None else [None] * len(arrays)
        if len(outs) != len(arrays):
            raise ValueError(f"{len(arrays)} inputs but {len(outs)} outputs")
        prepared = [self._prepare(k, a, o, "") for k, (a, o) in enumerate(zip(arrays, outs))]
        if not prepared:
            return []
        engine = self._start(prepared[0], len(prepared))
        results = engine.map([p.span() for p in prepared])
        self._submitted += len(prepared)
        for k, r in enumerate(results):
            item = ItemResult(*r)
            if self._on_complete is not None:
                self._on_complete(item)
            if not item.ok:
                exc = _item_exception(item)
                if hasattr(exc, "add_note"):
                    exc.add_note(f"streampipe: item {k} of this map() failed: {item.error}")
                raise exc
        return [p.out for p in prepared]

    def submit(self, array: Any, out: Any = None, label: str = "") -> ItemFuture:
        """Submits one array; blocks while the engine is full (backpressure). The future's
        result is the output array."""
        self._check_open()
        p = self._prepare(self._submitted, array, out, label)
        engine = self._start(p, 64)
        fut = ItemFuture()
        fut._sp_keep = (p.source.owner, p.target.owner)
        fut._sp_out = p.out
        fut._sp_callback = self._on_complete
        engine.submit(*p.span(), fut)
        self._submitted += 1
        return fut

    def drain(self) -> Dict[str, int]:
        """Waits until every submitted item was delivered; the run's counts."""
        self._check_open()
        if self._core is None:
            return dict(submitted=0, done=0, failed=0, cancelled=0, staging_peak_bytes=0)
        return self._core.drain()

    def flush(self) -> None:
        self._check_open()
        if self._core is not None:
            self._core.flush()

    def cancel(self) -> None:
        """Items not yet on the device are cancelled, and later submits too."""
        self._start(None, 0).cancel()

    def close(self) -> None:
        """Waits for work in flight and stops the engine's threads; the engine is then closed
        for good, started or not (a second close() does nothing)."""
        if self._core is not None:
            self._core.close()
        self._closed = True

    def __enter__(self) -> "Engine":
        self._check_open()
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is not None and self._core is not None and not self._closed:
            self._core.cancel()
        self.close()

    # ---- what happened ------------------------------------------------------------------

    def report(self) -> Report:
        d = json.loads(self._start(None, 0).report_json())
        return Report(d["wall_ms"], d["items"], d["bytes_in"], d["bytes_out"], d["h2d_gbps"], d["d2h_gbps"],
                      d["bottleneck"], d["overlap_efficiency"], d["stages"])

    def timeline(self) -> List[StageRecord]:
        return [StageRecord(*r) for r in self._start(None, 0).records()]

    def trace_json(self, path: Optional[str] = None, process_name: str = "streampipe") -> str:
        """The timeline as Chrome trace JSON (opens in Perfetto); written to `path` when given."""
        return _written(path, self._start(None, 0).chrome_trace(process_name))

    def gantt_svg(self, path: Optional[str] = None, title: str = "streampipe") -> str:
        """The timeline as an SVG Gantt chart; written to `path` when given."""
        return _written(path, self._start(None, 0).gantt_svg(title))


def _written(path: Optional[str], text: str) -> str:
    # As the CLI writes its outputs: a temporary file renamed into place (a full disk leaves
    # the old file, not half a new one), never through a link or into a device or FIFO.
    if path is not None:
        _core.write_text_file(os.fspath(path), text)
    return text


def _resolve(fut: ItemFuture, r) -> None:
    """Runs on an engine thread under the GIL, once per submitted item."""
    item = ItemResult(*r)
    fut.item = item
    callback = fut._sp_callback
    out = fut._sp_out
    fut._sp_keep = fut._sp_out = fut._sp_callback = None
    if item.ok:
        fut.set_result(out)
    else:
        fut.set_exception(_item_exception(item))
    if callback is not None:
        callback(item)  # after the future: an exception here (sys.unraisablehook) loses no result


__all__ = ["Engine", "ItemResult", "ItemFuture", "Report", "StageRecord"]

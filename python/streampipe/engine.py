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
does; a close() from another thread waits for the calls in progress (a map() stops
submitting and raises ValueError for the items it did not submit). After fork() the child's
copy of a started engine raises RuntimeError."""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

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
        return (self.source.ptr, self.source.nbytes, self.target.ptr, self.target.nbytes, self.label,
                self.source.on_device or self.target.on_device)


@dataclass(frozen=True)
class DeviceReport:
    """One member of an engine's device set: the CPU's lanes or a GPU."""
    device: Any                     # "cpu", or the GPU's index
    name: str
    state: str                      # "starting", "ready", "failed", "lost", "not started"
    reason: str
    lanes: int
    joined_ms: float                # when it joined the set (engine clock); -1: never
    start_ms: float                 # how long its start took
    setup_ms: float                 # of which the operation's own set-up (nvJPEG's, say)
    batches: int
    items: int
    # What the scheduler measured: ms per unit of work from taking a slot to giving it back,
    # for each kind of work the C++ engine deals apart (Python's items are kind 0); 0.0 where
    # not measured.
    ms_per_unit: Tuple[float, ...] = ()


class Engine:
    """An engine applying `operation` to arrays over a device set: by default the CPU's lanes
    (for an operation with a host form) and every usable GPU, the CPU working while the GPUs
    start, each item going to the member expected to finish it first. Every option left as
    None takes EngineOptions' default (the C++ library's, `_core.EngineOptions()`), except
    lanes, depth, batch_items, batch_bytes and staging_bytes, which the planner chooses from
    the first items when a GPU is in the set.

    Arguments:
        operation: what each item goes through (streampipe.ops: gray(), affine(),
            from_kernel(), ...).
        backend: "auto" (the CPU and every GPU), "gpu" (the GPUs alone) or "host" (the CPU
            alone).
        device: one GPU to use (default: every usable GPU).
        devices: the GPUs (default: every usable one): each item goes to the member
            expected to finish it first; lanes are per GPU. With simulate_gpus, or on the
            host backend, simulated GPUs on host threads.
        lanes: items in flight at once per GPU, each lane a CUDA stream (planner's choice).
        cpu_lanes: the CPU's lanes, each a thread running the host form (default: as lanes).
        depth: slots per lane, so one item's copies overlap another's kernel (planner's).
        batch_items: items packed into one transfer and launch (planner's; 1: no batching).
        batch_bytes: ... while a batch's packed input stays below this many bytes.
        staging_bytes: the pinned staging ring pageable (numpy) items are copied through,
            per GPU (0: one block per slot).
        use_graphs: replay a captured CUDA graph per slot for same-size batches.
        in_order: deliver results (and callbacks) in submission order, not as completed.
        host_threads: threads staging pageable items and running host stages (0: one per
            core the process may use, at most 32).
        record_timeline: time every stage with events, for report(), timeline(),
            trace_json() and gantt_svg().
        simulate_gpus: the GPUs are simulated on host threads (tests without a GPU).
        rerun_on_device_loss: a GPU lost to a sticky error hands its items to the members
            left instead of failing them.
        expected_items: how many items the run will submit, when known: a run the CPU
            alone finishes sooner than a GPU pays for itself (gpu_start_ms plus twice
            gpu_stop_ms) starts no GPU.
        gpu_start_ms: what starting a GPU costs, for that judgement.
        gpu_stop_ms: what a started GPU's tear-down adds to the run's end, for that judgement.
        on_complete: called once per item with its ItemResult, on an engine thread, after
            its future resolved; an exception in it goes to sys.unraisablehook.
    """

    _closed: bool = False  # close() was called: every later use raises

    def __init__(self, operation: Operation, *, backend: str = "auto", device: Optional[int] = None,
                 devices: Optional[Sequence[int]] = None, lanes: Optional[int] = None,
                 cpu_lanes: Optional[int] = None, depth: Optional[int] = None, batch_items: Optional[int] = None,
                 batch_bytes: Optional[int] = None, staging_bytes: Optional[int] = None,
                 use_graphs: Optional[bool] = None, in_order: Optional[bool] = None,
                 host_threads: Optional[int] = None, record_timeline: Optional[bool] = None,
                 simulate_gpus: Optional[bool] = None, rerun_on_device_loss: Optional[bool] = None,
                 expected_items: Optional[int] = None, gpu_start_ms: Optional[float] = None,
                 gpu_stop_ms: Optional[float] = None,
                 on_complete: Optional[Callable[[ItemResult], None]] = None):
        if backend not in ("auto", "gpu", "host"):
            raise ValueError(f"backend must be 'auto', 'gpu' or 'host', not {backend!r}")
        chosen = list(devices) if devices is not None else ([] if device is None else [device])
        if any(not isinstance(d, int) or isinstance(d, bool) or d < 0 for d in chosen):
            raise ValueError(f"devices must be GPU indices (or, on the host backend, simulated GPUs), not {devices!r}")
        simulated = bool(simulate_gpus) or (backend == "host" and bool(chosen))
        if backend == "host" and chosen:
            backend = "gpu"  # simulated GPUs on the host's threads
        form = operation.has_host if simulated else operation.has_device
        if backend == "gpu" and not simulated and _core.device_count() == 0:
            raise RuntimeError(f"backend 'gpu' asked for, but no GPU is usable: {_core.device_unavailable_reason()}")
        if backend == "gpu" and not form:
            raise ValueError(f"{operation.name} has no device form")
        if backend == "host" and not operation.has_host:
            why = "" if _core.device_count() > 0 else f" (no GPU: {_core.device_unavailable_reason()})"
            raise ValueError(f"{operation.name} has no host form, so the host backend cannot run it{why}; "
                             "give the operation host=")
        if backend == "auto" and not operation.has_host and not simulated and _core.device_count() == 0:
            raise ValueError(f"{operation.name} has no host form and no GPU is usable "
                             f"({_core.device_unavailable_reason()}); give the operation host=")
        self.operation = operation
        self._asked = backend
        # The GPUs the engine spreads items over ([]: every usable one).
        self.devices = chosen
        self.device = chosen[0] if chosen else (0 if backend != "host" else -1)
        self.plan_reason = "not started: lanes, depth and batching are chosen at the first item"
        self._options = _core.EngineOptions()
        self._options.backend = backend
        self._options.devices = chosen
        self._options.simulate_gpus = simulated
        given = dict(cpu_lanes=cpu_lanes, use_graphs=use_graphs, in_order=in_order, host_threads=host_threads,
                     record_timeline=record_timeline, rerun_on_device_loss=rerun_on_device_loss,
                     expected_items=expected_items, gpu_start_ms=gpu_start_ms, gpu_stop_ms=gpu_stop_ms)
        for name, value in given.items():
            if value is not None:
                setattr(self._options, name, value)
        self._planned = dict(lanes=lanes, depth=depth, batch_items=batch_items, batch_bytes=batch_bytes,
                             staging_bytes=staging_bytes)
        self._on_complete = on_complete
        self._core: Optional[Any] = None
        self._starting = threading.Lock()
        self._submitted = 0

    # ---- the engine itself --------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("the engine is closed")

    def _start(self, sample: Optional[_Prepared], count: int) -> Any:
        self._check_open()
        if self._core is not None:
            return self._core
        with self._starting:  # one engine, however many threads start it at once
            return self._core if self._core is not None else self._make_core(sample, count)

    def _make_core(self, sample: Optional[_Prepared], count: int) -> Any:
        o = self._options
        given = {k: v for k, v in self._planned.items() if v is not None}
        for k, v in given.items():
            setattr(o, k, int(v))
        unplanned = [k for k in ("lanes", "depth", "batch_items") if k not in given]
        gpu_in_set = self._asked != "host" and not o.simulate_gpus and self.operation.has_device
        if gpu_in_set and unplanned and sample is not None and _core.device_count() > 0:
            plan = _core.plan(self.operation.core, sample.source.ptr, sample.source.nbytes, sample.target.nbytes,
                              max(count, 1), o)
            for k in unplanned + [k for k in ("batch_bytes", "staging_bytes") if k not in given]:
                setattr(o, k, int(plan[k]))
            self.plan_reason = plan["reason"]
        else:
            self.plan_reason = self._unplanned_reason(unplanned)
        core = _core.Engine(self.operation.core, o, _resolve, self.operation.output_for)
        self._core = core
        if self._closed:  # close() on another thread while this one started it
            core.close()
            self._check_open()
        return core

    def _unplanned_reason(self, unplanned: List[str]) -> str:
        """Why the planner did not run, and what the engine uses instead."""
        o = self._options
        sizes = f"lanes {o.lanes}, depth {o.depth}, batch_items {o.batch_items}"
        if not unplanned:
            return f"all given: {sizes}"
        if self._asked == "host":
            why = "the host backend"
        elif o.simulate_gpus:
            why = "simulated GPUs"
        elif not self.operation.has_device:
            why = f"{self.operation.name} has no device form"
        elif _core.device_count() == 0:
            why = f"no usable GPU ({_core.device_unavailable_reason()})"
        else:
            why = "started before any item (describe(), device_report() or cancel() first)"
        given = [k for k in ("lanes", "depth", "batch_items") if k not in unplanned]
        rest = f"; given: {', '.join(given)}" if given else ""
        return f"not planned: {why}; the library's defaults{rest}: {sizes}"

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("running" if self._core is not None else "not started")
        ids = ",".join(str(d) for d in self.devices)
        if self._options.simulate_gpus:
            members = f"simulated GPUs {ids or '0'}"
        elif self.backend == "host":
            members = "the CPU"
        else:
            gpus = f"GPUs {ids}" if ids else "every usable GPU"
            members = gpus if self.backend == "gpu" else f"the CPU and {gpus}"
        return (f"<streampipe.Engine {self.operation.name}, backend={self.backend!r} ({members}), {state}, "
                f"{self._submitted} submitted>")

    @property
    def backend(self) -> str:
        """What the set holds: "host" (the CPU alone), "gpu" (GPUs alone) or "auto" (both)."""
        simulated = self._options.simulate_gpus
        gpu_form = self.operation.has_host if simulated else self.operation.has_device
        if self._asked == "host" or not gpu_form or (not simulated and _core.device_count() == 0):
            return "host"
        if self._asked == "gpu" or not self.operation.has_host:
            return "gpu"
        return "auto"

    def device_report(self, wait: bool = False) -> List[DeviceReport]:
        """Each member of the device set as it is now (with `wait`, once every GPU has
        joined, failed to start or been left out): the CPU first, then the GPUs."""
        return [DeviceReport(*d) for d in self._start(None, 0).devices(wait)]

    @property
    def gpus_left_out(self) -> str:
        """Why a set that finds its GPUs as it starts (the CPU and every GPU: backend "auto",
        no devices named) holds none, so that no member of device_report() says it: never
        looked for (a run the CPU finishes sooner, no driver) or none found. Empty when GPUs
        were found, the set named its GPUs, or the engine has not started."""
        core = self._core
        return core.gpus_left_out() if core is not None else ""

    def describe(self) -> str:
        """One line saying which devices, lanes, depth, batching and staging mode the engine
        uses. Starts the engine if no item has: the planner then has no item to plan from,
        and the library's defaults hold (plan_reason says so)."""
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
        if self._asked == "host" or self._options.simulate_gpus:
            raise ValueError(f"item {index}: the {what} is in GPU memory, but this engine runs on the host backend")
        if info.place == "device" and self.devices and info.device not in self.devices:
            gpus = ", ".join(str(d) for d in self.devices)
            raise ValueError(f"item {index}: the {what} is on GPU {info.device}, the engine on GPU(s) {gpus}")

    def _prepare_span(self, index: int, array: Any, out: Any) -> tuple:
        """What map()'s C++ side asks for each item its fast path does not take: the span,
        device flag, output and what must stay alive while the engine runs it."""
        p = self._prepare(index, array, out, "")
        return (*p.span()[:4], p.source.on_device or p.target.on_device, p.out, (p.source.owner, p.target.owner))

    def map(self, arrays: Iterable[Any], out: Optional[Sequence[Any]] = None) -> List[Any]:
        """Runs every array through the engine and returns the outputs in order (`out`, when
        given, is filled and returned). Items are submitted as they are prepared, so an
        invalid item (ValueError naming it) is found after the items before it were
        submitted: they run to their end first. Raises the first failed item's exception,
        naming it."""
        self._check_open()
        arrays = list(arrays)
        outs = list(out) if out is not None else [None] * len(arrays)
        if len(outs) != len(arrays):
            raise ValueError(f"{len(arrays)} inputs but {len(outs)} outputs")
        if not arrays:
            return []
        first = None
        if self._core is None:  # the planner sizes the engine from the first item
            first = self._prepare(0, arrays[0], outs[0], "")
            outs[0] = first.out
        engine = self._start(first, len(arrays))
        callback = self._on_complete
        base, accepted, error, results = engine.map(arrays, outs, self._prepare_span, callback is not None)
        self._submitted += accepted
        for r in results:
            item = ItemResult(*r)
            if callback is not None:
                callback(item)
            if not item.ok:
                exc = _item_exception(item)
                if hasattr(exc, "add_note"):
                    exc.add_note(f"streampipe: item {item.index - base} of this map() failed: {item.error}")
                raise exc
        if error is not None:
            raise error
        return outs

    def submit(self, array: Any, out: Any = None, label: str = "") -> ItemFuture:
        """Submits one array; blocks while the engine is full (backpressure). The future's
        result is the output array. A plain numpy array (pageable or pinned) with a plain
        numpy output, or none, is described in C++ once the engine has started; any other
        item, and the first (the planner sizes the engine from it), is described here."""
        self._check_open()
        fut = ItemFuture()
        core = self._core
        if core is None or not core.submit_array(array, out, label or "", fut, self._on_complete):
            p = self._prepare(self._submitted, array, out, label)
            engine = self._start(p, 64)
            engine.submit(*p.span(), fut, p.out, (p.source.owner, p.target.owner), self._on_complete)
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
        """Waits for the calls in progress on other threads and the work in flight, and stops
        the engine's threads; the engine is then closed for good, started or not (a second
        close() does nothing). A map() running on another thread stops submitting: its
        items already submitted run to their end, and it raises ValueError ("the engine is
        closed") for the rest."""
        core = self._core
        if core is None:
            self._closed = True
            core = self._core  # started on another thread meanwhile: it sees _closed, or this sees it
        if core is not None:
            core.close()
        self._closed = True

    def __enter__(self) -> "Engine":
        self._check_open()
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is not None and self._core is not None and not self._closed:
            try:
                self._core.cancel()
            except ValueError:
                pass  # closed on another thread meanwhile: the exception in flight is the one to see
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


def _resolve(fut: ItemFuture, r, out: Any, callback: Optional[Callable[[ItemResult], None]]) -> None:
    """Runs on an engine thread under the GIL, once per submitted item."""
    item = ItemResult(*r)
    fut.item = item
    if item.ok:
        fut.set_result(out)
    else:
        fut.set_exception(_item_exception(item))
    if callback is not None:
        callback(item)  # after the future: an exception here (sys.unraisablehook) loses no result


__all__ = ["DeviceReport", "Engine", "ItemResult", "ItemFuture", "Report", "StageRecord"]

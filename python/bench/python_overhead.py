# SPDX-License-Identifier: Apache-2.0
"""What Engine.map and Engine.submit cost on the Python side, per item, on any machine (the
host backend by default; --backend gpu on a GPU).

Each row maps N arrays through ops.affine (a trivial operation; --op multiply_divide: the
benchmark's kernel) `--runs` times after a warm-up, and reports the medians of:
  call     the call's wall time per item;
  engine   the engine's own span per item: from the first stage of the run's first item to
           the end of its last (the timeline);
  serial   (call - engine) per item: what Python does while the engine has nothing of the
           run yet or is done with it: preparing items before the first goes in, and
           turning results into outputs after the last.
Small items show Python's whole cost (the engine is idle most of the time); large ones show
what of it is left once the engine's work hides the rest. The "submit()" rows do the same
with a submit() per item and a wait for every future, instead of one map().

    PYTHONPATH=build/python/python python3 python/bench/python_overhead.py --runs 9
    # on a GPU, the shape of the benchmark's 200 arrays (python/bench/run.py):
    PYTHONPATH=build/python/python python3 python/bench/python_overhead.py --backend gpu \
        --op multiply_divide --large-elems 1048576 --runs 9
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Callable, List, Optional

import numpy as np

import streampipe as sp


class Mapped:
    """An engine that remembers how many items it was given, to find a run's records."""

    def __init__(self, backend: str, op: str, submit: bool):
        operation = sp.ops.affine(2.0, 1.0) if op == "affine" else sp.ops.multiply_divide()
        self.engine = sp.Engine(operation, backend=backend, record_timeline=True)
        self.items = 0
        self.submit = submit

    def run(self, inputs: list, outs: Optional[list]) -> tuple:
        first = self.items
        t0 = time.perf_counter()
        if self.submit:
            futures = [self.engine.submit(x, out=o) for x, o in zip(inputs, outs or [None] * len(inputs))]
            results = [f.result() for f in futures]
        else:
            results = self.engine.map(inputs, out=outs)
        wall = time.perf_counter() - t0
        del results  # freeing outputs map() made is no part of map()
        self.items += len(inputs)
        spans = [(r.start_ms, r.end_ms) for r in self.engine.timeline() if r.first_item >= first]
        engine_ms = max(e for _, e in spans) - min(s for s, _ in spans)
        return 1e3 * wall, engine_ms


def row(name: str, args: argparse.Namespace, make: Callable[[], tuple], submit: bool = False) -> None:
    runs = args.runs
    inputs, outs = make()
    mapped = Mapped(args.backend, args.op, submit)
    mapped.run(inputs, outs)  # warm-up: threads, pools
    walls, engines = [], []
    for _ in range(runs):
        wall, engine = mapped.run(inputs, outs)
        walls.append(wall)
        engines.append(engine)
    mapped.engine.close()
    n = len(inputs)
    wall, engine = statistics.median(walls), statistics.median(engines)
    serial = statistics.median(w - e for w, e in zip(walls, engines))
    name = f"{name}, {'submit()' if submit else 'map()'}"
    print(f"  {name:<50} {n:6d} items  call {1e3 * wall / n:8.2f} us  engine {1e3 * engine / n:8.2f} us  "
          f"serial {1e3 * serial / n:8.2f} us", flush=True)


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=9)
    p.add_argument("--backend", choices=("host", "gpu"), default="host")
    p.add_argument("--items", type=int, default=2000, help="small items per row (default 2000)")
    p.add_argument("--large", type=int, default=200, help="large items per row (default 200)")
    p.add_argument("--large-elems", type=int, default=1 << 16, help="float32 elements of a large item (default 65536)")
    p.add_argument("--op", choices=("affine", "multiply_divide"), default="affine",
                   help="the operation (multiply_divide: the benchmark's 200-array kernel)")
    args = p.parse_args(argv)
    rng = np.random.default_rng(5)
    print(f"streampipe {sp.__version__}, backend {args.backend}, {args.op}: per-item time of a call "
          f"(median of {args.runs})")
    for elems, n in ((16, args.items), (args.large_elems, args.large)):
        xs = [rng.random(elems, dtype=np.float32) for _ in range(n)]
        label = f"{n} x {elems} float32"
        given = lambda: (xs, [np.empty_like(x) for x in xs])
        pinned = lambda: ([sp.pinned_copy(x) for x in xs], [sp.pinned_empty(x.shape, x.dtype) for x in xs])
        row(f"{label}, numpy, out given", args, given)
        row(f"{label}, numpy, out=None", args, lambda: (xs, None))
        row(f"{label}, pinned, out given", args, pinned)
        row(f"{label}, numpy, out given", args, given, submit=True)
        row(f"{label}, pinned, out given", args, pinned, submit=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

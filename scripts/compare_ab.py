#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares the rows of two versions' benchmark JSON written by scripts/gpu-ab.

  compare_ab.py streams|serve OUTDIR

Reads OUTDIR/base-N.json and OUTDIR/new-N.json. Per row it takes each run's median (bench
streams: milliseconds, lower is better; serve: requests/s, higher is better), then the
median over the rounds, and prints the change of the new version against the base. A row
more than 3% worse is marked; the exit status is 0 either way (a table to read, not a gate).
Both the envelope before the bench harness (experiments[].rows[].ms) and after it
(tables[].rows[].summary) are read.
"""
import glob
import json
import os
import statistics
import sys


def stream_rows(doc):
    if "tables" in doc:  # the harness's envelope
        for table in doc["tables"]:
            for row in table["rows"]:
                yield (table["name"], row["name"]), row["summary"]["median"]
    else:
        for exp in doc["experiments"]:
            for row in exp["rows"]:
                yield (exp["experiment"], row["name"]), row["ms"]["median"]


def serve_rows(doc):
    for p in doc["points"]:
        yield (p["mode"], f'{p["clients"]} clients'), p["throughput_rps"]["median"]


def load(outdir, name, rows):
    per_row = {}
    for path in sorted(glob.glob(os.path.join(outdir, f"{name}-*.json"))):
        with open(path) as f:
            for key, value in rows(json.load(f)):
                per_row.setdefault(key, []).append(value)
    return per_row


def main():
    what, outdir = sys.argv[1], sys.argv[2]
    rows, unit, lower_is_better = (stream_rows, "ms", True) if what == "streams" else (serve_rows, "req/s", False)
    base, new = load(outdir, "base", rows), load(outdir, "new", rows)
    print(f"{what}: median over rounds of each run's median ({unit}); change of this tree against the base")
    print(f"{'table':<10} {'row':<44} {'base':>10} {'new':>10} {'change':>8}")
    worse = 0
    for key in base:
        if key not in new:
            print(f"{key[0]:<10} {key[1]:<44} {statistics.median(base[key]):>10.2f} {'-':>10}   (missing in new)")
            continue
        b, n = statistics.median(base[key]), statistics.median(new[key])
        change = (n - b) / b * 100.0
        bad = change > 3.0 if lower_is_better else change < -3.0
        worse += bad
        print(f"{key[0]:<10} {key[1][:44]:<44} {b:>10.2f} {n:>10.2f} {change:>+7.1f}%{'  <- worse by more than 3%' if bad else ''}")
    for key in new:
        if key not in base:
            print(f"{key[0]:<10} {key[1]:<44} {'-':>10} {statistics.median(new[key]):>10.2f}   (new row)")
    print(f"{worse} row(s) worse by more than 3%")


if __name__ == "__main__":
    main()

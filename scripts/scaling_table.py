#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The table of scripts/gpu-scaling: for every engine row of `bench streams` run over 1..N
GPUs, time, GB/s and the speed-up over the same row on one GPU; the mpirun rows against the
one-process rows; bench gray's images/s on GPU 0 and on all GPUs; life's cell updates/s.

    scripts/scaling_table.py OUTDIR     (markdown on standard output)
"""
import glob
import json
import os
import re
import sys


def rows(result):
    for table in result["tables"]:
        for row in table["rows"]:
            yield table["name"], row


def base_name(name):
    return re.sub(r", \d+ GPUs$", "", name)


def main(out):
    print("| table | row | GPUs | ms | GB/s | speed-up over 1 GPU | verified |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    one = {}
    default_ms = {}  # (table, row, GPUs) -> ms, with the default staging
    for path in sorted(glob.glob(os.path.join(out, "streams-*.json"))):
        result = json.load(open(path))
        for table, row in rows(result):
            if not row["name"].startswith("engine"):
                continue
            gpus = int(row.get("devices", 1))
            ms = row["summary"]["median"]
            key = (table, base_name(row["name"]))
            default_ms[(table, base_name(row["name"]), gpus)] = ms
            if gpus == 1:
                one[key] = ms
            speedup = one[key] / ms if key in one and ms > 0 else float("nan")
            print(f"| {table} | {base_name(row['name'])} | {gpus} | {ms:.2f} | {row.get('gbps', 0):.1f} | "
                  f"{speedup:.2f}x | {'yes' if row['verified'] else 'NO'} |")
    staging = {}  # (table, row) -> {(MiB per GPU, GPUs): ms}
    for path in sorted(glob.glob(os.path.join(out, "staging-*-streams-*.json"))):
        mib = int(os.path.basename(path).split("-")[1])
        for table, row in rows(json.load(open(path))):
            if row["name"].startswith("engine") and "pageable" in row["name"]:
                staging.setdefault((table, base_name(row["name"])), {})[(mib, int(row.get("devices", 1)))] = (
                    row["summary"]["median"], row["verified"])
    if staging:
        print("\nThe pageable rows with each GPU's staging ring cut (`--staging-mib`), ms (* not verified):")
        print("\n| table | row | staging MiB per GPU | GPUs | ms | the default 48 MiB, ms |")
        print("| --- | --- | --- | --- | --- | --- |")
        for (table, name), by in staging.items():
            for (mib, gpus), (ms, verified) in sorted(by.items()):
                default = default_ms.get((table, name, gpus))
                print(f"| {table} | {name} | {mib} | {gpus} | {ms:.2f}{'' if verified else '*'} | "
                      f"{'-' if default is None else f'{default:.2f}'} |")
    for path in sorted(glob.glob(os.path.join(out, "mpi*-streams-*.json"))):
        merged = json.load(open(path))
        ranks = merged["ranks"]
        print(f"\n{os.path.basename(path)}: {len(ranks)} ranks, each on its own GPU, against one process")
        print("\n| table | row | rank | ms | one process ms | ratio | verified |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for r in ranks:
            for table, row in rows(r["result"]):
                if not row["name"].startswith("engine"):
                    continue
                ms = row["summary"]["median"]
                alone = one.get((table, row["name"]))
                ratio = f"{ms / alone:.3f}" if alone else "-"
                print(f"| {table} | {row['name']} | {r['rank']} | {ms:.2f} | "
                      f"{alone if alone is None else f'{alone:.2f}'} | {ratio} | {'yes' if row['verified'] else 'NO'} |")
    gray = os.path.join(out, "bench-gray.json")
    if os.path.exists(gray):
        print("\n| bench gray | output | backend | device | images/s |\n| --- | --- | --- | --- | --- |")
        for table, row in rows(json.load(open(gray))):
            print(f"| {row['name']} | {table.removeprefix('gray-')} | {row.get('backend', '?')} | "
                  f"{row.get('device', '?')} | {row['summary']['median']:.1f} |")
    for d in ("0", "all"):
        path = os.path.join(out, f"life-{d}.json")
        if os.path.exists(path):
            j = json.load(open(path))
            print(f"\nlife --devices {d}: {j['universes']} universes of {j['width']}x{j['height']} on "
                  f"{len(j['devices'])} GPU(s): {j['cell_updates_per_s']:.3g} cell updates/s")


if __name__ == "__main__":
    main(sys.argv[1])

#!/usr/bin/env python3
"""Checks that `streampipe info` agrees with the independent memcpy probe within 5%."""
import json
import sys

info = json.load(open(sys.argv[1]))
probe = json.load(open(sys.argv[2]))
bw = info["devices"][0]["bandwidth"]
worst = 0.0
print(f"{'path':<16}{'info GB/s':>12}{'probe GB/s':>12}{'diff':>8}")
for path in ("pinned_h2d", "pinned_d2h", "bidirectional"):
    a, b = bw[path]["median_gbps"], probe[path]
    diff = abs(a - b) / b
    worst = max(worst, diff)
    print(f"{path:<16}{a:>12.2f}{b:>12.2f}{diff * 100:>7.1f}%")
print(f"largest difference {worst * 100:.1f}% (limit 5%)")
sys.exit(0 if worst <= 0.05 else 1)

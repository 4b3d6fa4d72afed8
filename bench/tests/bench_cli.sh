#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `streampipe bench` end to end through the harness, with tiny sizes (on the host backend
# without a GPU): every experiment of `bench streams` verified, its JSON envelope written,
# `bench gray` the same, and exit status 2 for bad parameters.
set -uo pipefail
cli="${1:?usage: bench_cli.sh path/to/streampipe}"
source "$(dirname "$0")/../../tests/support/cli_test.sh"

expect 0 "bench streams" -- "$cli" bench streams --images 2 --arrays 2 --chunked-mib 16 --overhead-items 50 \
  --runs 2 --warmup 0 --json streams.json
for experiment in "RGB images 1920x1080 -> gray" "arrays x 1M float32" "16 MiB float array" "tiny items"; do
  contains out.txt "$experiment" "streams table: $experiment"
done
contains streams.json '"benchmark": "streams"' "envelope names the benchmark"
contains streams.json '"command": ' "envelope holds the command"
contains streams.json '"overhead-items": 50' "envelope holds the parameters"
contains streams.json '"unit": "ms"' "rows carry their unit"
contains streams.json '"median": ' "rows carry their summary"
contains streams.json '"verified": true' "rows verified"
if grep -qF '"verified": false' streams.json; then echo "FAIL: an output did not verify"; failures=$((failures + 1)); fi

expect 0 "bench streams, one experiment" -- "$cli" bench streams --experiment overhead --overhead-items 20 --runs 1
contains out.txt "us/item" "overhead table"

expect 0 "bench gray" -- "$cli" bench gray --images 2 --size 64x48 --runs 1 --warmup 0 --threads 2 --json gray.json
contains gray.json '"unit": "images/s"' "gray rows in images/s"
contains gray.json '"decode_ms_per_image"' "gray rows keep their fields"

expect 2 "bad experiment" -- "$cli" bench streams --experiment nothing
expect 2 "images out of range" -- "$cli" bench streams --images 0
expect 2 "bad gray size" -- "$cli" bench gray --size 12
contains err.txt "--size '12'" "bad size named"
expect 2 "bad gray format" -- "$cli" bench gray --format gif
expect 2 "bad life kernel list" -- "$cli" bench life --sizes 0

finish "all bench CLI checks passed"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `streampipe bench` end to end through the harness, with tiny sizes (on the host backend
# without a GPU): every experiment of `bench streams` verified, its JSON envelope written,
# `bench gray` and `bench serve` the same, traces and outputs never replaced without --force,
# and exit status 2 for bad parameters.
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
contains gray.json '"name": "gray-png"' "gray PNG table"
contains gray.json '"name": "gray-jpeg"' "gray JPEG table"
contains gray.json '"startup_ms": {' "gray rows read the tool's start-up back"
contains gray.json '"command": ' "gray rows name their command"
contains out.txt "streampipe gray --backend host" "gray host row"
# Each peer's row runs, or the table says why not.
for peer in pillow opencv nvimagecodec; do
  contains gray.json "\"$peer\": {" "the $peer peer's script or why it was skipped"
done
grep -qE '"skipped"|"peer": true' gray.json || { echo "FAIL: no peer row and no reason"; failures=$((failures + 1)); }
contains gray.json '"verified": true' "gray rows verified"
if grep -qF '"verified": false' gray.json; then echo "FAIL: a gray output did not verify"; failures=$((failures + 1)); fi
expect 0 "bench gray, generate only" -- "$cli" bench gray --images 3 --size 32x16 --keep kept --generate-only
[[ $(ls kept | wc -l) -eq 3 ]] || { echo "FAIL: --keep kept $(ls kept | wc -l) files, expected 3"; failures=$((failures + 1)); }
expect 2 "bench gray, --keep not empty" -- "$cli" bench gray --images 3 --size 32x16 --keep kept --generate-only
contains err.txt "--keep kept" "non-empty --keep named"
expect 2 "bench gray, --generate-only without --keep" -- "$cli" bench gray --generate-only
# A folder of images of its own (--inputs), here the three kept above.
expect 0 "bench gray --inputs" -- "$cli" bench gray --inputs kept --format png --runs 1 --warmup 0 --threads 2 \
  --json inputs.json
contains out.txt "3 files from kept" "--inputs table title"
contains inputs.json '"inputs": "kept"' "--inputs in the envelope"
if grep -qF '"verified": false' inputs.json; then echo "FAIL: an --inputs output did not verify"; failures=$((failures + 1)); fi
mkdir -p no-images
expect 2 "bench gray --inputs, no images there" -- "$cli" bench gray --inputs no-images
contains err.txt "holds no *.png" "--inputs without images named"
expect 2 "bench gray --inputs with --keep" -- "$cli" bench gray --inputs kept --keep kept2

# bench serve (serve-bench) on the host backend: the envelope with the keys scripts read
# (points[].mode, .clients, .throughput_rps.median), the plot and the per-point reports.
expect 0 "bench serve" -- "$cli" bench serve --backend host --layers 16,24,8 --concurrency 1 3 --window-ms 10 \
  --runs 2 --warmup 0 --json serve.json --svg serve.svg --report-json serve-report.json
contains out.txt "mode     clients" "serve table"
# The targets are a GPU's: on the host none is printed as "NOT met", and the mode left out is said.
if grep -qF "target:" out.txt; then echo "FAIL: a GPU target printed on the host"; failures=$((failures + 1)); fi
contains out.txt "the graphs mode (a CUDA graph per batch-size bucket) is left out" "serve names the mode left out"
contains serve.json '"benchmark": "serve"' "serve envelope names the benchmark"
contains serve.json '"mode": "dynamic"' "serve points keep their mode"
contains serve.json '"clients": 3' "serve points keep their clients"
contains serve.json '"throughput_rps": {' "serve points keep their throughput"
contains serve.json '"unit": "req/s"' "serve rows carry their unit"
contains serve.json '"concurrency": [' "serve parameters"
if grep -qF '"verified": false' serve.json; then echo "FAIL: a serve point did not verify"; failures=$((failures + 1)); fi
contains serve.svg '<svg' "serve plot"
contains serve-report.json '"queries"' "serve reports with every query"
expect 0 "bench serve, open loop" -- "$cli" bench serve --backend host --layers 16,8 --rate 2000 --modes dynamic \
  --window-ms 10 --runs 1 --warmup 0
contains out.txt "offered/s" "open-loop table"
expect 2 "serve: bad layers" -- "$cli" serve-bench --backend host --layers 16
contains err.txt "--layers '16'" "bad layers named"
expect 2 "serve: bad mode" -- "$cli" serve-bench --backend host --modes batch
expect 2 "serve: queue below clients" -- "$cli" serve-bench --backend host --concurrency 8 --queue 4

# Files the benchmark writes itself (--trace-dir) and its outputs: refused before the run when
# they exist (exit 2, unchanged), replaced with --force.
expect 0 "traces" -- "$cli" bench streams --experiment gray --images 2 --runs 1 --warmup 0 --trace-dir tr
trace=$(ls tr/*.trace.json | head -n 1)
[[ -n $trace ]] || { echo "FAIL: no trace written"; failures=$((failures + 1)); }
sum=$(cksum tr/* | sort)
expect 2 "existing traces" -- "$cli" bench streams --experiment gray --images 2 --runs 1 --warmup 0 --trace-dir tr
contains err.txt "--trace-dir tr/" "existing trace named"
[[ "$(cksum tr/* | sort)" == "$sum" ]] || { echo "FAIL: existing traces were touched"; failures=$((failures + 1)); }
expect 0 "traces, forced" -- "$cli" bench streams --experiment gray --images 2 --runs 1 --warmup 0 --trace-dir tr --force
sum=$(cksum serve.svg)
expect 2 "existing serve plot" -- "$cli" bench serve --backend host --layers 16,8 --concurrency 1 --window-ms 10 \
  --runs 1 --warmup 0 --svg serve.svg
contains err.txt "--svg serve.svg" "existing plot named"
[[ "$(cksum serve.svg)" == "$sum" ]] || { echo "FAIL: existing plot was touched"; failures=$((failures + 1)); }

expect 2 "bad experiment" -- "$cli" bench streams --experiment nothing
expect 2 "images out of range" -- "$cli" bench streams --images 0
expect 2 "bad gray size" -- "$cli" bench gray --size 12
contains err.txt "--size '12'" "bad size named"
expect 2 "bad gray format" -- "$cli" bench gray --format gif
expect 2 "bad life kernel list" -- "$cli" bench life --sizes 0

finish "all bench CLI checks passed"

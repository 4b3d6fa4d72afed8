#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The life and mandelbrot commands end to end (on the GPU when there is one, else on the
# host backend): known patterns, outputs written, and exit status 2 for every bad input.
set -uo pipefail
cli="${1:?usage: cli_tools.sh path/to/streampipe}"
source "$(dirname "$0")/../support/cli_test.sh"

printf '#N Glider\nx = 3, y = 3, rule = B3/S23\nbob$2bo$3o!\n' > glider.rle
printf '!Name: Blinker\nOOO\n' > blinker.cells
printf 'x = 3, y = 3, rule = B36/S23\nbob$2bo$3o!\n' > highlife.rle
printf 'x = 3, y = 3\nbob$2bq$3o!\n' > corrupt.rle

for backend in auto host; do
  expect 0 "glider ($backend)" -- "$cli" life --backend "$backend" --size 16x12 -p glider.rle --offset 1,1 -g 40 \
    --population "pop-$backend.csv"
  contains "pop-$backend.csv" "40,5" "glider keeps 5 cells ($backend)"
  for k in global shared bitpacked; do
    expect 0 "blinker $k ($backend)" -- "$cli" life --backend "$backend" -k "$k" --size 67x5 -p blinker.cells \
      -g 7 -u 3 --population "blink-$k-$backend.json"
    contains "blink-$k-$backend.json" '"generations": 7' "blinker json ($k, $backend)"
  done
done
expect 0 "random universes" -- "$cli" life --size 100x77 -g 30 -u 2 --seed 5 --population rnd.csv
expect 0 "random universes, host" -- "$cli" life --backend host --size 100x77 -g 30 -u 2 --seed 5 --population rnd-host.csv
if ! cmp -s rnd.csv rnd-host.csv; then echo "FAIL: backends disagree on random universes"; failures=$((failures + 1)); fi
# A pattern on a random background in 5 universes: batched (the default), a stream per
# universe (--report), and the host all log the same populations.
pat=(life --size 130x70 -p glider.rle --density 0.3 -g 25 -u 5 --seed 3)
expect 0 "pattern universes" -- "$cli" "${pat[@]}" --population pat.csv --json pat.json
expect 0 "pattern universes, timed" -- "$cli" "${pat[@]}" --population pat-timed.csv --report-json pat-report.json
expect 0 "pattern universes, host" -- "$cli" "${pat[@]}" --backend host --population pat-host.csv
for f in pat-timed.csv pat-host.csv; do
  cmp -s pat.csv "$f" || { echo "FAIL: pat.csv and $f disagree"; failures=$((failures + 1)); }
done
expect 0 "snapshots" -- "$cli" life --size 20x20 -p glider.rle -g 8 --snapshot-every 4 -o frames --scale 3
for g in 000000 000004 000008; do
  [[ "$(head -c 4 "frames/life-u0-g$g.png" | tail -c 3)" == "PNG" ]] || { echo "FAIL: frame $g"; failures=$((failures + 1)); }
done

expect 2 "bad size" -- "$cli" life --size 10
contains err.txt "--size" "bad size named"
expect 2 "empty size" -- "$cli" life --size 0x5
expect 2 "bad kernel" -- "$cli" life --kernel warp
expect 2 "bad backend" -- "$cli" life --backend tpu
expect 2 "other rule" -- "$cli" life -p highlife.rle
contains err.txt "highlife.rle:1: unsupported rule 'B36/S23'" "rule error names file and rule"
expect 2 "corrupt rle" -- "$cli" life -p corrupt.rle
contains err.txt "corrupt.rle:2: unexpected character 'q'" "corrupt rle names the line"
expect 2 "missing pattern" -- "$cli" life -p nothing.rle
expect 2 "pattern too large" -- "$cli" life --size 2x2 -p glider.rle
expect 2 "offset outside" -- "$cli" life --size 8x8 -p glider.rle --offset 9,0
expect 2 "offset without pattern" -- "$cli" life --offset 1,1
expect 2 "snapshot without dir" -- "$cli" life --snapshot-every 2
expect 2 "existing output" -- "$cli" life --size 16x12 -p glider.rle -g 4 --population pop-auto.csv
contains pop-auto.csv "40,5" "existing output untouched"
expect 0 "existing output, forced" -- "$cli" life --size 16x12 -p glider.rle -g 4 --population pop-auto.csv --force
expect 2 "density out of range" -- "$cli" life --density 2

expect 0 "mandelbrot" -- "$cli" mandelbrot --size 96x64 -i 200 --image m.png --json m.json
contains out.txt "0 pixel(s) differ" "double agrees with the reference"
[[ "$(head -c 4 m.png | tail -c 3)" == "PNG" ]] || { echo "FAIL: mandelbrot PNG"; failures=$((failures + 1)); }
expect 0 "mandelbrot float" -- "$cli" mandelbrot --size 96x64 -i 200 --precision float --center -0.75,0.1 --width 0.5 -o floats --image f.png
expect 2 "mandelbrot exists" -- "$cli" mandelbrot --size 96x64 --image m.png
expect 2 "mandelbrot bad region" -- "$cli" mandelbrot --region 1,0,0,1
expect 2 "mandelbrot region not numbers" -- "$cli" mandelbrot --region 1,x,0,1
expect 2 "mandelbrot both region and center" -- "$cli" mandelbrot --region -2,1,-1,1 --center 0,0
expect 2 "mandelbrot precision" -- "$cli" mandelbrot --precision half
expect 2 "mandelbrot size" -- "$cli" mandelbrot --size 12

finish "all CLI checks passed"

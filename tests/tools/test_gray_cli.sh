#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `streampipe gray` end to end (GPU when there is one, else the host backend): name mirroring,
# recursion, formats, --force, bad files named with exit status 1, usage errors with exit 2,
# JSON / trace / Gantt outputs. Pixel values are checked by the C++ tests (test_gray*.cpp).
set -uo pipefail
cli="${1:?usage: test_gray_cli.sh path/to/streampipe}"
source "$(dirname "$0")/../support/cli_test.sh"
is_gray_png() {  # IHDR colour type (byte 26) 0 = gray, bit depth (byte 25) 8
  local f="$1"
  if [[ "$(head -c 4 "$f" 2>/dev/null | tail -c 3)" != "PNG" ]] || [[ "$(od -An -tu1 -j24 -N2 "$f" | tr -s ' ')" != " 8 0" ]]; then
    echo "FAIL: $f is not an 8-bit gray PNG"; failures=$((failures + 1))
  fi
}
exists() { [[ -f "$1" ]] || { echo "FAIL: $1 missing"; failures=$((failures + 1)); }; }
absent() { [[ ! -e "$1" ]] || { echo "FAIL: $1 should not exist"; failures=$((failures + 1)); }; }

# Inputs: RGB PNGs from the mandelbrot command, a gray JPEG from gray itself.
mkdir -p in/sub/deeper
"$cli" mandelbrot --size 67x41 -i 50 -o in --image a.png >/dev/null || { echo "FAIL: making inputs"; exit 1; }
"$cli" mandelbrot --size 31x17 -i 50 --center -0.5,0.5 --width 0.5 -o in/sub --image b.png >/dev/null
"$cli" mandelbrot --size 20x20 -i 50 -o in/sub/deeper --image c.png >/dev/null
printf 'not an image\n' > in/readme.txt
expect 0 "jpeg output" -- "$cli" gray in/a.png -o jpg --format jpeg --quality 80
[[ "$(od -An -tx1 -N2 jpg/a.jpg | tr -d ' ')" == "ffd8" ]] || { echo "FAIL: jpg/a.jpg is not a JPEG"; failures=$((failures + 1)); }
cp jpg/a.jpg in/sub/g.JPG

expect 0 "one file" -- "$cli" gray in/a.png -o out1
is_gray_png out1/a.png
[[ "$(wc -l < out.txt)" == 1 ]] || { echo "FAIL: gray without -v printed more than one line"; cat out.txt; failures=$((failures + 1)); }
contains out.txt "1 file(s): 1 ok, 0 failed" "summary counts"
expect 0 "one file, the full report" -- "$cli" gray in/a.png -o out1v -v
contains out.txt "where the time went" "time split"
contains out.txt "(command wall clock; start-up" "summary on the command's wall clock"
contains out.txt "bound by: " "summary names the bound stage"
expect 0 "folder, not recursive" -- "$cli" gray in -o out2 --backend host --threads 3
is_gray_png out2/a.png
absent out2/sub
absent out2/readme.png
expect 0 "folder, recursive" -- "$cli" gray -r in -o out3 --json out3.json --trace trace.json --gantt gantt.svg -v
for f in a sub/b sub/deeper/c sub/g; do is_gray_png "out3/$f.png"; done
contains out3.json '"ok": 4' "json counts"
contains out3.json '"device_share"' "json time split"
contains out3.json '"bound": {' "json bound stage"
contains out3.json '"startup_ms"' "json start-up"
# The command's wall clock holds its conversion and its start-up.
top() { sed -n "s/^  \"$1\": \([0-9.e+-]*\),*$/\1/p" out3.json; }
awk -v c="$(top command_wall_ms)" -v w="$(top wall_ms)" -v s="$(top startup_ms)" \
  'BEGIN { exit !(c > 0 && w > 0 && s > 0 && c >= w + s - 0.001) }' ||
  { echo "FAIL: command wall $(top command_wall_ms) ms < conversion $(top wall_ms) + start-up $(top startup_ms)"; failures=$((failures + 1)); }
# What each member of the device set did: the CPU first, in the JSON and the summary.
contains out3.json '"devices": [' "json devices"
contains out3.json '"name": "the CPU"' "json names the CPU"
contains out3.json '"images_per_s"' "json rate per device"
contains out3.json '"ms_per_file": {' "json: what the scheduler measured of each member"
contains out.txt "the CPU: " "summary line per device"
expect 0 "the CPU alone" -- "$cli" gray -r in -o out3b --backend host --json out3b.json
contains out3b.json '"backend": "host"' "json backend host"
# The PNG inputs (nvJPEG may decode the JPEG a level apart from libjpeg-turbo on a GPU).
for f in a sub/b sub/deeper/c; do cmp -s "out3/$f.png" "out3b/$f.png" || { echo "FAIL: out3/$f.png differs with --backend host"; failures=$((failures + 1)); }; done
contains trace.json '"traceEvents"' "chrome trace"
contains gantt.svg '<svg' "gantt chart"
expect 0 "gray JPEG input to JPEG" -- "$cli" gray in/sub/g.JPG -o out4 --format jpg
exists out4/g.jpg

# Existing outputs: refused before any work (exit 2, untouched), replaced with --force.
cp out1/a.png before.png
printf 'old' > out1/a.png
expect 2 "existing output" -- "$cli" gray in/a.png -o out1
contains err.txt "exist already" "existing output named"
[[ "$(cat out1/a.png)" == "old" ]] || { echo "FAIL: existing output was touched"; failures=$((failures + 1)); }
expect 0 "forced" -- "$cli" gray in/a.png -o out1 --force
cmp -s out1/a.png before.png || { echo "FAIL: forced output differs from the first run"; failures=$((failures + 1)); }
expect 2 "existing json" -- "$cli" gray in/a.png -o out5 --json out3.json
absent out5

# Bad files: each named with its reason, the others finish, exit 1.
mkdir -p mixed
cp in/a.png mixed/good1.png
cp in/sub/b.png mixed/good2.png
head -c 300 in/a.png > mixed/truncated.png
printf 'hello' > mixed/text.jpg
expect 1 "bad files" -- "$cli" gray mixed -o out6 --json out6.json
contains err.txt "mixed/truncated.png:" "truncated file named"
contains err.txt "mixed/text.jpg:" "unsupported file named"
is_gray_png out6/good1.png
is_gray_png out6/good2.png
absent out6/truncated.png
absent out6/text.png
contains out6.json '"failed": 2' "json failures"
contains out.txt "4 file(s): 2 ok, 2 failed" "summary counts the failures"
expect 1 "unsupported file given by name" -- "$cli" gray in/readme.txt -o out7
contains err.txt "readme.txt" "unsupported file named"

# Usage errors: exit 2, nothing written.
expect 2 "no output" -- "$cli" gray in/a.png
expect 2 "missing input" -- "$cli" gray nothing.png -o out8
contains err.txt "nothing.png: no such file" "missing input named"
expect 2 "bad format" -- "$cli" gray in/a.png -o out8 --format gif
expect 2 "bad quality" -- "$cli" gray in/a.png -o out8 --quality 0
expect 2 "bad backend" -- "$cli" gray in/a.png -o out8 --backend tpu
expect 2 "gpu decode on the host backend" -- "$cli" gray in/a.png -o out8 --decode gpu --backend host
contains err.txt "nvJPEG" "gpu decode explains"
expect 2 "bad decode" -- "$cli" gray in/a.png -o out8 --decode tpu
contains err.txt "--decode 'tpu'" "bad decode named"
expect 2 "bad encode" -- "$cli" gray in/a.png -o out8 --encode tpu
contains err.txt "--encode 'tpu'" "bad encode named"
expect 2 "gpu encode on the host backend" -- "$cli" gray in/a.png -o out8 --encode gpu --backend host
contains err.txt "nvJPEG" "gpu encode explains"
mkdir -p empty
expect 2 "folder without images" -- "$cli" gray empty -o out8
contains err.txt "no *.png" "empty folder explained"
mkdir -p clash && cp in/a.png clash/x.png && cp jpg/a.jpg clash/x.jpg
expect 2 "two inputs, one output" -- "$cli" gray clash -o out8
contains err.txt "would both be written" "collision named"
contains err.txt "--name '{stem}.{ext}'" "collision points to --name"
expect 0 "two inputs named apart" -- "$cli" gray clash -o outname --name '{stem}.{ext}'
is_gray_png outname/x.png.png
is_gray_png outname/x.jpg.png
expect 2 "bad name pattern" -- "$cli" gray clash -o out8 --name '{base}'
contains err.txt "--name '{base}'" "bad pattern named"
expect 0 "one file given twice" -- "$cli" gray in/a.png ./in/a.png in -o outdup
contains out.txt "1 file(s): 1 ok" "a file given twice converted once"
expect 2 "output over input" -- "$cli" gray in/a.png -o in --force
contains err.txt "would replace the input" "input protected"
absent out8

# --decode gpu: runs where the build has nvJPEG and a GPU is usable, else a usage error that
# says why. On the GPU alone (--backend gpu) nvJPEG takes the JPEG and the CPU decoder the
# PNG; beside the CPU (the default backend) two files end on the CPU before a GPU would have
# started, and the summary line says so.
"$cli" gray jpg/a.jpg in/sub/b.png -o outgpu --decode gpu --backend gpu -v >out.txt 2>err.txt
rc=$?
case $rc in
  0) is_gray_png outgpu/a.png; is_gray_png outgpu/b.png
     contains out.txt "1 file(s) by nvJPEG on the GPU, 1 given to the CPU decoder (1 PNG file)" "decode summary" ;;
  2) contains err.txt "nvJPEG" "gpu decode unavailable explained"; absent outgpu ;;
  *) echo "FAIL: --decode gpu --backend gpu: exit $rc"; cat out.txt err.txt; failures=$((failures + 1)) ;;
esac
"$cli" gray jpg/a.jpg in/sub/b.png -o outmixed --decode gpu >out.txt 2>err.txt
rc=$?
case $rc in
  0) is_gray_png outmixed/a.png; is_gray_png outmixed/b.png
     contains out.txt "on the CPU (no GPU started: the CPU finishes the run sooner than a GPU pays for itself)" \
       "a short run says why no GPU started" ;;
  2) contains err.txt "nvJPEG" "gpu decode unavailable explained"; absent outmixed ;;
  *) echo "FAIL: --decode gpu: exit $rc"; cat out.txt err.txt; failures=$((failures + 1)) ;;
esac

finish "all gray CLI checks passed"

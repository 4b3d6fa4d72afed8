# SPDX-License-Identifier: Apache-2.0
# Shared by the CLI test scripts (source it after setting `cli`): runs the test in a fresh
# temporary folder removed on exit, and counts failures for the script's final verdict:
#   expect STATUS DESCRIPTION -- command...   the command exits with STATUS
#   contains FILE TEXT DESCRIPTION           FILE contains TEXT
#   finish MESSAGE                           exit 1 when anything failed, else print MESSAGE, exit 0
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
failures=0

expect() {  # expect STATUS DESCRIPTION -- command...
  local want="$1" what="$2"
  shift 3
  "$@" >out.txt 2>err.txt
  local got=$?
  if [[ $got -ne $want ]]; then
    echo "FAIL: $what: exit $got, expected $want"; cat out.txt err.txt; failures=$((failures + 1))
  fi
}
contains() {  # contains FILE TEXT DESCRIPTION
  if ! grep -qF -- "$2" "$1"; then echo "FAIL: $3: '$2' not in $1"; cat "$1"; failures=$((failures + 1)); fi
}
finish() {
  if [[ $failures -gt 0 ]]; then echo "$failures failure(s)"; exit 1; fi
  echo "$1"
  exit 0
}

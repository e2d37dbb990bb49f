#!/usr/bin/env bash
# Runs the whole test suite: lit (FileCheck tests of mcu-opt, passes, emitted C) and pytest (unit
# and end-to-end tests against the reference model, the host build and QEMU). Installs what it needs.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/tools/setup.sh" || exit 1
VENV="${MCU_VENV:-$ROOT/.venv}"
export PATH="$VENV/bin:$PATH"
cd "$ROOT"

if [ -z "${CMSIS_NN_PATH:-}" ]; then
  echo "note: CMSIS_NN_PATH is not set: the CMSIS-NN tier is skipped; the portable backend runs end to end."
fi

lit_out="$(mktemp)"
"$VENV/bin/lit" -sv test 2>&1 | tee "$lit_out"
lit_rc=${PIPESTATUS[0]}
py_out="$(mktemp)"
"$VENV/bin/python" -m pytest -q -rs -p no:cacheprovider "$@" 2>&1 | tee "$py_out"
py_rc=${PIPESTATUS[0]}

# One closing line over both runners.
count() { grep -Eo "$2" "$1" | tail -n 1 | grep -Eo "[0-9]+" | head -n 1; }
lp=$(count "$lit_out" "Passed *: *[0-9]+"); lf=$(count "$lit_out" "Failed *: *[0-9]+")
lu=$(count "$lit_out" "Unsupported *: *[0-9]+")
pp=$(tail -n 1 "$py_out" | grep -Eo "[0-9]+ passed" | grep -Eo "[0-9]+")
pf=$(tail -n 1 "$py_out" | grep -Eo "[0-9]+ (failed|error)" | grep -Eo "[0-9]+" | awk '{s+=$1} END {print s+0}')
ps=$(tail -n 1 "$py_out" | grep -Eo "[0-9]+ skipped" | grep -Eo "[0-9]+")
rm -f "$lit_out" "$py_out"
echo "lit exit $lit_rc, pytest exit $py_rc"
echo "total: $(( ${lp:-0} + ${pp:-0} )) passed, $(( ${lf:-0} + ${pf:-0} )) failed, $(( ${lu:-0} + ${ps:-0} )) skipped"
[ "$lit_rc" -eq 0 ] && [ "$py_rc" -eq 0 ]

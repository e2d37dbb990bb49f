#!/usr/bin/env bash
# The main job end to end: a bundled model compiled to C, built for Cortex-M55, run under QEMU, its
# outputs printed beside PyTorch's and the reference model's. Installs what it needs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/tools/setup.sh"
VENV="${MCU_VENV:-$ROOT/.venv}"
export PATH="$VENV/bin:$PATH"
exec "$VENV/bin/python" -m mcu_mlir.demo "$@"

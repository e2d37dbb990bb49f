#!/usr/bin/env bash
# Installs what mcu-mlir needs on a Debian machine (run as root): the Arm toolchain, QEMU and CMake
# from Debian, and a virtual environment (.venv) with the pinned Python packages. Safe to run again:
# it installs only what is missing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${MCU_VENV:-$ROOT/.venv}"

need_apt=()
command -v arm-none-eabi-gcc >/dev/null || need_apt+=(gcc-arm-none-eabi libnewlib-arm-none-eabi)
[ -e /usr/lib/arm-none-eabi/newlib/libc.a ] || [ -e /usr/lib/arm-none-eabi/lib/libc.a ] || need_apt+=(libnewlib-arm-none-eabi)
command -v qemu-system-arm >/dev/null || need_apt+=(qemu-system-arm)
command -v cmake >/dev/null || need_apt+=(cmake)
command -v cc >/dev/null || need_apt+=(gcc libc6-dev)
command -v make >/dev/null || need_apt+=(make)
command -v git >/dev/null || need_apt+=(git)
# A spoken test signal for the streaming VAD test (tools/speech_signal.py).
command -v espeak-ng >/dev/null || need_apt+=(espeak-ng)
command -v sox >/dev/null || need_apt+=(sox)
# report.html is checked by rendering it (test/e2e/test_report_html.py).
command -v chromium >/dev/null || need_apt+=(chromium)
python3 -c "import venv, ensurepip" 2>/dev/null || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${need_apt[*]}"
  if [ "$(id -u)" != 0 ]; then
    echo "setup: these Debian packages are missing and installing them needs root: ${need_apt[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # --no-install-recommends: the recommends of the Arm toolchain and QEMU add ~2.4 GB we do not use.
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV"
  python3 -m venv "$VENV"
fi

# Reinstall only when the dependency list changed.
stamp="$VENV/.mcu-mlir-installed"
want="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1) $ROOT"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing the pinned Python packages into $VENV"
  # torch first and alone, exactly pinned: any looser spec would fetch a multi-GB CUDA build.
  "$VENV/bin/pip" install -q --disable-pip-version-check "torch==2.13.0" 2>&1 | grep -v "^WARNING: Location" || true
  "$VENV/bin/pip" install -q --disable-pip-version-check -e "$ROOT[test,models]" 2>&1 | grep -v "^WARNING: Location" || true
  # torchaudio's model code only: its releases pin another torch, so never let pip resolve it.
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps "torchaudio==2.11.0" 2>&1 | grep -v "^WARNING: Location" || true
  # TFLite Micro's interpreter, the .tflite tests' oracle: its wheel names tensorflow-free deps
  # only, but --no-deps keeps pip away from torch whatever a release declares.
  "$VENV/bin/pip" install -q --disable-pip-version-check flatbuffers numpy pyyaml backports.strenum 2>&1 | grep -v "^WARNING: Location" || true
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps "tflite-micro==0.dev20261023182759" 2>&1 | grep -v "^WARNING: Location" || true
  # The import check keeps the libraries' own start-up chatter (torchao's optional kernels, torch
  # deprecation notices) to itself and shows it only when the check fails.
  if ! check_log="$("$VENV/bin/python" -c "import torch, torch_mlir, torchao, mcu_mlir; assert torch.__version__.startswith('2.13.0'), torch.__version__" 2>&1)"; then
    echo "$check_log" >&2
    echo "setup: the installed packages do not import (see above)" >&2
    exit 1
  fi
  echo "$want" > "$stamp"
fi

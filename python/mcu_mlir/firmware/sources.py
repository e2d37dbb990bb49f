"""Where the C side of mcu-mlir lives (CMakeLists.txt, cmake/, include/, lib/, tools/qemu-plugin).

The package carries it: an installed wheel holds it as mcu_mlir/csrc (setup.py copies it there), a
checkout or an editable install has it in the tree around python/. `MCU_MLIR_ROOT` overrides both.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..diagnostics import UserError

ENV = "MCU_MLIR_ROOT"
_PACKAGE = Path(__file__).resolve().parents[1]          # .../mcu_mlir
_CANDIDATES = (_PACKAGE / "csrc", _PACKAGE.parents[1])  # the wheel's copy; python/mcu_mlir -> the checkout


def _is_root(path: Path) -> bool:
    return (path / "CMakeLists.txt").is_file() and (path / "lib" / "portable").is_dir() \
        and (path / "include" / "mcu").is_dir()


def root() -> Path:
    """The directory holding mcu-mlir's CMakeLists.txt, cmake/, include/ and lib/."""
    given = os.environ.get(ENV)
    if given:
        path = Path(given).expanduser().resolve()
        if not _is_root(path):
            raise UserError(f"{ENV}={given} is not an mcu-mlir checkout (no CMakeLists.txt, include/mcu and "
                            "lib/portable there)")
        return path
    for path in _CANDIDATES:
        if _is_root(path):
            return path
    raise UserError(f"the mcu-mlir C sources (CMakeLists.txt, include/, lib/) are neither in the installed package "
                    f"({_CANDIDATES[0]}) nor around it ({_CANDIDATES[1]}): reinstall mcu-mlir from its wheel, "
                    f"or set {ENV} to a checkout of mcu-mlir")

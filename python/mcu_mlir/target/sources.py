"""Where the C side of mcu-mlir lives (CMakeLists.txt, cmake/, include/, lib/, tools/qemu-plugin).

The Python package finds it wherever it is installed: `MCU_MLIR_ROOT` when set, else the source
tree the package was installed from (a checkout or an editable install).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..diagnostics import UserError

ENV = "MCU_MLIR_ROOT"


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
    tree = Path(__file__).resolve().parents[3]  # python/mcu_mlir/target/ -> the checkout
    if _is_root(tree):
        return tree
    raise UserError(f"the mcu-mlir C sources (CMakeLists.txt, include/, lib/) are not next to the installed "
                    f"package ({tree}): set {ENV} to a checkout of mcu-mlir")

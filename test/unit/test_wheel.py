"""The wheel is the product: it carries every C file the tools build from, found through the package."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What a build, an exported project and an instruction count read from the C side.
NEEDED = ["CMakeLists.txt", "cmake/mcu-targets.cmake", "cmake/toolchain-arm-none-eabi.cmake",
          "include/mcu/runtime.h", "include/mcu/portable.h", "lib/runtime.c", "lib/portable/nn.c",
          "lib/project/CMakeLists.txt.in", "lib/project/README.md.in", "lib/project/model.mk.in",
          "lib/target/harness.c", "lib/target/startup.S", "lib/target/mps3-an547.ld.in",
          "tools/qemu-plugin/insn_count.c"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    stale = ROOT / "build" / "lib" / "mcu_mlir" / "moved_away_since.py"   # what an earlier build left in build/
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_text("")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
                           "-q", "-w", str(out)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"pip cannot build the wheel here: {proc.stderr.strip()[-300:]}")
    return next(out.glob("mcu_mlir-*.whl"))


def test_the_wheel_carries_the_c_side(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [f for f in NEEDED if f"mcu_mlir/csrc/{f}" not in names]
    assert not missing
    checkout = {str(p.relative_to(ROOT)) for sub in ("cmake", "include", "lib") for p in (ROOT / sub).rglob("*")
                if p.is_file() and "__pycache__" not in p.parts}
    assert {f"mcu_mlir/csrc/{f}" for f in checkout} <= names
    assert "mcu_mlir/moved_away_since.py" not in names


def test_an_installed_package_finds_its_own_c_side(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = ("from mcu_mlir.firmware import sources; print(sources.root()); "
            "from mcu_mlir.tools.mcu_compile import main; main(['--version'])")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(site)}   # no MCU_MLIR_ROOT
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    found, version = proc.stdout.split("\n")[:2]
    assert Path(found) == site / "mcu_mlir" / "csrc"
    from mcu_mlir import __version__
    assert version == f"mcu-compile {__version__}"

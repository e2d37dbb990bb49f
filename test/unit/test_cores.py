"""The target description agrees with the CMake side and the linker scripts."""

import re
from pathlib import Path

from mcu_mlir.firmware import build
from mcu_mlir.cores import CORES, DEVICE_TARGETS

ROOT = Path(__file__).resolve().parents[2]


def _cmake_targets():
    text = (ROOT / "cmake" / "mcu-targets.cmake").read_text()
    known = re.search(r"set\(MCU_KNOWN_TARGETS ([^)]*)\)", text).group(1).split()
    found = {}
    for m in re.finditer(r'target STREQUAL "([\w-]+)"\)(.*?)(?=elseif|else\(\))', text, re.S):
        body = m.group(2)
        found[m.group(1)] = (re.search(r'set\(flags "([^"]*)"\)', body).group(1).split(),
                             re.search(r'set\(machine "([^"]*)"\)', body).group(1),
                             re.search(r'set\(script "([^"]*)"\)', body).group(1))
    return known, found


def test_cmake_names_the_same_cores_flags_machines_and_scripts():
    known, found = _cmake_targets()
    assert known == list(CORES)
    assert set(found) == set(DEVICE_TARGETS)
    for name, (flags, machine, script) in found.items():
        core = CORES[name]
        assert (tuple(flags), machine, script) == (core.cpu_flags, core.qemu_machine, core.linker_script), name


def test_memory_sizes_are_the_linker_scripts():
    for core in CORES.values():
        if core.linker_script is None:
            continue
        regions = build.memory_regions(ROOT / "lib" / "target" / f"{core.linker_script}.ld.in")
        sizes = sorted(length for _, length in regions.values())
        assert core.ram_bytes == sizes[-1], core.name
        flash = regions.get("FLASH", regions.get("ITCM"))[1]
        assert core.flash_bytes == flash, core.name


def test_an_installed_copy_finds_the_c_sources_through_the_environment(tmp_path):
    """The package copied elsewhere (as pip installs it) finds CMakeLists.txt and lib/ through
    MCU_MLIR_ROOT, and without it says what to set (no traceback)."""
    import os
    import shutil
    import subprocess
    import sys
    shutil.copytree(ROOT / "python" / "mcu_mlir", tmp_path / "site" / "mcu_mlir",
                    ignore=shutil.ignore_patterns("__pycache__"))
    code = ("from mcu_mlir.firmware import sources\n"
            "from mcu_mlir.diagnostics import UserError\n"
            "try:\n    print(sources.root())\nexcept UserError as e:\n    print('error:', e)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("MCU_MLIR_ROOT", "PYTHONPATH")}
    env["PYTHONPATH"] = str(tmp_path / "site")
    alone = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert "error:" in alone.stdout and "set MCU_MLIR_ROOT" in alone.stdout, alone.stdout + alone.stderr
    env["MCU_MLIR_ROOT"] = str(ROOT)
    found = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert found.stdout.strip() == str(ROOT), found.stdout + found.stderr

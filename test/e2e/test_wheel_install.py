"""The wheel as a user installs it: built from this checkout, installed into a fresh virtual environment
outside it (the pinned torch and the rest from pip's usual sources), then one model end to end from an
empty temporary folder with MCU_MLIR_ROOT unset: mcu-compile, a host build, mcu-run --check against
tosa_reference_model bit for bit, and the same under QEMU when the Arm toolchain is there."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tiny_model_source import SOURCE

ROOT = Path(__file__).resolve().parents[2]
SECONDS = {}


def _run(cmd, cwd, env, what):
    start = time.perf_counter()
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True)
    SECONDS[what] = time.perf_counter() - start
    assert proc.returncode == 0, f"{what} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the fresh environment's bin/, the environment its tools run in)."""
    if os.environ.get("MCU_WHEEL_TEST") != "1":
        pytest.skip("installs the wheel and torch into a new virtual environment (~2 min): set MCU_WHEEL_TEST=1 "
                    "(.ci/run does)")
    if shutil.which("cmake") is None or shutil.which("cc") is None:
        pytest.skip("cmake or cc not installed: the host build needs them")
    home = tmp_path_factory.mktemp("wheel-install")
    env = {k: v for k, v in os.environ.items() if k not in ("MCU_MLIR_ROOT", "PYTHONPATH", "VIRTUAL_ENV")}
    # No other virtual environment's tools (this checkout's .venv) on the PATH.
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not (Path(p) / "activate").exists())
    _run([sys.executable, "-m", "pip", "wheel", ROOT, "--no-deps", "--no-build-isolation", "-q", "-w", home / "dist"],
         home, env, "pip wheel")
    wheel = next((home / "dist").glob("mcu_mlir-*.whl"))
    base = getattr(sys, "_base_executable", sys.executable)   # a fresh environment, not one inside this one
    _run([base, "-m", "venv", home / "venv"], home, env, "venv")
    _run([home / "venv" / "bin" / "pip", "install", "-q", wheel], home, env, "pip install")
    env["PATH"] = f"{home / 'venv' / 'bin'}{os.pathsep}{env['PATH']}"
    return home / "venv" / "bin", env


def test_the_installed_tools_compile_build_and_run_a_model_from_an_empty_folder(installed, tmp_path):
    bin_dir, env = installed
    work = tmp_path / "work"
    work.mkdir()
    (work / "tiny.py").write_text(SOURCE)
    assert _run([bin_dir / "mcu-compile", "--version"], work, env, "--version").startswith("mcu-compile ")
    _run([bin_dir / "python", "-c", "import numpy as np; np.savez('in.npz', input0=np.random.default_rng(1)"
          ".standard_normal((1, 3, 6, 6)).astype(np.float32))"], work, env, "inputs")
    targets = ["host"] + (["cortex-m55"] if shutil.which("arm-none-eabi-gcc") and shutil.which("qemu-system-arm")
                          else [])
    for target in targets:
        out = work / f"out-{target}"
        printed = _run([bin_dir / "mcu-compile", "tiny.py:tiny", "--input-shape", "1,3,6,6", "--target", target,
                        "--calibration", "8", "--emit", "elf", "-o", out], work, env, f"mcu-compile {target}")
        assert "CMSIS-NN" in printed or "portable" in (out / "report.json").read_text()
        checked = _run([bin_dir / "mcu-run", out, "--target", target, "--inputs", "in.npz", "--outputs", "y.npz",
                        "--check"], work, env, f"mcu-run --check {target}")
        assert "bit-exact" in checked or "bit for bit" in checked, checked
        assert not any(p.name == "CMakeLists.txt" for p in work.iterdir())


def teardown_module(module):
    for what, seconds in SECONDS.items():
        print(f"  {what}: {seconds:.1f} s")

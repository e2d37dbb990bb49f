"""The same model and calibration data give the same C whatever the CPU's float paths.

Each compile runs in a fresh process whose environment selects other float code, as another
machine would: ATen's AVX-512 or AVX2 kernels, MKL's automatic or AVX2 branch, oneDNN up to
AVX-512, one or two threads, numpy without its AVX-512 loops. mcu-compile pins calibration to
code that is the same on every x86-64 CPU (mcu_mlir/cpu_paths.py), so the C must not change.
Before the pin replaced such settings, ATen's AVX-512 against AVX2 kernels alone gave DS-CNN
other C.
"""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODEL = '''
from mcu_mlir import zoo

def ds_cnn():
    return zoo.get("ds_cnn")[0]
'''

# Settings of two machines' float paths (the values pin() replaces, and those it leaves alone).
MACHINES = {
    "avx512, two threads": {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "AUTO", "OMP_NUM_THREADS": "2",
                            "ONEDNN_MAX_CPU_ISA": "AVX512_CORE"},
    "avx2, one thread": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "OMP_NUM_THREADS": "1",
                         "ONEDNN_MAX_CPU_ISA": "AVX2", "NPY_DISABLE_CPU_FEATURES": "AVX512F AVX512_SKX"},
}


def _compile(model_file, out, settings):
    env = {k: v for k, v in os.environ.items() if k not in ("MKL_CBWR", "ATEN_CPU_CAPABILITY")}
    env.update(settings, PYTHONPATH=os.path.join(ROOT, "python"))
    from mcu_mlir import zoo
    shape = ",".join(map(str, zoo.get("ds_cnn")[1][0].shape))
    run = subprocess.run([sys.executable, "-m", "mcu_mlir.tools.mcu_compile", f"{model_file}:ds_cnn",
                          "--input-shape", shape, "--backend", "portable", "--calibration", "4", "--emit", "c",
                          "-o", str(out)], capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    return run


def test_other_cpu_paths_give_the_same_c(tmp_path):
    pytest.importorskip("torch")
    model_file = tmp_path / "models.py"
    model_file.write_text(MODEL)
    runs, c = {}, {}
    for name, settings in MACHINES.items():
        out = tmp_path / name.replace(" ", "_").replace(",", "")
        runs[name] = _compile(model_file, out, settings)
        c[name] = (out / "model.c").read_bytes()
    first, second = MACHINES
    assert c[first] == c[second], f"the C differs between '{first}' and '{second}'"
    # The replaced settings are named, not changed silently.
    assert "ATEN_CPU_CAPABILITY=avx512 from the environment is replaced by default" in runs[first].stderr

"""The generated C of every zoo model is byte-identical to the recorded one, and its kernel IR typed.

`golden/emission_sha256.json` holds the sha256 of model.c / model.h for every zoo model on both
backends and two cores (M55: MVE paths and scratch sizes; M4: DSP). A refactor must leave them
unchanged; a commit that changes the C on purpose records the new hashes and says why:

    python test/e2e/test_emission_unchanged.py --record
"""

import hashlib
import json
import os
import re
import sys
import tempfile
from pathlib import Path

import pytest

if __name__ == "__main__":      # recording: torch's kernels pinned as test/conftest.py pins them
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
    from mcu_mlir import cpu_paths
    assert cpu_paths.pin(), "torch was imported before its kernels could be pinned"

GOLDEN = Path(__file__).parent / "golden" / "emission_sha256.json"
BACKENDS = ("cmsis-nn", "portable")
TARGETS = ("cortex-m55", "cortex-m4")


def _calibration(zoo, name):
    return [zoo.example_inputs(name, seed=s) for s in range(2, 6)]


def kernel_ir_problems(text: str) -> list[str]:
    """What in a module's kernel IR is not a typed kernel op: a catch-all op, a kernel named by a
    string, a parameter dictionary, or an op of neither kernel dialect."""
    problems = []
    for line in text.splitlines():
        op = re.search(r'= "?([a-z_]+\.[a-z_0-9]+)"?[ (]', line)
        if op and not op.group(1).startswith(("cmsisnn.", "portable.", "tosa.const", "func.")):
            problems.append(f"not a kernel op: {line.strip()[:120]}")
        for found in re.findall(r'"(?:arm|mcu)_[a-z_0-9]+"|\bparams = \{|\bkernel = "|cmsisnn\.portable', line):
            problems.append(f"{found}: {line.strip()[:120]}")
    return problems


def emission_hashes(name: str) -> dict:
    """{"<backend>/<target>/<file>": sha256} for one zoo model (asserting its kernel IR is typed)."""
    from mcu_mlir import zoo
    from mcu_mlir.driver import compile as compile_model
    out = {}
    for backend in BACKENDS:
        for target in TARGETS:
            model, example = zoo.get(name)
            with tempfile.TemporaryDirectory() as tmp:
                compile_model(model, example, target=target, backend=backend, emit="c",
                              calibration=_calibration(zoo, name), output_dir=tmp)
                problems = kernel_ir_problems(Path(tmp, "cmsisnn.mlir").read_text())
                assert not problems, f"{name} {backend} {target}:\n" + "\n".join(problems[:20])
                for f in ("model.c", "model.h"):
                    out[f"{backend}/{target}/{f}"] = hashlib.sha256(Path(tmp, f).read_bytes()).hexdigest()
    return out


def _models():
    from mcu_mlir import zoo
    return sorted(zoo.MODELS)


@pytest.mark.parametrize("name", _models() if GOLDEN.exists() else [])
def test_emission_unchanged(name):
    pytest.importorskip("torch")
    want = json.loads(GOLDEN.read_text())
    assert name in want, f"no recorded hashes for '{name}': run {__file__} --record"
    got = emission_hashes(name)
    changed = sorted(k for k in want[name] if got.get(k) != want[name][k])
    assert not changed, (
        f"{name}: generated C changed in {changed}. If on purpose, record it with `python "
        f"{os.path.relpath(__file__)} --record` and say why in the commit. To tell a change of the code from one "
        f"of the machine: check out the commit that recorded the hashes (`git log -1 -- {os.path.relpath(GOLDEN)}`) "
        f"and run this test there; if it fails there too, this machine's float paths differ (pinned here: "
        f"{_float_paths()}; test_same_c_everywhere.py varies them) and mcu_mlir/cpu_paths.py must pin what it missed")


def _float_paths() -> str:
    import torch
    from mcu_mlir import cpu_paths
    return (f"ATen {torch.backends.cpu.get_cpu_capability()}, "
            + ", ".join(f"{k}={os.environ.get(k)}" for k in cpu_paths.CAPS)
            + f", in effect: {cpu_paths.in_effect()}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit(f"usage: {sys.argv[0]} --record")
    table = {name: emission_hashes(name) for name in _models()}
    GOLDEN.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(table)} models in {GOLDEN}")

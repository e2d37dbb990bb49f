"""Every zoo model through the whole product: compiled to C, built for the host and for Cortex-M cores,
run (QEMU for the cores), and compared with tosa_reference_model on the same integer TOSA, bit for bit.

The portable backend runs in CI; the CMSIS-NN tier runs wherever CMSIS_NN_PATH names a checkout.
"""

import os
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mcu_mlir import zoo  # noqa: E402
from mcu_mlir.diagnostics import UserError  # noqa: E402
from mcu_mlir.driver import compile as compile_model  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402

MODELS = sorted(n for n in zoo.MODELS if n not in zoo.LARGE)



def _need(*tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: needed to build and run the generated C")


def _inputs(name):
    return [t.numpy() for t in zoo.example_inputs(name, seed=1)]


def _calibration(name):
    return [zoo.example_inputs(name, seed=s) for s in range(2, 6)]


@pytest.fixture(scope="module")
def portable(tmp_path_factory):
    """One portable compile per model (portable C is the same for every core)."""
    cache = {}

    def get(name):
        if name not in cache:
            out = tmp_path_factory.mktemp(f"portable-{name}")
            model, example = zoo.get(name)
            compile_model(model, example, target="cortex-m55", backend="portable", emit="c",
                          calibration=_calibration(name), output_dir=str(out))
            cache[name] = out
        return cache[name]
    return get


def _check(outdir, name, target, lsb=0):
    inputs = _inputs(name)
    want = run.run_reference_outdir(outdir, inputs).outputs_q
    try:
        # The host build runs with AddressSanitizer and UBSan: an out-of-bounds read fails, never passes by luck.
        got = run.run(outdir, inputs, target=target, sanitize=target == "host").outputs_q
    except UserError as err:
        # A model larger than the machine must say so (never crash): that is the contract.
        assert "does not fit the memory" in str(err), err
        pytest.skip(f"{name} does not fit {target}: {err}")
    assert len(got) == len(want)
    for g, w in zip(got, want):
        diff = np.abs(g.astype(np.int64) - w.astype(np.int64)).reshape(-1)
        assert g.shape == w.shape
        assert diff.max(initial=0) <= lsb, f"{name} on {target}: max |diff| {diff.max()} LSB"


@pytest.mark.parametrize("target", ["host", "cortex-m55", "cortex-m4"])
@pytest.mark.parametrize("name", MODELS)
def test_portable_firmware_equals_reference(portable, name, target):
    _need("cmake", "cc") if target == "host" else _need("cmake", "arm-none-eabi-gcc", "qemu-system-arm")
    _check(portable(name), name, target)


@pytest.mark.parametrize("target", ["host", "cortex-m55", "cortex-m4", "cortex-m3"])
@pytest.mark.parametrize("name", MODELS)
def test_cmsis_nn_firmware_equals_reference(tmp_path, name, target):
    path = os.environ.get("CMSIS_NN_PATH")
    if not path or not os.path.isdir(os.path.join(path, "Include")):
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")
    _need("cmake", "cc") if target == "host" else _need("cmake", "arm-none-eabi-gcc", "qemu-system-arm")
    model, example = zoo.get(name)
    compile_model(model, example, target=target, backend="cmsis-nn", emit="c", calibration=_calibration(name),
                  output_dir=str(tmp_path), cmsis_nn_path=path)
    # Bit for bit, average pools included: the frontend's pools have zero points 0, which is
    # how arm_avgpool_s8 computes (no zero points, ties away from zero).
    _check(tmp_path, name, target)

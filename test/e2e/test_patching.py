"""Patch-based execution end to end: MobileNetV2 (96x96) with --prefer memory runs its first layers
in bands of rows, its arena far below the layer-by-layer lower bound, its outputs equal to
tosa_reference_model's bit for bit (portable kernels on the host; CMSIS-NN under QEMU in the
CMSIS-NN tier). A model over the RAM limit is planned that way by itself, and one that does not fit
even then gets the clear error."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mcu_mlir  # noqa: E402
from mcu_mlir import zoo  # noqa: E402
from mcu_mlir.diagnostics import UserError  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402


def _need(tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: needed to build and run the generated C")


def _compile(out, **options):
    model, example = zoo.get("mobilenet_v2")
    return mcu_mlir.compile(model, example, emit="c", calibration=2, output_dir=str(out), **options), example


def _bit_exact(out, example, target, **extra):
    inputs = [np.asarray(x) for x in example]
    want = run.run_reference_outdir(out, inputs)
    got = run.run(out, inputs, target=target, **extra)
    np.testing.assert_array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))


@pytest.fixture(scope="module")
def layer_by_layer(tmp_path_factory):
    result, _ = _compile(tmp_path_factory.mktemp("speed"), target="host", backend="portable")
    assert "patched_bands" not in result.report  # the default schedule is unchanged
    return result.report


def test_bands_on_portable_kernels(tmp_path, layer_by_layer):
    _need(("cmake", "cc"))
    result, example = _compile(tmp_path, target="host", backend="portable", prefer="memory")
    report = result.report
    assert report["patched_bands"] >= 2 and report["patched_ops"] >= 4
    assert report["arena_bytes"] <= 0.4 * layer_by_layer["arena_lower_bound_bytes"], (report, layer_by_layer)
    kernels = [op["kernel"] for op in report["ops"]]
    assert "portable:concat" not in kernels  # the bands write into their rows of the stage's output
    _bit_exact(tmp_path, example, "host")


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m4"])
def test_bands_on_cmsis_nn(tmp_path, target):
    path = os.environ.get("CMSIS_NN_PATH")
    if not path:
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")
    _need(("arm-none-eabi-gcc", "qemu-system-arm", "cmake"))
    result, example = _compile(tmp_path, target=target, backend="cmsis-nn", prefer="memory", cmsis_nn_path=path)
    kernels = [op["kernel"] for op in result.report["ops"]]
    assert result.report["patched_bands"] >= 2
    assert "arm_concatenation_s8_y" not in kernels and "portable:concat" not in kernels
    # Every band's call on a CMSIS-NN kernel or one written for its layer (the NCHW input's bands are
    # sliced by a portable copy).
    assert all(k.startswith(("arm_", "generated:")) or k in ("view", "portable:slice") for k in kernels), kernels
    _bit_exact(tmp_path, example, target, cmsis_nn_path=path)


def test_over_the_ram_limit_runs_in_bands(tmp_path, layer_by_layer):
    _need(("cmake", "cc"))
    limit = layer_by_layer["arena_bytes"] // 2
    result, example = _compile(tmp_path, target="host", backend="portable", ram_limit=limit)
    assert result.report["planned_for_memory_to_fit_ram"] and result.report["patched_bands"] >= 2
    assert result.report["arena_bytes"] <= limit
    _bit_exact(tmp_path, example, "host")


def test_too_little_ram_even_in_bands(tmp_path):
    with pytest.raises(UserError) as err:
        _compile(tmp_path, target="host", backend="portable", ram_limit=4096)
    text = str(err.value)
    assert "bytes over the RAM limit" in text and "run in bands of rows" in text


def test_acceptance_row_of_the_benchmark(tmp_path):
    """CI's row of tools/patching_benchmark.py: torchvision's MobileNetV2-0.35 at 96x96 on Cortex-M55,
    at most 0.4x its layer-by-layer bound for at most 15 % more instructions (counted under QEMU),
    both programs bit-exact."""
    path = os.environ.get("CMSIS_NN_PATH")
    if not path:
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")
    _need(("arm-none-eabi-gcc", "qemu-system-arm", "cmake"))
    if importlib.util.find_spec("torchvision") is None:
        pytest.skip("torchvision is not installed: pip install -e .[models]")
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
    import patching_benchmark
    row = patching_benchmark.bench("tv_mobilenet_v2_035", (1, 3, 96, 96), "cortex-m55", 15.0, str(tmp_path))
    assert row["bit_exact_speed"] and row["bit_exact_memory"], row
    assert row["bands"] >= 2 and row["ratio_to_bound"] <= 0.4, row
    assert 0 < row["overhead_pct"] <= 15.0, row


def test_max_overhead_option():
    from mcu_mlir.tools.mcu_compile import _parser
    parse = _parser().parse_args
    assert parse(["m.py:f", "-o", "out", "--max-overhead", "15%"]).max_overhead == 15.0
    assert parse(["m.py:f", "-o", "out", "--max-overhead", "7.5"]).max_overhead == 7.5
    for bad in ("abc", "-3"):
        with pytest.raises(SystemExit):
            parse(["m.py:f", "-o", "out", "--max-overhead", bad])

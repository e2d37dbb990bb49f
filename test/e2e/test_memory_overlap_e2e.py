"""Overlapped arena plans run bit-exact: DS-CNN (a chain of depthwise / pointwise layers, every one
overlapping its input) on the MVE and DSP paths of CMSIS-NN under QEMU, and on the portable kernels.

The arena must be below the classic lower bound (so overlap is really exercised) and the outputs
equal to tosa_reference_model's, bit for bit. On the DSP path the pointwise layers overlap only
row by row (arm_convolve_1x1_s8, about twice the instructions of the wrapper's _fast product), which
prefer=memory takes and prefer=speed does not.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mcu_mlir  # noqa: E402
from mcu_mlir import zoo  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402

CROSS_TOOLS = ("arm-none-eabi-gcc", "qemu-system-arm", "cmake")


def _need(tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: needed to build and run the generated C")


def _check(tmp_path, backend, target, cmsis_nn_path=None, prefer="speed"):
    model, example = zoo.get("ds_cnn")
    extra = {"cmsis_nn_path": cmsis_nn_path} if cmsis_nn_path else {}
    result = mcu_mlir.compile(model, example, target=target, backend=backend, emit="c", prefer=prefer,
                              output_dir=str(tmp_path), **extra)
    report = result.report
    assert report["arena_overlap_bound_bytes"] <= report["arena_bytes"] < report["arena_lower_bound_bytes"]
    inputs = [np.asarray(x) for x in example]
    want = run.run_reference_outdir(tmp_path, inputs)
    got = run.run(tmp_path, inputs, target=target, **extra)
    assert len(got.outputs_q) == len(want.outputs_q) == 1
    np.testing.assert_array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m4"])
def test_ds_cnn_overlapped_on_cmsis_nn(tmp_path, target):
    path = os.environ.get("CMSIS_NN_PATH")
    if not path:
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")
    _need(CROSS_TOOLS)
    _check(tmp_path, "cmsis-nn", target, path, prefer="speed" if target == "cortex-m55" else "memory")


def test_speed_keeps_the_fast_pointwise_kernel_on_dsp(tmp_path):
    """prefer=speed on Cortex-M4: no pointwise layer is moved to the row-by-row kernel to overlap."""
    model, example = zoo.get("ds_cnn")
    kernels = {}
    for prefer in ("speed", "memory"):
        result = mcu_mlir.compile(model, example, target="cortex-m4", emit="c", prefer=prefer, calibration=2,
                                  output_dir=str(tmp_path / prefer))
        kernels[prefer] = (tmp_path / prefer / "model.c").read_text().count("arm_convolve_1x1_s8(")
        arena = result.report["arena_bytes"]
        kernels[prefer + " arena"] = arena
    assert kernels["speed"] == 0 and kernels["memory"] > 0, kernels
    assert kernels["memory arena"] < kernels["speed arena"], kernels


def test_ds_cnn_overlapped_on_portable_kernels(tmp_path):
    _need(("cmake", "cc"))
    _check(tmp_path, "portable", "host")


def test_memory_first_kernels_on_mve(tmp_path):
    """prefer=memory on the M55 with no instruction budget for running layers in bands: MobileNetV2's
    peak depthwise calls arm_depthwise_conv_s8 (no scratch) and the arena shrinks; the outputs stay
    bit-exact under QEMU."""
    path = os.environ.get("CMSIS_NN_PATH")
    if not path:
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")
    _need(CROSS_TOOLS)
    model, example = zoo.get("mobilenet_v2")
    arenas = {}
    for prefer in ("speed", "memory"):
        out = tmp_path / prefer
        result = mcu_mlir.compile(model, example, target="cortex-m55", backend="cmsis-nn", emit="c",
                                  calibration=2, output_dir=str(out), cmsis_nn_path=path, prefer=prefer,
                                  max_overhead=0)
        arenas[prefer] = result.report["arena_bytes"]
    kernels = [op["kernel"] for op in result.report["ops"]]
    assert "arm_depthwise_conv_s8" in kernels
    assert arenas["memory"] < arenas["speed"], arenas
    inputs = [np.asarray(x) for x in example]
    want = run.run_reference_outdir(out, inputs)
    got = run.run(out, inputs, target="cortex-m55", cmsis_nn_path=path)
    np.testing.assert_array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))

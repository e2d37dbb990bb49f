"""C emission: deterministic output, the report's shape, and errors for unplanned modules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcu_mlir import _mlir
from mcu_mlir.dialects import load_all
from mcu_mlir.pipeline import run_pipeline
from mcu_mlir.emission.emit_c import EmissionError, emit_c, model_report

MODEL = Path(__file__).resolve().parents[1] / "Transforms" / "plan-memory.mlir"


def _mcu_opt_print(*options):
    cmd = [sys.executable, "-m", "mcu_mlir.tools.mcu_opt", str(MODEL), *options, "--mcu-emit-c=print=true",
           "-o", "/dev/null"]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def test_emission_is_byte_for_byte_deterministic_across_processes():
    for options in (["--mcu-tosa-to-cmsisnn-pipeline=target=cortex-m55"],
                    ["--mcu-tosa-to-cmsisnn-pipeline=backend=portable"]):
        first, second = _mcu_opt_print(*options), _mcu_opt_print(*options)
        assert first == second
        assert "// ----- model.c" in first and "// ----- model.h" in first


def _planned(text_options: str):
    ctx = _mlir.new_context()
    load_all(ctx)
    with ctx, _mlir.ir.Location.unknown():
        module = _mlir.ir.Module.parse(MODEL.read_text())
        if text_options:
            run_pipeline(module, text_options)
        return ctx, module


def test_report_lists_every_kernel_call_with_its_weights_and_offset():
    ctx, module = _planned("mcu-tosa-to-cmsisnn-pipeline{target=cortex-m4}")
    with ctx:
        report = model_report(module)
    assert report["arena_bytes"] == 800 and report["arena_lower_bound_bytes"] == 800
    kernels = [op["kernel"] for op in report["ops"]]
    assert kernels == ["arm_convolve_wrapper_s8", "arm_convolve_wrapper_s8"]
    # 8x3x3x8 int8 weights + 8 int32 biases, shared by both calls but counted per call.
    assert [op["weights_bytes"] for op in report["ops"]] == [576 + 32, 576 + 32]
    assert report["weights_bytes"] == 576 + 32  # held once in the C
    assert report["ops"][0]["arena_offset"] == 0 and report["ops"][1]["arena_offset"] is None
    assert all(op["tosa_op"] == "tosa.conv2d+tosa.rescale" for op in report["ops"])


def test_emitting_an_unplanned_module_is_an_error():
    ctx, module = _planned("mcu-attach-target,mcu-convert-tosa-to-cmsisnn")
    with ctx, pytest.raises(EmissionError, match="mcu-plan-memory"):
        emit_c(module)


def test_header_tables_carry_the_io_quantization_given():
    class Quant:
        def __init__(self, scale, zero_point):
            self.scale, self.zero_point = scale, zero_point

    ctx, module = _planned("mcu-tosa-to-cmsisnn-pipeline{backend=portable}")
    with ctx:
        c = emit_c(module, [Quant(0.05, -3)], [Quant(0.125, 7)])["model.c"]
        plain = emit_c(module)["model.c"]
    assert '{"input0", 4, {1, 8, 8, 8}, 1, 0, 0.05f, -3, 512}' in c
    assert '{"output0", 4, {1, 8, 8, 8}, 1, 0, 0.125f, 7, 512}' in c
    assert '{"input0", 4, {1, 8, 8, 8}, 1, 0, 1.0f, 0, 512}' in plain

"""The padding contract of CMSIS-NN's window calls (kernel_library/cmsis_padding.py): which function a
call runs on each core, which of them ignore a bottom / right padding, and the emitter refusing a
call that would."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcu_mlir import _mlir
from mcu_mlir.dialects import cmsisnn, load_all
from mcu_mlir.dialects.kernel_op import enum_attr
from mcu_mlir.pipeline import run_pipeline
from mcu_mlir.kernel_library import cmsis_padding
from mcu_mlir import cores
from mcu_mlir.emission.emit_c import EmissionError, emit_c

CASES = Path(__file__).resolve().parents[1] / "Conversion" / "tosa-to-cmsisnn-asymmetric-pad.mlir"


def _w(in_hw, out_hw, kernel, pad, stride=(1, 1), c=8):
    return cmsis_padding.window((1, *in_hw, c), (1, *out_hw, 16), kernel, stride, (1, 1), pad, c)


@pytest.mark.parametrize("path", [cores.core("cortex-m0"), cores.core("cortex-m4"), cores.core("cortex-m55")],
                         ids=["c", "dsp", "mve"])
def test_1x1_paths_refuse_a_bottom_or_right_pad(path):
    bottom = _w((4, 4), (5, 4), (1, 1), (0, 0, 1, 0))          # [top, left, bottom, right]
    assert cmsis_padding.conv_s8_function(path, "wrapper", bottom) == "arm_convolve_1x1_s8_fast"
    assert "never computed" in cmsis_padding.problem("arm_convolve_1x1_s8_fast", path, bottom)
    strided = _w((4, 4), (3, 3), (1, 1), (0, 0, 1, 1), (2, 2))
    assert cmsis_padding.conv_s8_function(path, "wrapper", strided) == "arm_convolve_1x1_s8"
    assert cmsis_padding.problem("arm_convolve_1x1_s8", path, strided)
    assert cmsis_padding.problem("arm_convolve_s8", path, strided) is None
    unpadded = _w((4, 4), (4, 4), (1, 1), (0, 0, 0, 0))
    assert cmsis_padding.problem("arm_convolve_1x1_s8_fast", path, unpadded) is None


def test_depthwise_3x3_takes_one_column_of_right_padding():
    one, two = _w((4, 4), (3, 3), (3, 3), (0, 0, 1, 1)), _w((4, 4), (2, 4), (3, 3), (0, 0, 0, 2))
    for path in (cores.core("cortex-m0"), cores.core("cortex-m4")):
        assert cmsis_padding.depthwise_s8_function(path, "wrapper", one, 1) == "arm_depthwise_conv_3x3_s8"
        assert cmsis_padding.problem("arm_depthwise_conv_3x3_s8", path, one) is None
        assert cmsis_padding.problem("arm_depthwise_conv_3x3_s8", path, two)
    assert cmsis_padding.depthwise_s8_function(cores.core("cortex-m55"), "wrapper", two, 1) == "arm_depthwise_conv_s8_opt"


def test_reads_past_is_the_bottom_and_right_pad_of_a_tosa_window():
    # TOSA requires (in - 1 + top + bottom - (k - 1) * d) to divide by the stride: the last window
    # ends on the last padded row, so every bottom / right pad is read.
    for in_h, k, s, top, bottom in [(7, 3, 2, 0, 2), (7, 3, 2, 1, 1), (9, 1, 2, 0, 2), (6, 5, 1, 2, 3)]:
        span = in_h - 1 + top + bottom - (k - 1)
        assert span % s == 0
        out = span // s + 1
        w = cmsis_padding.window((1, in_h, in_h, 8), (1, out, out, 8), (k, k), (s, s), (1, 1),
                                 (top, top, bottom, bottom), 8)
        assert w.reads_past() == (bottom, bottom)


def test_emitter_refuses_a_call_that_ignores_its_padding():
    ctx = _mlir.new_context()
    load_all(ctx)
    with ctx, _mlir.ir.Location.unknown():
        text = CASES.read_text().split("// -----")[0]     # the 1x1 conv with a bottom pad
        module = _mlir.ir.Module.parse(text)
        run_pipeline(module, "mcu-tosa-to-cmsisnn-pipeline{target=cortex-m4}")
        emit_c(module)   # the conversion called arm_convolve_s8
        fn = module.body.operations[0]
        conv = next(op for op in fn.regions[0].blocks[0].operations if isinstance(op, cmsisnn.ConvOp))
        conv.attributes["algorithm"] = enum_attr(cmsisnn.ConvAlgorithm, "wrapper")
        with pytest.raises(EmissionError, match="arm_convolve_1x1_s8_fast sizes its work from the input"):
            emit_c(module)

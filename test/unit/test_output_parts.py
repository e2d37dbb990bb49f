"""An output whose parts keep their own quantization (frontend/quantize/concat_parts.py), through
every place the C API's I/O description passes: the IR's mcu.parts (io_quant), model.c / model.h,
the harness's lines, mcu-run's dequantization and the frontend's TensorQuant."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mcu_mlir import _mlir, io_quant
from mcu_mlir.dialects import load_all
from mcu_mlir.emission.emit_c import emit_c
from mcu_mlir.firmware import run
from mcu_mlir.frontend.stages import TensorQuant
from mcu_mlir.ir import attributes
from mcu_mlir.pipeline import run_pipeline

MODEL = Path(__file__).resolve().parents[1] / "Transforms" / "plan-memory.mlir"
PARTS = ((0, 3, 0.5, -128), (3, 8, 2.0 ** -20, -100))


def _planned():
    ctx = _mlir.new_context()
    load_all(ctx)
    with ctx, _mlir.ir.Location.unknown():
        module = _mlir.ir.Module.parse(MODEL.read_text())
        run_pipeline(module, "mcu-tosa-to-cmsisnn-pipeline{backend=portable}")
    return ctx, module


def test_parts_survive_the_ir_and_reach_model_c_and_model_h():
    ctx, module = _planned()
    with ctx:
        io_quant.annotate(module, [io_quant.IOQuant(0.05, -3)], [io_quant.IOQuant(0.0, 0, PARTS, 1)])
        assert not attributes.verify(module.operation)
        ins, outs = io_quant.read(module)
        assert outs[0] == io_quant.IOQuant(0.0, 0, PARTS, 1) and ins[0] == io_quant.IOQuant(0.05, -3)
        files = emit_c(module)
    c, h = files["model.c"], files["model.h"]
    assert '{"output0", 4, {1, 8, 8, 8}, 1, 0, 0.0f, 0, 512}' in c
    assert "const mcu_tensor_part_t mcu_model_output_parts[2] = {" in c
    assert "{0, 1, 0, 3, 0.5f, -128}" in c and "{0, 1, 3, 8, 9.5367431640625e-07f, -100}" in c
    assert "#define MCU_MODEL_NUM_OUTPUT_PARTS 2" in h and "mcu_model_output_parts[];" in h


def test_single_scale_outputs_emit_as_before():
    ctx, module = _planned()
    with ctx:
        io_quant.annotate(module, [io_quant.IOQuant(0.05, -3)], [io_quant.IOQuant(0.125, 7)])
        files = emit_c(module)
    assert "mcu_model_output_parts" not in files["model.c"] + files["model.h"]
    assert "OUTPUT_PARTS" not in files["model.h"]


def test_harness_part_lines_and_dequantization():
    text = "\n".join([
        "mcu-harness 1",
        "output 0 output0 rank=3 shape=1,8,2 elem_bytes=1 is_float=0 scale=0x00000000 zero_point=0 bytes=16",
        "part 0 axis=1 start=0 stop=3 scale=0x3f000000 zero_point=-128",
        "part 0 axis=1 start=3 stop=8 scale=0x35800000 zero_point=-100",
        "end"])
    info = run.parse_harness_output(text).outputs[0]
    assert info.axis == 1 and info.parts == PARTS
    q = np.arange(-8, 8, dtype=np.int8).reshape(1, 8, 2)
    got = run.dequantize(q, info)
    want = np.concatenate([(q[:, :3].astype(np.float64) + 128) * 0.5, (q[:, 3:].astype(np.float64) + 100) * 2.0 ** -20],
                          axis=1)
    assert np.array_equal(got, want.astype(np.float32))


def test_tensor_quant_quantizes_and_dequantizes_part_by_part():
    t = TensorQuant((1, 8, 2), "int8", 0.0, 0, PARTS, 1)
    x = np.concatenate([np.full((1, 3, 2), 10.0), np.full((1, 5, 2), 3e-5)], axis=1)
    q = t.quantize(x)
    assert (q[:, :3] == -108).all() and (q[:, 3:] == -100 + 31).all()
    assert np.allclose(t.dequantize(q), x, rtol=0.02)

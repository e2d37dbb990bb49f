"""Malformed and unsupported .tflite files: mcu-compile exits 1 with one clear message naming what
is wrong (the operator's index and name, the tensor), never a traceback; and no corruption of a
valid file's bytes gets anything but such a message out of the reader and the lowering."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tflite_writer import ModelWriter

from mcu_mlir.diagnostics import UserError
from mcu_mlir.frontend.tflite import import_tflite
from mcu_mlir.tools import mcu_compile


def conv_model(**change) -> ModelWriter:
    """input [1, 4, 4, 2] -> CONV_2D 3x3 SAME -> [1, 4, 4, 3]; `change` edits it before writing."""
    rng = np.random.default_rng(0)
    m = ModelWriter()
    m.tensor("input", (1, 4, 4, 2), "i8", 0.1, 1)
    m.tensor("w", (3, 3, 3, 2), "i8", [0.01, 0.02, 0.03], 0, rng.integers(-127, 128, (3, 3, 3, 2)))
    m.tensor("b", (3,), "i32", [0.001, 0.002, 0.003], 0, [10, -20, 30])
    m.tensor("out", (1, 4, 4, 3), "i8", 0.2, -3)
    m.op("CONV_2D", [0, 1, 2], [3], ("Conv2DOptions", {"Padding": 0, "StrideH": 1, "StrideW": 1,
                                                      "DilationHFactor": 1, "DilationWFactor": 1}))
    return m


def compile_error(tmp_path, data: bytes, capsys) -> str:
    path = tmp_path / "model.tflite"
    path.write_bytes(data)
    code = mcu_compile.main([str(path), "--target", "host", "--emit", "tosa", "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "Traceback" not in err and "internal compiler error" not in err, err
    return err


def _truncated():
    return conv_model().write([0], [3])[:300]


def _bad_root():
    data = bytearray(conv_model().write([0], [3]))
    data[0:4] = (10 ** 6).to_bytes(4, "little")
    return bytes(data)


def _edited(edit, subgraphs=1):
    m = conv_model()
    edit(m)
    return m.write([0], [3], subgraphs)


def _buffer_out_of_range(m):
    m.tensors[1].buffer = 42


def _shape_not_buffer(m):
    m.tensors[1].shape = (3, 3, 3, 4)


def _no_scales(m):
    m.tensors[3].scales, m.tensors[3].zero_points = [], [0]


def _unquantized_output(m):
    m.tensors[3].scales = None


def _float_model(m):
    m.tensors[0].elem = m.tensors[3].elem = "f32"
    m.tensors[0].scales = m.tensors[3].scales = None


def _custom_op(m):
    m.operators.clear()
    m.op("CUSTOM", [0], [3], custom="MyOp")


def _unsupported_op(m):
    m.operators.clear()
    m.op("LOG", [0], [3])


def _relu6_requantizing(m):
    m.operators.clear()
    m.tensors[3].shape = (1, 4, 4, 2)
    m.op("RELU6", [0], [3])


def _tensor_index_out_of_range(m):
    m.operators[0][1][1] = 17


CASES = {
    "not a flatbuffer": (lambda: b"not a model at all", "not a TFLite flatbuffer"),
    "truncated": (_truncated, "truncated"),
    "root past the end": (_bad_root, "truncated"),
    "buffer index out of range": (lambda: _edited(_buffer_out_of_range), "tensor #1 ('w') names buffer 42"),
    "shape not its buffer": (lambda: _edited(_shape_not_buffer), "tensor #1 ('w'): its shape [3, 3, 3, 4] needs 108"),
    "zero points, no scales": (lambda: _edited(_no_scales), "tensor #3 ('out') has zero points but no scales"),
    "no quantization": (lambda: _edited(_unquantized_output), "operator #0 (CONV_2D): its output ('out') has no "
                                                              "quantization"),
    "float model": (lambda: _edited(_float_model), "input #0 ('input') is f32"),
    "two subgraphs": (lambda: _edited(lambda m: None, subgraphs=2), "2 subgraphs"),
    "custom op": (lambda: _edited(_custom_op), "operator #0 (CUSTOM 'MyOp'): custom operators are not supported"),
    "unsupported op": (lambda: _edited(_unsupported_op), "operator #0 (LOG): the operator is not supported"),
    "relu6 to other parameters": (lambda: _edited(_relu6_requantizing), "operator #0 (RELU6): its input 'input' and "
                                                                        "its output are quantized differently"),
    "tensor index out of range": (lambda: _edited(_tensor_index_out_of_range),
                                  "operator #0 (CONV_2D)'s inputs name tensor 17"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_file_is_a_clear_error(case, tmp_path, capsys):
    make, expected = CASES[case]
    err = compile_error(tmp_path, make(), capsys)
    assert expected in err, err
    assert err.count("error:") == 1, err


def test_valid_model_compiles_to_tosa(tmp_path, capsys):
    path = tmp_path / "model.tflite"
    path.write_bytes(conv_model().write([0], [3]))
    assert mcu_compile.main([str(path), "--target", "host", "--emit", "tosa", "-o", str(tmp_path / "out")]) == 0
    tosa = (tmp_path / "out" / "model.tosa.mlir").read_text()
    assert "tosa.conv2d" in tosa and "tosa.transpose" not in tosa


def test_corrupted_bytes_give_a_user_error_or_a_model(tmp_path):
    """Every single-byte corruption at 300 random places of a valid file: read and lowered to a
    module, or refused with a UserError; nothing else escapes."""
    data = conv_model().write([0], [3])
    rng = np.random.default_rng(1)
    path = tmp_path / "model.tflite"
    refused = 0
    for position in rng.integers(0, len(data), 300):
        corrupt = bytearray(data)
        corrupt[position] ^= int(rng.integers(1, 256))
        path.write_bytes(bytes(corrupt))
        try:
            import_tflite(path)
        except UserError:
            refused += 1
    assert refused > 0


def test_a_tflite_compile_never_loads_torch(tmp_path):
    """The .tflite path needs no torch: loading it cost seconds per compile. A conv then a softmax
    (whose TOSA the PyTorch frontend shares), compiled to C in a fresh interpreter."""
    m = conv_model()
    m.tensor("flat", (1, 48), "i8", 0.2, -3)
    m.tensor("probs", (1, 48), "i8", 1 / 256, -128)
    m.op("RESHAPE", [3], [4])
    m.op("SOFTMAX", [4], [5], ("SoftmaxOptions", {"Beta": 1.0}))
    path = tmp_path / "model.tflite"
    path.write_bytes(m.write([0], [5]))
    script = ("import sys, mcu_mlir\n"
              f"mcu_mlir.compile({str(path)!r}, output_dir={str(tmp_path / 'out')!r}, target='host', emit='c')\n"
              "print(sorted({name.split('.')[0] for name in sys.modules} & {'torch', 'torchao'}))\n")
    tree = str(Path(__file__).resolve().parents[2] / "python")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([tree, os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert (tmp_path / "out" / "model.c").exists()
    assert run.stdout.strip() == "[]", run.stdout


@pytest.mark.parametrize("flags", [["--weights", "int4"], ["--int16-layers", "auto"], ["--calibration", "8"],
                                   ["--quantize", "int16", "--target-sqnr", "30"]])
def test_pytorch_quantization_options_on_a_tflite_model_are_refused(tmp_path, capsys, flags):
    """A .tflite model is quantized already: an option that chooses how a PyTorch model is quantized
    would be ignored, so it is an error naming the flags, not silence."""
    path = tmp_path / "model.tflite"
    path.write_bytes(conv_model().write([0], [3]))
    code = mcu_compile.main([str(path), "--target", "host", "--emit", "c", "-o", str(tmp_path / "out"), *flags])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "Traceback" not in err
    named = [f for f in flags if f.startswith("--")]
    assert all(f in err for f in named) and "quantized model already" in err, err

"""The .tflite frontend's activations, comparisons, select, mean and (de)quantize: small models written
with the flatbuffer builder, compiled for the host with the CMSIS-NN and the portable backend (and for
Cortex-M55 / M4 under QEMU) and compared bit for bit with TFLite Micro's interpreter on random inputs
(the extremes included: all -128 / 127, -32768 / 32767 for int16 inputs); float boundary inputs /
outputs compared as TFLM's floats. Unsupported forms: the clear error, no traceback."""

from __future__ import annotations

import numpy as np
import pytest

from tflite_oracle import compare_with_tflm, inputs, need_build
from tflite_writer import ModelWriter

import mcu_mlir
from mcu_mlir.diagnostics import UserError
from mcu_mlir.firmware import build, run
from mcu_mlir.frontend.tflite import import_tflite

SHAPE = (1, 5, 6, 8)
X = ("x", 0.06, -5)           # name, scale, zero point of the first input
Y = ("y", 0.045, 7)           # of the second (other parameters)


def _unary(m, x, op, name, scale, zp, options=None, elem="i8"):
    y = m.tensor(name, SHAPE, elem, scale, zp)
    m.op(op, [x], [y], options)
    return y


def activation_model() -> tuple[bytes, list[str]]:
    """Every activation on inputs of two parameter sets, PRELU with a constant and a run-time slope,
    MEAN over three axis sets."""
    rng = np.random.default_rng(3)
    m = ModelWriter()
    x = m.tensor(X[0], SHAPE, "i8", X[1], X[2])
    y = m.tensor(Y[0], SHAPE, "i8", Y[1], Y[2])
    cases = {}
    for src, tag in ((x, "x"), (y, "y")):
        cases[f"logistic {tag}"] = _unary(m, src, "LOGISTIC", f"logistic_{tag}", 1 / 256, -128)
        cases[f"tanh {tag}"] = _unary(m, src, "TANH", f"tanh_{tag}", 1 / 128, 0)
        cases[f"hard_swish {tag}"] = _unary(m, src, "HARD_SWISH", f"hard_swish_{tag}", 0.04, -20)
    # A wide input scale: most of the int8 range saturates the logistic and the tanh.
    wide = m.tensor("wide", SHAPE, "i8", 0.4, 3)
    m.op("QUANTIZE", [x], [wide])
    cases["logistic of a wide scale"] = _unary(m, wide, "LOGISTIC", "logistic_wide", 1 / 256, -128)
    cases["tanh of a wide scale"] = _unary(m, wide, "TANH", "tanh_wide", 1 / 128, 0)
    for alpha, scale, zp in ((0.2, 0.05, 10), (-0.7, 0.07, 0), (1.6, 0.08, -3)):
        cases[f"leaky_relu alpha {alpha}"] = _unary(m, x, "LEAKY_RELU", f"leaky_{alpha}", scale, zp,
                                                    ("LeakyReluOptions", {"Alpha": alpha}))
    slope = m.tensor("prelu/alpha", (1, 1, 1, 8), "i8", 0.01, 3, rng.integers(-128, 128, 8))
    cases["prelu constant slope per channel"] = m.tensor("prelu_c", SHAPE, "i8", 0.05, -3)
    m.op("PRELU", [x, slope], [cases["prelu constant slope per channel"]])
    cases["prelu run-time slope"] = m.tensor("prelu_t", SHAPE, "i8", 0.03, 4)
    m.op("PRELU", [x, y], [cases["prelu run-time slope"]])
    for axes, keep, shape, scale, zp in (((1, 2), True, (1, 1, 1, 8), 0.03, 2), ((-1,), False, (1, 5, 6), 0.02, -4),
                                         ((0, 1, 2, 3), False, (), 0.05, 1), ((2,), True, (1, 5, 1, 8), 0.06, -5)):
        axes_t = m.tensor(f"mean{axes}/axes", (len(axes),), "i32", None, 0, list(axes))
        out = m.tensor(f"mean{axes}", shape, "i8", scale, zp)
        m.op("MEAN", [x, axes_t], [out], ("ReducerOptions", {"KeepDims": keep}))
        cases[f"mean over {axes}, keep {keep}"] = out
    return m.write([x, y], list(cases.values())), list(cases)


def logic_model() -> tuple[bytes, list[str]]:
    """The six comparisons of two differently quantized inputs (bool outputs), with a broadcast
    constant, SELECT_V2 by a comparison and by a constant broadcast condition, int8 <-> int16
    QUANTIZE."""
    m = ModelWriter()
    x = m.tensor(X[0], SHAPE, "i8", X[1], X[2])
    y = m.tensor(Y[0], SHAPE, "i8", Y[1], Y[2])
    cases = {}
    for op in ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"):
        cases[op.lower()] = m.tensor(op.lower(), SHAPE, "i1")
        m.op(op, [x, y], [cases[op.lower()]])
    # A tiny scale: distinct integers compare equal once scaled, as in TFLM.
    fine = m.tensor("fine", (1, 1, 1, 8), "i8", 0.0007, 0, [-128, -90, -40, -3, 0, 5, 60, 127])
    cases["equal to a constant of a tiny scale"] = m.tensor("equal_fine", SHAPE, "i1")
    m.op("EQUAL", [x, fine], [cases["equal to a constant of a tiny scale"]])
    cases["less than a broadcast constant"] = m.tensor("less_const", SHAPE, "i1")
    m.op("LESS", [x, fine], [cases["less than a broadcast constant"]])
    greater = m.tensor("greater_sel", SHAPE, "i1")
    m.op("GREATER", [y, x], [greater])
    cases["select_v2 by a comparison"] = m.tensor("select", SHAPE, "i8", X[1], X[2])
    m.op("SELECT_V2", [greater, x, y], [cases["select_v2 by a comparison"]])
    flags = m.tensor("flags", (1, 1, 6, 1), "i1", None, 0, [1, 0, 0, 1, 1, 0])
    seven = m.tensor("seven", (1,), "i8", X[1], X[2], [7])
    cases["select_v2 broadcast condition and scalar"] = m.tensor("select_b", SHAPE, "i8", X[1], X[2])
    m.op("SELECT_V2", [flags, x, seven], [cases["select_v2 broadcast condition and scalar"]])
    wide = m.tensor("to_int16", SHAPE, "i16", 0.0005, 0)
    m.op("QUANTIZE", [x], [wide])
    cases["quantize int8 -> int16"] = wide
    cases["quantize int16 -> int8"] = m.tensor("back_to_int8", SHAPE, "i8", 0.07, 4)
    m.op("QUANTIZE", [wide], [cases["quantize int16 -> int8"]])
    return m.write([x, y], list(cases.values())), list(cases)


def int16_input_model() -> tuple[bytes, list[str]]:
    """An int16 graph input requantized to int8 (the -32768 / 32767 extremes saturate) and to int16,
    and the ops TFLM has int16 kernels of: LEAKY_RELU, PRELU (int8 slope), MEAN, SELECT_V2, LOGISTIC and
    TANH (of a general and of a power-of-two input scale)."""
    m = ModelWriter()
    x = m.tensor("x16", SHAPE, "i16", 0.001, 0)
    cases = {"quantize int16 -> int8": m.tensor("q8", SHAPE, "i8", 0.05, -2),
             "quantize int16 -> int16": m.tensor("q16", SHAPE, "i16", 0.0013, 0)}
    m.op("QUANTIZE", [x], [cases["quantize int16 -> int8"]])
    m.op("QUANTIZE", [x], [cases["quantize int16 -> int16"]])
    for alpha, scale in ((0.3, 0.0009), (-0.4, 0.0007)):
        cases[f"leaky_relu int16 alpha {alpha}"] = _unary(m, x, "LEAKY_RELU", f"leaky16_{alpha}", scale, 0,
                                                          ("LeakyReluOptions", {"Alpha": alpha}), elem="i16")
    slope = m.tensor("prelu16/alpha", (1, 1, 1, 8), "i8", 0.01, 3, [-128, -60, -3, 0, 3, 40, 90, 127])
    cases["prelu int16"] = m.tensor("prelu16", SHAPE, "i16", 0.0011, 0)
    m.op("PRELU", [x, slope], [cases["prelu int16"]])
    axes = m.tensor("mean16/axes", (2,), "i32", None, 0, [1, 2])
    cases["mean int16 over (1, 2)"] = m.tensor("mean16", (1, 1, 1, 8), "i16", 0.0004, 0)
    m.op("MEAN", [x, axes], [cases["mean int16 over (1, 2)"]], ("ReducerOptions", {"KeepDims": True}))
    flags = m.tensor("flags16", (1, 1, 1, 8), "i1", None, 0, [1, 0, 1, 1, 0, 0, 1, 0])
    other = m.tensor("other16", (1, 1, 1, 1), "i16", 0.001, 0, [-1234])
    cases["select_v2 int16"] = m.tensor("select16", SHAPE, "i16", 0.001, 0)
    m.op("SELECT_V2", [flags, x, other], [cases["select_v2 int16"]])
    pot = m.tensor("pot16", SHAPE, "i16", 2.0 ** -12, 0)
    m.op("QUANTIZE", [x], [pot])
    for src, tag in ((x, "scale 0.001"), (pot, "scale 2**-12")):
        for op in ("LOGISTIC", "TANH"):
            cases[f"{op.lower()} int16 {tag}"] = _unary(m, src, op, f"{op.lower()}16_{tag}", 2.0 ** -15, 0, elem="i16")
    return m.write([x], list(cases.values())), list(cases)


@pytest.mark.parametrize("backend", ["cmsis-nn", "portable"])
@pytest.mark.parametrize("model", [activation_model, logic_model])
def test_bit_exact_with_tflite_micro(model, backend, tmp_path):
    need_build(backend)
    data, cases = model()
    report, differing = compare_with_tflm(data, tmp_path, backend, count=10)
    assert not differing, [(k, cases[i], d) for k, i, d in differing]
    assert report["transposes"] == 0


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m4"])
@pytest.mark.parametrize("model", [activation_model, logic_model])
def test_bit_exact_with_tflite_micro_under_qemu(model, target, tmp_path):
    """The same integers on an MVE and a DSP core (QEMU), three inputs each (the extremes)."""
    need_build("cmsis-nn", target)
    data, cases = model()
    _, differing = compare_with_tflm(data, tmp_path, "cmsis-nn", count=3, target=target)
    assert not differing, [(k, cases[i], d) for k, i, d in differing]


def _int16_samples(shape, count: int, seed: int = 5) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    fixed = [np.full(shape, -32768, np.int16), np.full(shape, 32767, np.int16),
             rng.choice(np.array([-32768, 32767], np.int16), size=shape)]
    return (fixed + [rng.integers(-32768, 32768, size=shape, dtype=np.int16) for _ in range(count)])[:count]


def _run_both(data: bytes, tmp_path, backend: str, samples: list[np.ndarray]):
    """(our integer outputs, the result, TFLM's outputs) per sample: C inputs are the samples as given
    unless float (then quantized as TFLM's QUANTIZE does: float32 x / scale, rounded half away)."""
    from tflite_micro.python.tflite_micro import runtime
    path = tmp_path / "model.tflite"
    path.write_bytes(data)
    result = mcu_mlir.compile(str(path), target="host", backend=backend, emit="c", output_dir=str(tmp_path / "out"))
    exe = build.build(tmp_path / "out", target="host")
    ip = runtime.Interpreter.from_bytes(data, arena_size=2_000_000)
    q_in = result.report["quantization"]["inputs"][0]
    runs = []
    for x in samples:
        ip.set_input(x, 0)
        ip.invoke()
        ours = x
        if x.dtype == np.float32:
            ratio = x / np.float32(q_in["scale"])
            ours = np.clip(np.sign(ratio) * np.floor(np.abs(ratio) + 0.5) + q_in["zero_point"], -128, 127)
        got = run.run_executable(exe, tmp_path / "out", [ours.astype(np.int8 if x.dtype == np.float32 else x.dtype)],
                                 target="host")
        runs.append((got, [ip.get_output(i) for i in range(len(got.outputs_q))]))
    return result, runs


@pytest.mark.parametrize("backend", ["cmsis-nn", "portable"])
def test_int16_input_requantised_bit_exact(backend, tmp_path):
    need_build(backend)
    data, cases = int16_input_model()
    _, runs = _run_both(data, tmp_path, backend, _int16_samples(SHAPE, 6))
    for got, ref in runs:
        for i, r in enumerate(ref):
            assert np.array_equal(got.outputs_q[i].reshape(r.shape), r), cases[i]


def float_boundary_model() -> bytes:
    """float input -> QUANTIZE -> LOGISTIC / TANH -> DEQUANTIZE -> float outputs."""
    m = ModelWriter()
    f = m.tensor("features", (1, 40), "f32")
    q = m.tensor("features_q", (1, 40), "i8", 0.05, 3)
    m.op("QUANTIZE", [f], [q])
    outs = []
    for op, scale, zp in (("LOGISTIC", 1 / 256, -128), ("TANH", 1 / 128, 0)):
        a = m.tensor(op.lower(), (1, 40), "i8", scale, zp)
        m.op(op, [q], [a])
        d = m.tensor(f"{op.lower()}_float", (1, 40), "f32")
        m.op("DEQUANTIZE", [a], [d])
        outs.append(d)
    return m.write([f], outs)


def test_float_boundary_keeps_the_integers_and_their_scales(tmp_path):
    """The C takes the QUANTIZE's int8 and returns the DEQUANTIZE's int8; report.json and model.h's
    tables give their scales, and dequantizing with them gives TFLM's floats exactly."""
    need_build("portable")
    rng = np.random.default_rng(2)
    samples = [np.full((1, 40), -9.0, np.float32), np.full((1, 40), 9.0, np.float32)] + \
              [rng.uniform(-7, 7, (1, 40)).astype(np.float32) for _ in range(6)]
    result, runs = _run_both(float_boundary_model(), tmp_path, "portable", samples)
    quant = result.report["quantization"]
    assert quant["inputs"][0] == {"scale": pytest.approx(0.05), "zero_point": 3}
    assert [o["zero_point"] for o in quant["outputs"]] == [-128, 0]
    tables = (tmp_path / "out" / "model.c").read_text()     # mcu_model_inputs / _outputs, declared in model.h
    assert '{"input0", 2, {1, 40}, 1, 0, 0.05000000074505806f, 3, 40}' in tables
    assert "0.00390625f, -128" in tables and "0.0078125f, 0" in tables
    for got, ref in runs:
        for i, r in enumerate(ref):
            assert r.dtype == np.float32
            assert np.array_equal(got.outputs_float[i].reshape(r.shape), r)


def _refused(tmp_path, m: ModelWriter, ins, outs, *needles):
    path = tmp_path / "model.tflite"
    path.write_bytes(m.write(ins, outs))
    with pytest.raises(UserError) as err:
        import_tflite(path)
    for needle in needles:
        assert needle in str(err.value), str(err.value)


def test_int16_logistic_output_scale_is_checked(tmp_path):
    m = ModelWriter()
    x = m.tensor("x", SHAPE, "i16", 0.001, 0)
    y = _unary(m, x, "LOGISTIC", "y", 1 / 256, 0, elem="i16")
    _refused(tmp_path, m, [x], [y], "operator #0 (LOGISTIC)", "writes 2**-15")


def test_logistic_output_zero_point_is_checked(tmp_path):
    m = ModelWriter()
    x = m.tensor("x", SHAPE, "i8", 0.1, 0)
    y = _unary(m, x, "LOGISTIC", "y", 1 / 256, 0)
    _refused(tmp_path, m, [x], [y], "operator #0 (LOGISTIC)", "zero point -128")


def test_int16_comparison_is_refused(tmp_path):
    m = ModelWriter()
    a = m.tensor("a", SHAPE, "i16", 0.001, 0)
    b = m.tensor("b", SHAPE, "i16", 0.001, 0)
    c = m.tensor("c", SHAPE, "i1")
    m.op("GREATER", [a, b], [c])
    _refused(tmp_path, m, [a, b], [c], "operator #0 (GREATER)", "int16 comparisons")


def test_float_inside_the_graph_is_refused(tmp_path):
    m = ModelWriter()
    x = m.tensor("x", SHAPE, "i8", 0.1, 0)
    f = m.tensor("f", SHAPE, "f32")
    m.op("DEQUANTIZE", [x], [f])
    q = m.tensor("q", SHAPE, "i8", 0.2, 0)
    m.op("QUANTIZE", [f], [q])
    _refused(tmp_path, m, [x], [q], "operator #0 (DEQUANTIZE)", "read by another operator")


def _tflm_outputs(op: str, scales, options=None) -> np.ndarray:
    """TFLM's outputs for the 256 int8 inputs of a one-op model."""
    from tflite_micro.python.tflite_micro import runtime
    (s_in, zp_in), (s_out, zp_out) = scales
    m = ModelWriter()
    x = m.tensor("x", (1, 256), "i8", s_in, zp_in)
    y = m.tensor("y", (1, 256), "i8", s_out, zp_out)
    m.op(op, [x], [y], options)
    ip = runtime.Interpreter.from_bytes(m.write([x], [y]), arena_size=100_000)
    ip.set_input(np.arange(-128, 128, dtype=np.int8).reshape(1, 256), 0)
    ip.invoke()
    return ip.get_output(0).reshape(-1)


def test_activation_tables_are_tflm_integers_on_random_scales():
    """The 256-entry tables the lowering looks up, against TFLM on random input / output parameters
    (input scales from 3e-4 to 3, where the logistic's and tanh's saturation radius moves)."""
    pytest.importorskip("tflite_micro", reason="tflite-micro (TFLite Micro's interpreter, the oracle) is not "
                        "installed: tools/setup.sh installs it")
    from mcu_mlir.fixed_point import tflm_activations as tflm
    rng = np.random.default_rng(11)
    values = tflm.INT8_VALUES
    for _ in range(60):
        s_in = float(np.float32(10 ** rng.uniform(-3.5, 0.5)))
        zp = int(rng.integers(-128, 128))
        s_out = float(np.float32(s_in * rng.uniform(0.2, 3)))
        zo = int(rng.integers(-128, 128))
        alpha = float(np.float32(rng.uniform(-1.5, 1.5)))
        pairs = [
            (tflm.logistic_s8(values, zp, s_in), _tflm_outputs("LOGISTIC", ((s_in, zp), (1 / 256, -128)))),
            (tflm.tanh_s8(values, zp, s_in), _tflm_outputs("TANH", ((s_in, zp), (1 / 128, 0)))),
            (tflm.hard_swish(values, zp, zo, tflm.hard_swish_params(s_in, s_out), -128, 127),
             _tflm_outputs("HARD_SWISH", ((s_in, zp), (s_out, zo)))),
            (tflm.leaky_relu(values, zp, zo, s_in, s_out, alpha, -128, 127),
             _tflm_outputs("LEAKY_RELU", ((s_in, zp), (s_out, zo)), ("LeakyReluOptions", {"Alpha": alpha}))),
        ]
        for kind, (ours, ref) in zip(("logistic", "tanh", "hard_swish", "leaky_relu"), pairs):
            assert np.array_equal(ours, ref), (kind, s_in, zp, s_out, zo, alpha)


def test_int16_sigmoid_arithmetic_is_tflm_on_every_input():
    """tflm.sigmoid_s16 (what the int16 LOGISTIC / TANH lowering computes) against TFLM on all 65,536
    int16 inputs, for power-of-two and random input scales."""
    pytest.importorskip("tflite_micro", reason="tflite-micro (TFLite Micro's interpreter, the oracle) is not "
                        "installed: tools/setup.sh installs it")
    from tflite_micro.python.tflite_micro import runtime
    from mcu_mlir.fixed_point import tflm_activations as tflm
    from mcu_mlir.fixed_point.cmsis_lstm import SIGMOID_TABLE
    every = np.arange(-32768, 32768, dtype=np.int16).reshape(1, -1)
    rng = np.random.default_rng(12)
    scales = [2.0 ** -12, 2.0 ** -11, 2.0 ** -13] + [float(np.float32(10 ** rng.uniform(-5, -2.5))) for _ in range(8)]
    for scale in scales:
        for op in ("LOGISTIC", "TANH"):
            m = ModelWriter()
            x = m.tensor("x", every.shape, "i16", scale, 0)
            y = m.tensor("y", every.shape, "i16", 2.0 ** -15, 0)
            m.op(op, [x], [y])
            ip = runtime.Interpreter.from_bytes(m.write([x], [y]), arena_size=600_000)
            ip.set_input(every, 0)
            ip.invoke()
            multiplier, shift = tflm.sigmoid_s16_params(scale, op.lower())
            ours = tflm.sigmoid_s16(every.reshape(-1), multiplier, shift, op.lower(), SIGMOID_TABLE)
            assert np.array_equal(ours, ip.get_output(0).reshape(-1)), (op, scale)


def test_select_v1_picks_rows_and_elements(tmp_path):
    """SELECT (TFLite's first version; TFLM registers only SELECT_V2): a condition of the values' shape,
    and a rank-1 one picking rows, against numpy's where."""
    need_build("portable")
    m = ModelWriter()
    x = m.tensor("x", (3, 8), "i8", 0.05, 1)
    y = m.tensor("y", (3, 8), "i8", 0.05, 1)
    rows = m.tensor("rows", (3,), "i1", None, 0, [1, 0, 1])
    picked_rows = m.tensor("picked_rows", (3, 8), "i8", 0.05, 1)
    m.op("SELECT", [rows, x, y], [picked_rows])
    greater = m.tensor("greater", (3, 8), "i1")
    m.op("GREATER", [x, y], [greater])
    larger = m.tensor("larger", (3, 8), "i8", 0.05, 1)
    m.op("SELECT", [greater, x, y], [larger])
    path = tmp_path / "model.tflite"
    path.write_bytes(m.write([x, y], [picked_rows, larger]))
    mcu_mlir.compile(str(path), target="host", backend="portable", emit="c", output_dir=str(tmp_path / "out"))
    exe = build.build(tmp_path / "out", target="host")
    for a, b in zip(inputs((3, 8), 4, seed=7), inputs((3, 8), 4, seed=8)):
        got = run.run_executable(exe, tmp_path / "out", [a, b], target="host").outputs_q
        assert np.array_equal(got[0], np.where(np.array([1, 0, 1], bool)[:, None], a, b))
        assert np.array_equal(got[1], np.maximum(a, b))


def test_other_unsupported_forms_are_refused(tmp_path):
    m = ModelWriter()
    x = m.tensor("x", SHAPE, "i16", 0.001, 0)
    y = _unary(m, x, "HARD_SWISH", "y", 0.001, 0, elem="i16")
    _refused(tmp_path, m, [x], [y], "operator #0 (HARD_SWISH)", "TFLM has no int16 HARD_SWISH")
    m = ModelWriter()
    x = m.tensor("x", SHAPE, "i8", 0.1, 0)
    alpha = m.tensor("alpha", (1, 1, 1, 8), "i8", list(np.linspace(0.01, 0.02, 8)), 0, np.ones(8), axis=3)
    y = m.tensor("y", SHAPE, "i8", 0.1, 0)
    m.op("PRELU", [x, alpha], [y])
    _refused(tmp_path, m, [x], [y], "operator #0 (PRELU)", "per channel")
    m = ModelWriter()
    x = m.tensor("x", SHAPE, "i8", 0.1, 0)
    axes = m.tensor("axes", (1,), "i32", None, 0, [4])
    y = m.tensor("y", SHAPE, "i8", 0.1, 0)
    m.op("MEAN", [x, axes], [y], ("ReducerOptions", {"KeepDims": True}))
    _refused(tmp_path, m, [x], [y], "operator #0 (MEAN)", "out of range")
    m = ModelWriter()
    x = m.tensor("x", SHAPE, "i8", 2.5, 0)
    c = m.tensor("c", SHAPE, "i1")
    m.op("LESS", [x, x], [c])
    _refused(tmp_path, m, [x], [c], "operator #0 (LESS)", "scale below 1")


@pytest.mark.parametrize("backend", ["cmsis-nn", "portable"])
def test_bool_input_selects_like_tflm(backend, tmp_path):
    """A bool graph input (SELECT_V2's condition) is int8 0 / 1 in the C API."""
    need_build(backend)
    from tflite_micro.python.tflite_micro import runtime
    m = ModelWriter()
    cond = m.tensor("cond", SHAPE, "i1")
    x = m.tensor(X[0], SHAPE, "i8", X[1], X[2])
    floor = m.tensor("floor", (1, 1, 1, 8), "i8", X[1], X[2], [-128, -50, -1, 0, 1, 50, 100, 127])
    y = m.tensor("picked", SHAPE, "i8", X[1], X[2])
    m.op("SELECT_V2", [cond, x, floor], [y])
    data = m.write([cond, x], [y])
    path = tmp_path / "model.tflite"
    path.write_bytes(data)
    mcu_mlir.compile(str(path), target="host", backend=backend, emit="c", output_dir=str(tmp_path / "out"))
    exe = build.build(tmp_path / "out", target="host")
    ip = runtime.Interpreter.from_bytes(data, arena_size=100_000)
    rng = np.random.default_rng(4)
    for sample in inputs(SHAPE, 4, seed=9):
        flags = rng.integers(0, 2, SHAPE).astype(bool)
        ip.set_input(flags, 0)
        ip.set_input(sample, 1)
        ip.invoke()
        got = run.run_executable(exe, tmp_path / "out", [flags.astype(np.int8), sample], target="host").outputs_q[0]
        assert np.array_equal(got, ip.get_output(0))

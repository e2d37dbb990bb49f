"""The .tflite frontend on TFLite's 16x8 quantization (int16 activations with zero point 0, int8
weights, int64 bias): one small model (written here with the flatbuffer builder) whose outputs each
come from one op and option, compiled for the host with the CMSIS-NN and the portable backend and
compared bit for bit with TFLite Micro's interpreter on random inputs (-32768 / 32767 included),
and the CMSIS-NN build under QEMU on a Cortex-M55 (MVE) and an M4 (DSP);
int16 softmax tables against TFLM's; the int16 models refused with a clear error."""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np
import pytest

from tflite_oracle import compare_with_tflm, need_build
from tflite_writer import ModelWriter
from test_tflite_errors import compile_error

from mcu_mlir.frontend.tflite import int16

IN_SHAPE, IN_SCALE = (1, 9, 9, 4), 0.002
SAME, VALID = 0, 1
NONE, RELU, RELU_N1_TO_1, RELU6 = 0, 1, 2, 3
CASES = [
    "conv SAME stride 2, RELU, per-channel, int64 bias",
    "conv VALID dilation 2, 3x2 kernel, RELU6, per-tensor, no bias",
    "depthwise SAME multiplier 2, per-channel",
    "depthwise VALID stride 2, RELU_N1_TO_1, per-tensor",
    "average pool SAME 3x3 stride 2",
    "average pool VALID 2x2 stride 2, RELU",
    "max pool SAME 3x3 stride 2, RELU",
    "max pool VALID 2x2 stride 1",
    "add of the input and a 1x1 conv (other scales), RELU",
    "sub of two 1x1 convs (other scales), RELU6",
    "mul of the input and a 1x1 conv",
    "mul of a 1x1 conv by a constant [1, 1, 1, 4]",
    "reshape + fully connected, per-tensor, with bias",
    "fully connected, per-channel, no bias, RELU",
    "softmax (beta 1) over 10 (TFLM's saturations as TOSA ops)",
    "softmax (beta 0.7) over 4 (arm_softmax_s16's form)",
    "concatenation of the input with a conv of another scale (TFLM copies int16)",
    "pad before and after",
    "padv2 with a constant 700",
    "relu to another scale",
    "relu6 in the input's parameters",
    "squeeze of [1, 9, 9, 1], then expand_dims to [1, 9, 9]",
    "transpose NHWC -> NCWH",
    "quantize int16 -> int16",
    "maximum of the input and a broadcast constant",
    "minimum of the input and a pool of it",
    "fully connected over 1152 positive weights (int32 sums would wrap: portable kernel)",
    "softmax (beta 0.5) over 4 of a finely requantized input (a right shift, arm_softmax_s16's form)",
    "softmax over 36 of the same (a right shift, TFLM's saturations)",
    "depthwise 1x1 by a factor just under one (REDUCE_MULTIPLIER's 0x7FFF)",
]


def _out_scale(in_scale: float, w_scale: float, depth: int) -> float:
    """An output step that spreads a random int16 x int8 accumulator over most of int16."""
    return in_scale * w_scale * np.sqrt(depth) * 18900 * 73 / 9000


def _window(padding, stride, activation=NONE, dilation=(1, 1), **extra):
    return {"Padding": padding, "StrideH": stride[0], "StrideW": stride[1], "FusedActivationFunction": activation,
            "DilationHFactor": dilation[0], "DilationWFactor": dilation[1], **extra}


def _conv(m: ModelWriter, rng, x, name, cout, kernel, options, out_hw, depthwise=False, per_channel=True,
          bias=True, widen=1.0):
    cin = IN_SHAPE[3]
    w_shape = (1, *kernel, cout) if depthwise else (cout, *kernel, cin)
    scales = rng.uniform(0.01, 0.03, cout) if per_channel else 0.02
    w = m.tensor(f"{name}/w", w_shape, "i8", scales, 0, rng.integers(-127, 128, w_shape), axis=3 if depthwise else 0)
    depth = kernel[0] * kernel[1] * (1 if depthwise else cin)
    inputs = [x, w]
    if bias:
        inputs.append(m.tensor(f"{name}/b", (cout,), "i64", IN_SCALE * np.asarray(scales) * np.ones(cout), 0,
                               rng.integers(-(1 << 22), 1 << 22, cout)))
    else:
        inputs.append(-1)
    y = m.tensor(name, (1, *out_hw, cout), "i16", _out_scale(IN_SCALE, 0.02, depth) * widen, 0)
    kind = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    m.op(kind, inputs, [y], ("DepthwiseConv2DOptions" if depthwise else "Conv2DOptions", options))
    return y


def _pool(m: ModelWriter, x, kind, name, padding, k, s, act, hw):
    y = m.tensor(name, (1, hw, hw, 4), "i16", IN_SCALE, 0)
    m.op(kind, [x], [y], ("Pool2DOptions", {"Padding": padding, "StrideH": s, "StrideW": s, "FilterHeight": k,
                                            "FilterWidth": k, "FusedActivationFunction": act}))
    return y


def _fully_connected(m: ModelWriter, rng, x, name, n_out, depth, w_scales, bias, options, positive=False):
    low = 60 if positive else -127
    w = m.tensor(f"{name}/w", (n_out, depth), "i8", w_scales, 0, rng.integers(low, 128, (n_out, depth)))
    b = -1
    if bias:
        b = m.tensor(f"{name}/b", (n_out,), "i64", IN_SCALE * np.asarray(w_scales) * np.ones(n_out), 0,
                     rng.integers(-(1 << 24), 1 << 24, n_out))
    y = m.tensor(name, (1, n_out), "i16", _out_scale(IN_SCALE, float(np.mean(w_scales)), depth), 0)
    m.op("FULLY_CONNECTED", [x, w, b], [y], ("FullyConnectedOptions", options))
    return y


def _arithmetic(m: ModelWriter, rng, x) -> list:
    pointwise = [_conv(m, rng, x, f"pointwise{i}", 4, (1, 1), _window(SAME, (1, 1)), (9, 9), widen=1 + i / 3)
                 for i in range(4)]
    added = m.tensor("add", IN_SHAPE, "i16", 0.003, 0)
    m.op("ADD", [x, pointwise[0]], [added], ("AddOptions", {"FusedActivationFunction": RELU}))
    difference = m.tensor("sub", IN_SHAPE, "i16", 0.0007, 0)
    m.op("SUB", pointwise[1:3], [difference], ("SubOptions", {"FusedActivationFunction": RELU6}))
    product = m.tensor("mul", IN_SHAPE, "i16", 0.05, 0)
    m.op("MUL", [x, pointwise[3]], [product], ("MulOptions", {}))
    gains = m.tensor("gains", (1, 1, 1, 4), "i16", 0.0001, 0, [-30000, 300, 12000, 32767])
    scaled = m.tensor("scaled", IN_SHAPE, "i16", 0.0009, 0)
    m.op("MUL", [pointwise[2], gains], [scaled], ("MulOptions", {}))
    return [added, difference, product, scaled]


def _dense(m: ModelWriter, rng, x) -> list:
    flat = m.tensor("flat", (1, 324), "i16", IN_SCALE, 0)
    m.op("RESHAPE", [x, m.tensor("flat/shape", (2,), "i32", None, 0, [1, 324])], [flat])
    fc = _fully_connected(m, rng, flat, "fc", 10, 324, 0.004, True, {})
    scores = _fully_connected(m, rng, flat, "scores", 4, 324, list(rng.uniform(0.003, 0.005, 4)), False,
                              {"FusedActivationFunction": RELU})
    outs = [fc, scores]
    for beta, logits, n in ((1.0, fc, 10), (0.7, scores, 4)):
        probs = m.tensor(f"softmax_{beta}", (1, n), "i16", 1 / 32768, 0)
        m.op("SOFTMAX", [logits], [probs], ("SoftmaxOptions", {"Beta": beta}))
        outs.append(probs)
    return outs


def _data_movement(m: ModelWriter, rng, x) -> list:
    other = _conv(m, rng, x, "other_scale", 4, (1, 1), _window(SAME, (1, 1)), (9, 9))
    joined = m.tensor("concat", (1, 18, 9, 4), "i16", IN_SCALE, 0)
    m.op("CONCATENATION", [x, other], [joined], ("ConcatenationOptions", {"Axis": -3}))
    paddings = m.tensor("pad/paddings", (4, 2), "i32", None, 0, [[0, 0], [1, 2], [0, 1], [0, 0]])
    padded = m.tensor("pad", (1, 12, 10, 4), "i16", IN_SCALE, 0)
    m.op("PAD", [x, paddings], [padded])
    value = m.tensor("padv2/value", (1,), "i16", IN_SCALE, 0, [700])
    padded_value = m.tensor("padv2", (1, 12, 10, 4), "i16", IN_SCALE, 0)
    m.op("PADV2", [x, paddings, value], [padded_value])
    outs = [joined, padded, padded_value]
    for kind, scale in (("RELU", 0.0013), ("RELU6", IN_SCALE)):
        y = m.tensor(kind.lower(), IN_SHAPE, "i16", scale, 0)
        m.op(kind, [x], [y])
        outs.append(y)
    return outs


def _shape_ops(m: ModelWriter, x) -> list:
    one = m.tensor("channel_sum", (1, 9, 9, 1), "i16", IN_SCALE, 0)
    conv_w = m.tensor("channel_sum/w", (1, 1, 1, 4), "i8", 0.25, 0, [1, 1, 1, 1])
    conv_b = m.tensor("channel_sum/b", (1,), "i64", IN_SCALE * 0.25, 0, [0])
    m.op("CONV_2D", [x, conv_w, conv_b], [one], ("Conv2DOptions", _window(VALID, (1, 1))))
    squeezed = m.tensor("squeeze", (9, 9), "i16", IN_SCALE, 0)
    m.op("SQUEEZE", [one], [squeezed])
    expanded = m.tensor("expand", (1, 9, 9), "i16", IN_SCALE, 0)
    m.op("EXPAND_DIMS", [squeezed, m.tensor("expand/axis", (1,), "i32", None, 0, [0])], [expanded])
    transposed = m.tensor("transpose", (1, 4, 9, 9), "i16", IN_SCALE, 0)
    m.op("TRANSPOSE", [x, m.tensor("transpose/perm", (4,), "i32", None, 0, [0, 3, 2, 1])], [transposed])
    requantized = m.tensor("quantize", IN_SHAPE, "i16", 0.0031, 0)
    m.op("QUANTIZE", [x], [requantized])
    floor = m.tensor("maximum/floor", (1, 1, 1, 4), "i16", IN_SCALE, 0, [-20000, 0, 200, 30000])
    top = m.tensor("maximum", IN_SHAPE, "i16", IN_SCALE, 0)
    m.op("MAXIMUM", [x, floor], [top])
    pooled = _pool(m, x, "AVERAGE_POOL_2D", "minimum/pool", SAME, 3, 1, NONE, 9)
    bottom = m.tensor("minimum", IN_SHAPE, "i16", IN_SCALE, 0)
    m.op("MINIMUM", [x, pooled], [bottom])
    return [expanded, transposed, requantized, top, bottom]


def _fine_softmax(m: ModelWriter, x) -> list:
    """Softmaxes of an input scale small enough for a right shift of x - max (beta * scale * 6553.5 <
    0.5), each of its own requantised input (two softmaxes of one tensor, or of two equal
    requantisations of it, would share their first cast, which no kernel pattern matches)."""
    fine, fine2 = (m.tensor(name, IN_SHAPE, "i16", scale, 0)
                   for name, scale in (("fine", 0.00005), ("fine2", 0.00006)))
    m.op("QUANTIZE", [x], [fine])
    m.op("QUANTIZE", [x], [fine2])
    short = m.tensor("softmax_fine_4", IN_SHAPE, "i16", 1 / 32768, 0)
    m.op("SOFTMAX", [fine], [short], ("SoftmaxOptions", {"Beta": 0.5}))
    rows = m.tensor("fine_rows", (1, 9, 36), "i16", 0.00006, 0)
    m.op("RESHAPE", [fine2, m.tensor("fine_rows/shape", (3,), "i32", None, 0, [1, 9, 36])], [rows])
    long = m.tensor("softmax_fine_36", (1, 9, 36), "i16", 1 / 32768, 0)
    m.op("SOFTMAX", [rows], [long], ("SoftmaxOptions", {"Beta": 1.0}))
    return [short, long]


def op_model(seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    m = ModelWriter()
    x = m.tensor("input", IN_SHAPE, "i16", IN_SCALE, 0)
    outs = [
        _conv(m, rng, x, "conv_same_s2", 6, (3, 3), _window(SAME, (2, 2), RELU), (5, 5)),
        _conv(m, rng, x, "conv_valid_d2", 3, (3, 2), _window(VALID, (1, 1), RELU6, (2, 2)), (5, 7), per_channel=False,
              bias=False),
        _conv(m, rng, x, "dw_same_m2", 8, (3, 3), _window(SAME, (1, 1), DepthMultiplier=2), (9, 9), depthwise=True),
        _conv(m, rng, x, "dw_valid_s2", 4, (3, 3), _window(VALID, (2, 2), RELU_N1_TO_1, DepthMultiplier=1), (4, 4),
              depthwise=True, per_channel=False),
        _pool(m, x, "AVERAGE_POOL_2D", "avg_same", SAME, 3, 2, NONE, 5),
        _pool(m, x, "AVERAGE_POOL_2D", "avg_valid", VALID, 2, 2, RELU, 4),
        _pool(m, x, "MAX_POOL_2D", "max_same", SAME, 3, 2, RELU, 5),
        _pool(m, x, "MAX_POOL_2D", "max_valid", VALID, 2, 1, NONE, 8),
    ]
    outs += _arithmetic(m, rng, x)
    outs += _dense(m, rng, x)
    outs += _data_movement(m, rng, x)
    outs += _shape_ops(m, x)
    wide = m.tensor("wide_input", (1, 1152), "i16", IN_SCALE, 0)
    outs.append(_fully_connected(m, rng, wide, "fc_wide", 3, 1152, 0.001, True, {}, positive=True))
    outs += _fine_softmax(m, x)
    w = m.tensor("nearly_one/w", (1, 1, 1, 4), "i8", 1.0, 0, [1, 1, 1, 1])
    b = m.tensor("nearly_one/b", (4,), "i64", IN_SCALE, 0, [0, 5, -5, 0])
    nearly_one = m.tensor("nearly_one", IN_SHAPE, "i16", IN_SCALE / 0.99999, 0)
    m.op("DEPTHWISE_CONV_2D", [x, w, b], [nearly_one],
         ("DepthwiseConv2DOptions", _window(VALID, (1, 1), DepthMultiplier=1)))
    outs.append(nearly_one)
    assert len(outs) == len(CASES)
    return m.write([x, wide], outs)


S16_KERNELS = {"arm_convolve_wrapper_s16", "arm_depthwise_conv_wrapper_s16", "arm_avgpool_s16", "arm_max_pool_s16",
               "arm_elementwise_add_s16", "arm_elementwise_mul_s16", "arm_softmax_s16"}


# Under QEMU the CMSIS-NN build (its MVE and DSP s16 paths); the portable C is the host's.
CASES_RUN = [("cmsis-nn", "host", 12), ("portable", "host", 12), ("cmsis-nn", "cortex-m55", 4),
             ("cmsis-nn", "cortex-m4", 4)]


@pytest.mark.parametrize("backend,target,count", CASES_RUN)
def test_int16_ops_bit_exact_with_tflite_micro(backend, target, count, tmp_path):
    need_build(backend, target)
    report, differing = compare_with_tflm(op_model(), tmp_path, backend, count, target)
    assert not differing, [(k, CASES[i], d) for k, i, d in differing]
    assert report["transposes"] == 1        # the model's TRANSPOSE
    kernels = {op["kernel"] for op in report["ops"]}
    if backend == "cmsis-nn":
        assert S16_KERNELS <= kernels, kernels
        softmax_kernels = {op["name"]: op["kernel"] for op in report["ops"] if op["name"].startswith("softmax")}
        assert softmax_kernels["softmax_0.7"] == softmax_kernels["softmax_fine_4"] == "arm_softmax_s16", softmax_kernels
        wide = [op for op in report["ops"] if op["name"] == "fc_wide" and "conv2d" in op["tosa_op"]]
        assert wide and all(op["kernel"].startswith("portable:") for op in wide), wide
    else:
        assert all(k.startswith("portable:") or k == "view" for k in kernels), kernels


def test_softmax_tables_are_tflite_micros():
    """The tables equal LUTPopulate<int16_t> computed with the C library's expf (what TFLM's
    std::exp(float) calls), and differ from gen_lut's (the older double-precision generator)."""
    from mcu_mlir.fixed_point.cmsis_softmax import s16_luts
    exp_lut, obo_lut = int16.softmax_luts()
    path = ctypes.util.find_library("m")
    if path is not None:
        libm = ctypes.CDLL(path)
        libm.expf.restype, libm.expf.argtypes = ctypes.c_float, [ctypes.c_float]
        span = np.float32(65535)
        with_libm = int16.lut_populate(np.float32(np.float32(10) / span), 32767, np.float32(np.float32(2) / span),
                                       lambda v: np.float32(libm.expf(float(v))))
        assert np.array_equal(with_libm, exp_lut)
    assert exp_lut[LAST] == 32767 and obo_lut[0] == 32767
    assert not np.array_equal(s16_luts()[1], obo_lut)


LAST = int16.LUT_STEPS


def test_reduced_multiplier_is_tflite_micros():
    """REDUCE_MULTIPLIER keeps 0x7FFF (not 0x8000 halved) from a 32-bit multiplier of 0x7FFF0000 on."""
    from mcu_mlir.frontend.tflite.reader import Operator
    op = Operator(0, "CONV_2D", (), (), None)
    assert int16.reduced_multiplier(op, 0.99999) == (0x7FFF, 15)
    assert int16.reduced_multiplier(op, 0.75) == (0x6000, 15)
    assert int16.reduced_multiplier(op, 0.001) == (16777, 24)


def test_arm_softmax_form_exactness_by_row_length():
    exp_lut, obo_lut = int16.softmax_luts()
    assert [n for n in range(1, 12) if int16.arm_form_exact(n, exp_lut, obo_lut)] == [2, 3, 4, 5, 6, 7, 8]


def _single_op(make) -> bytes:
    m = ModelWriter()
    x = m.tensor("input", (1, 4, 4, 2), "i16", 0.01, 0)
    y = make(m, x)
    return m.write([x], [y])


def _conv_with(m, x, bias_elem="i64", out_elem="i16", out_zp=0):
    w = m.tensor("w", (3, 1, 1, 2), "i8", 0.02, 0, np.ones((3, 1, 1, 2)))
    b = m.tensor("b", (3,), bias_elem, 0.0002, 0, [1, 2, 3])
    y = m.tensor("out", (1, 4, 4, 3), out_elem, 0.05, out_zp)
    m.op("CONV_2D", [x, w, b], [y], ("Conv2DOptions", _window(VALID, (1, 1))))
    return y


def _int16_input_zero_point():
    m = ModelWriter()
    x = m.tensor("input", (1, 4, 4, 2), "i16", 0.01, 5)
    y = _conv_with(m, x)
    return m.write([x], [y])


ERRORS = {
    "int32 bias": (lambda: _single_op(lambda m, x: _conv_with(m, x, bias_elem="i32")),
                   "operator #0 (CONV_2D): its bias ('b') is i32; int16 activations take an int64 bias"),
    "int16 in, int8 out": (lambda: _single_op(lambda m, x: _conv_with(m, x, out_elem="i8")),
                           "operator #0 (CONV_2D): its input 'input' is i16 but its output i8"),
    "int16 output zero point": (lambda: _single_op(lambda m, x: _conv_with(m, x, out_zp=3)),
                                "operator #0 (CONV_2D): its output ('out') is int16 with zero point 3"),
    "int16 input zero point": (_int16_input_zero_point,
                               "operator #0 (CONV_2D): its input ('input') is int16 with zero point 5"),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_unsupported_int16_models_are_clear_errors(case, tmp_path, capsys):
    make, expected = ERRORS[case]
    err = compile_error(tmp_path, make(), capsys)
    assert expected in err, err
    assert err.count("error:") == 1, err

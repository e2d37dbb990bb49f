"""The .tflite frontend op by op: one small int8 model (written here with the flatbuffer builder)
whose outputs each come from one op and option (stride, dilation, SAME / VALID padding, fused
activation, per-channel or per-tensor weights, beta), compiled for the host with the CMSIS-NN and
the portable backend and compared bit for bit with TFLite Micro's interpreter on random inputs
(the extremes -128 / 127 included). One compile and one host build per backend."""

from __future__ import annotations

import numpy as np
import pytest

from tflite_oracle import check_kernels, compare_with_tflm, need_build
from tflite_writer import ModelWriter

IN_SHAPE, IN_SCALE, IN_ZP = (1, 9, 9, 4), 0.05, 3
SAME, VALID = 0, 1
NONE, RELU, RELU_N1_TO_1, RELU6 = 0, 1, 2, 3
# name -> what its output tests (the model's outputs, in order)
CASES = [
    "conv SAME stride 2, RELU, per-channel",
    "conv VALID dilation 2, 3x2 kernel, RELU6, per-tensor",
    "conv 2x2 SAME stride 1 (the extra pad after), per-channel",
    "depthwise SAME stride 1, multiplier 2, per-channel",
    "depthwise VALID stride 2 dilation 2, RELU_N1_TO_1, per-tensor",
    "average pool SAME 3x3 stride 2",
    "average pool VALID 2x2 stride 2, RELU",
    "add of the input and a 1x1 conv (other parameters), RELU",
    "reshape + fully connected, per-tensor, with bias",
    "softmax (beta 1) of the fully connected",
    "softmax (beta 0.7) of a fully connected with RELU, per-channel, no bias",
    "depthwise 1x1 rescaled by 1.5 exactly (a factor over one: ties of odd values), second input",
    "max pool SAME 3x3 stride 2, RELU",
    "max pool VALID 2x2 stride 1",
    "sub of two 1x1 convs, RELU6",
    "mul of the input and the 1x1 conv",
    "mul of a 1x1 conv by a constant [1, 1, 1, 4] (broadcast), RELU",
    "concatenation of the input with itself on axis -3",
    "pad (the zero point) before and after",
    "padv2 with a constant 7",
    "relu to other parameters (a rescale)",
    "relu6 in the input's parameters",
    "squeeze of a 1-channel conv's [1, 9, 9, 1], then expand_dims to [1, 9, 9]",
    "transpose NHWC -> NCWH",
    "quantize int8 -> int8 (a requantisation)",
    "maximum of the input and a broadcast constant",
    "minimum of the input and a pool of it",
]


def _out_scale(w_scale: float, depth: int) -> float:
    """An output step that spreads a random accumulator over most of int8."""
    return IN_SCALE * w_scale * np.sqrt(depth) * 75 * 73 / 50


def _conv(m: ModelWriter, rng, x, name, cout, kernel, options, out_hw, depthwise=False, per_channel=True):
    cin = IN_SHAPE[3]
    w_shape = (1, *kernel, cout) if depthwise else (cout, *kernel, cin)
    scales = rng.uniform(0.01, 0.03, cout) if per_channel else 0.02
    w = m.tensor(f"{name}/w", w_shape, "i8", scales, 0, rng.integers(-127, 128, w_shape), axis=3 if depthwise else 0)
    depth = kernel[0] * kernel[1] * (1 if depthwise else cin)
    b = m.tensor(f"{name}/b", (cout,), "i32", IN_SCALE * np.asarray(scales) * np.ones(cout), 0,
                 rng.integers(-3000, 3000, cout))
    y = m.tensor(name, (1, *out_hw, cout), "i8", _out_scale(0.02, depth), int(rng.integers(-20, 20)))
    kind = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    m.op(kind, [x, w, b], [y], ("DepthwiseConv2DOptions" if depthwise else "Conv2DOptions", options))
    return y


def _window(padding, stride, activation=NONE, dilation=(1, 1), **extra):
    return {"Padding": padding, "StrideH": stride[0], "StrideW": stride[1], "FusedActivationFunction": activation,
            "DilationHFactor": dilation[0], "DilationWFactor": dilation[1], **extra}


def _data_movement(m: ModelWriter, x) -> list:
    joined = m.tensor("concat", (1, 18, 9, 4), "i8", IN_SCALE, IN_ZP)
    m.op("CONCATENATION", [x, x], [joined], ("ConcatenationOptions", {"Axis": -3}))
    paddings = m.tensor("pad/paddings", (4, 2), "i32", None, 0, [[0, 0], [1, 2], [0, 1], [0, 0]])
    padded = m.tensor("pad", (1, 12, 10, 4), "i8", IN_SCALE, IN_ZP)
    m.op("PAD", [x, paddings], [padded])
    seven = m.tensor("padv2/value", (1,), "i8", IN_SCALE, IN_ZP, [7])
    padded7 = m.tensor("padv2", (1, 12, 10, 4), "i8", IN_SCALE, IN_ZP)
    m.op("PADV2", [x, paddings, seven], [padded7])
    return [joined, padded, padded7]


def _shape_ops(m: ModelWriter, x) -> list:
    one = m.tensor("channel_max", (1, 9, 9, 1), "i8", IN_SCALE, IN_ZP)
    conv_w = m.tensor("channel_max/w", (1, 1, 1, 4), "i8", 0.25, 0, [1, 1, 1, 1])
    conv_b = m.tensor("channel_max/b", (1,), "i32", IN_SCALE * 0.25, 0, [0])
    m.op("CONV_2D", [x, conv_w, conv_b], [one], ("Conv2DOptions", _window(VALID, (1, 1))))
    squeezed = m.tensor("squeeze", (9, 9), "i8", IN_SCALE, IN_ZP)
    m.op("SQUEEZE", [one], [squeezed])
    axis = m.tensor("expand/axis", (1,), "i32", None, 0, [0])
    expanded = m.tensor("expand", (1, 9, 9), "i8", IN_SCALE, IN_ZP)
    m.op("EXPAND_DIMS", [squeezed, axis], [expanded])
    perm = m.tensor("transpose/perm", (4,), "i32", None, 0, [0, 3, 2, 1])
    transposed = m.tensor("transpose", (1, 4, 9, 9), "i8", IN_SCALE, IN_ZP)
    m.op("TRANSPOSE", [x, perm], [transposed])
    requantized = m.tensor("quantize", IN_SHAPE, "i8", 0.021, 9)
    m.op("QUANTIZE", [x], [requantized])
    floor = m.tensor("maximum/floor", (1, 1, 1, 4), "i8", IN_SCALE, IN_ZP, [-20, 0, 20, 100])
    top = m.tensor("maximum", IN_SHAPE, "i8", IN_SCALE, IN_ZP)
    m.op("MAXIMUM", [x, floor], [top])
    pooled = m.tensor("minimum/pool", IN_SHAPE, "i8", IN_SCALE, IN_ZP)
    m.op("AVERAGE_POOL_2D", [x], [pooled], ("Pool2DOptions", {"Padding": SAME, "StrideH": 1, "StrideW": 1,
                                                              "FilterHeight": 3, "FilterWidth": 3}))
    bottom = m.tensor("minimum", IN_SHAPE, "i8", IN_SCALE, IN_ZP)
    m.op("MINIMUM", [x, pooled], [bottom])
    return [expanded, transposed, requantized, top, bottom]


def op_model(seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    m = ModelWriter()
    x = m.tensor("input", IN_SHAPE, "i8", IN_SCALE, IN_ZP)
    outs = [
        _conv(m, rng, x, "conv_same_s2", 6, (3, 3), _window(SAME, (2, 2), RELU), (5, 5)),
        _conv(m, rng, x, "conv_valid_d2", 3, (3, 2), _window(VALID, (1, 1), RELU6, (2, 2)), (5, 7), per_channel=False),
        _conv(m, rng, x, "conv_2x2_same", 2, (2, 2), _window(SAME, (1, 1)), (9, 9)),
        _conv(m, rng, x, "dw_same_m2", 8, (3, 3), _window(SAME, (1, 1), DepthMultiplier=2), (9, 9), depthwise=True),
        _conv(m, rng, x, "dw_valid_s2_d2", 4, (3, 3), _window(VALID, (2, 2), RELU_N1_TO_1, (2, 2), DepthMultiplier=1),
              (3, 3), depthwise=True, per_channel=False),
    ]
    for name, padding, k, s, act, hw in (("pool_same", SAME, 3, 2, NONE, 5), ("pool_valid", VALID, 2, 2, RELU, 4)):
        y = m.tensor(name, (1, hw, hw, 4), "i8", IN_SCALE, IN_ZP)
        m.op("AVERAGE_POOL_2D", [x], [y], ("Pool2DOptions", {"Padding": padding, "StrideH": s, "StrideW": s,
                                                             "FilterHeight": k, "FilterWidth": k,
                                                             "FusedActivationFunction": act}))
        outs.append(y)
    pointwise = _conv(m, rng, x, "pointwise", 4, (1, 1), _window(SAME, (1, 1)), (9, 9))
    added = m.tensor("add", IN_SHAPE, "i8", 0.08, -5)
    m.op("ADD", [x, pointwise], [added], ("AddOptions", {"FusedActivationFunction": RELU}))
    outs.append(added)
    flat = m.tensor("flat", (1, 324), "i8", IN_SCALE, IN_ZP)
    new_shape = m.tensor("flat/shape", (2,), "i32", None, 0, [1, 324])
    m.op("RESHAPE", [x, new_shape], [flat])
    w = m.tensor("fc/w", (10, 324), "i8", 0.004, 0, rng.integers(-127, 128, (10, 324)))
    b = m.tensor("fc/b", (10,), "i32", IN_SCALE * 0.004, 0, rng.integers(-2000, 2000, 10))
    fc = m.tensor("fc", (1, 10), "i8", _out_scale(0.004, 324) / 4, 2)
    m.op("FULLY_CONNECTED", [flat, w, b], [fc], ("FullyConnectedOptions", {}))
    outs.append(fc)
    # Each softmax reads its own input (two of one tensor would share their max - x).
    w2 = m.tensor("scores/w", (10, 324), "i8", list(rng.uniform(0.003, 0.005, 10)), 0,
                  rng.integers(-127, 128, (10, 324)))
    scores = m.tensor("scores", (1, 10), "i8", 0.11, -7)
    m.op("FULLY_CONNECTED", [flat, w2, -1], [scores], ("FullyConnectedOptions", {"FusedActivationFunction": RELU}))
    for beta, logits in ((1.0, fc), (0.7, scores)):
        probs = m.tensor(f"softmax_{beta}", (1, 10), "i8", 1 / 256, -128)
        m.op("SOFTMAX", [logits], [probs], ("SoftmaxOptions", {"Beta": beta}))
        outs.append(probs)
    # 0.5 * 0.375 / 0.125 = 1.5 exactly: TFLite's left shift and doubling high multiply round the
    # ties (x - zp odd) half up, as TOSA's rescale does.
    x2 = m.tensor("input2", (1, 4, 4, 4), "i8", 0.5, -1)
    w = m.tensor("times1.5/w", (1, 1, 1, 4), "i8", 0.375, 0, [1, 1, 1, 1])
    b = m.tensor("times1.5/b", (4,), "i32", 0.1875, 0, [0, 0, 0, 0])
    y = m.tensor("times1.5", (1, 4, 4, 4), "i8", 0.125, 2)
    m.op("DEPTHWISE_CONV_2D", [x2, w, b], [y], ("DepthwiseConv2DOptions", _window(VALID, (1, 1), DepthMultiplier=1)))
    outs.append(y)
    for name, padding, k, s, act, hw in (("max_same", SAME, 3, 2, RELU, 5), ("max_valid", VALID, 2, 1, NONE, 8)):
        y = m.tensor(name, (1, hw, hw, 4), "i8", IN_SCALE, IN_ZP)
        m.op("MAX_POOL_2D", [x], [y], ("Pool2DOptions", {"Padding": padding, "StrideH": s, "StrideW": s,
                                                         "FilterHeight": k, "FilterWidth": k,
                                                         "FusedActivationFunction": act}))
        outs.append(y)
    # Elementwise ops that read one tensor with the same parameters share its rescale, and a
    # shared rescale is no kernel's: each op reads its own pair here.
    others = [_conv(m, rng, x, f"pointwise{i}", 4, (1, 1), _window(SAME, (1, 1)), (9, 9)) for i in (2, 3)]
    difference = m.tensor("sub", IN_SHAPE, "i8", 0.07, 4)
    m.op("SUB", others, [difference], ("SubOptions", {"FusedActivationFunction": RELU6}))
    product = m.tensor("mul", IN_SHAPE, "i8", 0.9, -2)
    m.op("MUL", [x, pointwise], [product], ("MulOptions", {}))
    gains = m.tensor("gains", (1, 1, 1, 4), "i8", 0.02, 1, [-100, 3, 50, 127])
    scaled = m.tensor("scaled", IN_SHAPE, "i8", 0.03, -6)
    m.op("MUL", [others[0], gains], [scaled], ("MulOptions", {"FusedActivationFunction": RELU}))
    outs += [difference, product, scaled, *_data_movement(m, x)]
    for kind, scale, zp in (("RELU", 0.03, -100), ("RELU6", IN_SCALE, IN_ZP)):
        y = m.tensor(kind.lower(), IN_SHAPE, "i8", scale, zp)
        m.op(kind, [x], [y])
        outs.append(y)
    outs += _shape_ops(m, x)
    assert len(outs) == len(CASES)
    return m.write([x, x2], outs)


@pytest.mark.parametrize("backend", ["cmsis-nn", "portable"])
def test_ops_bit_exact_with_tflite_micro(backend, tmp_path):
    need_build(backend)
    report, differing = compare_with_tflm(op_model(), tmp_path, backend, count=12)
    assert not differing, [(k, CASES[i], d) for k, i, d in differing]
    check_kernels(report, backend, transposes=1)    # the model's TRANSPOSE
    kernels = {op["kernel"] for op in report["ops"]}
    if backend == "cmsis-nn":
        assert {"arm_convolve_wrapper_s8", "arm_depthwise_conv_wrapper_s8", "arm_avgpool_s8", "arm_elementwise_add_s8",
                "arm_softmax_s8"} <= kernels, kernels
        # A per-tensor FC on the per-tensor kernel (one multiplier, not one per output), the other per channel.
        assert {"arm_fully_connected_s8", "arm_fully_connected_per_channel_s8"} <= kernels, kernels

"""One lowering per TFLite builtin: `lower(lowering, op) -> Value` (see lower.py for the forms, int16.py
for what TFLite's 16x8 quantization changes)."""

from __future__ import annotations

import numpy as np

from ...diagnostics import UserError
from ...fixed_point import cmsis_softmax as cmsis_softmax_math
from ..lowering.cmsis_softmax_graph import softmax_s8
from . import (activations, batch_matmul, comparisons, int16, lstm, requantize, resize, shape, svdf,
    transpose_conv)
from .lower import ACTIVATIONS, ADD_LEFT_SHIFT, RELU, RELU6, SAME, VALID, Lowering, activation_range
from .reader import Operator


def _input(lw: Lowering, op: Operator, position: int, role: str):
    if position >= len(op.inputs) or op.inputs[position] < 0:
        raise UserError(f"{lw.where(op)}: its {role} (input {position}) is missing")
    return op.inputs[position]


def _options(lw: Lowering, op: Operator):
    if op.options is None:
        raise UserError(f"{lw.where(op)}: it has no options")
    return op.options


def _window(lw: Lowering, op: Operator, x, kernel, stride, dilation, padding: int, out_hw):
    """TOSA pads (top, bottom, left, right) giving TFLite's output size: SAME puts the smaller half
    of the padding first (ComputePaddingWithOffset); a bottom / right pad below zero means rows no
    window reads, sliced off (TOSA wants the windows to end exactly at the padded edge)."""
    if padding not in (SAME, VALID):
        raise UserError(f"{lw.where(op)}: padding type {padding} is not supported")
    if len(x.shape) != 4:
        raise UserError(f"{lw.where(op)}: its input must be 4-D (NHWC), not {list(x.shape)}")
    if min(stride) < 1 or min(dilation) < 1 or min(kernel) < 1:
        raise UserError(f"{lw.where(op)}: kernel {list(kernel)}, stride {list(stride)} and dilation {list(dilation)} "
                        "must be at least 1")
    pads, shape = [], list(x.shape)
    for axis in range(2):
        size, k, s, d = x.shape[1 + axis], kernel[axis], stride[axis], dilation[axis]
        span = (k - 1) * d + 1
        expected = -(-size // s) if padding == SAME else (size - span + s) // s
        if out_hw[axis] != expected or expected < 1:
            raise UserError(f"{lw.where(op)}: its output is {out_hw[axis]} along axis {1 + axis}, but "
                            f"{'SAME' if padding == SAME else 'VALID'} padding gives {expected}")
        before = max((expected - 1) * s + span - size, 0) // 2 if padding == SAME else 0
        after = (expected - 1) * s + span - size - before
        if after < 0:
            shape[1 + axis] += after
            after = 0
        pads += [before, after]
    return pads, lw.w.slice(x, (0, 0, 0, 0), shape)


def _bias(lw: Lowering, op: Operator, channels: int):
    if len(op.inputs) < 3 or op.inputs[2] < 0:
        return lw.w.const(np.zeros(channels, np.int64), "i32", (channels,))
    b = lw.tensor(op.inputs[2])
    if b.elem != "i32" or b.data is None or b.data.size != channels:
        raise UserError(f"{lw.where(op)}: its bias ('{b.name}') must be a constant int32 vector of {channels} "
                        f"values, not {b.elem} {list(b.shape)}")
    return lw.w.const(b.data.reshape(channels).astype(np.int64), "i32", (channels,))


def _weights(lw: Lowering, op: Operator, channels: int, axis: int):
    w = lw.quantized(op, _input(lw, op, 1, "filter"), "filter")
    if w.data is None:
        raise UserError(f"{lw.where(op)}: its filter ('{w.name}') is not a constant")
    if np.any(w.quant.zero_points != 0):
        raise UserError(f"{lw.where(op)}: its filter ('{w.name}') has a non-zero zero point (CMSIS-NN takes "
                        "symmetric weights only)")
    if w.quant.per_channel and (w.quant.axis != axis or len(w.quant.scales) != channels):
        raise UserError(f"{lw.where(op)}: its filter has {len(w.quant.scales)} scales on axis {w.quant.axis}, "
                        f"expected {channels} on axis {axis}")
    return w, np.broadcast_to(w.quant.scales, (channels,))


def _conv(lw: Lowering, op: Operator):
    """CONV_2D and DEPTHWISE_CONV_2D: acc = sum((x - zp_x) * w) + bias; out = requantize per channel."""
    o = _options(lw, op)
    depthwise = op.name == "DEPTHWISE_CONV_2D"
    xt = lw.quantized(op, _input(lw, op, 0, "input"), "input", ACTIVATIONS)
    out = lw.quantized(op, op.outputs[0], "output", ACTIVATIONS)
    lw.same_type(op, [xt], out)
    wide = xt.elem == "i16"
    if wide:
        int16.check_bias_type(lw, op, o.get("QuantizedBiasType"))
    x = lw.value(xt.index, op)
    w_shape = lw.tensor(_input(lw, op, 1, "filter")).shape
    if len(w_shape) != 4 or len(xt.shape) != 4 or len(out.shape) != 4:
        raise UserError(f"{lw.where(op)}: input, filter and output must be 4-D (NHWC, "
                        f"{'1HWC' if depthwise else 'OHWI'})")
    c_out = out.shape[3]
    w, w_scales = _weights(lw, op, c_out, 3 if depthwise else 0)
    stride, dilation = (o["StrideH"], o["StrideW"]), (o["DilationHFactor"], o["DilationWFactor"])
    kernel = w.shape[1:3]
    pads, x = _window(lw, op, x, kernel, stride, dilation, o["Padding"], out.shape[1:3])
    bias = int16.bias(lw, op, c_out) if wide else _bias(lw, op, c_out)
    c_in = xt.shape[3]
    if depthwise:
        if w.shape[0] != 1 or w.shape[3] != c_out or c_out % c_in:
            raise UserError(f"{lw.where(op)}: filter {list(w.shape)} does not fit {c_in} input and {c_out} output "
                            "channels")
        # [1, KH, KW, C * M] -> TOSA's [KH, KW, C, M]: output channel c * M + m in both.
        wv = lw.w.const(w.data.reshape(kernel[0], kernel[1], c_in, c_out // c_in), "i8")
        acc = lw.w.depthwise_conv2d(x, wv, bias, input_zp=xt.quant.zero_point, pad=pads, stride=stride,
                                    dilation=dilation)
    else:
        if w.shape[3] != c_in or w.shape[0] != c_out:
            raise UserError(f"{lw.where(op)}: filter {list(w.shape)} does not fit {c_in} input and {c_out} output "
                            "channels (grouped convolution is not supported)")
        wv = lw.w.const(w.data, "i8")
        acc = lw.w.conv2d(x, wv, bias, input_zp=xt.quant.zero_point, pad=pads, stride=stride, dilation=dilation)
    # TFLite: double(input scale) * double(filter scale) / double(output scale), per channel.
    real = xt.quant.scale * w_scales / out.quant.scale
    y = int16.requantize(lw, op, acc, real, out) if wide else lw.requantize_accumulator(op, acc, real, out)
    return lw.clamp(y, activation_range(o["FusedActivationFunction"], out, lw.where(op)))


def _fully_connected(lw: Lowering, op: Operator):
    """acc = (x - zp_x) . w + bias as matmul + add (the form the backend puts on arm_fully_connected_s8)."""
    o = _options(lw, op)
    if o["WeightsFormat"] != 0:
        raise UserError(f"{lw.where(op)}: shuffled weights (weights_format {o['WeightsFormat']}) are not supported")
    xt = lw.quantized(op, _input(lw, op, 0, "input"), "input", ACTIVATIONS)
    out = lw.quantized(op, op.outputs[0], "output", ACTIVATIONS)
    lw.same_type(op, [xt], out)
    w_tensor = lw.tensor(_input(lw, op, 1, "filter"))
    if len(w_tensor.shape) != 2 or min(w_tensor.shape) < 1:
        raise UserError(f"{lw.where(op)}: its filter must be 2-D [outputs, depth], not {list(w_tensor.shape)}")
    n_out, depth = w_tensor.shape
    w, w_scales = _weights(lw, op, n_out, 0)
    total = int(np.prod(xt.shape, dtype=np.int64))
    if total % depth:
        raise UserError(f"{lw.where(op)}: an input of {total} values is not rows of the filter's depth {depth}")
    rows = total // depth
    real = xt.quant.scale * w_scales / out.quant.scale
    if xt.elem == "i16":
        int16.check_bias_type(lw, op, o.get("QuantizedBiasType"))
        acc = int16.fully_connected(lw, op, xt, w, int16.bias(lw, op, n_out), rows, depth)
        y = int16.requantize(lw, op, acc, real, out)
    else:
        a = lw.w.reshape(lw.value(xt.index, op), (1, rows, depth))
        product = lw.w.matmul(a, lw.w.const(w.data.T.reshape(1, depth, n_out), "i8"), xt.quant.zero_point, 0)
        bias = lw.w.reshape(_bias(lw, op, n_out), (1, 1, n_out))
        y = lw.requantize_accumulator(op, lw.w.add(product, bias), real, out)
    y = lw.clamp(y, activation_range(o["FusedActivationFunction"], out, lw.where(op)))
    return lw.w.reshape(y, out.shape)


def _pool(lw: Lowering, op: Operator):
    """AVERAGE_POOL_2D: the mean of the valid cells of each window on the raw integers, rounded half
    away from zero (TFLite's reference kernel and arm_avgpool_s8); MAX_POOL_2D: their largest. Input
    and output share their parameters."""
    o = _options(lw, op)
    xt = lw.quantized(op, _input(lw, op, 0, "input"), "input", ACTIVATIONS)
    out = lw.quantized(op, op.outputs[0], "output", ACTIVATIONS)
    lw.same_type(op, [xt], out)
    if (xt.quant.scale, xt.quant.zero_point) != (out.quant.scale, out.quant.zero_point):
        raise UserError(f"{lw.where(op)}: input and output quantization differ; TFLite's pooling keeps them")
    kernel, stride = (o["FilterHeight"], o["FilterWidth"]), (o["StrideH"], o["StrideW"])
    pads, x = _window(lw, op, lw.value(xt.index, op), kernel, stride, (1, 1), o["Padding"], out.shape[1:3])
    pool = lw.w.avg_pool2d if op.name == "AVERAGE_POOL_2D" else lw.w.max_pool2d
    y = pool(x, kernel=kernel, stride=stride, pad=pads)
    return lw.clamp(y, activation_range(o["FusedActivationFunction"], out, lw.where(op)))


def _broadcast_operands(lw: Lowering, op: Operator):
    """The two inputs and the output of an elementwise op (one type); inputs that broadcast to it."""
    ta, tb = (lw.quantized(op, _input(lw, op, i, "input"), f"input {i}", ACTIVATIONS) for i in (0, 1))
    out = lw.quantized(op, op.outputs[0], "output", ACTIVATIONS)
    lw.same_type(op, [ta, tb], out)
    rank = len(out.shape)
    for t in (ta, tb):
        padded = (1,) * (rank - len(t.shape)) + tuple(t.shape)
        if len(t.shape) > rank or any(d not in (1, size) for d, size in zip(padded, out.shape)):
            raise UserError(f"{lw.where(op)}: its input '{t.name}' {list(t.shape)} does not broadcast to its output "
                            f"{list(out.shape)}")
    return ta, tb, out


def _ranked(lw: Lowering, v, rank: int):
    return lw.w.reshape(v, (1,) * (rank - len(v.shape)) + tuple(v.shape))


def _add_sub(lw: Lowering, op: Operator):
    """TFLite's quantized ADD / SUB (CMSIS-NN's arm_elementwise_add_s8 / _s16): each (x - zp) << 20
    (int16: x << 15) rescaled by scale / (2 max scale), added or subtracted, rescaled by 2 max scale
    / (2**20 out scale)."""
    o = _options(lw, op)
    ta, tb, out = _broadcast_operands(lw, op)
    left_shift = ADD_LEFT_SHIFT if out.elem == "i8" else 15
    twice_max = 2 * max(ta.quant.scale, tb.quant.scale)
    parts = []
    for t in (ta, tb):
        x = lw.value(t.index, op)
        if t.elem == "i8":
            shifted = lw.w.rescale(x, [1 << 30], [30 - left_shift], t.quant.zero_point, 0, "i32")
        else:   # zero point 0; a rescale cannot shift int16 values left by 15 exactly
            amount = lw.w.const(np.array([left_shift]), "i32", (1,) * len(t.shape))
            shifted = lw.w.logical_left_shift(lw.w.cast(x, "i32"), amount)
        m, s = lw.multiplier(op, t.quant.scale / twice_max)
        parts.append(_ranked(lw, lw.w.rescale(shifted, [m], [s], 0, 0, "i32"), len(out.shape)))
    acc = lw.w.add(*parts) if op.name == "ADD" else lw.w.sub(*parts)
    m, s = lw.multiplier(op, twice_max / ((1 << left_shift) * out.quant.scale))
    y = lw.w.rescale(acc, [m], [s], 0, out.quant.zero_point, out.elem)
    return lw.clamp(y, activation_range(o["FusedActivationFunction"], out, lw.where(op)))


def _mul(lw: Lowering, op: Operator):
    """TFLite's quantized MUL (arm_elementwise_mul_s8 / _s16): (a - zp_a) * (b - zp_b) in int32,
    rescaled by scale_a * scale_b / out scale."""
    o = _options(lw, op)
    ta, tb, out = _broadcast_operands(lw, op)
    wide = [_ranked(lw, lw.w.rescale(lw.value(t.index, op), [1 << 30], [30], t.quant.zero_point, 0, "i32"),
                    len(out.shape)) for t in (ta, tb)]    # x - zp, exactly
    m, s = lw.multiplier(op, ta.quant.scale * tb.quant.scale / out.quant.scale)
    y = lw.w.rescale(lw.w.mul(*wide), [m], [s], 0, out.quant.zero_point, out.elem)
    return lw.clamp(y, activation_range(o["FusedActivationFunction"], out, lw.where(op)))


def _reshape(lw: Lowering, op: Operator):
    """RESHAPE, SQUEEZE, EXPAND_DIMS: the output tensor's shape (the shape operand says the same)."""
    xt, out = _copying(lw, op)
    if int(np.prod(xt.shape, dtype=np.int64)) != int(np.prod(out.shape, dtype=np.int64)):
        raise UserError(f"{lw.where(op)}: reshapes {list(xt.shape)} to {list(out.shape)}, a different size")
    return lw.w.reshape(lw.value(xt.index, op), out.shape)


def _same_quantization(lw: Lowering, op: Operator, tensors, out) -> None:
    lw.same_type(op, tensors, out)
    for t in tensors:
        if (t.quant.scale, t.quant.zero_point) != (out.quant.scale, out.quant.zero_point):
            raise UserError(f"{lw.where(op)}: its input '{t.name}' and its output are quantized differently; "
                            "TFLite Micro's int8 kernel copies the integers, so they must be the same")


def _concatenation(lw: Lowering, op: Operator):
    o = _options(lw, op)
    ts = [lw.quantized(op, i, f"input '{lw.tensor(i).name}'", ACTIVATIONS) for i in op.inputs]
    out = lw.quantized(op, op.outputs[0], "output", ACTIVATIONS)
    if out.elem == "i16":   # TFLM copies int16 integers whatever their scales (zero points 0)
        lw.same_type(op, ts, out)
    else:
        _same_quantization(lw, op, ts, out)
    rank = len(out.shape)
    axis = o["Axis"] % rank if rank else 0
    if any(len(t.shape) != rank for t in ts) or sum(t.shape[axis] for t in ts) != out.shape[axis]:
        raise UserError(f"{lw.where(op)}: inputs {[list(t.shape) for t in ts]} do not concatenate to "
                        f"{list(out.shape)} on axis {axis}")
    y = lw.w.concat([lw.value(t.index, op) for t in ts], axis)
    return lw.clamp(y, activation_range(o["FusedActivationFunction"], out, lw.where(op)))


def _pad(lw: Lowering, op: Operator):
    """PAD fills with the output's zero point (a real 0), PADV2 with its constant value."""
    xt = lw.quantized(op, _input(lw, op, 0, "input"), "input", ACTIVATIONS)
    out = lw.quantized(op, op.outputs[0], "output", ACTIVATIONS)
    _same_quantization(lw, op, [xt], out)
    paddings = lw.tensor(_input(lw, op, 1, "paddings"))
    rank = len(xt.shape)
    if paddings.data is None or paddings.data.shape != (rank, 2) or np.any(paddings.data < 0):
        raise UserError(f"{lw.where(op)}: its paddings must be a constant [{rank}, 2] of counts >= 0")
    fill = out.quant.zero_point
    if op.name == "PADV2" and len(op.inputs) > 2 and op.inputs[2] >= 0:
        value = lw.tensor(op.inputs[2])
        if value.data is None or value.data.size != 1 or value.elem != xt.elem:
            raise UserError(f"{lw.where(op)}: its constant value must be one constant {xt.elem}")
        fill = int(value.data.reshape(-1)[0])
    return lw.w.pad(lw.value(xt.index, op), [int(v) for v in paddings.data.reshape(-1)], fill)


def _relu(lw: Lowering, op: Operator):
    """RELU as TFLite Micro's ReluQuantized (x - zp rescaled to the output, then the bounds); RELU6
    clamps in the input's parameters and copies the integers (Relu6Quantized), so its output must
    keep them."""
    xt = lw.quantized(op, _input(lw, op, 0, "input"), "input", ACTIVATIONS)
    out = lw.quantized(op, op.outputs[0], "output", ACTIVATIONS)
    x = lw.value(xt.index, op)
    if op.name == "RELU6":
        _same_quantization(lw, op, [xt], out)
    elif (xt.quant.scale, xt.quant.zero_point) != (out.quant.scale, out.quant.zero_point):
        lw.same_type(op, [xt], out)
        m, s = lw.multiplier(op, xt.quant.scale / out.quant.scale)
        x = lw.w.rescale(x, [m], [s], xt.quant.zero_point, out.quant.zero_point, out.elem)
    return lw.clamp(x, activation_range(RELU6 if op.name == "RELU6" else RELU, out, lw.where(op)))


def _copying(lw: Lowering, op: Operator):
    """The input and output of an op TFLite Micro computes on the integers as they are."""
    xt = lw.quantized(op, _input(lw, op, 0, "input"), "input", ACTIVATIONS)
    out = lw.quantized(op, op.outputs[0], "output", ACTIVATIONS)
    _same_quantization(lw, op, [xt], out)
    return xt, out


def _transpose(lw: Lowering, op: Operator):
    xt, out = _copying(lw, op)
    perm = lw.tensor(_input(lw, op, 1, "permutation"))
    if perm.data is None or sorted(int(p) for p in perm.data.reshape(-1)) != list(range(len(xt.shape))):
        raise UserError(f"{lw.where(op)}: its permutation must be a constant permutation of {len(xt.shape)} axes")
    return lw.w.transpose(lw.value(xt.index, op), [int(p) for p in perm.data.reshape(-1)])


def _maximum_minimum(lw: Lowering, op: Operator):
    """MAXIMUM / MINIMUM compare the integers as they are (one quantization), widened to int32 as
    TOSA compares."""
    ta, tb, out = _broadcast_operands(lw, op)
    _same_quantization(lw, op, [ta, tb], out)
    wide = [_ranked(lw, lw.w.cast(lw.value(t.index, op), "i32"), len(out.shape)) for t in (ta, tb)]
    pick = lw.w.maximum if op.name == "MAXIMUM" else lw.w.minimum
    return lw.w.cast(pick(*wide), out.elem)


SOFTMAX_OUTPUT = (np.float32(1 / 256), -128)


def _softmax(lw: Lowering, op: Operator):
    """int8 softmax on the last axis, computing arm_softmax_s8's integers (which TFLite's reference
    kernel computes too) with TFLite's PreprocessSoftmaxScaling of beta * input scale."""
    xt = lw.quantized(op, _input(lw, op, 0, "input"), "input", ACTIVATIONS)
    out = lw.quantized(op, op.outputs[0], "output", ACTIVATIONS)
    lw.same_type(op, [xt], out)
    if xt.elem == "i16":
        return int16.softmax(lw, op, xt, out, _options(lw, op)["Beta"])
    if (np.float32(out.quant.scale), out.quant.zero_point) != SOFTMAX_OUTPUT:
        raise UserError(f"{lw.where(op)}: its output is quantized with scale {out.quant.scale} and zero point "
                        f"{out.quant.zero_point}; TFLite's int8 softmax writes scale 1/256, zero point -128")
    beta = float(np.float32(_options(lw, op)["Beta"]))
    params = cmsis_softmax_math.params(beta * xt.quant.scale)
    count = xt.shape[-1]
    if params is None or count >= 512:
        raise UserError(f"{lw.where(op)}: beta * input scale = {beta * xt.quant.scale:g} over rows of {count} is "
                        "outside arm_softmax_s8's range")
    return softmax_s8(lw.w, lw.value(xt.index, op), len(xt.shape) - 1, params)


LOWER = {
    "CONV_2D": _conv, "DEPTHWISE_CONV_2D": _conv, "FULLY_CONNECTED": _fully_connected,
    "AVERAGE_POOL_2D": _pool, "MAX_POOL_2D": _pool, "ADD": _add_sub, "SUB": _add_sub, "MUL": _mul,
    "RESHAPE": _reshape, "SOFTMAX": _softmax, "CONCATENATION": _concatenation, "PAD": _pad, "PADV2": _pad,
    "RELU": _relu, "RELU6": _relu, "SQUEEZE": _reshape, "EXPAND_DIMS": _reshape, "TRANSPOSE": _transpose,
    "MAXIMUM": _maximum_minimum, "MINIMUM": _maximum_minimum,
}
# The op families of their own modules (each a LOWER table).
FAMILIES = (activations, batch_matmul, comparisons, lstm, requantize, resize, shape, svdf, transpose_conv)
for _family in FAMILIES:
    LOWER.update(_family.LOWER)

"""The frontend's integer PReLU (frontend/graph/decompose.prelu_by_depthwise: relu(x) + slope *
min(x, 0), the product a 1x1 depthwise conv), matched whole and lowered to one portable kernel
(mcu_prelu) computing the same TOSA ops bit for bit:

    r = clamp(x, lo, hi)                              (relu on the int8 input)
    a = rescale(rescale(x))   b = rescale(rescale(r)) (the quantized sub's int32 inputs)
    n = rescale(sub(a, b))                            (min(x, 0), int8)
    d = rescale_c(depthwise_1x1(n, slope_c, bias_c))  (per channel, int8, maybe clamped)
    y = rescale(add(b', rescale(rescale(d))))         (int8, maybe clamped; b' = b or other
                                                      rescales of r: the add's own input scale)

Without it this is 12 kernel calls, eight of them writing int32 tensors of the input's size into
the arena. What does not depend on the channel is a function of one int8 value, evaluated here
over all 256 (with the TOSA integers of fixed_point.qmath): b(x), n(x) and the int32 the sum adds
for d; the kernel looks them up, computes the per-channel product and the output rescale, and
keeps every int32 intermediate in registers. Anchored on the depthwise conv (before its own
CMSIS-NN pattern); every intermediate must be read only inside the pattern.
"""

from __future__ import annotations

import numpy as np

from ..._mlir import ir, tosa
from ...dialects import portable
from ...fixed_point.qmath import apply_rescale
from .common import (CONVERTED, NO_MATCH, UNIT, LIMITS, clamp_bounds, const_array, elem, make_const, make_op,
                     producer, read_rescale, shape, users)
from .dag_pattern import distinct_ops, strip_views

RANGES = {**LIMITS, "i32": (-(1 << 31), (1 << 31) - 1)}
IDENTITY = (1 << 30, 30, 0, 0, 0)   # multiplier, shift, input zp, output zp, double round: v -> v


class _NoMatch(Exception):
    pass


def _need(cond):
    if not cond:
        raise _NoMatch


def _stage(rs, per_tensor=True) -> list[int]:
    """A per-tensor scale32 rescale as the kernel's 7 integers (with its output type's range)."""
    _need(rs is not None and rs.scale32 and not rs.input_unsigned and not rs.output_unsigned)
    _need(not rs.per_channel or not per_tensor)
    lo, hi = RANGES[elem(rs.op.results[0])]
    return [rs.multiplier[0], rs.shift[0], rs.input_zp, rs.output_zp, int(rs.double_round), lo, hi]


def _single_user(value, views):
    """The only user of `value`, looking through reshapes (collected in `views`)."""
    while True:
        us = users(value)
        if len(us) != 1 or isinstance(us[0], ir.Block):
            return None
        if isinstance(us[0], tosa.ReshapeOp):
            views.append(us[0])
            value = us[0].results[0]
            continue
        return us[0]


def _pre_chain(value, views, ops):
    """(source, [first, second]): one or two rescales int8 -> int32 (-> int32) walked back."""
    outer = read_rescale(producer(strip_views(value, views)))
    _need(outer is not None and elem(outer.op.results[0]) == "i32")
    ops.append(outer.op)
    inner = read_rescale(producer(strip_views(outer.op.operands[0], views)))
    if inner is not None and elem(inner.op.results[0]) == "i32" and elem(inner.op.operands[0]) == "i8":
        ops.append(inner.op)
        return inner.op.operands[0], [_stage(inner), _stage(outer)]
    _need(elem(outer.op.operands[0]) == "i8")
    lo, hi = RANGES["i32"]
    return outer.op.operands[0], [_stage(outer), [*IDENTITY, lo, hi]]


def _post_chain(op, views, ops):
    """(last rescale, [first, second]): one or two rescales int8 -> int32 (-> int32) after `op`."""
    first = read_rescale(_single_user(op.results[0], views))
    _need(first is not None and elem(first.op.operands[0]) == "i8" and elem(first.op.results[0]) == "i32")
    ops.append(first.op)
    second = read_rescale(_single_user(first.op.results[0], views))
    if second is not None and elem(second.op.results[0]) == "i32":
        ops.append(second.op)
        return second.op, [_stage(first), _stage(second)]
    lo, hi = RANGES["i32"]
    return first.op, [_stage(first), [*IDENTITY, lo, hi]]


def _depthwise_1x1(dw):
    """(slopes [C], bias [C], input zp, weight zp) of a 1x1, stride 1, unpadded depthwise conv with
    one output per channel (a conv2d of one channel where C is 1)."""
    attrs = dw.operation.attributes
    pad = list(ir.DenseI64ArrayAttr(attrs["pad"]))
    stride, dilation = list(ir.DenseI64ArrayAttr(attrs["stride"])), list(ir.DenseI64ArrayAttr(attrs["dilation"]))
    w_shape = shape(dw.operands[1])
    if isinstance(dw, tosa.Conv2DOp):
        _need(w_shape == [1, 1, 1, 1])
    _need(pad == [0, 0, 0, 0] and stride == [1, 1] and dilation == [1, 1] and w_shape[:2] == [1, 1]
          and w_shape[3] == 1 and elem(dw.operands[0]) == "i8" and elem(dw.results[0]) == "i32")
    arrays = [const_array(dw.operands[k]) for k in range(1, 5)]
    _need(all(a is not None for a in arrays))
    slopes, bias, in_zp, w_zp = (np.asarray(a).reshape(-1).astype(np.int64) for a in arrays)
    _need(in_zp.size == 1 and w_zp.size == 1 and bias.size == w_shape[2])
    return slopes, bias, int(in_zp[0]), int(w_zp[0])


def _match(dw):
    ops, views = [dw], []
    slopes, bias, n_zp, w_zp = _depthwise_1x1(dw)
    channels = slopes.size
    # Backward: n = rescale(a - b), a from x, b from clamp(x).
    neg = read_rescale(producer(strip_views(dw.operands[0], views)))
    _need(neg is not None and elem(neg.op.operands[0]) == "i32" and neg.output_zp == n_zp)
    sub = producer(strip_views(neg.op.operands[0], views))
    _need(isinstance(sub, tosa.SubOp))
    ops += [neg.op, sub]
    x, x_stages = _pre_chain(sub.operands[0], views, ops)
    relu, relu_stages = _pre_chain(sub.operands[1], views, ops)
    clamp = producer(strip_views(relu, views))
    _need(isinstance(clamp, tosa.ClampOp) and strip_views(clamp.operands[0], views) == strip_views(x, views))
    ops.append(clamp)
    x = strip_views(x)
    b = sub.operands[1]
    # Forward: d = per-channel rescale of the depthwise (+ clamp), then its chain into add(b, .).
    dw_rs = read_rescale(_single_user(dw.results[0], views))
    _need(dw_rs is not None and elem(dw_rs.op.results[0]) == "i8" and dw_rs.input_zp == 0 and dw_rs.scale32
          and not dw_rs.input_unsigned and not dw_rs.output_unsigned and len(dw_rs.multiplier) in (1, channels))
    ops.append(dw_rs.op)
    d_op, d_act = _with_clamp(dw_rs.op, ops)
    scaled_last, scaled_stages = _post_chain(d_op, views, ops)
    add = _single_user(scaled_last.results[0], views)
    _need(isinstance(add, tosa.AddOp))
    ins = [strip_views(v, views) for v in add.operands]
    scaled = strip_views(scaled_last.results[0])
    _need(ins.count(scaled) == 1)
    # The add's relu part: b itself, or its own rescales of the relu (the sub's and the add's
    # input scales differ).
    other = ins[1 - ins.index(scaled)]
    if other == strip_views(b):
        add_relu_stages = relu_stages
    else:
        add_relu, add_relu_stages = _pre_chain(other, views, ops)
        _need(strip_views(add_relu, views) == strip_views(relu))
    ops.append(add)
    out = read_rescale(_single_user(add.results[0], views))
    _need(out is not None and elem(out.op.results[0]) == "i8")
    ops.append(out.op)
    last, act = _with_clamp(out.op, ops)
    # Shapes: the channel is the last axis of x and of the output, which x's element count keeps.
    _need(elem(x) == "i8" and shape(x)[-1] == channels and shape(last.results[0])[-1] == channels
          and int(np.prod(shape(x))) == int(np.prod(shape(last.results[0]))))
    ops = distinct_ops(ops + views)
    inside = {o.operation for o in ops}
    for o in ops:
        if o.operation != last.operation:
            _need(all(not isinstance(u, ir.Block) and u.operation in inside for u in users(o.results[0])))
    tables = _tables(clamp_bounds(clamp), x_stages, relu_stages, add_relu_stages, _stage(neg), scaled_stages)
    output = _stage(out)
    params = {"channels": channels, "slope_input_offset": -n_zp, "slope_weight_offset": -w_zp,
              "slope_output_zp": dw_rs.output_zp, "slope_double_round": int(dw_rs.double_round),
              "slope_act_min": d_act[0], "slope_act_max": d_act[1], "output_multiplier": output[0],
              "output_shift": output[1], "output_input_zp": output[2], "output_zp": output[3],
              "output_double_round": output[4], "act_min": act[0], "act_max": act[1]}
    mult = np.broadcast_to(np.asarray(dw_rs.multiplier, np.int64), (channels,))
    shift = np.broadcast_to(np.asarray(dw_rs.shift, np.int64), (channels,))
    channel_params = np.stack([slopes, bias, mult, shift])
    return ops, last, x, params, tables, channel_params


def _apply(stage, value: int) -> int:
    """One TOSA RESCALE (scale32) of one value: the kernel's 7 integers."""
    mult, shift, in_zp, out_zp, double_round, lo, hi = stage
    return min(max(apply_rescale(value - in_zp, mult, shift, bool(double_round)) + out_zp, lo), hi)


def _wrap32(v: int) -> int:
    return (v + (1 << 31)) % (1 << 32) - (1 << 31)


def _tables(relu, x_stages, relu_stages, add_relu_stages, negative, scaled_stages):
    """[3, 256] int32 over every int8 value v (index v + 128): the relu part's int32 as the add
    reads it; n(v), the int8 negative part; and the int32 the sum adds for a product d = v."""
    rows = [[], [], []]
    for v in range(-128, 128):
        r = min(max(v, relu[0]), relu[1])
        a = _apply(x_stages[1], _apply(x_stages[0], v))
        b = _apply(relu_stages[1], _apply(relu_stages[0], r))
        rows[0].append(_apply(add_relu_stages[1], _apply(add_relu_stages[0], r)))
        rows[1].append(_apply(negative, _wrap32(a - b)))
        rows[2].append(_apply(scaled_stages[1], _apply(scaled_stages[0], v)))
    return np.asarray(rows, np.int64)


def _with_clamp(op, ops: list):
    """`op`, or the clamp that alone reads it (taken into `ops`), and the int8 range it leaves."""
    act, clamp = list(LIMITS["i8"]), _single_user(op.results[0], [])
    if not isinstance(clamp, tosa.ClampOp):
        return op, act
    lo, hi = clamp_bounds(clamp)
    ops.append(clamp)
    return clamp, [max(act[0], lo), min(act[1], hi)]


def convert_prelu(op, rw):
    try:
        ops, last, source, params, tables, channel_params = _match(op)
    except _NoMatch:
        return NO_MATCH
    table_const = make_const(tables.astype(np.int32), op, op.location)
    channel_const = make_const(channel_params.astype(np.int32), op, op.location)
    new = make_op(portable.PReluOp, [source, table_const, channel_const], last.results[0].type, params,
                  before=last, loc=ir.Location.fused([o.location for o in ops]), source_op="prelu")
    rw.replace(ops, last, new)
    return CONVERTED


PATTERNS = [("prelu", tosa.DepthwiseConv2DOp, convert_prelu, UNIT),
            ("prelu-one-channel", tosa.Conv2DOp, convert_prelu, UNIT)]

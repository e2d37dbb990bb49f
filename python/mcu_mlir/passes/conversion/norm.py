"""The integer normalisation the frontend emits (frontend/lowering/norm.py), matched whole and
lowered to one portable kernel (mcu_norm) computing the same TOSA ops bit for bit:

    S   = reduce_sum(x, axes)                                    (centred forms only)
    d   = sub(mul(x, n), S)  |  sub(x, zp)
    d   = arithmetic_right_shift(d, s0, round)                   (when s0 > 0)
    V   = add(reduce_sum(mul(d, d, s1), axes), eps)
    e   = bitwise_and(sub(17, clz(V)), -2)
    m   = arithmetic_right_shift(logical_left_shift(V, maximum(sub(0, e), 0)), maximum(e, 0))
    T   = table(cast<i16>(sub(m, 32768)), rsqrt_table)
    Z   = arithmetic_right_shift(mul(d, T, 7), add(arithmetic_right_shift(e, 1), 7), round)
    y   = rescale(add(rescale(mul(reshape(Z), sign), gamma), offset), 2**-g) [+ clamp]

`axes` are any axes that view the tensor as [batch, spatial, groups, group_size] normalised over
spatial x group_size: the last axis (LayerNorm, RMSNorm), axes 1 and 3 of [N, S, G, C / G]
(GroupNorm), axis 1 of [N, S, C, 1] (InstanceNorm), all but the first; the affine part works on
the last axis of Z, maybe reshaped, per channel of groups x group_size or per tensor. Every intermediate must be read
only inside the pattern, or the ops are left to the per-op kernels.
"""

from __future__ import annotations

import numpy as np

from ..._mlir import ir, tosa
from ...dialects import portable
from .common import (UNIT, CONVERTED, NO_MATCH, clamp_bounds, const_array, elem, make_const, make_op, producer,
                     read_rescale, shape, single_user, users, LIMITS)
from .dag_pattern import distinct_ops, rounds, strip_views


class _NoMatch(Exception):
    pass


def _need(cond):
    if not cond:
        raise _NoMatch


class _Views:
    """The reshapes one match looks through (a reshape is a view: the layout passes move them
    between the pattern's elementwise ops); they are absorbed with the pattern."""

    def __init__(self):
        self.ops = []


def _same(v, a, b) -> bool:
    return strip_views(a, v.ops) == strip_views(b, v.ops)


def _op(v, value, cls):
    op = producer(strip_views(value, v.ops))
    _need(isinstance(op, cls))
    return op


def _next(v, op, cls):
    """The only user of `op` (through reshapes) if it is a `cls`."""
    cur, views = op, []
    while True:
        user = single_user(cur)
        if isinstance(user, tosa.ReshapeOp):
            views.append(user)
            cur = user
            continue
        if isinstance(user, cls):
            v.ops.extend(views)
            return user
        return None


def _scalar(value) -> int:
    arr = const_array(value)
    _need(arr is not None and arr.size == 1)
    return int(np.asarray(arr).reshape(-1)[0])


def _reductions(v, value, ops):
    """reduce_sum(...reduce_sum(v)) -> (v, sorted axes)."""
    axes = []
    value = strip_views(value, v.ops)
    while isinstance(producer(value), tosa.ReduceSumOp):
        op = producer(value)
        axes.append(int(ir.IntegerAttr(op.attributes["axis"]).value))
        ops.append(op)
        value = op.operands[0]
    _need(axes)
    return value, sorted(axes)


def _match_table_index(v, index, ops):
    """(the variance, its even exponent e): the rsqrt table's int16 index walked back to the
    variance it normalizes (shifted by an even amount so its square root is a shift)."""
    cast = _op(v, index, tosa.CastOp)
    centre_m = _op(v, cast.operands[0], tosa.SubOp)
    _need(_scalar(centre_m.operands[1]) == 1 << 15)
    down = _op(v, centre_m.operands[0], tosa.ArithmeticRightShiftOp)
    _need(not rounds(down))
    up = _op(v, down.operands[0], tosa.LogicalLeftShiftOp)
    var = up.operands[0]
    up_max = _op(v, up.operands[1], tosa.MaximumOp)
    down_max = _op(v, down.operands[1], tosa.MaximumOp)
    neg = _op(v, up_max.operands[0], tosa.SubOp)
    _need(_scalar(up_max.operands[1]) == 0 and _scalar(down_max.operands[1]) == 0 and _scalar(neg.operands[0]) == 0)
    e = down_max.operands[0]
    _need(_same(v, neg.operands[1], e))
    even = _op(v, e, tosa.BitwiseAndOp)
    _need(_scalar(even.operands[1]) == -2)
    lead = _op(v, even.operands[0], tosa.SubOp)
    _need(_scalar(lead.operands[0]) == 17)
    clz = _op(v, lead.operands[1], tosa.ClzOp)
    _need(_same(v, clz.operands[0], var))
    ops += [cast, centre_m, down, up, up_max, down_max, neg, even, lead, clz]
    return var, e


def _match_centred_input(v, d, axes, ops):
    """(s0, x, count, zp): the centred value `d` walked back to the input x, d = (n * x - sum(x)),
    (x - zp) or x itself, then shifted right by s0."""
    s0 = 0
    if isinstance(producer(strip_views(d)), tosa.ArithmeticRightShiftOp):
        shift0 = _op(v, d, tosa.ArithmeticRightShiftOp)
        _need(rounds(shift0))
        s0 = _scalar(shift0.operands[1])
        d0 = shift0.operands[0]
        ops.append(shift0)
    else:
        d0 = d
    count, zp = 0, 0
    if not isinstance(producer(strip_views(d0)), tosa.SubOp):     # x - 0, folded away
        x = d0
    elif isinstance(producer(strip_views(producer(strip_views(d0)).operands[0])), tosa.MulOp):     # n * x - sum(x)
        centre = _op(v, d0, tosa.SubOp)
        scaled = _op(v, centre.operands[0], tosa.MulOp)
        x = scaled.operands[0]
        count = _scalar(scaled.operands[1])
        _need(_scalar(scaled.operands[2]) == 0)
        summed, sum_axes = _reductions(v, centre.operands[1], ops)
        _need(_same(v, summed, x) and sum_axes == axes)
        x = summed
        ops += [centre, scaled]
    else:                                                       # x - zp
        centre = _op(v, d0, tosa.SubOp)
        x = centre.operands[0]
        zp = _scalar(centre.operands[1])
        ops.append(centre)
    return s0, x, count, zp


def _absorbed_input(x, ops, inside):
    """(ops, the kernel's input): x before views, and before an int8 / int16 -> int32 CAST: the
    kernel reads the narrow values. Views and the cast are absorbed where only the pattern reads them."""
    views = []
    source = strip_views(x, views)
    chain = views[::-1]
    if isinstance(producer(source), tosa.CastOp) and elem(producer(source).operands[0]) in ("i8", "i16"):
        chain.insert(0, producer(source))
    for k, link in enumerate(chain):
        inner = inside | {c.operation for c in chain[k:]}
        if all(all(not isinstance(u, ir.Block) and u.operation in inner for u in users(c.results[0]))
               for c in chain[k:]):
            ops = distinct_ops(ops + chain[k:])
            source = link.operands[0]
            break
    return ops, source


def _views(dims, axes):
    """The ways to see `dims` as [batch, spatial, groups, group_size], each (batch, group)
    normalised over spatial x group_size: size-1 axes aside, the reduced `axes` must be at most
    two runs, the last one (or a size-1 one) the group; where spatial is 1, batch and groups may
    also merge (which the affine's channel count decides, _fit). Empty when the axes fit no view."""
    runs = []                         # [reduced?, size] per run of axes of one kind
    for a, n in enumerate(dims):
        if n == 1:
            continue
        if runs and runs[-1][0] == (a in axes):
            runs[-1][1] *= n
        else:
            runs.append([a in axes, n])
    if not runs or not runs[-1][0]:
        runs.append([True, 1])
    while len(runs) < 4:
        runs.insert(0, [not runs[0][0], 1])
    if len(runs) > 4:
        return []
    view = [n for _, n in runs]
    return [view] + ([[view[0] * view[2], 1, 1, view[3]]] if view[1] == 1 and view[2] > 1 else [])


def _fit(views, channels):
    """The view whose groups x group_size channels are the affine's `channels`, else None. With
    one group, any `channels` dividing the group's size fit: its values split into spatial x
    `channels`, the same set normalised together."""
    for view in views:
        if view[2] * view[3] == channels:
            return view
    for b, s, g, z in views:
        if g == 1 and (s * z) % channels == 0:
            return [b, s * z // channels, 1, channels]
    return None


def _match(table_op, v):
    ops = [table_op]
    index, rsqrt_table = table_op.operands
    _need(elem(index) == "i16" and const_array(rsqrt_table) is not None and shape(rsqrt_table) == [513])
    var, e = _match_table_index(v, index, ops)
    var_add = _op(v, var, tosa.AddOp)
    eps = _scalar(var_add.operands[1])
    ops.append(var_add)
    square_v, axes = _reductions(v, var_add.operands[0], ops)
    square = _op(v, square_v, tosa.MulOp)
    d = square.operands[0]
    _need(_same(v, square.operands[1], d))
    s1 = _scalar(square.operands[2])
    ops.append(square)
    s0, x, count, zp = _match_centred_input(v, d, axes, ops)
    dims = shape(square_v)            # the shape the statistics are reduced in
    views = _views(dims, axes)
    _need(elem(x) == "i32" and int(np.prod(shape(x))) == int(np.prod(dims)) and views)
    # Forward: Z, then the affine rescales.
    rsqrt = table_op.results[0]
    product = _next(v, table_op, tosa.MulOp)
    _need(product is not None and _same(v, product.operands[0], d) and _same(v, product.operands[1], rsqrt)
          and _scalar(product.operands[2]) == 7)
    z_op = _next(v, product, tosa.ArithmeticRightShiftOp)
    _need(z_op is not None and rounds(z_op) and _same(v, z_op.operands[0], product.results[0]))
    amount = _op(v, z_op.operands[1], tosa.AddOp)
    half = _op(v, amount.operands[0], tosa.ArithmeticRightShiftOp)
    _need(_same(v, half.operands[0], e) and _scalar(half.operands[1]) == 1 and not rounds(half)
          and _scalar(amount.operands[1]) == 7)
    ops += [product, z_op, amount, half]
    cur = z_op
    signs = None
    sign_op = _next(v, cur, tosa.MulOp)
    if sign_op is not None:
        arr = const_array(sign_op.operands[1])
        channels = shape(sign_op.results[0])[-1]
        _need(arr is not None and arr.size == channels and _scalar(sign_op.operands[2]) == 0)
        signs = np.asarray(arr).reshape(-1)
        _need(set(signs.tolist()) <= {-1, 1})
        ops.append(sign_op)
        cur = sign_op
    first = read_rescale(_next(v, cur, tosa.RescaleOp))
    _need(first is not None)
    channels = shape(first.op.results[0])[-1]
    _need( elem(first.op.results[0]) == "i32" and first.input_zp == 0
          and first.output_zp == 0 and first.scale32 and not first.input_unsigned and not first.output_unsigned
          and len(first.multiplier) in (1, channels) and all(m >= 0 for m in first.multiplier))
    ops.append(first.op)
    cur = first.op
    offsets = np.zeros(channels, np.int64)
    add = _next(v, cur, tosa.AddOp)
    if add is not None:
        _need(_same(v, add.operands[0], cur.results[0]))
        arr = const_array(add.operands[1])
        _need(arr is not None and arr.size == channels)
        offsets = np.asarray(arr).reshape(-1).astype(np.int64)
        ops.append(add)
        cur = add
    last_rs = read_rescale(_next(v, cur, tosa.RescaleOp))
    out_elem = elem(last_rs.op.results[0]) if last_rs is not None else None
    _need(last_rs is not None and out_elem in ("i8", "i16") and not last_rs.per_channel
          and last_rs.input_zp == 0 and last_rs.scale32 and not last_rs.input_unsigned
          and not last_rs.output_unsigned and last_rs.multiplier[0] >= 0)
    ops.append(last_rs.op)
    last = last_rs.op
    act = list(LIMITS[out_elem])
    clamp = _next(v, last, tosa.ClampOp)
    if clamp is not None:
        lo, hi = clamp_bounds(clamp)
        act = [max(act[0], lo), min(act[1], hi)]
        ops.append(clamp)
        last = clamp
    # Nothing outside the pattern may read an intermediate (x is the pattern's input).
    ops = distinct_ops(ops + v.ops)
    inside = {o.operation for o in ops}
    for o in ops:
        if o.operation != last.operation:
            _need(all(not isinstance(u, ir.Block) and u.operation in inside for u in users(o.results[0])))
    ops, source = _absorbed_input(x, ops, inside)
    mult = first.multiplier * (channels if len(first.multiplier) == 1 else 1)
    shift = first.shift * (channels if len(first.shift) == 1 else 1)
    signs = signs if signs is not None else np.ones(channels, np.int64)
    rows = np.stack([np.asarray(mult, np.int64), np.asarray(shift, np.int64), offsets, signs.astype(np.int64)])
    # The kernel's channel is g * group_size + k: the affine's channel where it has that many, or
    # any other count of channels whose parameters are all the same (a per-tensor affine).
    view4 = _fit(views, channels) or views[0]
    if view4[2] * view4[3] != channels:
        _need(bool((rows == rows[:, :1]).all()))
        rows = np.repeat(rows[:, :1], view4[2] * view4[3], axis=1)
    params = {"batch": view4[0], "spatial": view4[1], "groups": view4[2], "group_size": view4[3],
              "centre": int(count != 0), "count": count, "input_zp": zp, "s0": s0, "s1": s1, "eps": eps,
              "output_shift": last_rs.shift[0], "output_multiplier": last_rs.multiplier[0],
              "output_zp": last_rs.output_zp, "double_round": int(first.double_round),
              "output_double_round": int(last_rs.double_round), "act_min": act[0], "act_max": act[1]}
    if count:
        _need(count == int(np.prod([dims[a] for a in axes], dtype=np.int64)))
    return ops, last, source, rsqrt_table, params, rows


def convert_norm(op, rw):
    try:
        ops, last, source, table, params, channel_params = _match(op, _Views())
    except _NoMatch:
        return NO_MATCH
    per_channel = make_const(channel_params.astype(np.int32), op, op.location)
    new = make_op(portable.NormOp, [source, table, per_channel], last.results[0].type, params,
                  before=last, loc=ir.Location.fused([o.location for o in ops]), source_op="norm")
    rw.replace(ops, last, new)
    return CONVERTED


PATTERNS = [("norm", tosa.TableOp, convert_norm, UNIT)]

"""The frontend's integer softmax forms, matched whole: log_softmax on one portable kernel
(mcu_log_softmax_s8), softmax in arm_softmax_s8's arithmetic on arm_softmax_s8 itself. Each
kernel computes the same integers as the TOSA ops it replaces.

log_softmax:

    m = reduce_max(x, axis)          d = sub(m, x)
    s = reduce_sum(reshape(gather(exp_table, reshape(d))), axis)
    z = clz(s)
    l = add(mul(sub(exp_bits, z), exp_mul), reshape(gather(log_table, reshape(
            bitwise_and(logical_right_shift(s, sub(norm_bits, z)), norm_mask)))))
    y = rescale(arithmetic_right_shift(sub(base, sub(add(mul(d, diff_mul), l), bias)), out_shift))

Every intermediate must be read only inside the pattern; anything else is left to the per-op
kernels.
"""

from __future__ import annotations

import numpy as np

from ..._mlir import ir, tosa
from ...fixed_point import cmsis_softmax
from ...dialects import cmsisnn, portable
from . import dag_pattern as dag
from ...ir.constants import make_shape
from ...ir.ops import create
from .common import (UNIT, CONVERTED, NO_MATCH, const_array, const_ints, elem, make_op,
                     producer, read_rescale, shape, users)


def _def(value, cls):
    op = producer(value)
    return op if isinstance(op, cls) else None


def _scalar(value) -> int | None:
    vals = const_ints(value)
    return vals[0] if vals is not None and len(vals) == 1 else None


def _same(a, b) -> bool:
    return a == b


def _table_lookup(value, ops):
    """reshape(gather(table [1, K, 1], reshape(index))) -> (table const, index value)."""
    back = _def(value, tosa.ReshapeOp)
    gather = _def(back.operands[0], tosa.GatherOp) if back is not None else None
    if gather is None:
        return None
    table_v, idx = gather.operands
    flat = _def(idx, tosa.ReshapeOp)
    table = const_array(table_v)
    if flat is None or table is None or elem(table_v) != "i32":
        return None
    t_shape = shape(table_v)
    if len(t_shape) != 3 or t_shape[0] != 1 or t_shape[2] != 1 or shape(idx)[0] != 1:
        return None
    ops += [back, gather, flat]
    return table_v, flat.operands[0]


def _mul(value, ops):
    """mul(a, constant b, constant shift) -> (a, b, shift)."""
    mul = _def(value, tosa.MulOp)
    if mul is None:
        return None
    b, shift = _scalar(mul.operands[1]), _scalar(mul.operands[2])
    if b is None or shift is None:
        return None
    ops.append(mul)
    return mul.operands[0], b, shift


def _log_of_sum(value, ops):
    """l = add(mul(sub(exp_bits, clz(s)), exp_mul), log_table[...]), the log of the row's sum s:
    (s, log table, exp_bits, exp_mul, exp_shift, norm_bits, norm_mask), or None."""
    l_add = _def(value, tosa.AddOp)
    if l_add is None:
        return None
    ops.append(l_add)
    got = _mul(l_add.operands[0], ops)
    if got is None:
        return None
    n2, exp_mul, exp_shift = got
    sub_exp = _def(n2, tosa.SubOp)
    lookup = _table_lookup(l_add.operands[1], ops)
    if sub_exp is None or lookup is None:
        return None
    exp_bits = _scalar(sub_exp.operands[0])
    z = sub_exp.operands[1]
    clz = _def(z, tosa.ClzOp)
    log_table, idx = lookup
    band = _def(idx, tosa.BitwiseAndOp)
    lrs = _def(band.operands[0], tosa.LogicalRightShiftOp) if band is not None else None
    norm_mask = _scalar(band.operands[1]) if band is not None else None
    sub_norm = _def(lrs.operands[1], tosa.SubOp) if lrs is not None else None
    if any(v is None for v in (exp_bits, clz, band, lrs, norm_mask, sub_norm)) or \
            not _same(sub_norm.operands[1], z):
        return None
    norm_bits = _scalar(sub_norm.operands[0])
    s = clz.operands[0]
    if norm_bits is None or not _same(lrs.operands[0], s):
        return None
    ops += [sub_exp, clz, band, lrs, sub_norm]
    return s, log_table, exp_bits, exp_mul, exp_shift, norm_bits, norm_mask


def _int8_source(x, ops, inside):
    """x, or the int8 values of an int8 -> int32 CAST (through a reshape, a view) before it that
    only the pattern reads: the kernel reads them directly."""
    source = x
    view = _def(x, tosa.ReshapeOp)
    cast = _def(view.operands[0] if view is not None else x, tosa.CastOp)
    if cast is not None and elem(cast.operands[0]) == "i8" and \
            (view is None or len(users(cast.results[0])) == 1) and \
            all(not isinstance(u, ir.Block) and u.operation in inside for u in users(x)):
        source = cast.operands[0]
        ops += [cast] + ([view] if view is not None else [])
    return source


def convert_log_softmax(op, rw):
    x = op.operands[0]
    if elem(x) != "i32":
        return NO_MATCH
    axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
    m = op.results[0]
    ops = [op]
    # Forward from the max to the rescale: d -> mul -> add -> sub -> sub -> shift -> rescale.
    subs = [u for u in users(m) if isinstance(u, tosa.SubOp)]
    if len(subs) != 1 or len(users(m)) != 1 or not (_same(subs[0].operands[0], m) and _same(subs[0].operands[1], x)):
        return NO_MATCH
    d = subs[0].results[0]
    muls = [u for u in users(d) if isinstance(u, tosa.MulOp)]
    if len(muls) != 1:
        return NO_MATCH
    chain = [muls[0]]
    for cls in (tosa.AddOp, tosa.SubOp, tosa.SubOp, tosa.ArithmeticRightShiftOp, tosa.RescaleOp):
        us = users(chain[-1].results[0])
        if len(us) != 1 or not isinstance(us[0], cls):
            return NO_MATCH
        chain.append(us[0])
    mul_d, add_v, sub_bias, sub_base, shift_op, rescale = chain
    if not (_same(add_v.operands[0], mul_d.results[0]) and _same(sub_bias.operands[0], add_v.results[0])
            and _same(sub_base.operands[1], sub_bias.results[0])
            and _same(shift_op.operands[0], sub_base.results[0])):
        return NO_MATCH
    if "round" in shift_op.attributes and ir.BoolAttr(shift_op.attributes["round"]).value:
        return NO_MATCH
    got = _mul(mul_d.results[0], ops)
    if got is None or not _same(got[0], d):
        return NO_MATCH
    _, diff_mul, diff_shift = got
    bias, base, out_shift = (_scalar(sub_bias.operands[1]), _scalar(sub_base.operands[0]),
                             _scalar(shift_op.operands[1]))
    rs = read_rescale(rescale)
    if any(v is None for v in (bias, base, out_shift)) or rs is None or rs.per_channel or not rs.scale32 or \
            rs.input_zp != 0 or rs.input_unsigned or rs.output_unsigned or elem(rescale.results[0]) != "i8":
        return NO_MATCH
    ops += [subs[0], add_v, sub_bias, sub_base, shift_op, rescale]
    got = _log_of_sum(add_v.operands[1], ops)
    if got is None:
        return NO_MATCH
    s, log_table, exp_bits, exp_mul, exp_shift, norm_bits, norm_mask = got
    reduce_sum = _def(s, tosa.ReduceSumOp)
    if reduce_sum is None or int(ir.IntegerAttr(reduce_sum.attributes["axis"]).value) != axis:
        return NO_MATCH
    ops.append(reduce_sum)
    lookup = _table_lookup(reduce_sum.operands[0], ops)
    if lookup is None or not _same(lookup[1], d):
        return NO_MATCH
    exp_table = lookup[0]
    if shape(exp_table) != shape(log_table) or shape(m) != shape(s) or shape(x) != shape(rescale.results[0]):
        return NO_MATCH
    # Nothing outside the pattern may read an intermediate.
    inside = {o.operation for o in ops}
    for o in ops:
        if o.operation == rescale.operation:
            continue
        if any(isinstance(u, ir.Block) or u.operation not in inside for u in users(o.results[0])):
            return NO_MATCH
    source = _int8_source(x, ops, inside)
    dims = shape(x)
    params = {"outer": int(np.prod(dims[:axis], dtype=np.int64)), "axis_size": dims[axis],
              "inner": int(np.prod(dims[axis + 1:], dtype=np.int64)), "diff_mul": diff_mul, "diff_shift": diff_shift,
              "norm_bits": norm_bits, "norm_mask": norm_mask, "exp_bits": exp_bits,
              "exp_mul": exp_mul, "exp_shift": exp_shift, "bias": bias, "base": base,
              "out_shift": out_shift, "multiplier": rs.multiplier[0], "shift": rs.shift[0],
              "output_zp": rs.output_zp, "double_round": int(rs.double_round)}
    new = make_op(portable.LogSoftmaxOp, [source, exp_table, log_table], rescale.results[0].type, params,
                  before=rescale, loc=ir.Location.fused([o.location for o in ops]),
                        source_op="log_softmax")
    rw.replace(ops, rescale, new)
    return CONVERTED


# -- softmax on arm_softmax_s8 ------------------------------------------------------------------

def _softmax_pattern() -> dict:
    """The frontend's arm_softmax_s8 form (frontend/lowering/cmsis_softmax_graph.py, softmax_s8)."""
    N, s = dag.Node, dag.scalar
    nodes = {
        "mx": N(tosa.ReduceMaxOp, ("$x",)),
        "d": N(tosa.SubOp, ("mx", "$x")),
        "terms": N(tosa.GatherOp, (dag.table("sum_table"), "d")),
        "total": N(tosa.ReduceSumOp, ("terms",)),
        "headroom": N(tosa.ClzOp, ("total",)),
        "bits": N(tosa.SubOp, (s(35), "headroom")),
        "normalised": N(tosa.LogicalLeftShiftOp, ("total", "headroom")),
        "val": N(tosa.BitwiseAndOp, ("normalised", s((1 << 31) - 1))),
        "val_half": N(tosa.ArithmeticRightShiftOp, ("val", s(1)), lambda op: not dag.rounds(op)),
        "half": N(tosa.AddOp, ("val_half", s(1 << 30))),
        "guess": N(tosa.MulOp, ("half", s(1010580540), s(31))),
        "r0": N(tosa.SubOp, (s(1515870810), "guess")),
    }
    for i in (1, 2, 3):
        prev = f"r{i - 1}"
        nodes.update({
            f"t{i}": N(tosa.MulOp, ("half", prev, s(31))),
            f"u{i}": N(tosa.SubOp, (s(1 << 29), f"t{i}")),
            f"abs{i}": N(tosa.AbsOp, (f"u{i}",)),
            f"step{i}": N(tosa.MulOp, (prev, f"abs{i}", s(31))),
            f"neg{i}": N(tosa.GreaterOp, (s(0), f"u{i}")),
            f"minus{i}": N(tosa.SubOp, (s(0), f"step{i}")),
            f"signed{i}": N(tosa.SelectOp, (f"neg{i}", f"minus{i}", f"step{i}")),
            f"times4_{i}": N(tosa.MulOp, (f"signed{i}", s(4), s(0))),
            f"r{i}": N(tosa.AddOp, (prev, f"times4_{i}")),
        })
    nodes.update({
        "capped": N(tosa.MinimumOp, ("r3", s((1 << 30) - 1))),
        "saturates": N(tosa.GreaterOp, ("r3", "capped")),
        "over": N(tosa.CastOp, ("saturates",)),
        "doubled": N(tosa.MulOp, ("capped", s(2), s(0))),
        "reciprocal": N(tosa.AddOp, ("doubled", "over")),
        "exp": N(tosa.GatherOp, (dag.table("exp_table"), "d")),
        "scaled": N(tosa.MulOp, ("exp", "reciprocal", s(31))),
        "y": N(tosa.ArithmeticRightShiftOp, ("scaled", "bits"), dag.rounds),
        "out": N(tosa.RescaleOp, ("y", s(1 << 30), s(30), s(0), s(-128)),
                 lambda op: read_rescale(op) is not None and not read_rescale(op).per_channel
                 and elem(op.results[0]) == "i8"),
    })
    return nodes


_SOFTMAX = _softmax_pattern()


def _on_last_axis(op, x, dims, axis):
    """(kernel input, rows, row size, kernel result type, finish) for a row-wise kernel replacing
    `op` that reduces `x` (viewed as `dims`) along `axis`. Over an inner axis (ResNeSt's split
    attention, SKNet: dim 1 of [B, paths, C]) the axis is moved last by a transpose before the
    kernel and back after it (TOSA ops, converted in turn); finish(kernel op) is the op whose result
    replaces `op`'s."""
    rows = int(np.prod(dims, dtype=np.int64)) // dims[axis]
    if axis == len(dims) - 1:
        return x, rows, dims[axis], op.results[0].type, lambda new: new
    element = ir.RankedTensorType(x.type).element_type
    order = [d for d in range(len(dims)) if d != axis] + [axis]
    moved_dims = [dims[d] for d in order]
    loc = op.location

    def build(cls, dims_out, operands, attributes=None):
        return create(cls, results=[ir.RankedTensorType.get(dims_out, element)], operands=operands,
                      attributes=attributes, loc=loc)

    def transpose(value, perms, dims_out):
        return build(tosa.TransposeOp, dims_out, [value], {"perms": ir.DenseI32ArrayAttr.get(perms)})

    with ir.InsertionPoint(op):
        view = build(tosa.ReshapeOp, dims, [x, make_shape(dims, loc=loc)])
        moved = transpose(view.results[0], order, moved_dims)

    def finish(new):
        with ir.InsertionPoint(op):
            back = transpose(new.results[0], [order.index(d) for d in range(len(dims))], dims)
            out = shape(op.results[0])
            return build(tosa.ReshapeOp, out, [back.results[0], make_shape(out, loc=loc)])
    return moved.results[0], rows, dims[axis], ir.RankedTensorType.get(moved_dims, element), finish


def _match_softmax(op):
    """(match, the cast from the int8 input, the reduced view's dims, axis) of the frontend's
    arm_softmax_s8 form over one axis of an int8 tensor, else None."""
    m = dag.match(_SOFTMAX, "out", op)
    if m is None:
        return None
    x = m.values["$x"]
    dims = shape(m.ops["mx"].operands[0])        # the view the row maximum reduces
    axis = dag.attr_int(m.ops["mx"], "axis")
    if dag.attr_int(m.ops["total"], "axis") != axis:
        return None
    if m.consts["sum_table"].size != 256 or m.consts["exp_table"].size != 256:
        return None
    cast = producer(x)
    if not isinstance(cast, tosa.CastOp) or elem(cast.operands[0]) != "i8":
        return None
    if not dag.inside_only(m, "out", extra=[cast]):
        return None
    return m, cast, dims, axis


def convert_softmax_table(op, rw):
    """The form on one portable kernel that looks the exponentials up (mcu_softmax_s8): the same
    integers as arm_softmax_s8, which computes each exponential twice (with GCC 12.2 without MVE:
    ~25x the instructions). It computes the TOSA form for any tables whose values keep its
    arithmetic in range (non-negative; a row sum below 2**28, so the final shift is at most 31)."""
    found = _match_softmax(op)
    if found is None:
        return NO_MATCH
    m, cast, dims, axis = found
    exp, terms = m.consts["exp_table"].reshape(-1), m.consts["sum_table"].reshape(-1)
    if (exp < 0).any() or (terms < 0).any() or terms[0] <= 0 or int(terms.max()) * dims[axis] >= 1 << 28:
        return NO_MATCH
    ops = dag.absorbed(m, extra=[cast])
    tables = [m.ops["exp"].operands[0], m.ops["terms"].operands[0]]
    x, rows, row, result_type, finish = _on_last_axis(op, cast.operands[0], dims, axis)
    new = make_op(portable.SoftmaxOp, [x, *tables], result_type, {"num_rows": rows, "row_size": row}, before=op,
                  loc=ir.Location.fused([o.location for o in ops]), source_op="softmax")
    rw.replace(ops, op, finish(new))
    return CONVERTED


def convert_softmax(op, rw):
    """arm_softmax_s8 for the frontend's softmax form, when the kernel's arithmetic on this core
    (its exponentials, compared over all 256 differences) is the form's; else per-op kernels. Runs
    with mcu-convert-tosa-to-cmsisnn{softmax=cmsis-nn}, which sets softmax-table aside."""
    if not rw.use_cmsis:
        return NO_MATCH
    found = _match_softmax(op)
    if found is None:
        return NO_MATCH
    m, cast, dims, axis = found
    exp = m.consts["exp_table"].reshape(-1)
    params = cmsis_softmax.recover(exp, mve=rw.core.has_mve)
    if params is None or not np.array_equal(cmsis_softmax.sum_table(exp), m.consts["sum_table"].reshape(-1)):
        return NO_MATCH
    mult, shift, diff_min = params
    ops = dag.absorbed(m, extra=[cast])
    x, rows, row, result_type, finish = _on_last_axis(op, cast.operands[0], dims, axis)
    attrs = {"num_rows": rows, "row_size": row, "mult": mult, "shift": shift, "diff_min": diff_min}
    new = make_op(cmsisnn.SoftmaxOp, [x], result_type, attrs, before=op,
                  loc=ir.Location.fused([o.location for o in ops]), source_op="softmax")
    rw.replace(ops, op, finish(new))
    return CONVERTED


def _softmax16_pattern() -> dict:
    """The frontend's int16 softmax (frontend/lowering/softmax.py, lower_softmax)."""
    N, s = dag.Node, dag.scalar
    return {
        "mx": N(tosa.ReduceMaxOp, ("$x",)),
        "d": N(tosa.SubOp, ("mx", "$x")),
        "centred": N(tosa.SubOp, ("d", s(32768))),
        "index": N(tosa.CastOp, ("centred",), lambda op: elem(op.results[0]) == "i16"),
        "e": N(tosa.TableOp, ("index", dag.table("exp_table"))),
        "total": N(tosa.ReduceSumOp, ("e",)),
        "scaled": N(tosa.MulOp, ("e", s(256), s(0))),
        "den": N(tosa.ArithmeticRightShiftOp, ("total", s(7)), lambda op: not dag.rounds(op)),
        "half": N(tosa.ArithmeticRightShiftOp, ("den", s(1)), lambda op: not dag.rounds(op)),
        "num": N(tosa.AddOp, ("scaled", "half")),
        "r": N(tosa.IntDivOp, ("num", "den")),
        "out": N(tosa.RescaleOp, ("r", s(1 << 30), s(30), s(0), s(0)),
                 lambda op: read_rescale(op) is not None and not read_rescale(op).per_channel
                 and elem(op.results[0]) == "i16"),
    }


_SOFTMAX16 = _softmax16_pattern()


def convert_softmax_s16(op, rw):
    """The int16 softmax on one portable kernel (mcu_softmax_s16), where its tables keep the
    arithmetic in range (non-negative exponentials, e(0) > 0: a row sum >= 2**7)."""
    m = dag.match(_SOFTMAX16, "out", op)
    if m is None:
        return NO_MATCH
    x = m.values["$x"]
    dims = shape(m.ops["mx"].operands[0])
    axis = dag.attr_int(m.ops["mx"], "axis")
    if dag.attr_int(m.ops["total"], "axis") != axis:
        return NO_MATCH
    table = m.consts["exp_table"].reshape(-1)
    cast = producer(x)
    if table.size != 513 or (table < 0).any() or int(table[256]) * 128 < 1 << 8 or \
            int(table.max()) * 128 * dims[axis] >= 1 << 31:
        return NO_MATCH
    if not isinstance(cast, tosa.CastOp) or elem(cast.operands[0]) != "i16" or \
            not dag.inside_only(m, "out", extra=[cast]):
        return NO_MATCH
    ops = dag.absorbed(m, extra=[cast])
    x, rows, row, result_type, finish = _on_last_axis(op, cast.operands[0], dims, axis)
    new = make_op(portable.Softmax16Op, [x, m.ops["e"].operands[1]], result_type,
                  {"num_rows": rows, "row_size": row}, before=op,
                  loc=ir.Location.fused([o.location for o in ops]), source_op="softmax")
    rw.replace(ops, op, finish(new))
    return CONVERTED


# -- int16 softmax in arm_softmax_s16's arithmetic ----------------------------------------------

def _softmax16_cmsis_pattern(scaling: str) -> dict:
    """The frontend's arm_softmax_s16 form (frontend/lowering/cmsis_softmax_graph.py, softmax_s16); its
    requantize of x - max has one of three shapes: a left shift first ("left"), none, or the
    negated half-up right shift after the multiply ("right")."""
    N, s = dag.Node, dag.scalar
    nodes = {"mx": N(tosa.ReduceMaxOp, ("$x",)), "diff": N(tosa.SubOp, ("$x", "mx"))}
    scaled_from = "diff"
    if scaling == "left":
        nodes["pre"] = N(tosa.MulOp, ("diff", dag.table("left"), s(0)))
        scaled_from = "pre"
    if scaling == "right":
        nodes.update({
            "product": N(tosa.MulOp, (scaled_from, dag.table("mult"), s(31))),
            "negated": N(tosa.SubOp, (s(0), "product")),
            "negated_shifted": N(tosa.ArithmeticRightShiftOp, ("negated", dag.table("right")), dag.rounds),
            "scaled": N(tosa.SubOp, (s(0), "negated_shifted")),
        })
    else:
        nodes["scaled"] = N(tosa.MulOp, (scaled_from, dag.table("mult"), s(31)))

    def wrap16(prefix, source):
        return {f"{prefix}_up": N(tosa.AddOp, (source, s(32768))),
                f"{prefix}_low": N(tosa.BitwiseAndOp, (f"{prefix}_up", s(0xFFFF))),
                prefix: N(tosa.SubOp, (f"{prefix}_low", s(32768)))}
    i16 = lambda op: elem(op.results[0]) == "i16"   # noqa: E731
    nodes.update({
        "biased": N(tosa.AddOp, ("scaled", s(32767))),
        "sym": N(tosa.MaximumOp, ("biased", s(-32768))),
        "sym16": N(tosa.CastOp, ("sym",), i16),
        "e_looked": N(tosa.TableOp, ("sym16", dag.table("exp_lut"))),
        "e": N(tosa.ArithmeticRightShiftOp, ("e_looked", s(7)), dag.rounds),
        "total": N(tosa.ReduceSumOp, ("e",)),
        "headroom": N(tosa.ClzOp, ("total",)),
        "headroom_1": N(tosa.SubOp, ("headroom", s(1))),
        "normalised": N(tosa.LogicalLeftShiftOp, ("total", "headroom_1")),
        "shifted": N(tosa.ArithmeticRightShiftOp, ("normalised", s(14)), dag.rounds),
        "centred": N(tosa.SubOp, ("shifted", s(98304))),
        **wrap16("index", "centred"),
        "index16": N(tosa.CastOp, ("index",), i16),
        "r_looked": N(tosa.TableOp, ("index16", dag.table("one_by_one_lut"))),
        "r": N(tosa.ArithmeticRightShiftOp, ("r_looked", s(7)), dag.rounds),
        "product_er": N(tosa.MulOp, ("e", "r", s(0))),
        "right_shift": N(tosa.SubOp, (s(30), "headroom")),
        "y_floor": N(tosa.ArithmeticRightShiftOp, ("product_er", "right_shift"), lambda op: not dag.rounds(op)),
        "y_rounded": N(tosa.ArithmeticRightShiftOp, ("y_floor", s(1)), dag.rounds),
        **wrap16("y", "y_rounded"),
        "out": N(tosa.RescaleOp, ("y", s(1 << 30), s(30), s(0), s(0)),
                 lambda op: read_rescale(op) is not None and not read_rescale(op).per_channel and i16(op)),
    })
    return nodes


_SOFTMAX16_CMSIS = {kind: _softmax16_cmsis_pattern(kind) for kind in ("left", "none", "right")}


def _lut_fits(table: np.ndarray) -> bool:
    """The kernel's int16 arithmetic equals the TABLE's wider one: int16 entries whose neighbours
    differ by an int16 (so each interpolated value lies between them)."""
    t = table.astype(np.int64).reshape(-1)
    return t.size == 513 and t.min() >= -32768 and t.max() <= 32767 and np.abs(np.diff(t)).max() <= 32767


def _match_softmax16_cmsis(op):
    """(match, the int16 -> int32 cast, the reduced view's dims, axis, mult, shift) of the
    arm_softmax_s16 form over one axis, where the kernel computes its integers; else None."""
    for kind, nodes in _SOFTMAX16_CMSIS.items():
        m = dag.match(nodes, "out", op)
        if m is not None:
            break
    else:
        return None
    dims = shape(m.ops["mx"].operands[0])
    axis = dag.attr_int(m.ops["mx"], "axis")
    if dag.attr_int(m.ops["total"], "axis") != axis or dims[axis] < 2:
        return None
    c = m.consts
    values = [c[k].reshape(-1) for k in ("mult", "left", "right") if k in c]
    if any(v.size != 1 for v in values):
        return None
    mult = int(c["mult"].reshape(-1)[0])
    shift = 0
    if kind == "left":
        left = int(c["left"].reshape(-1)[0])
        if left <= 1 or left & (left - 1) or left > 1 << 15:
            return None
        shift = left.bit_length() - 1
    elif kind == "right":
        shift = -int(c["right"].reshape(-1)[0])
        if not -31 <= shift < 0:
            return None
    exp, obo = c["exp_lut"], c["one_by_one_lut"]
    # Exponentials >= 1 keep a row sum >= 2 (the final shift is >= 0), < 2**31 for rows < 2**16.
    if mult <= 0 or not (_lut_fits(exp) and _lut_fits(obo)) or exp.min() < 1 or dims[axis] >= 1 << 16:
        return None
    cast = producer(m.values["$x"])
    if not isinstance(cast, tosa.CastOp) or elem(cast.operands[0]) != "i16" or \
            not dag.inside_only(m, "out", extra=[cast]):
        return None
    return m, cast, dims, axis, mult, shift


def _convert_softmax16_cmsis(op, rw, kernel):
    found = _match_softmax16_cmsis(op)
    if found is None:
        return NO_MATCH
    m, cast, dims, axis, mult, shift = found
    ops = dag.absorbed(m, extra=[cast])
    tables = [m.ops["e_looked"].operands[1], m.ops["r_looked"].operands[1]]
    x, rows, row, result_type, finish = _on_last_axis(op, cast.operands[0], dims, axis)
    new = make_op(kernel, [x, *tables], result_type, {"num_rows": rows, "row_size": row, "mult": mult,
                                                      "shift": shift}, before=op,
                  loc=ir.Location.fused([o.location for o in ops]), source_op="softmax")
    rw.replace(ops, op, finish(new))
    return CONVERTED


def convert_softmax16_cmsis(op, rw):
    """arm_softmax_s16 for the frontend's form of it (plain C in CMSIS-NN: the same integers on
    every core)."""
    if not rw.use_cmsis:
        return NO_MATCH
    return _convert_softmax16_cmsis(op, rw, cmsisnn.Softmax16Op)


def convert_softmax16_lut(op, rw):
    """The same form on mcu_softmax_s16_lut (arm_softmax_s16's algorithm) without CMSIS-NN."""
    return _convert_softmax16_cmsis(op, rw, portable.Softmax16LutOp)


PATTERNS = [("log-softmax", tosa.ReduceMaxOp, convert_log_softmax, UNIT),
            ("softmax-s16-cmsis", tosa.RescaleOp, convert_softmax16_cmsis, UNIT),
            ("softmax-s16-lut", tosa.RescaleOp, convert_softmax16_lut, UNIT),
            ("softmax-s16", tosa.RescaleOp, convert_softmax_s16, UNIT),
            ("softmax-table", tosa.RescaleOp, convert_softmax_table, UNIT),
            ("softmax-s8", tosa.RescaleOp, convert_softmax, UNIT)]

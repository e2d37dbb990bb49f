"""Elementwise ops: fused int8 add / mul units, then one portable kernel per remaining TOSA op."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..._mlir import ir, tosa
from ..base import PassError
from ...dialects import cmsisnn, portable
from .common import (UNIT, CONVERTED, DTYPES, NO_MATCH, const_array, const_scalar, elem, follow_requant_tail,
                     fused_location, make_const, make_op, pattern_name, producer, read_rescale, shape,
                     single_user)
from ...ir.ops import op_class

# TOSA op class -> portable.binary / portable.unary kind.
_BINARY = {
    tosa.AddOp: "add", tosa.SubOp: "sub", tosa.MulOp: "mul", tosa.MaximumOp: "maximum",
    tosa.MinimumOp: "minimum", tosa.EqualOp: "equal", tosa.GreaterOp: "greater",
    tosa.GreaterEqualOp: "greater_equal", tosa.BitwiseAndOp: "bitwise_and",
    tosa.BitwiseOrOp: "bitwise_or", tosa.BitwiseXorOp: "bitwise_xor", tosa.LogicalAndOp: "logical_and",
    tosa.LogicalOrOp: "logical_or", tosa.LogicalXorOp: "logical_xor",
    tosa.LogicalLeftShiftOp: "shift_left", tosa.LogicalRightShiftOp: "shift_right_logical",
    tosa.ArithmeticRightShiftOp: "shift_right", tosa.IntDivOp: "intdiv", tosa.PowOp: "pow",
}
_UNARY = {tosa.AbsOp: "abs", tosa.NegateOp: "negate", tosa.BitwiseNotOp: "bitwise_not",
          tosa.LogicalNotOp: "logical_not", tosa.ClzOp: "clz"}


def _dtype(op, value) -> str:
    et = elem(value)
    if et not in DTYPES:
        raise PassError(op, f"'{op.operation.name}' on {et} has no kernel (integer types only)")
    return DTYPES[et]


# -- fused int8 add / mul ---------------------------------------------------------------------

def _input_rescale(value):
    """A tosa.rescale i8 -> i32 (one per tensor, output zp 0) feeding only this op."""
    op = producer(value)
    rs = read_rescale(op)
    if rs is None or elem(op.operands[0]) != "i8" or rs.per_channel or rs.output_zp != 0:
        return None
    if len(list(op.results[0].uses)) != 1:
        return None
    return rs


def _exact_left_shift(rs) -> int | None:
    """L when the rescale computes exactly (x - zp) << L (multiplier 2^30, shift 30 - L)."""
    if rs.multiplier[0] != 1 << 30 or not 0 <= 30 - rs.shift[0] <= 24:
        return None
    return 30 - rs.shift[0]


@dataclasses.dataclass
class _AddInput:
    """One operand of an int8 add in CMSIS-NN terms: ((x + offset) << left_shift) requantized."""
    ops: list
    source: object
    offset: int
    left_shift: int
    rescale: object  # the scaling rescale (multiplier / shift applied to the shifted value)
    max_abs: int = 255  # largest |x + offset| before the shift
    views: bool = False  # reached through a reshape (then only same-shape operands fuse)

    def bound(self) -> int:
        """A bound on the magnitude of the scaled operand."""
        m, s = self.rescale.multiplier[0], self.rescale.shift[0]
        return ((self.max_abs << self.left_shift) * m >> s) + 1


def _s16_add_input(value):
    """rescale(logical_left_shift(cast(x : i16 -> i32), L)): the int16 form of an add operand."""
    second = read_rescale(producer(value))
    if second is None or second.per_channel or second.input_zp != 0 or second.output_zp != 0 \
            or len(list(second.op.results[0].uses)) != 1:
        return None
    shift_op = producer(second.op.operands[0])
    if shift_op is None or not isinstance(shift_op, tosa.LogicalLeftShiftOp) \
            or len(list(shift_op.results[0].uses)) != 1:
        return None
    amount = const_array(shift_op.operands[1])
    cast_op = producer(shift_op.operands[0])
    if amount is None or amount.size != 1 or cast_op is None or not isinstance(cast_op, tosa.CastOp) \
            or elem(cast_op.operands[0]) != "i16":
        return None
    left = int(amount.reshape(-1)[0])
    if not 0 <= left <= 15:
        return None
    # A residual's widening is often shared with the norm that reads the same value: it stays for them.
    shared = len(list(cast_op.results[0].uses)) != 1
    return _AddInput(([] if shared else [cast_op]) + [shift_op, second.op], cast_op.operands[0], 0, left, second,
                     32768)


def _through_reshape(value):
    """The value under a single-use reshape (same elements, same order), and that reshape."""
    op = producer(value)
    if op is not None and isinstance(op, tosa.ReshapeOp) and len(list(op.results[0].uses)) == 1:
        return op.operands[0], [op]
    return value, []


def _add_input(value, direct=None):
    """Either one rescale i8 -> i32, or an exact widening (x - zp) << L then an i32 rescale
    (the TFLite form of an int8 add; `direct` = _s16_add_input: of an int16 add), possibly seen
    through a reshape."""
    value, views = _through_reshape(value)
    found = (direct or _add_input_direct)(value)
    if found is not None:
        found.ops = views + found.ops
        found.views = bool(views)
    return found


def _add_input_direct(value):
    rs = _input_rescale(value)
    if rs is None:
        second = read_rescale(producer(value))
        if second is None or elem(second.op.operands[0]) != "i32" or second.per_channel \
                or second.input_zp != 0 or second.output_zp != 0 or len(list(second.op.results[0].uses)) != 1:
            return None
        first = _input_rescale(second.op.operands[0])
        shift = _exact_left_shift(first) if first is not None else None
        if shift is None:
            return None
        return _AddInput([first.op, second.op], first.op.operands[0], -first.input_zp, shift, second)
    return _AddInput([rs.op], rs.op.operands[0], -rs.input_zp, 0, rs)


def convert_add_unit(op, rw):
    if elem(op.results[0]) != "i32":
        return NO_MATCH
    a, b = _add_input(op.operands[0]), _add_input(op.operands[1])
    out_elem = "i8"
    if a is None and b is None:
        a, b = _add_input(op.operands[0], _s16_add_input), _add_input(op.operands[1], _s16_add_input)
        out_elem = "i16"
    tail = follow_requant_tail(op, out_elem)
    if a is None or b is None or tail is None or a.ops[0] == b.ops[0]:
        return NO_MATCH
    if a.left_shift != b.left_shift:
        return NO_MATCH  # CMSIS-NN takes one left shift for both operands
    same_shape = shape(op.operands[0]) == shape(op.operands[1])
    if (a.views or b.views) and not same_shape:
        return NO_MATCH
    rs, last, act = tail
    if out_elem == "i16" and rs.output_zp != 0:
        return NO_MATCH
    shifted = a.max_abs << a.left_shift
    if rs.per_channel or not a.rescale.requantize_exact(shifted) or not b.rescale.requantize_exact(shifted):
        return NO_MATCH
    if not rs.requantize_exact(a.bound() + b.bound()):
        return NO_MATCH
    (m1, *_), (s1, *_) = a.rescale.cmsis_requantize()
    (m2, *_), (s2, *_) = b.rescale.cmsis_requantize()
    (m_out, *_), (s_out, *_) = rs.cmsis_requantize()
    params = {"input1_offset": a.offset, "input1_multiplier": m1, "input1_shift": s1,
              "input2_offset": b.offset, "input2_multiplier": m2, "input2_shift": s2,
              "left_shift": a.left_shift, "output_offset": rs.output_zp,
              "output_multiplier": m_out, "output_shift": s_out, "activation": act}
    return _fused_binary(op, rw, "add", a.ops + b.ops, [a.source, b.source], rs, last, params,
                         suffix="s16" if out_elem == "i16" else "s8", broadcast=not same_shape)


def convert_mul_unit(op, rw):
    if elem(op.results[0]) != "i32":
        return NO_MATCH
    if const_scalar(op.operands[2]) != 0:
        return NO_MATCH
    first = read_rescale(producer(_through_reshape(op.operands[0])[0]))
    in_elem = elem(first.op.operands[0]) if first is not None else None
    if in_elem not in ("i8", "i16"):
        return NO_MATCH
    tail = follow_requant_tail(op, in_elem)
    if tail is None:
        return NO_MATCH
    square = op.operands[0] == op.operands[1]
    offsets, feeder_ops, sources, viewed = [], [], [], False
    for v in op.operands[: 1 if square else 2]:
        v, views = _through_reshape(v)
        rs_in = read_rescale(producer(v))
        uses = len(list(rs_in.op.results[0].uses)) if rs_in is not None else 0
        if rs_in is None or elem(rs_in.op.operands[0]) != in_elem or rs_in.per_channel \
                or rs_in.output_zp != 0 or uses != (2 if square and not views else 1) \
                or rs_in.multiplier[0] != 1 << rs_in.shift[0]:
            return NO_MATCH
        offsets.append(-rs_in.input_zp)  # an exact widening: x - zp
        feeder_ops += views + [rs_in.op]
        sources.append(rs_in.op.operands[0])
        viewed |= bool(views)
    if square:
        if viewed:
            return NO_MATCH
        offsets, sources = offsets * 2, sources * 2
    same_shape = shape(op.operands[0]) == shape(op.operands[1])
    if viewed and not same_shape:
        return NO_MATCH
    rs, last, act = tail
    bound = 256 * 256 if in_elem == "i8" else 1 << 30
    if rs.per_channel or not rs.requantize_exact(bound):
        return NO_MATCH
    if in_elem == "i16" and (any(offsets) or rs.output_zp != 0):
        return NO_MATCH  # int16 tensors are symmetric (zero point 0) in TOSA and CMSIS-NN
    (m_out, *_), (s_out, *_) = rs.cmsis_requantize()
    params = {"input1_offset": offsets[0], "input2_offset": offsets[1],
              "output_offset": rs.output_zp, "output_multiplier": m_out,
              "output_shift": s_out, "activation": act}
    return _fused_binary(op, rw, "mul", feeder_ops, sources, rs, last, params, broadcast=not same_shape,
                         suffix="s16" if in_elem == "i16" else "s8")


def _leading_repeat(op) -> bool:
    """One operand has the output's shape; the other repeats over its leading dimensions only."""
    out = shape(op.results[0])
    shapes = [shape(op.operands[0]), shape(op.operands[1])]
    if out not in shapes:
        return False
    small = shapes[1] if shapes[0] == out else shapes[0]
    k = 0
    while k < len(small) and small[k] == 1:
        k += 1
    return small[k:] == out[k:] and k > 0


def _fused_binary(op, rw, kind, feeder_ops, inputs, rs, last, params, suffix="s8", broadcast=False):
    ops = list(feeder_ops) + [op, rs.op] + ([last] if last is not rs.op else [])
    loc = fused_location(ops)
    source = "+".join(o.operation.name for o in ops)
    # CMSIS-NN's elementwise kernels do not broadcast; a repeat over leading dimensions (a
    # per-channel vector times every pixel, as in squeeze-excite) is a loop of calls, one per block.
    if rw.use_cmsis and (not broadcast or _leading_repeat(op)):
        cls = cmsisnn.AddOp if kind == "add" else cmsisnn.MulOp
    else:
        cls = portable.ElementwiseAddOp if kind == "add" else portable.ElementwiseMulOp
    new = make_op(cls, inputs, last.results[0].type, params, before=op, loc=loc, source_op=source)
    rw.replace(ops, last, new)
    return CONVERTED


# -- one kernel per op ------------------------------------------------------------------------

def convert_binary(op, rw):
    a, b = op.operands[0], op.operands[1]
    shift = 0
    if isinstance(op, tosa.MulOp):
        s = const_scalar(op.operands[2])
        if s is None:
            raise PassError(op, "'tosa.mul' needs a constant shift")
        shift = s
    kind = _BINARY[op_class(op)]
    if isinstance(op, tosa.ArithmeticRightShiftOp) and "round" in op.attributes and \
            str(op.attributes["round"]) == "true":
        kind = "shift_right_round"
    out = op.results[0]
    _dtype(op, a), _dtype(op, out)
    return rw.convert(op, portable.BinaryOp, [a, b], {"kind": kind, "shift": shift})


def convert_unary(op, rw):
    izp = ozp = 0
    if isinstance(op, tosa.NegateOp):
        izp, ozp = const_scalar(op.operands[1]), const_scalar(op.operands[2])
    a = op.operands[0]
    _dtype(op, a)
    params = {"kind": _UNARY[op_class(op)], "input_zp": izp or 0, "output_zp": ozp or 0}
    return rw.convert(op, portable.UnaryOp, [a], params)


def convert_select(op, rw):
    cond, a, b = op.operands
    out = op.results[0]
    _dtype(op, a), _dtype(op, out)
    return rw.convert(op, portable.SelectOp, [cond, a, b], {})


def convert_rescale(op, rw):
    rs = read_rescale(op)
    if rs is None:
        raise PassError(op, "'tosa.rescale' needs constant multiplier, shift and zero points")
    inp, out = op.operands[0], op.results[0]
    _dtype(op, inp), _dtype(op, out)
    params = {**_rescale_params(rs), "input_unsigned": int(rs.input_unsigned),
              "output_unsigned": int(rs.output_unsigned)}
    return rw.convert(op, portable.RescaleOp, [inp], params)


def convert_clamp(op, rw):
    a = op.operands[0]
    lo = int(ir.IntegerAttr(op.attributes["min_val"]).value)
    hi = int(ir.IntegerAttr(op.attributes["max_val"]).value)
    _dtype(op, a)
    return rw.convert(op, portable.ClampOp, [a], {"min": lo, "max": hi})


def convert_cast(op, rw):
    a, out = op.operands[0], op.results[0]
    _dtype(op, a), _dtype(op, out)
    return rw.convert(op, portable.CastOp, [a], {})


def _rescale_params(rs) -> dict:
    return {"input_zp": rs.input_zp, "output_zp": rs.output_zp, "multiplier": rs.multiplier,
            "shift": rs.shift, "scale32": int(rs.scale32), "double_round": int(rs.double_round),
            "per_channel": int(rs.per_channel)}


def convert_table_s16_unit(op, rw):
    """An int16 TABLE (int32 out) and the RESCALE back to int16 after it, as one kernel."""
    a, table = op.operands[0], op.operands[1]
    if elem(a) != "i16" or const_array(table) is None:
        return NO_MATCH
    user = single_user(op, tosa.RescaleOp)
    rs = read_rescale(user)
    if rs is None or elem(user.results[0]) != "i16" or rs.input_unsigned or rs.output_unsigned:
        return NO_MATCH
    new = make_op(portable.TableRescaleOp, [a, table], user.results[0].type, _rescale_params(rs),
                  before=op, loc=fused_location([op, user]), source_op="tosa.table+tosa.rescale")
    rw.replace([op, user], user, new)
    return CONVERTED


def _apply_scale_32(value: np.ndarray, multiplier: int, shift: int, double_round: bool) -> np.ndarray:
    """TOSA's apply_scale_32 on int64 values (lib/portable/nn.c's mcu_tosa_apply_scale_32)."""
    value = value.astype(np.int64)
    round_ = np.full_like(value, 1 << (shift - 1))
    if double_round and shift > 31:
        round_ += np.where(value >= 0, 1 << 30, -(1 << 30))
    return np.clip((value * multiplier + round_) >> shift, -2 ** 31, 2 ** 31 - 1)


def _s8_to_s16_table(rs, values: np.ndarray) -> np.ndarray | None:
    """The int16 results of the int8 -> int16 RESCALE `rs` of `values` (int8), or None where the
    rescale is not one scale of signed values."""
    if rs is None or rs.per_channel or not rs.scale32 or rs.input_unsigned or rs.output_unsigned:
        return None
    scaled = _apply_scale_32(values.astype(np.int64) - rs.input_zp, rs.multiplier[0], rs.shift[0], rs.double_round)
    return np.clip(scaled + rs.output_zp, -32768, 32767).astype(np.int16)


def _lookup_s8_s16(ops, a, entries, result_type, rw):
    """`ops` (ending in an int8 -> int16 RESCALE) as one lookup of `a` in the 256 int16 `entries`."""
    last = ops[-1]
    table = make_const(entries, before=ops[0], loc=last.location)
    new = make_op(portable.TableOp, [a, table], result_type, {}, before=ops[0], loc=fused_location(ops),
                  source_op="+".join(o.operation.name for o in ops))
    rw.replace(ops, last, new)
    return CONVERTED


def convert_table_s8_rescale_s16(op, rw):
    """An int8 TABLE and the RESCALE of its result to int16 (an int8 part requantized into an int16
    output concat): one lookup in the 256 results composed at compile time."""
    a, table = op.operands[0], op.operands[1]
    values = const_array(table)
    if elem(a) != "i8" or values is None:
        return NO_MATCH
    user = single_user(op, tosa.RescaleOp)
    if user is None or elem(user.results[0]) != "i16":
        return NO_MATCH
    entries = _s8_to_s16_table(read_rescale(user), values.reshape(-1))
    if entries is None:
        return NO_MATCH
    return _lookup_s8_s16([op, user], a, entries, user.results[0].type, rw)


def convert_rescale_s8_s16(op, rw):
    """An int8 -> int16 RESCALE of one scale: a lookup in its 256 results (a few instructions an
    element, not a 64-bit product)."""
    a = op.operands[0]
    if elem(a) != "i8" or elem(op.results[0]) != "i16":
        return NO_MATCH
    entries = _s8_to_s16_table(read_rescale(op), np.arange(-128, 128))
    if entries is None:
        return NO_MATCH
    return _lookup_s8_s16([op], a, entries, op.results[0].type, rw)


def convert_table(op, rw):
    a, table = op.operands[0], op.operands[1]
    if const_array(table) is None:
        raise PassError(op, "'tosa.table' needs a constant table")
    et = elem(a)
    if et not in ("i8", "i16"):
        raise PassError(op, f"'tosa.table' on {et} has no kernel")
    return rw.convert(op, portable.TableOp, [a, table], {})


PATTERNS = [
    ("add-s8", tosa.AddOp, convert_add_unit, UNIT),
    ("mul-s8", tosa.MulOp, convert_mul_unit, UNIT),
    *[(pattern_name(cls), cls, convert_binary) for cls in _BINARY],
    *[(pattern_name(cls), cls, convert_unary) for cls in _UNARY],
    ("select", tosa.SelectOp, convert_select),
    ("rescale-s8-s16", tosa.RescaleOp, convert_rescale_s8_s16),
    ("rescale", tosa.RescaleOp, convert_rescale),
    ("clamp", tosa.ClampOp, convert_clamp),
    ("cast", tosa.CastOp, convert_cast),
    ("table-s16-rescale", tosa.TableOp, convert_table_s16_unit, UNIT),
    ("table-s8-rescale-s16", tosa.TableOp, convert_table_s8_rescale_s16, UNIT),
    ("table", tosa.TableOp, convert_table),
]


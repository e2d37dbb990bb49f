"""The frontend's integer hypot (a magnitude, frontend/lowering/elementwise.py's _lower_hypot),
matched whole onto one portable kernel (mcu_hypot): its ~17 TOSA ops per element are one loop.

    d_a = rescale(a, 2**30, 30, a_zp, 0)      d_b likewise (x - zp, exact; int16 a clamped first)
    total = d_a * d_a + d_b * d_b             even = (clz(total) - 1) & -2
    root = (table(cast16((total << even) >> 16 - 16384)) rescaled by (multiplier, shift))
    y = select(total == 0, 0, root >> (even / 2 + headroom), rounding)   out = y + output_zp
"""

from __future__ import annotations

from ..._mlir import ir, tosa
from ...dialects import portable
from ...ir.ops import isa
from . import dag_pattern as dag
from .common import UNIT, CONVERTED, NO_MATCH, elem, make_op, read_rescale, shape


def _plain_rescale(op) -> bool:
    rs = read_rescale(op)
    return rs is not None and not rs.per_channel and rs.scale32 and rs.double_round and \
        not rs.input_unsigned and not rs.output_unsigned


def _pattern() -> dict:
    N, s = dag.Node, dag.scalar
    widened = lambda op: _plain_rescale(op) and elem(op.results[0]) == "i32"   # noqa: E731
    return {
        "da": N(tosa.RescaleOp, ("$a", s(1 << 30), s(30), dag.table("a_zp"), s(0)), widened),
        "db": N(tosa.RescaleOp, ("$b", s(1 << 30), s(30), dag.table("b_zp"), s(0)), widened),
        "sa": N(tosa.MulOp, ("da", "da", s(0))),
        "sb": N(tosa.MulOp, ("db", "db", s(0))),
        "total": N(tosa.AddOp, ("sa", "sb")),
        "clz": N(tosa.ClzOp, ("total",)),
        "clz_1": N(tosa.SubOp, ("clz", s(1))),
        "even": N(tosa.BitwiseAndOp, ("clz_1", s(-2))),
        "normalised": N(tosa.LogicalLeftShiftOp, ("total", "even")),
        "top": N(tosa.LogicalRightShiftOp, ("normalised", s(16))),
        "index": N(tosa.SubOp, ("top", s(16384))),
        "index16": N(tosa.CastOp, ("index",), lambda op: elem(op.results[0]) == "i16"),
        "root": N(tosa.TableOp, ("index16", dag.table("table"))),
        "scaled": N(tosa.RescaleOp, ("root", dag.table("multiplier"), dag.table("shift"), s(0), s(0)), widened),
        "half": N(tosa.ArithmeticRightShiftOp, ("even", s(1)), lambda op: not dag.rounds(op)),
        "shift": N(tosa.AddOp, ("half", dag.table("headroom"))),
        "y": N(tosa.ArithmeticRightShiftOp, ("scaled", "shift"), dag.rounds),
        "zero": N(tosa.EqualOp, ("total", s(0))),
        "kept": N(tosa.SelectOp, ("zero", s(0), "y")),
        "out": N(tosa.RescaleOp, ("kept", s(1 << 30), s(30), s(0), dag.table("output_zp")),
                 lambda op: _plain_rescale(op) and elem(op.results[0]) in ("i8", "i16")),
    }


_HYPOT = _pattern()


def convert_hypot(op, rw):
    m = dag.match(_HYPOT, "out", op)
    if m is None:
        return NO_MATCH
    c = {k: v.reshape(-1) for k, v in m.consts.items()}
    (a, clamp_a), (b, clamp_b) = (_unclamped(m.values[v], c[zp]) for v, zp in (("$a", "a_zp"), ("$b", "b_zp")))
    out_shape = shape(op.results[0])
    if shape(a) != out_shape or shape(b) != out_shape or elem(a) != elem(b) or elem(a) not in ("i8", "i16"):
        return NO_MATCH
    if any(c[k].size != 1 for k in ("a_zp", "b_zp", "multiplier", "shift", "headroom", "output_zp")) or \
            c["table"].size != 513 or not 0 <= int(c["headroom"][0]) <= 16:
        return NO_MATCH
    # The kernel reads a and b only: intermediates another computation shares stay for it.
    ops = dag.dead_once_replaced(m, "out")
    attrs = {"a_zp": int(c["a_zp"][0]), "b_zp": int(c["b_zp"][0]), "multiplier": int(c["multiplier"][0]),
             "shift": int(c["shift"][0]), "headroom": int(c["headroom"][0]), "output_zp": int(c["output_zp"][0])}
    new = make_op(portable.HypotOp, [a, b, m.ops["root"].operands[1]], op.results[0].type, attrs, before=op,
                  loc=ir.Location.fused([o.location for o in ops]), source_op="hypot")
    rw.replace(ops, op, new)
    rw.erase(*[cl for cl in {clamp_a, clamp_b} - {None} if not list(cl.results[0].uses)])
    return CONVERTED


def _unclamped(value, zp):
    """(x, the clamp) when `value` is the frontend's clamp of an int16 input to |x - zp| <= 32767
    (mcu_hypot clamps x - zp alike), else (value, None)."""
    clamp = value.owner
    if not isa(clamp, tosa.ClampOp) or elem(value) != "i16" or zp.size != 1:
        return value, None
    lo, hi = (int(ir.IntegerAttr(clamp.attributes[k]).value) for k in ("min_val", "max_val"))
    if (lo, hi) != (max(-32768, int(zp[0]) - 32767), min(32767, int(zp[0]) + 32767)):
        return value, None
    return clamp.operands[0], clamp


PATTERNS = [("hypot", tosa.RescaleOp, convert_hypot, UNIT)]

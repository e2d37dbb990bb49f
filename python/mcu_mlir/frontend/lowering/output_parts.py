"""A graph output that is a concat whose parts keep their own quantization (frontend/quantize/concat_parts.py).

The quantizer leaves such a concat (and the concats opened inside it) unannotated, so in the
converted graph it reads each part through the dequantize of the part's own parameters and its
result is float: the lowering concatenates the parts' integers as they are and describes the
result part by part, ((start, stop, scale, zero point), ...) along the concat's dim. Parts of
different widths (an int16 part beside int8 ones, with --int16-layers) meet in the widest: an
int8 part becomes q - zero point in int16 at its own scale (exact)."""

from __future__ import annotations

import torch

from ...diagnostics import UserError
from ..graph.nodes import aten, describe
from .values import DQ, Pending, Q

_CATS = (aten.cat.default, aten.concat.default)


def _dim(node: torch.fx.Node) -> int:
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    return dim % node.meta["val"].dim()


def is_parted_output(value) -> bool:
    """An output value that is such a concat: a float cat the quantizer left pending."""
    return isinstance(value, Pending) and value.node.target in _CATS


def _leaves(lowering, node: torch.fx.Node, dim: int) -> list[Q]:
    """The quantized parts of concat `node` in order, opening the pending concats inside it."""
    out = []
    for t in node.args[0]:
        v = lowering.values.get(t)
        if isinstance(v, DQ):
            out.append(v.q)
        elif isinstance(v, Pending) and v.node.target in _CATS and _dim(v.node) == dim:
            out += _leaves(lowering, v.node, dim)
        else:
            raise UserError(f"{describe(node)}: its operand '{getattr(t, 'name', t)}' is not quantized; an "
                            "output concat whose parts keep their own scales takes quantized parts only")
    return out


def lower_parted_output(lowering, node: torch.fx.Node) -> tuple[Q, tuple]:
    """(the concat of the parts' integers, with scale 0 and zero point 0: no one scale describes
    it; the parts as ((start, stop, scale, zero point), ...) along `dim`, the dim)."""
    dim = _dim(node)
    qs = _leaves(lowering, node, dim)
    widest = "i16" if any(q.elem == "i16" for q in qs) else qs[0].elem
    if any(q.elem not in ("i8", "i16") for q in qs):
        raise UserError(f"{describe(node)}: a part of this output is not an int8 / int16 tensor")
    # int8 -> int16 at the same scale, zero point 0 (TOSA's int16 zero point): q - zp, exact.
    qs = [q if q.elem == widest else lowering.requantize(q, q.scale, 0, widest) for q in qs]
    parts, at = [], 0
    for q in qs:
        size = q.shape[dim]
        parts.append((at, at + size, float(q.scale), int(q.zp)))
        at += size
    return Q(lowering.w.concat([q.v for q in qs], dim), 0.0, 0), (dim, tuple(parts))

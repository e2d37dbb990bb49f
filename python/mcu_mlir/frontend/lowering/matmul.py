"""Matrix products (matmul / bmm) of two quantized tensors."""

from __future__ import annotations

import numpy as np

from ...diagnostics import UserError
from .values import DQ, Const, Q
from ..graph.nodes import aten, describe, shape_of


def _lower_matmul(self, node, ins, scale, zp, elem, clamp):
    """Activation x activation matmul (attention-style): int8 x int8 -> int32 -> rescale."""
    a, b = ins[0], ins[1]
    if not all(isinstance(v, (DQ, Const)) for v in (a, b)):
        return None
    qa, qb = self.operand(a), self.operand(b)
    if qa.elem != qb.elem:       # a mixed-precision boundary: both operands in int16
        qa, qb = (self.requantize(q, q.scale, 0, "i16") if q.elem == "i8" else q for q in (qa, qb))
    if len(qa.shape) < 2 or len(qb.shape) < 2:
        raise UserError(f"{describe(node)}: matmul of a vector is not supported")
    m, k, n = qa.shape[-2], qa.shape[-1], qb.shape[-1]
    rank = max(len(qa.shape), len(qb.shape)) - 2
    batch_a = (1,) * (rank + 2 - len(qa.shape)) + tuple(qa.shape[:-2])
    batch_b = (1,) * (rank + 2 - len(qb.shape)) + tuple(qb.shape[:-2])
    # Batch dims where b is broadcast, innermost first, fold into a's rows: a [.., H, M, K] times
    # b [.., 1, K, N] (multi-query attention's one key head, a weight-like activation) is one
    # product of H*M rows, no copy.
    inner = rank
    while inner > 0 and batch_b[inner - 1] == 1:
        inner -= 1
    rows = m * int(np.prod(batch_a[inner:], dtype=np.int64))
    outer = tuple(max(x, y) for x, y in zip(batch_a[:inner], batch_b[:inner]))
    if any(x not in (1, o) or y not in (1, o) for x, y, o in zip(batch_a, batch_b, outer)):
        raise UserError(f"{describe(node)}: matmul batch dims {batch_a} and {batch_b} do not broadcast")
    batch = int(np.prod(outer, dtype=np.int64))

    def batched(v, dims, tail):
        """v as (batch, *tail), the outer batch dims it broadcasts over tiled (a copy)."""
        v = self.w.reshape(v, dims + tail)
        if dims != outer:
            v = self.w.tile(v, tuple(o // d for o, d in zip(outer, dims)) + (1, 1))
        return self.w.reshape(v, (batch,) + tail)

    a3 = batched(qa.v, batch_a[:inner], (rows, k))
    b3 = batched(qb.v, batch_b[:inner], (k, n))
    acc = self.w.matmul(a3, b3, qa.zp, qb.zp)
    out = Q(self.acc_rescale(acc, [qa.scale * qb.scale / scale], zp, elem), scale, zp)
    self.record_layer(node, "matmul", qa, None, scale, zp, [qb])
    out = self.apply_clamp(out, clamp)
    return Q(self.w.reshape(out.v, shape_of(node)), scale, zp)


LOWER = {aten.matmul.default: _lower_matmul, aten.bmm.default: _lower_matmul}
EAGER = {}

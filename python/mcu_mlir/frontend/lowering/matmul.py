"""Matrix products (matmul / bmm) of two quantized tensors."""

from __future__ import annotations

import numpy as np

from ...diagnostics import UserError
from .values import DQ, Const, Q, aten, describe, shape_of


def _lower_matmul(self, node, ins, scale, zp, elem, clamp):
    """Activation x activation matmul (attention-style): int8 x int8 -> int32 -> rescale."""
    a, b = ins[0], ins[1]
    if not all(isinstance(v, (DQ, Const)) for v in (a, b)):
        return None
    qa, qb = self.operand(a), self.operand(b)
    if qa.elem != qb.elem:       # a mixed-precision boundary: both operands in int16
        qa, qb = (self.requantize(q, q.scale, 0, "i16") if q.elem == "i8" else q for q in (qa, qb))
    ra, rb = len(qa.shape), len(qb.shape)
    if ra < 2 or rb < 2 or qa.shape[:-2] != qb.shape[:-2] and rb != 2:
        raise UserError(f"{describe(node)}: broadcasting matmul is not supported")
    m, k, n = qa.shape[-2], qa.shape[-1], qb.shape[-1]
    batch = int(np.prod(qa.shape[:-2], dtype=np.int64))
    a3 = self.w.reshape(qa.v, (batch, m, k))
    if rb == 2 and batch > 1:
        b3 = self.w.tile(self.w.reshape(qb.v, (1, k, n)), (batch, 1, 1))
    else:
        b3 = self.w.reshape(qb.v, (batch, k, n))
    wide = qa.elem == "i16"       # int16 x int16 accumulates in int48
    acc = self.w.op("tosa.matmul", [a3, b3, self.w.zp(qa.zp, qa.elem), self.w.zp(qb.zp, qb.elem)],
                    (batch, m, n), "i48" if wide else "i32")
    out = Q(self.acc_rescale(acc, [qa.scale * qb.scale / scale], zp, elem), scale, zp)
    self.record_layer(node, "matmul", qa, None, scale, zp, [qb])
    out = self.apply_clamp(out, clamp)
    return Q(self.w.reshape(out.v, shape_of(node)), scale, zp)


LOWER = {aten.matmul.default: _lower_matmul, aten.bmm.default: _lower_matmul}
EAGER = {}

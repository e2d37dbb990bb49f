"""Matrix products (matmul / bmm) of two quantized tensors."""

from __future__ import annotations

import numpy as np

from ...diagnostics import UserError
from ..qmath import quantize_multiplier
from .values import DQ, Const, Q, aten, describe, shape_of


def _lower_matmul(self, node, ins, scale, zp, elem, clamp):
    """Activation x activation matmul (attention-style): int8 x int8 -> int32 -> rescale."""
    a, b = ins[0], ins[1]
    if not all(isinstance(v, (DQ, Const)) for v in (a, b)):
        return None
    qa, qb = self.operand(a), self.operand(b)
    if qa.elem != "i8" or qb.elem != "i8":
        raise UserError(f"{describe(node)}: int16 activation x activation matmul is not supported")
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
    acc = self.w.op("tosa.matmul", [a3, b3, self.w.zp(qa.zp, "i8"), self.w.zp(qb.zp, "i8")],
                    (batch, m, n), "i32")
    mult, shift = quantize_multiplier(qa.scale * qb.scale / scale)
    out = Q(self.w.rescale(acc, [mult], [shift], 0, zp, elem), scale, zp)
    self.record_layer(node, "matmul", qa, None, scale, zp, [qb])
    out = self.apply_clamp(out, clamp)
    return Q(self.w.reshape(out.v, shape_of(node)), scale, zp)


LOWER = {aten.matmul.default: _lower_matmul, aten.bmm.default: _lower_matmul}
EAGER = {}

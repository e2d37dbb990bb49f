"""TFLite's int8 BATCH_MATMUL as TFLite Micro's reference kernel computes it:
  acc = sum_k (lhs - zp_lhs) * (rhs - zp_rhs) in int32, then MultiplyByQuantizedMultiplier by
  double(float32(lhs scale * rhs scale)) / output scale (GetQuantizedConvolutionMultipler's product
  is a float32 one, unlike CONV_2D's), plus the output zero point, clamped to int8.
The TOSA form is matmul -> rescale, the batch dimensions flattened to one: a constant right-hand
side shared by every batch becomes one [1, B * M, K] x [1, K, N] matmul (arm_fully_connected_s8
when its zero point is 0), two activations arm_batch_matmul_s8 (which reads the right-hand side
transposed: adj_y's [.., N, K] is that already). adj_x / adj_y transpose the last two axes:
constants at compile time, activations with a transpose.
"""

from __future__ import annotations

import numpy as np

from ...diagnostics import UserError
from .lower import Lowering
from .reader import Operator, Tensor
from .shape import operand, options


def _matrix(lw: Lowering, op: Operator, t: Tensor, adjoint: bool):
    """`t` as [..., rows, depth] for the left-hand side / [..., depth, cols] for the right, its
    last two axes swapped when `adjoint`."""
    if t.data is not None:
        data = np.swapaxes(t.data, -1, -2) if adjoint else t.data
        return lw.w.const(np.ascontiguousarray(data), t.elem, data.shape)
    v = lw.value(t.index, op)
    if not adjoint:
        return v
    rank = len(t.shape)
    return lw.w.transpose(v, [*range(rank - 2), rank - 1, rank - 2])


def _broadcast(lw: Lowering, v, batch: tuple):
    """v [..., R, C] with its batch axes broadcast to `batch`, as [prod(batch), R, C]."""
    rows, cols = v.shape[-2:]
    own = (1,) * (len(batch) - (len(v.shape) - 2)) + tuple(v.shape[:-2])
    v = lw.w.reshape(v, (*own, rows, cols))
    if own != batch:
        v = lw.w.tile(v, [b // o for b, o in zip(batch, own)] + [1, 1])
    return lw.w.reshape(v, (int(np.prod(batch, dtype=np.int64)), rows, cols))


def _batch_matmul(lw: Lowering, op: Operator):
    o = options(op, AdjX=False, AdjY=False)
    lt, rt = (lw.quantized(op, operand(lw, op, i, role), role) for i, role in ((0, "lhs"), (1, "rhs")))
    out = lw.quantized(op, op.outputs[0], "output")
    for t in (lt, rt):
        if t.quant.per_channel or not 2 <= len(t.shape) <= 5:
            raise UserError(f"{lw.where(op)}: its operand '{t.name}' must be a per-tensor quantized tensor of rank "
                            f"2 to 5 (TFLite Micro's kernel reads one scale and zero point)")
    lhs, rhs = _matrix(lw, op, lt, bool(o["AdjX"])), _matrix(lw, op, rt, bool(o["AdjY"]))
    (m, k), (k_rhs, n) = lhs.shape[-2:], rhs.shape[-2:]
    lb, rb = tuple(lhs.shape[:-2]), tuple(rhs.shape[:-2])
    rank = max(len(lb), len(rb))
    lb, rb = (1,) * (rank - len(lb)) + lb, (1,) * (rank - len(rb)) + rb
    if k != k_rhs or any(a != b and 1 not in (a, b) for a, b in zip(lb, rb)):
        raise UserError(f"{lw.where(op)}: operands {list(lt.shape)} and {list(rt.shape)} (adj_x {bool(o['AdjX'])}, "
                        f"adj_y {bool(o['AdjY'])}) do not multiply")
    batch = tuple(max(a, b) for a, b in zip(lb, rb))
    if all(d == 1 for d in rb):
        # One right-hand side for every batch: the batches are rows of one matrix product.
        a = lw.w.reshape(lhs, (1, int(np.prod(batch, dtype=np.int64)) * m, k))
        b = lw.w.reshape(rhs, (1, k, n))
    else:
        a, b = _broadcast(lw, lhs, batch), _broadcast(lw, rhs, batch)
    acc = lw.w.matmul(a, b, lt.quant.zero_point, rt.quant.zero_point)
    product = float(np.float32(lt.quant.scale) * np.float32(rt.quant.scale))
    y = lw.requantize_accumulator(op, acc, [product / out.quant.scale], out)
    return lw.w.reshape(y, (*batch, m, n))


LOWER = {"BATCH_MATMUL": _batch_matmul}

"""tosa.matmul: fully connected (constant right-hand side) or batch matmul, fused with its requantisation."""

from __future__ import annotations

import numpy as np

from ..._mlir import ir, tosa
from ...dialects import cmsisnn, portable
from ..base import PassError
from ...ir.constants import make_shape
from .common import (CONVERTED, const_array, const_scalar, elem, follow_requant_tail,
                     fused_location, make_const, make_op, per_channel_params,
                     producer, shape, single_user, tensor_type)


def _bias_add(op):
    """An i32 tosa.add of a constant [.., W] bias right after the matmul, if there is one."""
    add = single_user(op, tosa.AddOp)
    if add is None:
        return None, None
    other = add.operands[1] if add.operands[0] == op.results[0] else add.operands[0]
    bias = const_array(other)
    if bias is None:
        return None, None
    width = shape(op.results[0])[-1]
    if bias.size != width or bias.shape[-1] != width:
        return None, None
    return add, bias.reshape(width).astype(np.int32)


def convert_matmul(op, rw):
    a, b, a_zp_v, b_zp_v = op.operands
    if elem(a) not in ("i8", "i16") or elem(a) != elem(b):
        raise PassError(op, f"'tosa.matmul' on {elem(a)} x {elem(b)} has no integer kernel")
    a_zp, b_zp = const_scalar(a_zp_v), const_scalar(b_zp_v)
    if a_zp is None or b_zp is None:
        raise PassError(op, "'tosa.matmul' needs constant zero points")
    batch, m, k = shape(a)
    n = shape(b)[2]
    rhs = const_array(b)
    add, bias = _bias_add(op)
    tail = follow_requant_tail(add if add is not None else op) if elem(a) == "i8" else None
    if tail is not None and not tail[0].requantize_exact():
        tail = None
    if tail is None:
        add, bias = None, None
    ops = [op] + ([add] if add is not None else [])
    if tail is not None:
        rs, last, act = tail
        ops += [rs.op] + ([last] if last is not rs.op else [])
        mult, shift = per_channel_params(rs, n)
        out_offset = rs.output_zp
    else:
        last, act, mult, shift, out_offset = op, [-(2 ** 31), 2 ** 31 - 1], [], [], 0
    result_type = last.results[0].type
    loc = fused_location(ops)
    source = "+".join(o.operation.name for o in ops)
    bias_array = bias if bias is not None else np.zeros(n, np.int32)

    if rhs is not None and rhs.shape[0] == 1 and b_zp == 0 and tail is not None:
        # Fully connected: CMSIS-NN wants the weights as [outputs, depth].
        filt = make_const(np.ascontiguousarray(rhs[0].T).astype(np.int8), op, op.location)
        bias_v = make_const(bias_array, op, op.location)
        if rw.use_cmsis:
            attrs = {"input_offset": -a_zp, "filter_offset": 0, "output_offset": out_offset,
                     "multiplier": mult, "shift": shift, "activation": act}
            new = make_op(cmsisnn.FullyConnectedOp, [a, filt, bias_v], result_type, attrs,
                          before=op, loc=loc, source_op=source)
        else:
            new = make_op(portable.MatmulOp, [a, filt, bias_v], result_type,
                          _params(a_zp, 0, out_offset, act, mult, shift), before=op, loc=loc,
                          source_op=source)
        rw.replace(ops, last, new)
        return CONVERTED

    s16 = _s16_tail(op, rhs, a_zp, b_zp) if rw.use_cmsis and elem(a) == "i16" else None
    if s16 is not None:
        # int16 activations: arm_batch_matmul_s16 (int64 accumulation, CMSIS-NN's s16 requantisation,
        # zero points 0) for the int48 matmul and its 16-bit-multiplier rescale.
        rs, last, act = s16
        mults, shifts = rs.s16_params()
        rhs_t, absorbed = _transposed(b, op)
        ops = [op, rs.op] + ([last] if last is not rs.op else []) + absorbed
        attrs = {"lhs_offset": 0, "rhs_offset": 0, "output_offset": 0, "multiplier": mults[0], "shift": shifts[0],
                 "activation": act}
        new = make_op(cmsisnn.BatchMatmulOp, [a, rhs_t], last.results[0].type, attrs, before=op,
                      loc=fused_location(ops), source_op="+".join(o.operation.name for o in ops[:3]))
        rw.replace(ops, last, new)
        return CONVERTED

    if rw.use_cmsis and tail is not None and add is None and elem(a) == "i8" and not rs.per_channel:
        # Two activations: arm_batch_matmul_s8 reads the right-hand side transposed ([B, N, K]);
        # a transpose that made it [B, K, N] is read through, else one is inserted.
        rhs_t, absorbed = _transposed(b, op)
        ops += absorbed
        attrs = {"lhs_offset": -a_zp, "rhs_offset": -b_zp, "output_offset": out_offset,
                 "multiplier": mult[0], "shift": shift[0], "activation": act}
        new = make_op(cmsisnn.BatchMatmulOp, [a, rhs_t], result_type, attrs, before=op, loc=loc,
                      source_op=source)
        rw.replace(ops, last, new)
        return CONVERTED

    bias_v = make_const(bias_array, op, op.location)
    new = make_op(portable.MatmulOp, [a, b, bias_v], result_type,
                  _params(a_zp, b_zp, out_offset, act, mult, shift), before=op, loc=loc, source_op=source)
    rw.replace(ops, last, new)
    return CONVERTED


def _s16_tail(op, rhs, a_zp, b_zp):
    """(rescale, last op, activation) when an int16 activation matmul and its requantisation are
    what arm_batch_matmul_s16 computes, else None."""
    if rhs is not None or a_zp != 0 or b_zp != 0:
        return None
    tail = follow_requant_tail(op, "i16")
    if tail is None or tail[0].per_channel or tail[0].output_zp != 0 or tail[0].s16_params() is None:
        return None
    return tail


def _transposed(b, before):
    """([B, N, K] value, ops it absorbs) for the [B, K, N] `b`: the input of the transpose that made
    `b` (absorbed when only this matmul reads it), else a new transpose (converted after this
    pattern, like any other)."""
    src = producer(b)
    if isinstance(src, tosa.TransposeOp) and list(ir.DenseI32ArrayAttr(src.attributes["perms"])) == [0, 2, 1]:
        return src.operands[0], ([src] if len(list(b.uses)) == 1 else [])
    batch, k, n = shape(b)
    swapped = producer(src.operands[0]) if isinstance(src, tosa.ReshapeOp) else None
    if isinstance(swapped, tosa.TransposeOp):
        # Heads kept apart ([1, heads, K, N] viewed as [heads, K, N]): a view of the transpose's input.
        perms = list(ir.DenseI32ArrayAttr(swapped.attributes["perms"]))
        r = len(perms)
        if r >= 3 and perms == list(range(r - 2)) + [r - 1, r - 2] and shape(swapped.results[0])[-2:] == [k, n]:
            with ir.InsertionPoint(before), before.location as loc:
                view = ir.Operation.create(
                    "tosa.reshape", results=[ir.RankedTensorType.get([batch, n, k], tensor_type(b).element_type)],
                    operands=[swapped.operands[0], make_shape([batch, n, k], loc=loc)]).results[0]
            absorbed = [src] if len(list(b.uses)) == 1 else []
            if absorbed and len(list(swapped.results[0].uses)) == 1:
                absorbed.append(swapped)
            return view, absorbed
    out_type = ir.RankedTensorType.get([batch, n, k], tensor_type(b).element_type)
    perms = ir.DenseI32ArrayAttr.get([0, 2, 1])
    return tosa.TransposeOp(out_type, b, perms, loc=before.location, ip=ir.InsertionPoint(before)).result, []


def _params(a_zp, b_zp, out_offset, act, mult, shift):
    return {"lhs_offset": -a_zp, "rhs_offset": -b_zp, "output_offset": out_offset,
            "multiplier": mult, "shift": shift, "activation": act}


PATTERNS = [("matmul", tosa.MatMulOp, convert_matmul)]


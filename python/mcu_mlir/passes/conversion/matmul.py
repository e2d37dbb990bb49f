"""tosa.matmul: fully connected (constant right-hand side) or batch matmul, fused with its requantisation."""

from __future__ import annotations

import numpy as np

from ..._mlir import ir, tosa
from ...dialects import cmsisnn, portable
from ..base import PassError
from ...ir.constants import make_shape
from ...ir.ops import create
from ..transforms.layout.channel_permutation import chain_index
from .common import (UNIT, CONVERTED, const_array, const_scalar, elem, follow_requant_tail,
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
        ops = [op, rs.op] + ([last] if last is not rs.op else [])
        lhs, rhs, _, _, dims, final, absorbed = _operands(a, b, 0, 0, last, op)
        source = "+".join(o.operation.name for o in ops)
        ops += absorbed
        attrs = {"lhs_offset": 0, "rhs_offset": 0, "output_offset": 0, "multiplier": mults[0], "shift": shifts[0],
                 "activation": act}
        return _batch_matmul(rw, ops, lhs, rhs, dims, final, attrs, op, fused_location(ops), source)

    if rw.use_cmsis and tail is not None and add is None and elem(a) == "i8" and not rs.per_channel:
        # Two activations: arm_batch_matmul_s8 reads the right-hand side transposed ([B, N, K]);
        # a transpose that made it [B, K, N] is read through, else one is inserted.
        lhs, rhs, lhs_zp, rhs_zp, dims, final, absorbed = _operands(a, b, a_zp, b_zp, last, op)
        ops += absorbed
        attrs = {"lhs_offset": -lhs_zp, "rhs_offset": -rhs_zp, "output_offset": out_offset,
                 "multiplier": mult[0], "shift": shift[0], "activation": act}
        return _batch_matmul(rw, ops, lhs, rhs, dims, final, attrs, op, loc, source)

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


_VIEWS = (tosa.ReshapeOp, tosa.TransposeOp)


def _transposed(b, before):
    """([B, N, K] value, ops it absorbs) for the [B, K, N] `b`: a view where the reshapes and
    transposes that made `b` hold, transposed, their source's elements in order (a K^T, with heads
    kept apart or channels first); a constant transposed at compile time; else a new transpose
    (converted after this pattern, like any other)."""
    found = _view_of(b, before, transposed=True)
    if found is not None:
        return found
    constant = const_array(b)
    if constant is not None:    # a constant is stored transposed, not transposed at run time
        return make_const(np.ascontiguousarray(np.swapaxes(constant, 1, 2)), before, before.location), []
    batch, k, n = shape(b)
    out_type = ir.RankedTensorType.get([batch, n, k], tensor_type(b).element_type)
    perms = ir.DenseI32ArrayAttr.get([0, 2, 1])
    return tosa.TransposeOp(out_type, b, perms, loc=before.location, ip=ir.InsertionPoint(before)).result, []


def _moves_nothing(order: np.ndarray) -> bool:
    return np.array_equal(order.ravel(), np.arange(order.size))


def _view_of(value, before, transposed: bool):
    """(view, absorbed ops) of the [B, R, C] `value` ([B, C, R] when `transposed`) as a reshape of the
    source of the reshapes and transposes that made it, when they (at least one transpose) leave
    that source's elements in order; None when they move data. The chain is absorbed where only
    the matmul reads it."""
    chain, source = [], value
    while isinstance(producer(source), _VIEWS):
        chain.append(producer(source))
        source = producer(source).operands[0]
    chain.reverse()
    batch, rows, cols = shape(value)
    target = [batch, cols, rows] if transposed else [batch, rows, cols]
    while chain:    # the longest chain that only moves data around
        order = chain_index(shape(chain[0].operands[0]), chain).reshape(batch, rows, cols)
        if any(isinstance(op, tosa.TransposeOp) for op in chain) and \
                _moves_nothing(order.transpose(0, 2, 1) if transposed else order):
            break
        chain.pop(0)
    if not chain:
        return None
    source = chain[0].operands[0]
    absorbed = []
    for op in reversed(chain):      # users first; an op something else reads stays
        if len(list(op.results[0].uses)) != 1:
            break
        absorbed.append(op)
    if shape(source) == target:
        return source, absorbed
    with ir.InsertionPoint(before), before.location as loc:
        view_type = ir.RankedTensorType.get(target, tensor_type(value).element_type)
        view = create(tosa.ReshapeOp, results=[view_type],
                      operands=[source, make_shape(target, loc=loc)]).results[0]
    return view, absorbed


def _read_transposed(last):
    """(reshapes / transposes that read `last`'s [B, M, N] result one after another, each alone)
    when their result is that result transposed ([B, N, M]) in some shape, else None."""
    chain, value = [], last.results[0]
    while True:
        users = [u.owner for u in value.uses]
        if len(users) != 1 or not isinstance(users[0], _VIEWS):
            break
        chain.append(users[0])
        value = users[0].results[0]
    batch, m, n = shape(last.results[0])
    want = np.arange(batch * m * n).reshape(batch, m, n).transpose(0, 2, 1).ravel()
    while chain:
        if any(isinstance(op, tosa.TransposeOp) for op in chain) and \
                np.array_equal(chain_index([batch, m, n], chain).ravel(), want):
            return chain
        chain.pop()
    return None


def _operands(a, b, a_zp, b_zp, last, before):
    """(lhs, rhs, their zero points, the result's [B, N', M'] shape, the op whose value the call
    computes, absorbed ops) of arm_batch_matmul_*, which computes lhs . rhs^T. A result read only
    transposed ([B, N, M], channels-first attention: EfficientViT's v . attn^T viewed back as an
    NHWC image) is computed as that, B^T . A^T, when B^T is a view: lhs that view and rhs A itself
    (or the activation A is a view of). Otherwise A (or its view) and B^T."""
    lhs_view = _view_of(a, before, transposed=False)
    a_read, a_absorbed = lhs_view if lhs_view is not None else (a, [])
    after = _read_transposed(last)
    bt = _view_of(b, before, transposed=True) if after is not None else None
    if bt is not None:
        batch, m, n = shape(last.results[0])
        return bt[0], a_read, b_zp, a_zp, [batch, n, m], after[-1], bt[1] + a_absorbed + after
    rhs, absorbed = _transposed(b, before)
    return a_read, rhs, a_zp, b_zp, shape(last.results[0]), last, absorbed + a_absorbed


def _batch_matmul(rw, ops, lhs, rhs, dims, final, attrs, before, loc, source):
    """The call, viewed as `final`'s result where that has another shape; `final` replaced by it."""
    elem = tensor_type(final.results[0]).element_type
    new = make_op(cmsisnn.BatchMatmulOp, [lhs, rhs], ir.RankedTensorType.get(dims, elem), attrs, before=before,
                  loc=loc, source_op=source)
    if shape(final.results[0]) != dims:
        with ir.InsertionPoint(before), loc:
            new = create(tosa.ReshapeOp, results=[final.results[0].type],
                         operands=[new.results[0], make_shape(shape(final.results[0]), loc=loc)])
    rw.replace(ops, final, new)
    return CONVERTED


def _params(a_zp, b_zp, out_offset, act, mult, shift):
    return {"lhs_offset": -a_zp, "rhs_offset": -b_zp, "output_offset": out_offset,
            "multiplier": mult, "shift": shift, "activation": act}


PATTERNS = [("matmul", tosa.MatMulOp, convert_matmul, UNIT)]


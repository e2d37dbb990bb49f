"""Moving reshapes out of the way of elementwise ops, so view chains between two ops collapse.

After the layout choice a conv1d chain reads conv -> reshape(3-D) -> relu -> reshape(4-D) -> conv:
no data moves, but the views split what the backend could fuse. Computing the elementwise op on
the reshape's source instead (`relu(reshape(x)) == reshape(relu(x))`) lets the two reshapes meet
and cancel. Pure elementwise ops move through any reshape; slices move through reshapes that only
add or remove unit dims, with their start/size remapped.
"""

from __future__ import annotations

import numpy as np

from ...._mlir import ir, tosa
from ....ir.constants import ConstantData, make_constant, make_shape, shape_values
from .roles import AXIS_OPS, SHAPE_OPERANDS, channel_pinned, data_operands, is_constant
from ....ir.ops import create, isa, op_class


def _reshape_source(v):
    owner = v.owner
    if isinstance(owner, ir.Block) or not isa(owner, tosa.ReshapeOp):
        return None
    src = owner.operands[0]
    if not isinstance(src.type, ir.RankedTensorType) or not src.type.has_static_shape:
        return None
    return src


def _non_unit(shape):
    return [d for d in shape if d != 1]


def _unit_dims_map(src_shape, dst_shape):
    """For a reshape that only adds/removes unit dims: dst dim -> src dim for the non-unit dims."""
    if _non_unit(src_shape) != _non_unit(dst_shape):
        return None
    src_idx = [i for i, d in enumerate(src_shape) if d != 1]
    dst_idx = [i for i, d in enumerate(dst_shape) if d != 1]
    return dict(zip(dst_idx, src_idx))


def sink_reshapes(fn, consts: ConstantData) -> int:
    """Rewrites op(reshape(x), ...) -> reshape(op(x, ...)) where that lets reshapes cancel."""
    moved = 0
    changed = True
    while changed:
        changed = False
        for op in list(fn.regions[0].blocks[0].operations):
            if _sink_one(op, consts):
                moved += 1
                changed = True
    return moved


def _sink_one(op, consts) -> bool:
    idx = data_operands(op)
    cls = op_class(op)
    if idx is None or cls in AXIS_OPS:
        return False
    if cls in SHAPE_OPERANDS and cls is not tosa.SliceOp:
        return False
    out = op.results[0]
    out_shape = tuple(out.type.shape)
    sources = {}
    source_shape = None
    for i in idx:
        v = op.operands[i]
        if is_constant(v):
            continue
        src = _reshape_source(v)
        if src is None:
            return False
        if source_shape is None:
            source_shape = tuple(src.type.shape)
        elif tuple(src.type.shape) != source_shape:
            return False
        if cls is not tosa.SliceOp and tuple(v.type.shape) != out_shape:
            return False  # a broadcast operand: its reshape would not be the same
        sources[i] = src
    if source_shape is None:
        return False
    in_shape = tuple(op.operands[idx[0]].type.shape)
    if channel_pinned(op) and source_shape[-1:] != in_shape[-1:]:
        return False  # a per-channel rescale moves only where the channels stay innermost
    new_out_shape = source_shape
    new_shape_operands = {}
    if cls is tosa.SliceOp:
        dims = _unit_dims_map(source_shape, in_shape)
        start, size = shape_values(op.operands[1]), shape_values(op.operands[2])
        if dims is None:
            return False
        for j, d in enumerate(in_shape):
            if (start[j] != 0 or size[j] != d) and j not in dims:
                return False
        new_start, new_size = [0] * len(source_shape), list(source_shape)
        for j, s in dims.items():
            new_start[s], new_size[s] = start[j], size[j]
        new_out_shape = tuple(new_size)
        new_shape_operands = {1: new_start, 2: new_size}
    elif len(sources) == 0:
        return False

    const_data = {}
    for i in idx:
        if i in sources:
            continue
        data = consts.array(op.operands[i])
        if data is None:
            return False
        if data.size == 1:
            const_data[i] = data.reshape((1,) * len(source_shape))
        elif data.shape == out_shape:
            const_data[i] = data.reshape(source_shape)
        else:
            return False

    with ir.InsertionPoint(op), op.location as loc:
        operands = list(op.operands)
        for i in idx:
            operands[i] = sources[i] if i in sources else \
                make_constant(np.ascontiguousarray(const_data[i]), op.operands[i].type, loc=loc)
        for i, vals in new_shape_operands.items():
            operands[i] = make_shape(vals, loc=loc)
        attrs = {k: op.attributes[k] for k in op.attributes}
        new_type = ir.RankedTensorType.get(list(new_out_shape), out.type.element_type)
        new = create(cls, results=[new_type], operands=operands, attributes=attrs, loc=loc)
        back = create(tosa.ReshapeOp, results=[out.type],
                      operands=[new.results[0], make_shape(list(out_shape), loc=loc)], loc=loc).results[0]
    out.replace_all_uses_with(back)
    op.operation.erase()
    return True


def simplify_reshapes(fn) -> int:
    """Collapses reshape chains, drops identity reshapes and the views and constants left unused."""
    changed = 0
    block = fn.regions[0].blocks[0]
    for op in list(block.operations):
        if not isa(op, tosa.ReshapeOp):
            continue
        src = op.operands[0]
        while not isinstance(src.owner, ir.Block) and isa(src.owner, tosa.ReshapeOp):
            src = src.owner.operands[0]
        out = op.results[0]
        if src.type == out.type:
            out.replace_all_uses_with(src)
            changed += 1
        elif src != op.operands[0]:
            op.operands[0] = src
            changed += 1
    for op in reversed(list(block.operations)):
        if isa(op, tosa.ReshapeOp, tosa.ConstOp, tosa.ConstShapeOp, tosa.TransposeOp) and \
                all(len(list(r.uses)) == 0 for r in op.results):
            op.operation.erase()
    return changed

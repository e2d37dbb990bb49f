"""mcu-nhwc-canonicalize: the normal form the layout folding starts from."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..._mlir import ir, tosa
from . import fold_transposes
from ..base import ModulePass
from .layout import perms as P
from .layout.const_eval import evaluate
from ...ir.constants import ConstantData, make_shape
from ...ir.roles import LAYOUT_SENSITIVE
from ...ir.ops import create, isa


@dataclasses.dataclass(frozen=True)
class NhwcCanonicalize(ModulePass):
    """Puts layout changes in one explicit form: NHWC ops, explicit tosa.transpose between layouts.

    TOSA's layout-sensitive ops (conv2d, depthwise and transpose conv, pooling, resize, matmul,
    gather, ...) compute in NHWC by definition; this pass makes every layout change around them a
    single explicit, static `tosa.transpose` with nothing hidden in constants or view chains:
    transposes and reshapes of constants become constants (weights repacked at compile time,
    dense_resource included), chains of transposes become one, transposes that only move unit dims
    become reshapes and identity transposes disappear. A nearest-neighbour upsample that
    torch-mlir wrote as a `tosa.gather` over the flattened NCHW tensor (with constant, computed
    indices) becomes what it is, an NHWC `tosa.resize` between transposes, which the folding can
    then remove; the indices are checked element by element against TOSA's resize rule first.
    A layout-sensitive op without static shapes is an error (its layout cannot be planned).
    """

    NAME = "mcu-nhwc-canonicalize"

    def run(self, module: ir.Operation) -> None:
        with module.context, ir.Location.unknown():
            consts = ConstantData(module)
            for fn in self.functions(module):
                if not fn.regions[0].blocks:
                    continue
                if not self._check(fn):
                    continue
                fold_transposes.fold_constant_views(fn, consts)
                for op in list(fn.regions[0].blocks[0].operations):
                    if isa(op, tosa.GatherOp):
                        gather_to_resize(op, consts)
                compose_transposes(fn)

    def _check(self, fn) -> bool:
        ok = True
        for op in fn.regions[0].blocks[0].operations:
            if not isa(op, *LAYOUT_SENSITIVE, tosa.TransposeOp):
                continue
            name = op.operation.name
            for v in list(op.operands[:1]) + list(op.results[:1]):
                ty = v.type
                if not isinstance(ty, ir.RankedTensorType) or not ty.has_static_shape:
                    self.emit_error(op, f"'{name}' on {ty}: its layout needs a static shape")
                    ok = False
                    break
        return ok


def compose_transposes(fn) -> int:
    """Merges transpose chains, drops identities, turns unit-dim-only transposes into reshapes."""
    changed = 0
    for op in list(fn.regions[0].blocks[0].operations):
        if not isa(op, tosa.TransposeOp):
            continue
        x, y = op.operands[0], op.results[0]
        perm = tuple(op.attributes["perms"])
        source = x.owner
        while not isinstance(source, ir.Block) and isa(source, tosa.TransposeOp):
            perm = P.compose(tuple(source.attributes["perms"]), perm)
            x = source.operands[0]
            source = x.owner
        shape = tuple(x.type.shape)
        with ir.InsertionPoint(op), op.location as loc:
            if perm == P.identity(len(perm)):
                new = x
            elif not P.moves_data(shape, perm):
                new = create(tosa.ReshapeOp, results=[y.type],
                             operands=[x, make_shape(list(y.type.shape), loc=loc)], loc=loc).results[0]
            elif x != op.operands[0]:
                new = create(tosa.TransposeOp, results=[y.type], operands=[x],
                             attributes={"perms": ir.DenseI32ArrayAttr.get(list(perm))}, loc=loc).results[0]
            else:
                continue
        y.replace_all_uses_with(new)
        dead = op.operands[0].owner
        op.operation.erase()
        changed += 1
        while not isinstance(dead, ir.Block) and isa(dead, tosa.TransposeOp) and \
                len(list(dead.results[0].uses)) == 0:
            nxt = dead.operands[0].owner
            dead.operation.erase()
            dead = nxt
    return changed


def _nearest_indices(out_size: int, in_size: int):
    """TOSA resize parameters (scale_n, scale_d, offset, border) reproducing PyTorch's nearest
    rule src = floor(dst * in / out), and the source index of every output index under them."""
    g = math.gcd(out_size, in_size)
    n, d, offset = 2 * out_size // g, 2 * in_size // g, -(out_size // g)
    border = (out_size - 1) * d - (in_size - 1) * n + offset
    y = np.arange(out_size) * d + offset
    iy = np.floor_divide(y, n)
    iy = iy + (2 * (y - iy * n) >= n)
    return (n, d, offset, border), np.clip(iy, 0, in_size - 1)


def gather_to_resize(op, consts) -> bool:
    """reshape(gather(reshape(x: NCHW), const indices)) that is a nearest upsample -> tosa.resize."""
    values, indices = op.operands[0], op.operands[1]
    source_op = values.owner
    if isinstance(source_op, ir.Block) or not isa(source_op, tosa.ReshapeOp):
        return False
    x = source_op.operands[0]
    uses = list(op.results[0].uses)
    if len(uses) != 1 or not isa(uses[0].owner, tosa.ReshapeOp):
        return False
    y = uses[0].owner.results[0]
    for v in (x, y, values, indices):
        if not isinstance(v.type, ir.RankedTensorType) or not v.type.has_static_shape:
            return False
    xs, ys = tuple(x.type.shape), tuple(y.type.shape)
    if len(xs) != 4 or len(ys) != 4 or xs[:2] != ys[:2]:
        return False
    if x.type.element_type != y.type.element_type:
        return False
    idx = evaluate(indices, consts)
    if idx is None:
        return False
    n, k, c = values.type.shape
    # flat source index (in x) of every flat output element
    got = (np.arange(n)[:, None, None] * (k * c) + idx.astype(np.int64)[:, :, None] * c
           + np.arange(c)[None, None, :]).ravel()
    (hp, iy), (wp, ix) = _nearest_indices(ys[2], xs[2]), _nearest_indices(ys[3], xs[3])
    flat = np.arange(int(np.prod(xs))).reshape(xs)
    if got.size != int(np.prod(ys)) or not np.array_equal(got, flat[:, :, iy][:, :, :, ix].ravel()):
        return False
    elem = x.type.element_type
    with ir.InsertionPoint(uses[0].owner), op.location as loc:
        nhwc = _transpose(x, (0, 2, 3, 1), loc)
        out_type = ir.RankedTensorType.get([ys[0], ys[2], ys[3], ys[1]], elem)
        resized = create(
            tosa.ResizeOp, results=[out_type],
            operands=[nhwc, make_shape([hp[0], hp[1], wp[0], wp[1]], loc=loc),
                      make_shape([hp[2], wp[2]], loc=loc), make_shape([hp[3], wp[3]], loc=loc)],
            attributes={"mode": ir.Attribute.parse("#tosa.resize_mode<NEAREST_NEIGHBOR>")}, loc=loc)
        back = _transpose(resized.results[0], (0, 3, 1, 2), loc)
    y.replace_all_uses_with(back)
    uses[0].owner.operation.erase()
    op.operation.erase()
    if not list(values.uses):
        source_op.operation.erase()
    return True


def _transpose(value, perm, loc):
    shape = [value.type.shape[d] for d in perm]
    return create(tosa.TransposeOp, results=[ir.RankedTensorType.get(shape, value.type.element_type)],
                  operands=[value], attributes={"perms": ir.DenseI32ArrayAttr.get(list(perm))},
                  loc=loc).results[0]

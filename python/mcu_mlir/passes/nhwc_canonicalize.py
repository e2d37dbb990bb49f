"""mcu-nhwc-canonicalize: the normal form the layout folding starts from."""

from __future__ import annotations

import dataclasses

from .._mlir import ir
from . import fold_transposes
from .base import ModulePass
from .layout import perms as P
from .layout.constants import ConstantData, make_shape
from .layout.roles import LAYOUT_SENSITIVE


@dataclasses.dataclass(frozen=True)
class NhwcCanonicalize(ModulePass):
    """Puts layout changes in one explicit form: NHWC ops, explicit tosa.transpose between layouts.

    TOSA's layout-sensitive ops (conv2d, depthwise and transpose conv, pooling, resize, matmul,
    gather, ...) compute in NHWC by definition; this pass makes every layout change around them a
    single explicit, static `tosa.transpose` with nothing hidden in constants or view chains:
    transposes and reshapes of constants become constants (weights repacked at compile time,
    dense_resource included), chains of transposes become one, transposes that only move unit dims
    become reshapes and identity transposes disappear. A layout-sensitive op without static shapes
    is an error (its layout cannot be planned).
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
                compose_transposes(fn)

    def _check(self, fn) -> bool:
        ok = True
        for op in fn.regions[0].blocks[0].operations:
            name = op.operation.name
            if name not in LAYOUT_SENSITIVE and name != "tosa.transpose":
                continue
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
        if op.operation.name != "tosa.transpose":
            continue
        x, y = op.operands[0], op.results[0]
        perm = tuple(op.attributes["perms"])
        source = x.owner
        while not isinstance(source, ir.Block) and source.operation.name == "tosa.transpose":
            perm = P.compose(tuple(source.attributes["perms"]), perm)
            x = source.operands[0]
            source = x.owner
        shape = tuple(x.type.shape)
        with ir.InsertionPoint(op), op.location as loc:
            if perm == P.identity(len(perm)):
                new = x
            elif not P.moves_data(shape, perm):
                new = ir.Operation.create("tosa.reshape", results=[y.type],
                                          operands=[x, make_shape(list(y.type.shape), loc=loc)],
                                          loc=loc).results[0]
            elif x != op.operands[0]:
                new = ir.Operation.create("tosa.transpose", results=[y.type], operands=[x],
                                          attributes={"perms": ir.DenseI32ArrayAttr.get(list(perm))},
                                          loc=loc).results[0]
            else:
                continue
        y.replace_all_uses_with(new)
        dead = op.operands[0].owner
        op.operation.erase()
        changed += 1
        while not isinstance(dead, ir.Block) and dead.operation.name == "tosa.transpose" and \
                len(list(dead.results[0].uses)) == 0:
            nxt = dead.operands[0].owner
            dead.operation.erase()
            dead = nxt
    return changed

"""mcu-fold-transposes: remove every transpose the graph does not need."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..._mlir import func, ir, tosa
from ..base import ModulePass
from .layout.assign import Problem
from .layout.channel_permutation import fold_channel_permutations, fold_permutations_through_depthwise
from ...ir.constants import ConstantData, make_constant, shape_values
from .layout.roles import is_constant
from .layout.views import simplify_reshapes, sink_reshapes
from ...ir import roles
from ...ir.ops import isa


@dataclasses.dataclass(frozen=True)
class FoldTransposes(ModulePass):
    """Removes transposes by choosing, per connected region, the layout that needs the fewest.

    Works on whole functions rather than one pattern at a time: values joined by layout-agnostic ops
    (elementwise incl. rescale, cast, clamp, table and broadcasting binaries; concat, reductions,
    slice, pad, tile, reverse, with their axes remapped) form a region that is stored in one
    permutation. Choosing that permutation cancels inverse pairs, composes cascades, carries
    transposes through forks (one producer, many users) and joins, through reshapes whose data
    order allows it (the reshape is rewritten), into constants (transposed at compile time,
    dense_resource included), into the weights of a linear layer fed by a flatten (its rows are
    permuted to the stored order), through table lookups (integer softmax's gather), and turns
    transposes that only move unit dims into reshapes. A layout
    is changed only when it lowers the number of transposes (then the bytes they move). Finally
    elementwise ops and slices move below the reshapes that feed them, so that chains of views
    between two ops (conv1d -> relu -> conv1d) meet and cancel, and a chain of views that only
    reorders channels (a channel shuffle) into a conv is folded into the conv's weights; into a
    depthwise conv whose requantized result only convs read, into the depthwise's per-channel
    constants and those convs' weights.
    With io-layout=nhwc, rank-3/4 function arguments and results may be stored channels-last
    (NHWC / NWC); those are marked `mcu.layout = "nhwc"` in the function's argument/result
    attributes and the function type changes accordingly.
    """

    NAME = "mcu-fold-transposes"
    io_layout: str = dataclasses.field(
        default="nchw", metadata={"choices": ("nchw", "nhwc"),
                                  "help": "layout of the graph's inputs and outputs"})

    def run(self, module: ir.Operation) -> None:
        with module.context, ir.Location.unknown():
            self._run(module)

    def _run(self, module) -> None:
        consts = ConstantData(module)
        called = _called_functions(module)
        for fn in self.functions(module):
            if not fn.regions[0].blocks:
                continue
            if not self._check_static(fn):
                continue
            fold_constant_views(fn, consts)
            # A function called inside the module keeps its signature: its callers rely on it.
            name = ir.StringAttr(fn.attributes["sym_name"]).value
            problem = Problem.build(fn, "nchw" if name in called else self.io_layout)
            problem.solve()
            problem.rewrite(consts)
            sink_reshapes(fn, consts)
            simplify_reshapes(fn)
            if fold_channel_permutations(fn, consts) + fold_permutations_through_depthwise(fn, consts):
                simplify_reshapes(fn)

    def _check_static(self, fn) -> bool:
        ok = True
        for op in fn.regions[0].blocks[0].operations:
            if not isa(op, tosa.TransposeOp, tosa.ReshapeOp):
                continue
            for v in (op.operands[0], op.results[0]):
                ty = v.type
                if not isinstance(ty, ir.RankedTensorType) or not ty.has_static_shape:
                    self.emit_error(op, f"'{op.operation.name}' on {ty}: layout folding needs "
                                        "static shapes")
                    ok = False
                    break
        return ok


def _called_functions(module) -> set[str]:
    names = set()

    def visit(op):
        if isa(op, func.CallOp):
            names.add(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return names


def fold_constant_views(fn, consts: ConstantData) -> int:
    """Replaces transposes, reshapes and slices of constants (per-group weights of a grouped conv)
    by constants; returns how many."""
    folded = 0
    for op in list(fn.regions[0].blocks[0].operations):
        if not isa(op, *roles.VIEWS, *roles.SLICES) or not is_constant(op.operands[0]):
            continue
        out = op.results[0]
        if not isinstance(out.type, ir.RankedTensorType) or not out.type.has_static_shape:
            continue
        data = consts.array(op.operands[0])
        if data is None:
            continue
        if isa(op, tosa.TransposeOp):
            data = data.transpose(tuple(op.attributes["perms"]))
        elif isa(op, tosa.SliceOp):
            start, size = shape_values(op.operands[1]), shape_values(op.operands[2])
            if start is None or size is None:
                continue
            data = data[tuple(slice(a, a + n) for a, n in zip(start, size))]
        else:
            if shape_values(op.operands[1]) is None:
                continue
            data = data.reshape(tuple(out.type.shape))
        with ir.InsertionPoint(op), op.location as loc:
            new = make_constant(np.ascontiguousarray(data), out.type, loc=loc)
        out.replace_all_uses_with(new)
        source = op.operands[0].owner
        op.operation.erase()
        if all(len(list(r.uses)) == 0 for r in source.results):
            source.operation.erase()
        folded += 1
    return folded

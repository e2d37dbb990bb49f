"""Counting the transposes that copy data (the figure `report.json` and the layout tests use)."""

from __future__ import annotations

from ._mlir import ir, tosa
from .passes.layout.perms import moves_data
from .ir import attributes as mcu_attrs
from .ir.ops import isa


def is_data_moving(op) -> bool:
    """A `tosa.transpose` moves data unless it only permutes unit dims (then it is a reshape)."""
    shape = op.operands[0].type
    if not isinstance(shape, ir.RankedTensorType) or not shape.has_static_shape:
        return True
    return moves_data(tuple(shape.shape), tuple(op.attributes["perms"]))


def count_data_moving_transposes(module, interior_only: bool = False) -> int:
    """Number of data-moving `tosa.transpose` ops in `module` (an ir.Module or its operation).

    interior_only: leave out the transposes that only convert a model input or output between the
    caller's layout and the kernels' (io-layout=nchw puts one at each 4-D boundary tensor)."""
    count = 0

    def at_boundary(op) -> bool:
        """The transpose reads a model input (through reshapes and slices) or feeds only model
        outputs (through reshapes)."""
        source = op.operands[0]
        while not isinstance(source.owner, ir.Block) and source.owner.name in ("tosa.reshape", "tosa.slice"):
            source = source.owner.operands[0]
        if isinstance(source.owner, ir.Block):
            return source.owner.owner.operation.name == "func.func"

        def only_outputs(value) -> bool:
            uses = list(value.uses)
            return bool(uses) and all(u.owner.name == "func.return" or
                                      (u.owner.name == "tosa.reshape" and only_outputs(u.owner.results[0]))
                                      for u in uses)
        return only_outputs(op.results[0])

    def visit(op):
        nonlocal count
        if isa(op, tosa.TransposeOp) and is_data_moving(op.opview):
            if not (interior_only and at_boundary(op)):
                count += 1
        return ir.WalkResult.ADVANCE

    getattr(module, "operation", module).walk(visit)
    return count


def boundary_layouts(module) -> tuple[list[str], list[str]]:
    """Per argument and per result of the entry function: "nhwc" where the layout pipeline stored it
    channels-last (`mcu.layout = "nhwc"`, io-layout=nhwc), else "as-written" (the model's own)."""
    op = getattr(module, "operation", module)
    fn = next(o for o in op.regions[0].blocks[0].operations if o.operation.name == "func.func")
    n_args = len(fn.regions[0].blocks[0].arguments)
    n_results = len(ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).results)

    def marks(key: str, n: int) -> list[str]:
        if key not in fn.attributes:
            return ["as-written"] * n
        attrs = fn.attributes[key]
        out = []
        for i in range(n):
            entry = ir.DictAttr(attrs[i])
            nhwc = mcu_attrs.LAYOUT in entry and ir.StringAttr(entry[mcu_attrs.LAYOUT]).value == "nhwc"
            out.append("nhwc" if nhwc else "as-written")
        return out

    return marks("arg_attrs", n_args), marks("res_attrs", n_results)

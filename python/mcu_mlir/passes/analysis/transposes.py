"""Counting the transposes that copy data (the figure `report.json` and the layout tests use)."""

from __future__ import annotations

from ..._mlir import func, ir, tosa
from ..transforms.layout.perms import moves_data
from ...ir import attributes as mcu_attrs
from ...ir.ops import isa


def is_data_moving(op) -> bool:
    """A `tosa.transpose` moves data unless it only permutes unit dims (then it is a reshape)."""
    shape = op.operands[0].type
    if not isinstance(shape, ir.RankedTensorType) or not shape.has_static_shape:
        return True
    return moves_data(tuple(shape.shape), tuple(op.attributes["perms"]))


def _at_boundary(op, views: tuple[type, ...]) -> bool:
    """The transpose reads a model input (through views and slices) or feeds only model outputs
    (through views)."""
    source = op.operands[0]
    while isa(source.owner, *views):
        source = source.owner.operands[0]
    if isinstance(source.owner, ir.Block):
        return isa(source.owner.owner, func.FuncOp)

    def only_outputs(value) -> bool:
        uses = list(value.uses)
        return bool(uses) and all(isa(u.owner, func.ReturnOp) or
                                  (isa(u.owner, *views) and only_outputs(u.owner.results[0]))
                                  for u in uses)
    return only_outputs(op.results[0])


# Views a boundary transpose may reach the model's input or output through.
_TOSA_VIEWS = (tosa.ReshapeOp, tosa.SliceOp)


def count_data_moving_transposes(module, interior_only: bool = False) -> int:
    """Number of data-moving `tosa.transpose` ops in `module` (an ir.Module or its operation).

    interior_only: leave out the transposes that only convert a model input or output between the
    caller's layout and the kernels' (io-layout=nchw puts one at each 4-D boundary tensor)."""
    count = 0

    def visit(op):
        nonlocal count
        if isa(op, tosa.TransposeOp) and is_data_moving(op.opview):
            if not (interior_only and _at_boundary(op, _TOSA_VIEWS)):
                count += 1
        return ir.WalkResult.ADVANCE

    getattr(module, "operation", module).walk(visit)
    return count


def count_transpose_kernels(module, interior_only: bool = False) -> int:
    """Number of transposes the C runs as their own kernel call in a converted module: what is
    left of the TOSA transposes once the backend has folded some into the copy of the concat
    producing their input (portable.concat_transposed)."""
    from ...dialects import cmsisnn, portable  # imported when asked: the kernel dialects are slow to build
    transpose_kernels = (cmsisnn.TransposeOp, portable.TransposeOp)
    # What the TOSA views between a transpose and the model's boundary become: a reshape is a
    # cmsisnn.reshape on either backend, a slice a portable.slice.
    kernel_views = (cmsisnn.ReshapeOp, portable.SliceOp)
    count = 0

    def visit(op):
        nonlocal count
        if isa(op, *transpose_kernels):
            shape = tuple(ir.RankedTensorType(op.operands[0].type).shape)
            if moves_data(shape, tuple(ir.DenseI32ArrayAttr(op.attributes["perms"]))):
                if not (interior_only and _at_boundary(op, kernel_views)):
                    count += 1
        return ir.WalkResult.ADVANCE

    getattr(module, "operation", module).walk(visit)
    return count


def boundary_layouts(module) -> tuple[list[str], list[str]]:
    """Per argument and per result of the entry function: "nhwc" where the layout pipeline stored it
    channels-last (`mcu.layout = "nhwc"`, io-layout=nhwc), else "as-written" (the model's own)."""
    op = getattr(module, "operation", module)
    fn = next(o for o in op.regions[0].blocks[0].operations if isa(o, func.FuncOp))
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

"""Counting the transposes that copy data (the figure `report.json` and the layout tests use)."""

from __future__ import annotations

from ._mlir import ir
from .passes.layout.perms import moves_data


def is_data_moving(op) -> bool:
    """A `tosa.transpose` moves data unless it only permutes unit dims (then it is a reshape)."""
    shape = op.operands[0].type
    if not isinstance(shape, ir.RankedTensorType) or not shape.has_static_shape:
        return True
    return moves_data(tuple(shape.shape), tuple(op.attributes["perms"]))


def count_data_moving_transposes(module) -> int:
    """Number of data-moving `tosa.transpose` ops in `module` (an ir.Module or its operation)."""
    count = 0

    def visit(op):
        nonlocal count
        if op.name == "tosa.transpose" and is_data_moving(op.opview):
            count += 1
        return ir.WalkResult.ADVANCE

    getattr(module, "operation", module).walk(visit)
    return count

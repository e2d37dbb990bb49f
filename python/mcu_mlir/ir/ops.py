"""Matching ops by class whatever the bindings hand over (an OpView, a generic Operation from a
walk, or the Block that owns a block argument)."""

from __future__ import annotations

from .._mlir import ir


def isa(op, *classes) -> bool:
    """Whether `op` is an instance of one of the op classes (e.g. `tosa.ReshapeOp`)."""
    if op is None or isinstance(op, ir.Block):
        return False
    view = op.opview if isinstance(op, ir.Operation) else op
    return isinstance(view, classes)

"""Matching ops by class whatever the bindings hand over (an OpView, a generic Operation from a
walk, or the Block that owns a block argument)."""

from __future__ import annotations

from .._mlir import ir


def opview(op):
    """The op as its OpView subclass (e.g. `tosa.ReshapeOp`), or None for a Block or None."""
    if op is None or isinstance(op, ir.Block):
        return None
    return op.opview if isinstance(op, ir.Operation) else op


def isa(op, *classes) -> bool:
    """Whether `op` is an instance of one of the op classes (e.g. `tosa.ReshapeOp`)."""
    view = opview(op)
    return view is not None and isinstance(view, classes)


def op_class(op) -> type | None:
    """The op's class, to look it up in a role set or a table keyed by op class."""
    view = opview(op)
    return None if view is None else type(view)


def create(cls, *, results, operands=(), attributes=None, loc=None, ip=None) -> ir.Operation:
    """A generic op of class `cls` (for ops rebuilt with another result type or operand list,
    whose typed constructor would need each attribute spelled out)."""
    return ir.Operation.create(cls.OPERATION_NAME, results=results, operands=list(operands),
                               attributes=attributes or {}, loc=loc, ip=ip)

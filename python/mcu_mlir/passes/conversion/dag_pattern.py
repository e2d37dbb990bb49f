"""Declarative matching of a multi-op TOSA computation (a DAG) that one kernel replaces.

A pattern is a dict of named nodes, each `Node(op class, operands, check)`: an operand names
another node, an input (`$name`: any value, bound on first use, the same value after) or a
constant (`Const(predicate)`, captured under its `name`). Matching walks back from the root,
looking through reshapes (views the layout passes move between elementwise ops), and binds every
node to one op; a node reached twice must be the same op. The result says which ops the kernel
absorbs, and `inside_only` checks that nothing else reads their results.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from ..._mlir import ir, tosa
from .common import const_array, producer, users


@dataclasses.dataclass(frozen=True)
class Const:
    """A constant operand: `test(array)` must hold; the array is kept under `name` if given."""
    test: Callable[[np.ndarray], bool]
    name: str | None = None


def scalar(value: int) -> Const:
    """A constant whose every element is `value` (any broadcast shape)."""
    return Const(lambda a: a.size >= 1 and bool((a == value).all()))


def table(name: str) -> Const:
    return Const(lambda a: True, name)


@dataclasses.dataclass(frozen=True)
class Node:
    cls: type
    operands: tuple
    check: Callable[[object], bool] | None = None
    # An op that may be absent (an add of a zero bias the canonicalizer folded): where the value's
    # producer is not this op, the value is bound to operand `absent_is` of the spec instead.
    absent_is: int | None = None


@dataclasses.dataclass
class Match:
    values: dict          # node or input name -> value (before views)
    ops: dict             # node name -> op
    consts: dict          # captured constant name -> array
    views: list           # reshapes looked through


def strip_views(value, views=None):
    """`value` before any reshapes; those passed are appended to `views` when given."""
    while isinstance(producer(value), tosa.ReshapeOp):
        if views is not None:
            views.append(producer(value))
        value = producer(value).operands[0]
    return value


def distinct_ops(ops) -> list:
    """`ops` without repeats (the same operation reached twice), in first-seen order."""
    seen, out = set(), []
    for op in ops:
        if op.operation not in seen:
            seen.add(op.operation)
            out.append(op)
    return out


def match(nodes: dict, root: str, root_op) -> Match | None:
    m = Match({}, {}, {}, [])

    def bind(name, value) -> bool:
        value = strip_views(value, m.views)
        if name in m.values:
            return m.values[name] == value
        if name.startswith("$"):
            m.values[name] = value
            return True
        return visit(name, producer(value), value)

    def visit(name, op, value) -> bool:
        spec = nodes[name]
        if op is None or not isinstance(op, spec.cls) or len(op.operands) != len(spec.operands):
            if spec.absent_is is not None and not isinstance(spec.operands[spec.absent_is], Const):
                return bind(spec.operands[spec.absent_is], value)
            return False
        if spec.check is not None and not spec.check(op):
            return False
        m.values[name], m.ops[name] = value, op
        for operand, ref in zip(op.operands, spec.operands):
            if isinstance(ref, Const):
                arr = const_array(strip_views(operand, []))
                if arr is None or not ref.test(np.asarray(arr)):
                    return False
                if ref.name:
                    m.consts[ref.name] = np.asarray(arr)
            elif not bind(ref, operand):
                return False
        return True

    return m if visit(root, root_op, root_op.results[0]) else None


def inside_only(m: Match, root: str, extra=()) -> bool:
    """Whether every result of the matched ops but the root's is read only by matched ops."""
    ops = list(m.ops.values()) + list(m.views) + list(extra)
    inside = {op.operation for op in ops}
    root_op = m.ops[root].operation
    for op in ops:
        if op.operation == root_op:
            continue
        for u in users(op.results[0]):
            if isinstance(u, ir.Block) or u.operation not in inside:
                return False
    return True


def absorbed(m: Match, extra=()) -> list:
    """The matched ops and views, each once."""
    seen, out = set(), []
    for op in list(m.ops.values()) + list(m.views) + list(extra):
        if op.operation not in seen:
            seen.add(op.operation)
            out.append(op)
    return out


def dead_once_replaced(m: Match, root: str) -> list:
    """The matched ops (and views) nothing outside them reads once the root is replaced: for a kernel
    that reads only the pattern's inputs, ops another computation shares (common subexpressions of
    two matches) stay for it and the rest go."""
    ops = absorbed(m)
    dead = {m.ops[root].operation}
    changed = True
    while changed:
        changed = False
        for op in ops:
            if op.operation in dead:
                continue
            if all(not isinstance(u, ir.Block) and u.operation in dead for u in users(op.results[0])):
                dead.add(op.operation)
                changed = True
    return [op for op in ops if op.operation in dead]


def attr_int(op, name: str) -> int:
    return int(ir.IntegerAttr(op.attributes[name]).value)


def rounds(op) -> bool:
    return "round" in op.attributes and ir.BoolAttr(op.attributes["round"]).value

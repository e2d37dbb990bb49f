"""Choosing a stored layout per region of a function, and rewriting the function to it.

A *region* is a maximal set of tensor values joined by layout-agnostic ops (see roles.py): all of
them must be stored in the same permutation of their logical dims. Regions meet at transposes and
reshapes (free or not, depending on the layouts on both sides), at ops with a fixed layout and at
the function boundary. Every place where two layouts disagree costs one materialised transpose.
The choice starts from "everything as written" and improves by moves: give one region a new layout,
optionally carried on through every transpose/reshape it makes non-free (so one move can carry a
transpose through a whole chain of views, forks and joins). A move is kept only if it lowers the
total cost (transposes first, then the elements they copy), so the result never has more transposes
than the input.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...._mlir import func, ir, tosa
from . import perms as P
from ....ir.constants import ConstantData, make_constant, make_shape, shape_values
from .roles import AXIS_OPS, SHAPE_OPERANDS, channel_pinned, data_operands, is_constant, ranked_shape
from ....ir import attributes as mcu_attrs
from ....ir import roles
from ....ir.ops import create, isa, op_class

_ONE_TRANSPOSE = 1 << 40  # cost of one transpose; element counts break ties


def _numel(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


@dataclass
class _Edge:  # a transpose or reshape between the regions of x and y
    op: object
    x: object
    y: object
    perm: tuple | None  # None: reshape
    rx: int
    ry: int


@dataclass
class _Need:  # value must be stored in one of `allowed` (else one transpose)
    value: object
    region: int
    allowed: tuple


@dataclass
class Problem:
    fn: object
    io_layout: str
    region_of: dict = field(default_factory=dict)   # value -> region id
    rank: list = field(default_factory=list)          # region id -> rank
    pinned: list = field(default_factory=list)        # region id -> channel dim must stay innermost
    edges: list = field(default_factory=list)
    needs: list = field(default_factory=list)
    layout: list = field(default_factory=list)        # region id -> chosen perm
    lookup_in: set = field(default_factory=set)       # reshapes flattening a table lookup's input
    lookup_out: set = field(default_factory=set)      # reshapes restoring its output's shape
    # flattening reshape -> the matmul with constant weights it feeds (any flatten order works:
    # the weight rows are permuted to match)
    flatten_into: dict = field(default_factory=dict)

    # -- building ---------------------------------------------------------------------------------
    @classmethod
    def build(cls, fn, io_layout: str) -> "Problem":
        self = cls(fn, io_layout)
        block = fn.regions[0].blocks[0]
        parent: dict = {}

        def find(v):
            while parent[v] != v:
                parent[v] = parent[parent[v]]
                v = parent[v]
            return v

        def add(v):
            if v not in parent:
                parent[v] = v

        def union(a, b):
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[ra] = rb

        def tracked(v):
            return ranked_shape(v) is not None and v.type.has_static_shape and not is_constant(v)

        for arg in block.arguments:
            if tracked(arg):
                add(arg)
        pinned_values = []
        for op in block.operations:
            lookup = _table_lookup(op)
            if lookup is not None and tracked(lookup[0]) and tracked(lookup[1]):
                x, y, flatten, restore = lookup
                add(x)
                add(y)
                union(x, y)
                self.lookup_in.add(flatten)
                self.lookup_out.add(restore)
            for r in op.results:
                if tracked(r):
                    add(r)
            idx = data_operands(op)
            if idx is None:
                continue
            out = op.results[0]
            for i in idx:
                v = op.operands[i]
                if tracked(v):
                    union(v, out)
            if channel_pinned(op):
                pinned_values.append(out)

        roots: dict = {}
        for v in parent:
            root = find(v)
            if root not in roots:
                roots[root] = len(self.rank)
                self.rank.append(len(v.type.shape))
                self.pinned.append(False)
            self.region_of[v] = roots[root]
        for v in pinned_values:
            self.pinned[self.region_of[v]] = True
        self.layout = [P.identity(r) for r in self.rank]

        for op in block.operations:
            if isa(op, *roles.CONSTANT) or op.operation in self.lookup_in \
                    or op.operation in self.lookup_out:
                continue
            if isa(op, *roles.VIEWS) and op.operands[0] in self.region_of \
                    and op.results[0] in self.region_of:
                x, y = op.operands[0], op.results[0]
                perm = tuple(op.attributes["perms"]) if isa(op, tosa.TransposeOp) else None
                self.edges.append(_Edge(op, x, y, perm, self.region_of[x], self.region_of[y]))
                if perm is None:
                    matmul = _flatten_into_constant_matmul(op)
                    if matmul is not None:
                        self.flatten_into[op.operation] = matmul
                continue
            if data_operands(op) is not None:
                continue
            allowed = self._boundary_layouts if isa(op, func.ReturnOp) else None
            for v in op.operands:
                if v in self.region_of:
                    rank = len(v.type.shape)
                    self.needs.append(_Need(v, self.region_of[v],
                                            allowed(rank) if allowed else (P.identity(rank),)))
            for v in op.results:
                if v in self.region_of:
                    self.needs.append(_Need(v, self.region_of[v], (P.identity(len(v.type.shape)),)))
        for arg in block.arguments:
            if arg in self.region_of:
                self.needs.append(_Need(arg, self.region_of[arg], self._boundary_layouts(len(arg.type.shape))))
        self._dedupe_needs()
        self._incident = [[] for _ in self.rank]
        for e in self.edges:
            self._incident[e.rx].append(e)
            if e.ry != e.rx:
                self._incident[e.ry].append(e)
        for n in self.needs:
            self._incident[n.region].append(n)
        return self

    def _boundary_layouts(self, rank: int) -> tuple:
        if self.io_layout == "nhwc" and rank >= 3:
            return (P.identity(rank), P.channels_last(rank))
        return (P.identity(rank),)

    def _dedupe_needs(self):
        seen, out = set(), []
        for n in self.needs:
            key = (n.value, n.allowed)
            if key not in seen:
                seen.add(key)
                out.append(n)
        self.needs = out

    # -- costs ------------------------------------------------------------------------------------
    def _cost(self, item, layout) -> int:
        if isinstance(item, _Need):
            shape = tuple(item.value.type.shape)
            if any(P.equivalent(shape, layout[item.region], q) for q in item.allowed):
                return 0
            return _ONE_TRANSPOSE + _numel(shape)
        sx, px, py = tuple(item.x.type.shape), layout[item.rx], layout[item.ry]
        if item.perm is not None:
            return 0 if P.transpose_is_free(sx, item.perm, px, py) else _ONE_TRANSPOSE + _numel(sx)
        sy = tuple(item.y.type.shape)
        if P.reshape_is_free(sx, px, sy, py):
            return 0
        if item.op.operation in self.flatten_into and P.equivalent(sy, py, P.identity(len(sy))):
            return 0
        moves = int(P.moves_data(P.physical_shape(sx, px), P.inverse(px))) + int(P.moves_data(sy, py))
        return max(moves, 1) * (_ONE_TRANSPOSE + _numel(sx))

    def total_cost(self, layout=None) -> int:
        layout = self.layout if layout is None else layout
        return sum(self._cost(i, layout) for i in self.edges + self.needs)

    def _feasible(self, region: int, perm) -> bool:
        return not self.pinned[region] or perm[-1] == len(perm) - 1

    # -- search -----------------------------------------------------------------------------------
    def _free_layout(self, edge: _Edge, known: int, layout):
        """The layout of the other end of `edge` that makes it free, given region `known`'s layout."""
        if edge.perm is not None:
            if known == edge.rx:
                return P.transpose_free_output_layout(edge.perm, layout[edge.rx])
            return P.transpose_free_input_layout(edge.perm, layout[edge.ry])
        sx, sy = tuple(edge.x.type.shape), tuple(edge.y.type.shape)
        if known == edge.rx:
            options = P.reshape_free_layouts(sx, layout[edge.rx], sy, True)
        else:
            options = P.reshape_free_layouts(sy, layout[edge.ry], sx, False)
        return options[0] if options else None

    def _candidates(self, region: int) -> list:
        rank = self.rank[region]
        cands = [P.identity(rank), P.channels_last(rank)]
        for item in self._incident[region]:
            if isinstance(item, _Need):
                cands.extend(item.allowed)
                continue
            other = item.ry if item.rx == region else item.rx
            if other == region:
                continue
            perm = self._free_layout(item, other, self.layout)
            if perm is not None:
                cands.append(perm)
        out = []
        for c in cands:
            if c not in out and len(c) == rank and self._feasible(region, c):
                out.append(c)
        return out

    def _delta(self, move: dict) -> int:
        items = {}
        for r in move:
            for it in self._incident[r]:
                items[id(it)] = it
        new = list(self.layout)
        for r, p in move.items():
            new[r] = p
        return sum(self._cost(it, new) - self._cost(it, self.layout) for it in items.values())

    def _propagated(self, region: int, perm) -> dict:
        move = {region: perm}
        layout = list(self.layout)
        layout[region] = perm
        queue = [region]
        while queue and len(move) < 4 * len(self.rank) + 4:
            r = queue.pop()
            for item in self._incident[r]:
                if isinstance(item, _Need):
                    continue
                other = item.ry if item.rx == r else item.rx
                if other in move or self._cost(item, layout) == 0:
                    continue
                need = self._free_layout(item, r, layout)
                if need is None or not self._feasible(other, need):
                    continue
                move[other] = need
                layout[other] = need
                queue.append(other)
        return move

    def solve(self, max_rounds: int = 30) -> None:
        for _ in range(max_rounds):
            improved = False
            for region in range(len(self.rank)):
                if self.rank[region] < 2:
                    continue
                best, best_delta = None, 0
                for cand in self._candidates(region):
                    if cand == self.layout[region]:
                        continue
                    for move in ({region: cand}, self._propagated(region, cand)):
                        d = self._delta(move)
                        if d < best_delta:
                            best, best_delta = move, d
                if best is not None:
                    for r, p in best.items():
                        self.layout[r] = p
                    improved = True
            if not improved:
                return

    # -- rewriting --------------------------------------------------------------------------------
    def rewrite(self, consts: ConstantData) -> None:
        _Rewriter(self, consts).run()


def _table_lookup(op):
    """reshape(gather(table, reshape(x) -> [1, W]), x's shape) with a constant [1, K, 1] table: an
    elementwise lookup (how integer softmax reads its exp table). Returns (x, y, flatten, restore)."""
    if not isa(op, tosa.GatherOp):
        return None
    table, indices = op.operands[0], op.operands[1]
    if not is_constant(table) or ranked_shape(table) is None or len(table.type.shape) != 3 or \
            table.type.shape[0] != 1 or table.type.shape[2] != 1:
        return None
    flatten = indices.owner
    if isinstance(flatten, ir.Block) or not isa(flatten, tosa.ReshapeOp) or \
            len(list(indices.uses)) != 1:
        return None
    uses = list(op.results[0].uses)
    if len(uses) != 1 or not isa(uses[0].owner, tosa.ReshapeOp):
        return None
    restore = uses[0].owner
    x, y = flatten.operands[0], restore.results[0]
    if ranked_shape(x) is None or ranked_shape(x) != ranked_shape(y):
        return None
    return x, y, flatten.operation, restore.operation


def _flatten_into_constant_matmul(reshape):
    """The matmul whose rows of activations (one per batch element) are exactly this reshape's
    output (through more reshapes, each used once), with constant weights [1, K, N]; else None."""
    value = reshape.results[0]
    k = _numel(tuple(value.type.shape))
    while True:
        uses = list(value.uses)
        if len(uses) != 1:
            return None
        user = uses[0].owner
        if isa(user, tosa.ReshapeOp):
            value = user.results[0]
            continue
        if not isa(user, tosa.MatMulOp) or uses[0].operand_number != 0:
            return None
        a, b = user.operands[0], user.operands[1]
        if not is_constant(b) or len(b.type.shape) != 3 or b.type.shape[0] != 1:
            return None
        rows, depth = k // b.type.shape[1], b.type.shape[1]
        if tuple(a.type.shape) != (1, rows, depth) or rows * depth != k:
            return None
        return user


def _tensor_type(shape, like):
    return ir.RankedTensorType.get(list(shape), ir.RankedTensorType(like).element_type)


class _Rewriter:
    def __init__(self, problem: Problem, consts: ConstantData):
        self.p = problem
        self.consts = consts
        self.stored: dict = {}   # old value -> (value as stored, its layout)
        self.cache: dict = {}    # (old value, layout) -> value
        self.dead: list = []
        # logical shapes, taken before any argument type changes
        self.logical = {v: tuple(v.type.shape) for v in problem.region_of}

    def shape(self, v):
        return self.logical[v] if v in self.logical else tuple(v.type.shape)

    def layout_of(self, v):
        if v in self.stored:
            return self.stored[v][1]
        return P.identity(len(v.type.shape))

    def value_in(self, v, want, loc):
        """`v` stored in layout `want`, adding a reshape/transpose/constant as needed."""
        key = (v, want)
        if key in self.cache:
            return self.cache[key]
        shape = self.shape(v)
        have_value, have = self.stored.get(v, (v, P.identity(len(shape))))
        target_shape = P.physical_shape(shape, want)
        if is_constant(v) and have == P.identity(len(shape)) and want != have:
            data = self.consts.array(v)
            if data is not None:
                out = make_constant(np.ascontiguousarray(data.transpose(want)), v.type, loc=loc)
                self.cache[key] = out
                return out
        if P.equivalent(shape, have, want):
            out = have_value if P.physical_shape(shape, have) == target_shape else \
                _reshape(have_value, target_shape, loc)
        else:
            perm = tuple(P.inverse(have)[d] for d in want)
            out = _transpose(have_value, perm, loc, P.physical_shape(shape, have))
        self.cache[key] = out
        return out

    def run(self):
        p = self.p
        block = p.fn.regions[0].blocks[0]
        self._rewrite_signature(block)
        for op in list(block.operations):
            if isa(op, *roles.CONSTANT):
                continue
            with ir.InsertionPoint(op), op.location as loc:
                if op.operation in p.lookup_in:
                    x = op.operands[0]
                    new = self.value_in(x, self._region_layout(x), loc)
                    if new != x:
                        op.operands[0] = new
                elif op.operation in p.lookup_out:
                    y = op.results[0]
                    layout = self._region_layout(y)
                    self.stored[y] = (_reshape(op.operands[0], P.physical_shape(self.shape(y), layout), loc), layout)
                    self.dead.append(op)
                elif isa(op, tosa.TransposeOp) and op.results[0] in p.region_of:
                    self._transpose(op, loc)
                elif isa(op, tosa.ReshapeOp) and op.results[0] in p.region_of:
                    self._reshape(op, loc)
                elif data_operands(op) is not None and op.results[0] in p.region_of:
                    self._agnostic(op, loc)
                else:
                    self._fixed(op, loc)
        for arg, new_type in self.new_arg_types:
            arg.set_type(new_type)
        for op in reversed(self.dead):
            op.operation.erase()
        update_function_type(p.fn, {"args": self.arg_layouts,
                                    "results": getattr(self, "result_layouts", [])})
        for op in reversed(list(block.operations)):
            if isa(op, tosa.ConstOp, tosa.ConstShapeOp) and \
                    all(len(list(r.uses)) == 0 for r in op.results):
                op.operation.erase()

    def _region_layout(self, v):
        return self.p.layout[self.p.region_of[v]]

    def _transpose(self, op, loc):
        x, y = op.operands[0], op.results[0]
        py = self._region_layout(y)
        t = tuple(op.attributes["perms"])
        self.stored[y] = (self.value_in(x, tuple(t[d] for d in py), loc), py)
        self.dead.append(op)

    def _reshape(self, op, loc):
        x, y = op.operands[0], op.results[0]
        sx, sy = self.shape(x), tuple(y.type.shape)
        py = self._region_layout(y)
        target = P.physical_shape(sy, py)
        matmul = self.p.flatten_into.get(op.operation)
        px = self.layout_of(x)
        if matmul is not None and P.equivalent(sy, py, P.identity(len(sy))) and \
                not P.reshape_is_free(sx, px, sy, py) and self._permute_weight_rows(matmul, sx, px, loc):
            # Flatten x as stored; the matmul's weight rows follow the stored order instead.
            self.stored[y] = (_reshape(self.value_in(x, px, loc), target, loc), py)
            self.dead.append(op)
            return
        # The layout x has now, else the one its region chose (the transpose to it is paid for).
        options = [self.layout_of(x)]
        if x in self.p.region_of:
            options.append(self._region_layout(x))
        for px in options:
            if P.reshape_is_free(sx, px, sy, py):
                src = self.value_in(x, px, loc)
                out = src if P.physical_shape(sx, px) == target else _reshape(src, target, loc)
                break
        else:
            logical = _reshape(self.value_in(x, P.identity(len(sx)), loc), sy, loc)
            out = _transpose(logical, py, loc) if P.moves_data(sy, py) else logical
            if tuple(out.type.shape) != target:
                out = _reshape(out, target, loc)
        self.stored[y] = (out, py)
        self.dead.append(op)

    def _permute_weight_rows(self, matmul, in_shape, layout, loc) -> bool:
        weight = matmul.operands[1]
        data = self.consts.array(weight)
        if data is None:
            return False
        rows = tuple(matmul.operands[0].type.shape)[1]
        if rows > 1:
            # One row per batch element: the batch stays outermost, each row is permuted alike.
            if in_shape[0] != rows or layout[0] != 0:
                return False
            in_shape, layout = in_shape[1:], [d - 1 for d in layout[1:]]
        # flat position j of the stored tensor (row) holds logical flat element order[j]
        order = np.arange(_numel(in_shape)).reshape(in_shape).transpose(layout).ravel()
        matmul.operands[1] = make_constant(np.ascontiguousarray(data[:, order, :]), weight.type, loc=loc)
        return True

    def _agnostic(self, op, loc):
        out = op.results[0]
        layout = self._region_layout(out)
        rank = len(layout)
        data = set(data_operands(op))
        cls = op_class(op)
        operands = []
        for i, v in enumerate(op.operands):
            if i in data:
                operands.append(self.value_in(v, layout, loc))
            elif i in SHAPE_OPERANDS.get(cls, {}):
                vals = shape_values(v)
                if SHAPE_OPERANDS[cls][i] == "pairs":
                    vals = [x for d in layout for x in vals[2 * d: 2 * d + 2]]
                else:
                    vals = [vals[d] for d in layout]
                operands.append(v if layout == P.identity(rank) else make_shape(vals, loc=loc))
            else:
                operands.append(v)
        if layout == P.identity(rank):
            for i, v in enumerate(operands):
                if v != op.operands[i]:
                    op.operands[i] = v
            self.stored[out] = (out, layout)
            return
        attrs = {k: op.attributes[k] for k in op.attributes}
        if cls in AXIS_OPS:
            axis = ir.IntegerAttr(attrs["axis"]).value
            attrs["axis"] = ir.IntegerAttr.get(ir.IntegerAttr(attrs["axis"]).type, P.inverse(layout)[axis])
        new_type = _tensor_type(P.physical_shape(tuple(out.type.shape), layout), out.type)
        new = create(cls, results=[new_type], operands=operands, attributes=attrs, loc=loc)
        self.stored[out] = (new.results[0], layout)
        self.dead.append(op)

    def _fixed(self, op, loc):
        is_return = isa(op, func.ReturnOp)
        if is_return:
            self.result_layouts = [False] * len(op.operands)
        for i, v in enumerate(op.operands):
            if v not in self.p.region_of and not (v in self.stored):
                continue
            shape = self.shape(v)
            rank = len(shape)
            want = P.identity(rank)
            if is_return:
                have = self.layout_of(v)
                for q in self.p._boundary_layouts(rank):
                    if P.equivalent(shape, have, q):
                        want = q
                        break
            new = self.value_in(v, want, loc)
            if is_return:
                self.result_layouts[i] = not P.equivalent(shape, want, P.identity(rank))
            if new != v:
                op.operands[i] = new
        for r in op.results:
            if r in self.p.region_of:
                self.stored[r] = (r, P.identity(len(r.type.shape)))

    def _rewrite_signature(self, block):
        p = self.p
        fn = p.fn
        arg_layouts = []
        self.new_arg_types = []
        for arg in block.arguments:
            layout = None
            if arg in p.region_of:
                shape = tuple(arg.type.shape)
                chosen = p.layout[p.region_of[arg]]
                for q in p._boundary_layouts(len(shape)):
                    if P.equivalent(shape, chosen, q):
                        layout = q
                        break
                layout = layout or P.identity(len(shape))
                if layout != P.identity(len(shape)) and not P.equivalent(shape, layout, P.identity(len(shape))):
                    self.new_arg_types.append((arg, _tensor_type(P.physical_shape(shape, layout), arg.type)))
                    self.stored[arg] = (arg, layout)
                    arg_layouts.append(True)
                    continue
            arg_layouts.append(False)
        self.arg_layouts = arg_layouts


def _transpose(value, perm, loc, source_shape=None):
    shape = P.physical_shape(source_shape or tuple(value.type.shape), perm)
    attrs = {"perms": ir.DenseI32ArrayAttr.get(list(perm))}
    return create(tosa.TransposeOp, results=[_tensor_type(shape, value.type)], operands=[value],
                  attributes=attrs, loc=loc).results[0]


def _reshape(value, shape, loc):
    return create(tosa.ReshapeOp, results=[_tensor_type(shape, value.type)],
                  operands=[value, make_shape(list(shape), loc=loc)], loc=loc).results[0]


def update_function_type(fn, io_marks: dict) -> None:
    """Re-derives the function type from its block arguments and return, and marks NHWC boundaries.

    io_marks: {"args": [bool], "results": [bool]} — True where the boundary was made channels-last.
    """
    block = fn.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    arg_types = [a.type for a in block.arguments]
    res_types = [v.type for v in ret.operands]
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(arg_types, res_types))

    def marked(old, marks):
        dicts = []
        for i, mark in enumerate(marks):
            entries = {}
            if old is not None and i < len(old):
                d = ir.DictAttr(old[i])
                entries = {d[j].name: d[j].attr for j in range(len(d))}
            if mark:
                entries[mcu_attrs.LAYOUT] = ir.StringAttr.get("nhwc")
            dicts.append(ir.DictAttr.get(entries))
        return ir.ArrayAttr.get(dicts)

    if any(io_marks["args"]):
        old = fn.attributes["arg_attrs"] if "arg_attrs" in fn.attributes else None
        fn.attributes["arg_attrs"] = marked(old, io_marks["args"])
    if any(io_marks["results"]):
        old = fn.attributes["res_attrs"] if "res_attrs" in fn.attributes else None
        fn.attributes["res_attrs"] = marked(old, io_marks["results"])

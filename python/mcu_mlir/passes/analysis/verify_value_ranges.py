"""mcu-verify-value-ranges: proves, for every input, the REQUIREs of the TOSA specification that depend on values."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..._mlir import ir, tosa
from ...ir import roles
from ...ir.ops import isa, op_class
from ...ir.constants import const_array
from ..base import ModulePass
from .value_range_rules import ElementwiseRules
from .value_intervals import (Interval, _KEEP_ATTAINS, _LAZY, _Unproven, _attr_int, _bits, _describe, _ints, _join, _last_dim, _pow2, _rank, _scale32, _type_range, element_type, rule, rules_of)


@dataclasses.dataclass(frozen=True)
class VerifyValueRanges(ModulePass):
    """Proves that no op of an integer TOSA function is UNPREDICTABLE, for any input.

    The TOSA specification calls a program UNPREDICTABLE where one of its REQUIREs fails on the
    values it computes (tosa_reference_model stops with 'Graph result: UNPREDICTABLE'; a kernel
    overflows and the integers mean nothing). An interval analysis runs from the function's
    argument types (any value of the type) through every op, per channel of the last axis where
    it matters: a convolution's (conv2d, depthwise, transpose conv, matmul by a constant) output
    channel gets the sum of its actual weights' positive and negative parts times the input's
    interval after the zero point, plus its bias; a RESCALE's output is its own rounding of its
    input's bounds; TABLE the entries its input can index; CLAMP, MAXIMUM / MINIMUM, shifts,
    casts, reductions and data movement (reshape, transpose, pad, slice, concat, tile, gather,
    select) what they compute; an op it does not know gives its result type's whole range. Where
    an op's REQUIRE is not proven and the elementwise chain computing it reads one earlier value
    twice (a Newton step x * (1 - d * x), a square), the chain is evaluated again on halves of that
    value's interval until every piece passes or one value fails (that value is named); a
    normalisation's deviation d times a function of S = sum(d * d) over its row is split on S's
    interval with |d| <= sqrt(S) in each piece (Cauchy-Schwarz; LayerNorm, RMSNorm, and GroupNorm,
    whose S sums a group over two axes and whose product is regrouped before its rescale). A sum of
    select(constant mask, a, b) counts each row's kept entries (an attention mask), and
    select(x == 0, c, x) with c != 0 is a divisor that is never 0. It then proves:

    - RESCALE: apply_scale_32's multiplier >= 0, 2 <= shift <= 62 and
      -2**(shift-1) <= value < 2**(shift-1) for the input after its zero point (per channel);
      apply_scale_16's result in int32; the output zero point's addition in int32;
    - CONV2D, DEPTHWISE_CONV2D, TRANSPOSE_CONV2D, MATMUL: every partial sum of the accumulator
      and the bias addition in the accumulator type;
    - ADD, SUB, NEGATE, ABS, REDUCE_SUM, AVG_POOL2D's sum: no integer overflow (apply_add_s /
      apply_sub_s); MUL of int32 with a shift: the rounded product in int32; INTDIV: a divisor
      that is never 0 and no minimum / -1;
    - ARITHMETIC_RIGHT_SHIFT, LOGICAL_LEFT_SHIFT, LOGICAL_RIGHT_SHIFT: a shift amount in
      [0, bits - 1].

    Each op whose REQUIRE it cannot prove is an error naming the op, the REQUIRE and the interval
    that leaves it, at the op's location (its layer). Ops inside regions (while / if) are not
    checked; their results take their type's whole range. Every compile runs the same analysis
    and lists what it cannot prove in report.json's `value_ranges` (with a warning).
    """

    NAME = "mcu-verify-value-ranges"

    def run(self, module: ir.Operation) -> None:
        for fn in self.functions(module):
            for op, message in RangeAnalysis().run(fn):
                self.emit_error(op, message)


class RangeAnalysis(ElementwiseRules):
    """Intervals of one function's integer values, and the REQUIREs they leave unproven."""

    def __init__(self):
        self.ranges: dict = {}
        self.order: dict = {}       # value -> its position in the function
        self.unproven: list = []

    def run(self, fn) -> list:
        """[(op, message)] for each op whose REQUIRE the intervals do not prove, in order."""
        block = fn.regions[0].blocks[0]
        for arg in block.arguments:
            r = _type_range(element_type(arg))
            if r is not None:
                self.ranges[arg] = Interval.of(*r)
        for op in block.operations:
            self._visit(op)
        return self.unproven

    # -- driving ----------------------------------------------------------------------------------
    def _rule(self, op):
        """The method computing `op`'s result intervals (a method marked `@rule`), None if it has none."""
        name = _RULES.get(op_class(op))
        return None if name is None else getattr(self, name)

    def _visit(self, op) -> None:
        name = op.operation.name
        handler = self._rule(op)
        out = None
        integer = all(_type_range(element_type(v)) is not None or not isinstance(v.type, ir.ShapedType)
                      or isinstance(element_type(v), ir.IndexType) for v in list(op.operands) + list(op.results))
        if handler is not None and integer and all(self._known(v) for v in op.operands):
            try:
                out = handler(op)
            except _Unproven as e:
                try:
                    out = self._refine(op, e)
                except _Unproven as again:
                    self.unproven.append((op, f"'{name}' may be UNPREDICTABLE: {again}"))
                    out = None
        for res in op.results:
            self.order[res] = len(self.order)
        if out is not _LAZY:
            self._store(op, out)

    def _store(self, op, out) -> None:
        for i, res in enumerate(op.results):
            r = _type_range(element_type(res))
            if r is None:
                continue
            got = out[i] if isinstance(out, list) else out if i == 0 else None
            if got is None:
                got = Interval.of(*r)
            if got.attains is not None and op_class(op) not in _KEEP_ATTAINS:
                got = dataclasses.replace(got, attains=None)    # the op may move or drop elements
            self.ranges[res] = got.clip(*r) if got.min < r[0] or got.max > r[1] else got

    # -- splitting an interval --------------------------------------------------------------------
    # Intervals forget that the operands of an op may come from the same value: x * (1 - d * x) of a
    # Newton step, or a rounding's select, look as wide as their operands' corners. When an op's REQUIRE
    # is not proven, the elementwise chain that computes it from one earlier value (the pivot) is
    # evaluated again on pieces of the pivot's interval, halving a piece while it fails: each element's
    # pivot lies in one piece, so the union of the pieces' results bounds the op soundly.
    _ELEMENTWISE = roles.INTEGER_ELEMENTWISE - {tosa.BitwiseNotOp, tosa.LogicalXorOp, tosa.IdentityOp}
    MAX_CONE = 96          # ops between the pivot and the op
    MAX_PIECES = 1024      # evaluations of that chain per op

    def _variable(self, value) -> bool:
        owner = value.owner
        return not isa(owner, *roles.CONSTANT)

    def _cone(self, op):
        """(pivot, ops in order) for the farthest value that every non-constant input of `op` comes from
        through elementwise ops of the pivot's shape; None if there is none."""
        shape = tuple(op.results[0].type.shape) if isinstance(op.results[0].type, ir.RankedTensorType) else None
        frontier = {v for v in op.operands if self._variable(v) and _type_range(element_type(v)) is not None}
        cone, best = [op], None
        while frontier and len(cone) <= self.MAX_CONE:
            if any(not isinstance(v.type, ir.RankedTensorType) or tuple(v.type.shape) != shape for v in frontier):
                break
            if len(frontier) == 1:
                (pivot,) = frontier
                if len(self._r(pivot).lo) == 1:
                    best = (pivot, list(reversed(cone)))
            latest = max(frontier, key=lambda v: self.order.get(v, -1))
            owner = latest.owner
            if op_class(owner) not in self._ELEMENTWISE:
                break
            frontier.discard(latest)
            frontier |= {v for v in owner.operands if self._variable(v) and _type_range(element_type(v)) is not None}
            if owner not in cone:
                cone.append(owner)
        return best

    def _norm_cone(self, op):
        """(S, d, ops in order) when `op` is computed elementwise from S = reduce_sum(d * d) along an axis
        (per row) and d itself (per element): a normalisation's deviation times a function of the sum of
        the squares. In a row whose S is at most s, |d| <= sqrt(s) (Cauchy-Schwarz), which splitting
        S's interval then uses."""
        queue, visited, found = list(op.operands), set(), None
        while queue and len(visited) <= self.MAX_CONE:
            v = queue.pop()
            if v in visited or isinstance(v.owner, ir.Block):
                continue
            visited.add(v)
            owner = v.owner
            if isa(owner, tosa.ReduceSumOp):
                # A sum over several axes (GroupNorm's group: rows and channels) is reduce_sums in a row.
                axes, summed = [_attr_int(owner, "axis")], owner.operands[0]
                while isa(summed.owner, tosa.ReduceSumOp):     # same rank: the axes stay comparable
                    axes.append(_attr_int(summed.owner, "axis"))
                    summed = summed.owner.operands[0]
                sq = _reshaped_from(summed).owner
                shift = self._scalar(sq.operands[2]) if isa(sq, tosa.MulOp) else None
                if shift is not None and sq.operands[0] == sq.operands[1] and 0 <= shift <= 62:
                    found = (v, sq.operands[0], axes, shift, summed)
                    break
            elif op_class(owner) in self._ELEMENTWISE or isa(owner, tosa.ReshapeOp):
                queue += list(owner.operands)
        if found is None:
            return None
        total, d, axes, shift, summed = found    # summed: d * d, or a reshape of it that adds / drops unit dims
        if not isinstance(summed.type, ir.RankedTensorType) or len(self._r(total).lo) != 1:
            return None
        full = tuple(summed.type.shape)
        row = tuple(1 if i in axes else n for i, n in enumerate(full))
        sizes = {int(np.prod(full)), int(np.prod(row))}
        base = _reshaped_from(d)
        frontier = {v for v in op.operands if self._variable(v) and _type_range(element_type(v)) is not None}
        cone = [op]

        def leaf(v):
            # d viewed in the squares' shape: a reshape keeps the elements' order, so position p of
            # it is the element whose square is position p of the summed tensor.
            return v == total or (_reshaped_from(v) == base and tuple(v.type.shape) == full)

        # Every value of the cone is one per element (or per row) of the summed tensor, maybe regrouped
        # by a reshape (GroupNorm's [.., G, C / G] back to [.., C], then its gamma's signs): each
        # element is still computed from its own d and its own row's S alone.
        while {v for v in frontier if not leaf(v)}:
            if any(not isinstance(v.type, ir.RankedTensorType) or int(np.prod(v.type.shape)) not in sizes
                   for v in frontier):
                return None
            latest = max((v for v in frontier if not leaf(v)), key=lambda v: self.order.get(v, -1))
            owner = latest.owner
            if (op_class(owner) not in self._ELEMENTWISE and not isa(owner, tosa.ReshapeOp)) \
                    or len(cone) > self.MAX_CONE:
                return None
            frontier.discard(latest)
            frontier |= {v for v in owner.operands if self._variable(v) and _type_range(element_type(v)) is not None}
            if owner not in cone:
                cone.append(owner)
        leaves = [v for v in frontier if v != total]
        if total not in frontier or len(leaves) != 1:
            return None
        d = leaves[0]
        # A square rounded by 2**-shift, (d**2 + 2**(shift-1)) >> shift, is at least (d**2 - 2**(shift-1)) / 2**shift
        # and the others are >= 0: |d| <= sqrt(S * 2**shift + 2**(shift-1)).
        half = (1 << shift) >> 1
        return total, d, list(reversed(cone)), lambda s: math.isqrt((max(s, 0) << shift) + half)

    def _refine(self, op, failure: _Unproven):
        if not op.results:
            raise failure
        found = self._cone(op)
        if found is not None:
            pivot, cone = found
            derived = {pivot} | {r for o in cone for r in o.results}
            uses = [v for o in cone for v in o.operands if v in derived]
            if len(uses) != len(set(uses)):    # a value read twice: split it back
                try:
                    return self._split(op, failure, pivot, cone)
                except _Unproven as e:
                    failure = e        # a normalisation's pivot may be its input: try its sum of squares
        norm = self._norm_cone(op)
        if norm is None:
            raise failure
        total, d, cone, root = norm
        return self._split(op, failure, total, cone, bounded=(d, root))

    def _split(self, op, failure: _Unproven, pivot, cone, bounded=None):
        whole = self._r(pivot)
        bounded, root_of = bounded if bounded is not None else (None, None)
        kept = self._r(bounded) if bounded is not None else None
        saved = {v: self.ranges.get(v) for o in cone for v in list(o.results) + [pivot, bounded] if v is not None}
        pieces, out, evaluations = [(whole.min, whole.max)], None, 0
        try:
            while pieces:
                lo, hi = pieces.pop()
                evaluations += 1
                if evaluations > self.MAX_PIECES:
                    raise failure
                self.ranges[pivot] = Interval.of(lo, hi)
                if bounded is not None:
                    root = root_of(hi)
                    lo_d, hi_d = np.maximum(kept.lo, -root), np.minimum(kept.hi, root)
                    if (lo_d > hi_d).any():
                        continue       # no deviation is that small: the piece holds no input
                    self.ranges[bounded] = Interval.of(lo_d, hi_d)
                try:
                    for o in cone[:-1]:
                        self._store(o, self._rule(o)(o))
                    got = self._rule(op)(op)
                except _Unproven as e:
                    if lo == hi:
                        raise _Unproven(f"{e} (where {_describe(pivot)} is {lo})") from None
                    mid = (lo + hi) // 2
                    pieces += [(mid + 1, hi), (lo, mid)]
                    continue
                if got is None:
                    return None
                out = got if out is None else _join(out, got)
        finally:
            for v, r in saved.items():
                if r is None:
                    self.ranges.pop(v, None)
                else:
                    self.ranges[v] = r
        return out

    def _known(self, value) -> bool:
        return (_type_range(element_type(value)) is None or value in self.ranges
                or isinstance(element_type(value), ir.IndexType)
                or isa(value.owner, tosa.ConstOp))

    def _r(self, value) -> Interval:
        got = self.ranges.get(value)
        if got is None and isa(value.owner, tosa.ConstOp):
            # Constants are read when an op reads their values' range (weights never are).
            got = self.ranges[value] = self._const_range(value)
        if got is None:
            r = _type_range(element_type(value))
            return Interval.of(*(r if r is not None else (0, 0)))
        return got

    def _scalar(self, value) -> int | None:
        arr = const_array(value)
        if arr is None or arr.size == 0:
            return None
        return int(np.asarray(arr).reshape(-1)[0])

    @staticmethod
    def _fits(lo, hi, value, what: str, where: str = "") -> None:
        r = _type_range(element_type(value))
        lo_, hi_ = int(np.min(lo)), int(np.max(hi))
        if lo_ < r[0] or hi_ > r[1]:
            raise _Unproven(f"{what} reaches [{lo_}, {hi_}]{where}, past {element_type(value)} "
                            f"([{r[0]}, {r[1]}]): the specification REQUIREs it to fit")

    # -- reductions -------------------------------------------------------------------------------
    def _reduced(self, op) -> tuple[Interval, int]:
        r = self._r(op.operands[0])
        axis, rank = _attr_int(op, "axis"), _rank(op.operands[0])
        n = op.operands[0].type.shape[axis]
        if rank and axis % rank == rank - 1:
            r = r.whole()
        return r, n

    def _held(self, op):
        """The value every slice along the reduced axis holds, if known."""
        r = self._r(op.operands[0])
        if r.attains is None:
            return None
        shape, axis, v, _ = r.attains
        return v if shape == tuple(op.operands[0].type.shape) and axis == _attr_int(op, "axis") else None

    @rule(tosa.ReduceSumOp)
    def _tosa_reduce_sum(self, op):
        r, n = self._reduced(op)
        # Every prefix of the sum (apply_add_s checks each) lies between these.
        partial_lo, partial_hi = np.minimum(r.lo * n, r.lo), np.maximum(r.hi * n, r.hi)
        lo, hi = r.lo * n, r.hi * n
        v = self._held(op)
        if v is not None:
            lo, hi = r.lo * (n - 1) + v, r.hi * (n - 1) + v
        masked = self._masked_sum(op, n)
        if masked is not None:
            lo, hi = np.maximum(lo, masked[0]), np.minimum(hi, masked[1])
        self._fits(partial_lo, partial_hi, op.results[0], f"the sum of {n} values")
        return Interval.of(lo, hi)

    def _masked_sum(self, op, n: int):
        """A sum of select(mask, a, b) with a constant mask (an attention mask): each row adds t of a and
        n - t of b, t between the fewest and the most the mask's rows hold."""
        sel = _reshaped_from(op.operands[0]).owner     # the layout passes may reshape the select's result
        if not isa(sel, tosa.SelectOp):
            return None
        mask = const_array(sel.operands[0])
        shape = tuple(op.operands[0].type.shape)
        if mask is None:
            return None
        # Broadcast to the select's shape, then viewed as the summed tensor (a reshape keeps the order).
        full = np.broadcast_to(np.asarray(mask).astype(bool), tuple(sel.results[0].type.shape))
        if full.size != int(np.prod(shape)):
            return None
        counts = full.reshape(shape).sum(axis=_attr_int(op, "axis"))
        a, b = self._r(sel.operands[1]), self._r(sel.operands[2]).whole()
        held = a.attains
        a = a.whole()
        if held is not None and held[3] is not None and held[0] == shape and held[1] == _attr_int(op, "axis") \
                and held[3].shape == full.reshape(shape).shape and np.array_equal(held[3], full.reshape(shape)):
            # Every row that keeps an element holds v at a kept one (a masked softmax's exp of 0).
            v, fewest, most = held[2], int(counts.min()), int(counts.max())
            ends = [v + (t - 1) * a.min + (n - t) * b.min if t else n * b.min
                    for t in {fewest, most, max(fewest, min(1, most))}]
            return min(ends), max(t * a.max + (n - t) * b.max for t in (fewest, most))
        ends = [t * a.min + (n - t) * b.min for t in (int(counts.min()), int(counts.max()))]
        tops = [t * a.max + (n - t) * b.max for t in (int(counts.min()), int(counts.max()))]
        return min(ends), max(tops)

    @rule(tosa.ReduceMaxOp)
    def _tosa_reduce_max(self, op):
        r, v = self._reduced(op)[0], self._held(op)
        return r if v is None else Interval.of(np.maximum(r.lo, v), r.hi)

    @rule(tosa.ReduceMinOp)
    def _tosa_reduce_min(self, op):
        r, v = self._reduced(op)[0], self._held(op)
        return r if v is None else Interval.of(r.lo, np.minimum(r.hi, v))

    @rule(tosa.AvgPool2dOp)
    def _tosa_avg_pool2d(self, op):
        r = self._r(op.operands[0])
        izp = self._scalar(op.operands[1])
        ozp = self._scalar(op.operands[2])
        if izp is None or ozp is None:
            return None
        k = _ints(op.attributes["kernel"])
        n = k[0] * k[1]
        lo, hi = r.lo - izp, r.hi - izp
        bound = max(int(np.max(np.abs(lo))), int(np.max(np.abs(hi)))) * n
        if bound > (1 << 31) - 1:
            raise _Unproven(f"the sum of a {k[0]}x{k[1]} window reaches {bound} in magnitude, past i32 "
                            "(apply_add_s REQUIREs it to fit)")
        # The average of values in [lo, hi] lies in [lo, hi] (rounding stays inside: count >= 1).
        return Interval.of(lo + ozp, hi + ozp)

    # -- rescale ----------------------------------------------------------------------------------
    @rule(tosa.RescaleOp)
    def _tosa_rescale(self, op):
        x = self._r(op.operands[0])
        mult, shift = const_array(op.operands[1]), const_array(op.operands[2])
        izp, ozp = self._scalar(op.operands[3]), self._scalar(op.operands[4])
        if mult is None or shift is None or izp is None or ozp is None:
            raise _Unproven("its multiplier, shift or zero points are not constants")
        mult = [int(m) for m in np.asarray(mult).reshape(-1)]
        shift = [int(s) for s in np.asarray(shift).reshape(-1)]
        scale32 = bool(_attr_int(op, "scale32", True))
        double = "DOUBLE" in str(op.attributes["rounding_mode"]) if "rounding_mode" in op.attributes else False
        in_bits, out_bits = _bits(op.operands[0]), _bits(op.results[0])
        if _attr_int(op, "input_unsigned", False):
            umax = (1 << in_bits) - 1
            x = Interval.of(np.where(x.lo >= 0, x.lo, 0), np.where(x.lo >= 0, x.hi, umax)).whole() \
                if x.min < 0 else x
            izp &= umax
        if _attr_int(op, "output_unsigned", False):
            ozp &= (1 << out_bits) - 1
        n = max(len(mult), len(x.lo))
        lo = np.broadcast_to(x.lo, (n,)) - izp if len(x.lo) in (1, n) else np.full(n, x.min - izp, dtype=object)
        hi = np.broadcast_to(x.hi, (n,)) - izp if len(x.hi) in (1, n) else np.full(n, x.max - izp, dtype=object)
        which = "apply_scale_32" if scale32 else "apply_scale_16"
        out_lo, out_hi = [], []
        for c in range(n):
            m, s = mult[c if len(mult) > 1 else 0], shift[c if len(shift) > 1 else 0]
            ch = f" (channel {c})" if len(mult) > 1 else ""
            v_lo, v_hi = int(lo[c]), int(hi[c])
            if m < 0:
                raise _Unproven(f"its multiplier{ch} is {m}; {which} REQUIREs multiplier >= 0")
            if not 2 <= s <= 62:
                raise _Unproven(f"its shift{ch} is {s}; {which} REQUIREs 2 <= shift <= 62")
            if scale32 and (v_lo < -(1 << (s - 1)) or v_hi >= 1 << (s - 1)):
                raise _Unproven(f"its input{ch} after the zero point reaches [{v_lo}, {v_hi}]; with shift {s}, "
                                f"apply_scale_32 REQUIREs {_pow2(-(1 << (s - 1)))} <= value < {_pow2(1 << (s - 1))}")
            r_lo, r_hi = _scale32(v_lo, m, s, double and scale32), _scale32(v_hi, m, s, double and scale32)
            if r_lo < -(1 << 31) or r_hi > (1 << 31) - 1:
                raise _Unproven(f"its input{ch} after the zero point reaches [{v_lo}, {v_hi}]; scaled by {m} * 2**-{s} "
                                f"it reaches [{r_lo}, {r_hi}], past int32 ({which} REQUIREs it to fit)")
            if r_lo + ozp < -(1 << 31) or r_hi + ozp > (1 << 31) - 1:
                raise _Unproven(f"the scaled value{ch} plus the output zero point {ozp} leaves int32 "
                                "(apply_add_s REQUIREs it to fit)")
            out_lo.append(r_lo + ozp)
            out_hi.append(r_hi + ozp)
        out = Interval.of(out_lo, out_hi)
        if _attr_int(op, "output_unsigned", False):
            out = out.clip(0, (1 << out_bits) - 1)
            if out.max >= 1 << (out_bits - 1):
                return None    # stored as the signed bit pattern
            return out
        if len(out.lo) > 1 and len(out.lo) != _last_dim(op.results[0]):
            out = out.whole()
        return out

    # -- accumulating ops -------------------------------------------------------------------------
    def _accumulate(self, op, pos: np.ndarray, neg: np.ndarray, x: Interval, what: str) -> Interval:
        """pos / neg: [OC, IC] sums of the weights' positive / negative parts (after their zero point)
        over the window; x: the input's interval after its zero point, per input channel or one."""
        xlo = np.broadcast_to(x.lo, (pos.shape[1],))
        xhi = np.broadcast_to(x.hi, (pos.shape[1],))
        # Exact in int64 while |weight sums| * |x| * channels stays below 2**62 (any i8 / i16 layer).
        small = max(abs(int(min(xlo))), abs(int(max(xhi)))) < 1 << 32 and \
            max(int(pos.max(initial=0)), -int(neg.min(initial=0))) * pos.shape[1] < 1 << 30
        kind = np.int64 if small else object
        pos, neg = pos.astype(kind), neg.astype(kind)
        xlo, xhi = xlo.astype(kind), xhi.astype(kind)
        # Largest / smallest contribution of each weight; partial sums lie between the sums of the
        # negative-going and the positive-going contributions.
        hi = (pos @ xhi + neg @ xlo).astype(object)
        lo = (pos @ xlo + neg @ xhi).astype(object)
        part_hi = (pos @ np.maximum(xhi, 0) + neg @ np.minimum(xlo, 0)).astype(object)
        part_lo = (pos @ np.minimum(xlo, 0) + neg @ np.maximum(xhi, 0)).astype(object)
        acc = op.results[0]
        r = _type_range(element_type(acc))
        worst = int(np.argmax(np.maximum(part_hi - r[1], r[0] - part_lo)))
        if part_lo[worst] < r[0] or part_hi[worst] > r[1]:
            raise _Unproven(f"its {what} accumulator (output channel {worst}) reaches "
                            f"[{part_lo[worst]}, {part_hi[worst]}] for inputs in [{int(min(xlo))}, {int(max(xhi))}] "
                            f"after the zero point, past {element_type(acc)}: apply_add_s REQUIREs every partial sum to fit")
        return Interval.of(lo, hi)

    def _with_bias(self, op, acc: Interval, bias_value) -> Interval:
        b = self._r(bias_value)
        n = len(acc.lo)
        blo = np.broadcast_to(b.lo, (n,)) if len(b.lo) in (1, n) else np.full(n, b.min, dtype=object)
        bhi = np.broadcast_to(b.hi, (n,)) if len(b.hi) in (1, n) else np.full(n, b.max, dtype=object)
        lo, hi = acc.lo + blo, acc.hi + bhi
        r = _type_range(element_type(op.results[0]))
        bad = np.flatnonzero((lo < r[0]) | (hi > r[1]))
        if bad.size:
            c = int(bad[0])
            raise _Unproven(f"its accumulator plus bias (output channel {c}) reaches [{lo[c]}, {hi[c]}], past "
                            f"{element_type(op.results[0])}: apply_add_s REQUIREs it to fit")
        return Interval.of(lo, hi)

    def _conv_input(self, op, zp_index: int, padded: bool) -> Interval | None:
        x = self._r(op.operands[0])
        izp = self._scalar(op.operands[zp_index])
        if izp is None:
            return None
        x = x.shifted(-izp)
        if padded:      # padding reads 0, not the zero point
            x = Interval.of(np.minimum(x.lo, 0), np.maximum(x.hi, 0))
        return x

    def _weights(self, op, index: int, zp_index: int) -> np.ndarray | None:
        w = const_array(op.operands[index])
        wzp = self._scalar(op.operands[zp_index])
        if w is None or wzp is None:
            return None
        return np.asarray(w).astype(np.int64) - wzp

    def _conv_like(self, op, w: np.ndarray | None, x: Interval | None, what: str, bias_index: int):
        """w: [OC, window, IC] (window flattened)."""
        if x is None:
            return None
        if w is None:
            # Weights not constant: the largest magnitude of their type.
            wr = self._r(op.operands[1]).whole()
            terms = int(np.prod(op.operands[1].type.shape)) // max(1, _last_dim(op.results[0]) or 1)
            return self._generic_acc(op, x, wr, terms, what, bias_index)
        pos = np.where(w > 0, w, 0).sum(axis=1)
        neg = np.where(w < 0, w, 0).sum(axis=1)
        if len(x.lo) not in (1, pos.shape[1]):
            x = x.whole()
        acc = self._accumulate(op, pos, neg, x, what)
        return self._with_bias(op, acc, op.operands[bias_index])

    def _generic_acc(self, op, x: Interval, w: Interval, terms: int, what: str, bias_index: int | None):
        x = x.whole()
        corners = [x.min * w.min, x.min * w.max, x.max * w.min, x.max * w.max]
        lo, hi = min(min(corners), 0) * terms, max(max(corners), 0) * terms
        r = _type_range(element_type(op.results[0]))
        if lo < r[0] or hi > r[1]:
            raise _Unproven(f"its {what} accumulator reaches [{lo}, {hi}] ({terms} products of [{x.min}, {x.max}] "
                            f"and [{w.min}, {w.max}]), past {element_type(op.results[0])}: apply_add_s REQUIREs every "
                            "partial sum to fit")
        acc = Interval.of(lo, hi)
        return acc if bias_index is None else self._with_bias(op, acc, op.operands[bias_index])

    @rule(tosa.Conv2DOp)
    def _tosa_conv2d(self, op):
        pad = _ints(op.attributes["pad"])
        w = self._weights(op, 1, 4)
        x = self._conv_input(op, 3, any(pad))
        if w is not None:
            w = w.reshape(w.shape[0], -1, w.shape[-1])
        return self._conv_like(op, w, x, "conv2d", 2)

    @rule(tosa.Conv3DOp)
    def _tosa_conv3d(self, op):
        pad = _ints(op.attributes["pad"])
        w = self._weights(op, 1, 4)
        x = self._conv_input(op, 3, any(pad))
        if w is not None:
            w = w.reshape(w.shape[0], -1, w.shape[-1])
        return self._conv_like(op, w, x, "conv3d", 2)

    @rule(tosa.TransposeConv2DOp)
    def _tosa_transpose_conv2d(self, op):
        w = self._weights(op, 1, 4)
        x = self._conv_input(op, 3, True)    # output positions no input reaches add nothing
        if w is not None:
            w = w.reshape(w.shape[0], -1, w.shape[-1])
        return self._conv_like(op, w, x, "transpose_conv2d", 2)

    @rule(tosa.DepthwiseConv2DOp)
    def _tosa_depthwise_conv2d(self, op):
        pad = _ints(op.attributes["pad"])
        w = self._weights(op, 1, 4)
        x = self._conv_input(op, 3, any(pad))
        if x is None:
            return None
        if w is None:
            return self._conv_like(op, None, x, "depthwise_conv2d", 2)
        kh, kw, c, m = w.shape
        # Output channel c * M + m reads input channel c through w[:, :, c, m].
        w = w.reshape(kh * kw, c * m).T                       # [OC, window]
        pos = np.where(w > 0, w, 0).sum(axis=1)
        neg = np.where(w < 0, w, 0).sum(axis=1)
        xin = x if len(x.lo) in (1,) else Interval.of(np.repeat(x.lo, m), np.repeat(x.hi, m)) \
            if len(x.lo) == c else x.whole()
        lo_oc = np.broadcast_to(xin.lo, (c * m,))
        hi_oc = np.broadcast_to(xin.hi, (c * m,))
        # One input channel per output channel: a diagonal [OC, OC] would be wasteful, so each row
        # is its own [1, 1] problem, done at once with the same formulas as _accumulate.
        pos_o, neg_o = pos.astype(object), neg.astype(object)
        hi = pos_o * hi_oc + neg_o * lo_oc
        lo = pos_o * lo_oc + neg_o * hi_oc
        part_hi = pos_o * np.maximum(hi_oc, 0) + neg_o * np.minimum(lo_oc, 0)
        part_lo = pos_o * np.minimum(lo_oc, 0) + neg_o * np.maximum(hi_oc, 0)
        r = _type_range(element_type(op.results[0]))
        bad = np.flatnonzero((part_lo < r[0]) | (part_hi > r[1]))
        if bad.size:
            k = int(bad[0])
            raise _Unproven(f"its depthwise_conv2d accumulator (output channel {k}) reaches [{part_lo[k]}, "
                            f"{part_hi[k]}], past {element_type(op.results[0])}: apply_add_s REQUIREs every partial sum "
                            "to fit")
        return self._with_bias(op, Interval.of(lo, hi), op.operands[2])

    @rule(tosa.MatMulOp)
    def _tosa_matmul(self, op):
        a = self._r(op.operands[0]).whole()
        azp, bzp = self._scalar(op.operands[2]), self._scalar(op.operands[3])
        if azp is None or bzp is None:
            return None
        a = a.shifted(-azp)
        b = const_array(op.operands[1])
        if b is not None:
            b = np.asarray(b).astype(np.int64) - bzp            # [N, C, W]
            pos = np.where(b > 0, b, 0).sum(axis=1).max(axis=0)  # per column W, worst batch
            neg = np.where(b < 0, b, 0).sum(axis=1).min(axis=0)
            return self._accumulate(op, pos[:, None], neg[:, None], a, "matmul")
        bb = self._r(op.operands[1]).whole().shifted(-bzp)
        c = op.operands[0].type.shape[-1]
        return self._generic_acc(op, a, bb, c, "matmul", None)


def _reshaped_from(value):
    """The value a chain of reshapes reads (the same elements in the same order), else the value itself."""
    while isa(value.owner, tosa.ReshapeOp):
        value = value.owner.operands[0]
    return value


_RULES = rules_of(RangeAnalysis)

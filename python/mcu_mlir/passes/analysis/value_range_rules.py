"""The value-range analysis' rules for constants, data movement and elementwise arithmetic
(a mixin of passes/verify_value_ranges.RangeAnalysis, which drives them and holds the intervals)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..._mlir import ir, tosa
from ...ir.ops import isa
from ...ir.constants import const_array, shape_values
from .value_intervals import (Interval, _LAZY, _Unproven, _attr_int, _bits, _ints, _last_dim, _rank, _type_range, element_type, rule)


class ElementwiseRules:
    """Constants, data movement, comparisons and elementwise arithmetic: one `_tosa_<op>` method each."""

    # -- constants and data movement --------------------------------------------------------------
    @rule(tosa.ConstOp)
    def _tosa_const(self, op):
        return _LAZY

    def _const_range(self, res):
        if _type_range(element_type(res)) is None:
            return None
        arr = const_array(res)
        if arr is None or arr.size == 0:
            return None
        arr = np.asarray(arr).astype(np.int64)
        if arr.ndim == 0:
            return Interval.of(int(arr), int(arr))
        flat = arr.reshape(-1, arr.shape[-1])
        return Interval.of(flat.min(axis=0).astype(object), flat.max(axis=0).astype(object))

    def _same_last_axis(self, op, source) -> Interval:
        """The source's interval, per channel when the last axis is carried over unchanged."""
        r = self._r(source)
        if len(r.lo) > 1 and _last_dim(op.results[0]) != len(r.lo):
            return r.whole()
        return r

    @rule(tosa.ReshapeOp)
    def _tosa_reshape(self, op):
        r = self._r(op.operands[0])
        if len(r.lo) > 1:
            ins, out = op.operands[0].type, op.results[0].type
            same = (isinstance(ins, ir.RankedTensorType) and isinstance(out, ir.RankedTensorType)
                    and ins.rank and out.rank and ins.shape[-1] == out.shape[-1])
            return r if same else r.whole()
        return r

    @rule(tosa.TransposeOp)
    def _tosa_transpose(self, op):
        perms = _ints(op.attributes["perms"])
        r = self._r(op.operands[0])
        return r if perms and perms[-1] == len(perms) - 1 else r.whole()

    @rule(tosa.SliceOp)
    def _tosa_slice(self, op):
        r = self._r(op.operands[0])
        if len(r.lo) == 1:
            return r
        start, size = shape_values(op.operands[1]), shape_values(op.operands[2])
        if start is None or size is None:
            return r.whole()
        n = size[-1] if size[-1] >= 0 else len(r.lo) - start[-1]
        return Interval.of(r.lo[start[-1]:start[-1] + n], r.hi[start[-1]:start[-1] + n])

    @rule(tosa.PadOp)
    def _tosa_pad(self, op):
        r = self._r(op.operands[0])
        pad = shape_values(op.operands[1])
        if pad is not None and not any(pad):
            return r
        value = self._scalar(op.operands[2]) if len(op.operands) > 2 else 0
        padded = Interval.of(value, value) if value is not None else self._r(op.operands[2]).whole()
        if len(r.lo) > 1 and (pad is None or pad[-2] or pad[-1]):
            r = r.whole()
        return r.union(padded)

    @rule(tosa.ConcatOp)
    def _tosa_concat(self, op):
        axis = _attr_int(op, "axis")
        parts = [self._r(v) for v in op.operands]
        rank = _rank(op.results[0])
        dims = [_last_dim(v) for v in op.operands]
        if rank and axis % rank == rank - 1 and None not in dims:
            # Along the last axis: each input's channels in turn.
            return Interval.of(np.concatenate([np.broadcast_to(p.lo, (d,)) for p, d in zip(parts, dims)]),
                               np.concatenate([np.broadcast_to(p.hi, (d,)) for p, d in zip(parts, dims)]))
        if len({len(p.lo) for p in parts}) > 1:
            parts = [p.whole() for p in parts]
        out = parts[0]
        for p in parts[1:]:
            out = out.union(p)
        return out

    @rule(tosa.TileOp)
    def _tosa_tile(self, op):
        r = self._r(op.operands[0])
        n = _last_dim(op.results[0])
        if len(r.lo) > 1 and n is not None and n % len(r.lo) == 0:
            return Interval.of(np.tile(r.lo, n // len(r.lo)), np.tile(r.hi, n // len(r.lo)))
        return r.whole() if len(r.lo) > 1 else r

    @rule(tosa.ReverseOp)
    def _tosa_reverse(self, op):
        r = self._r(op.operands[0])
        rank = _rank(op.results[0])
        if len(r.lo) > 1 and rank and _attr_int(op, "axis") % rank == rank - 1:
            return Interval.of(r.lo[::-1], r.hi[::-1])
        return r

    @rule(tosa.IdentityOp, tosa.MaxPool2dOp)
    def _passthrough(self, op):
        return self._same_last_axis(op, op.operands[0])

    @rule(tosa.ResizeOp)
    def _tosa_resize(self, op):
        mode = str(op.attributes["mode"]) if "mode" in op.attributes else ""
        if "NEAREST" in mode:
            return self._same_last_axis(op, op.operands[0])
        scale = shape_values(op.operands[1])
        if scale is None or element_type(op.operands[0]) == element_type(op.results[0]):
            return None
        # Bilinear on integers: four non-negative weights that sum to scale_y_n * scale_x_n.
        r = self._same_last_axis(op, op.operands[0])
        return Interval.of(r.lo * (scale[0] * scale[2]), r.hi * (scale[0] * scale[2]))

    @rule(tosa.GatherOp)
    def _tosa_gather(self, op):
        k = op.operands[0].type.shape[1] if isinstance(op.operands[0].type, ir.RankedTensorType) else None
        idx = self._r(op.operands[1])
        if k is not None and (idx.min < 0 or idx.max >= k):
            raise _Unproven(f"an index reaches [{idx.min}, {idx.max}], past the values' {k} rows "
                            "(GATHER REQUIREs 0 <= index < K)")
        out = self._same_last_axis(op, op.operands[0])
        values = const_array(op.operands[0])
        if idx.attains is not None and values is not None and values.shape[0] == 1 and values.shape[2] == 1:
            # One row of one value per index: the output is the lookup of each index in turn.
            shape, axis, v, kept = idx.attains
            out = dataclasses.replace(out, attains=(shape, axis, int(values[0, v, 0]), kept))
        return out

    @rule(tosa.SelectOp)
    def _tosa_select(self, op):
        pred = self._r(op.operands[0])
        if pred.min == pred.max == 1:
            return self._r(op.operands[1])
        if pred.max == 0:
            return self._r(op.operands[2])
        a, b = self._r(op.operands[1]), self._r(op.operands[2])
        eq = op.operands[0].owner
        if isa(eq, tosa.EqualOp):
            # select(x == k, a, x): where x is taken it is not k (a divisor's 0 replaced).
            for x, k in ((eq.operands[0], eq.operands[1]), (eq.operands[1], eq.operands[0])):
                known = self._r(k)
                if x == op.operands[2] and known.min == known.max:
                    k, b = known.min, b.whole()
                    b = Interval.of(b.min + (b.min == k), b.max - (b.max == k)) if b.min < b.max else b
                    break
        if len(a.lo) != len(b.lo) and 1 not in (len(a.lo), len(b.lo)):
            a, b = a.whole(), b.whole()
        return a.union(b)

    @rule(tosa.ArgMaxOp)
    def _tosa_argmax(self, op):
        ty = op.operands[0].type
        axis = _attr_int(op, "axis")
        return Interval.of(0, max(ty.shape[axis] - 1, 0)) if isinstance(ty, ir.RankedTensorType) else None

    @rule(tosa.LogicalAndOp, tosa.LogicalOrOp, tosa.LogicalXorOp, tosa.LogicalNotOp)
    def _boolean(self, op):
        return Interval.of(0, 1)

    def _compare(self, op, holds, fails):
        a, b = (x.whole() for x in self._pair(op))
        if holds(a, b):
            return Interval.of(1, 1)
        return Interval.of(0, 0) if fails(a, b) else Interval.of(0, 1)

    @rule(tosa.GreaterOp)
    def _tosa_greater(self, op):
        return self._compare(op, lambda a, b: a.min > b.max, lambda a, b: a.max <= b.min)

    @rule(tosa.GreaterEqualOp)
    def _tosa_greater_equal(self, op):
        return self._compare(op, lambda a, b: a.min >= b.max, lambda a, b: a.max < b.min)

    @rule(tosa.EqualOp)
    def _tosa_equal(self, op):
        return self._compare(op, lambda a, b: a.min == a.max == b.min == b.max,
                             lambda a, b: a.max < b.min or b.max < a.min)

    # -- elementwise arithmetic -------------------------------------------------------------------
    @rule(tosa.ClampOp)
    def _tosa_clamp(self, op):
        r = self._r(op.operands[0])
        lo, hi = _attr_int(op, "min_val"), _attr_int(op, "max_val")
        return r.clip(lo, hi)

    def _pair(self, op):
        a, b = self._r(op.operands[0]), self._r(op.operands[1])
        if len(a.lo) != len(b.lo) and 1 not in (len(a.lo), len(b.lo)):
            a, b = a.whole(), b.whole()
        return a, b

    @rule(tosa.MaximumOp)
    def _tosa_maximum(self, op):
        a, b = self._pair(op)
        return Interval.of(np.maximum(a.lo, b.lo), np.maximum(a.hi, b.hi))

    @rule(tosa.MinimumOp)
    def _tosa_minimum(self, op):
        a, b = self._pair(op)
        return Interval.of(np.minimum(a.lo, b.lo), np.minimum(a.hi, b.hi))

    @rule(tosa.AddOp)
    def _tosa_add(self, op):
        a, b = self._pair(op)
        lo, hi = a.lo + b.lo, a.hi + b.hi
        self._fits(lo, hi, op.results[0], "the sum")
        return Interval.of(lo, hi)

    @rule(tosa.SubOp)
    def _tosa_sub(self, op):
        spread = self._minus_extreme(op)
        if spread is not None:
            return spread
        a, b = self._pair(op)
        lo, hi = a.lo - b.hi, a.hi - b.lo
        self._fits(lo, hi, op.results[0], "the difference")
        out = Interval.of(lo, hi)
        held = self._r(op.operands[0]).attains
        c = self._scalar(op.operands[1]) if held is not None else None
        if c is not None and int(np.prod(op.operands[1].type.shape)) == 1 and \
                tuple(op.results[0].type.shape) == tuple(op.operands[0].type.shape):
            shape, axis, v, kept = held      # x - c in place: every row holds v - c where x held v
            out = dataclasses.replace(out, attains=(shape, axis, v - c, kept))
        return out

    def _minus_extreme(self, op):
        """max(x) - x, x - max(x), x - min(x), min(x) - x along an axis: of one sign, and 0 in every slice."""
        first, second = op.operands[0], op.operands[1]
        for reduced, plain, sign in ((first, second, 1), (second, first, -1)):
            owner = reduced.owner
            if not isa(owner, tosa.ReduceMaxOp, tosa.ReduceMinOp) or owner.operands[0] != plain:
                continue
            x = self._r(plain)
            width = x.max - x.min
            # sign 1: reduced - x; with max that is >= 0, with min <= 0.
            positive = isa(owner, tosa.ReduceMaxOp) == (sign == 1)
            shape = tuple(plain.type.shape)
            axis = _attr_int(owner, "axis")
            spread = Interval.of(0, width) if positive else Interval.of(-width, 0)
            return dataclasses.replace(spread, attains=(shape, axis, 0, self._kept_witness(owner, plain)))
        return None

    def _kept_witness(self, reduce, plain):
        """The constant mask M (in `plain`'s shape) when `plain` is select(M, a, b) (maybe cast) whose
        fill b is never above a (max; never below for min): in a row where M keeps an element, the
        extreme is then attained at a kept one (a masked softmax's max)."""
        sel = plain.owner
        while isa(sel, tosa.CastOp):
            sel = sel.operands[0].owner
        if not isa(sel, tosa.SelectOp) or tuple(sel.results[0].type.shape) != tuple(plain.type.shape):
            return None
        mask = const_array(sel.operands[0])
        a, b = self._r(sel.operands[1]).whole(), self._r(sel.operands[2]).whole()
        below = b.max <= a.min if isa(reduce, tosa.ReduceMaxOp) else b.min >= a.max
        if mask is None or not below:
            return None
        return np.broadcast_to(np.asarray(mask).astype(bool), tuple(plain.type.shape))

    @rule(tosa.MulOp)
    def _tosa_mul(self, op):
        if op.operands[0] == op.operands[1]:          # a square
            a = self._r(op.operands[0])
            shift = self._scalar(op.operands[2]) if len(op.operands) > 2 else 0
            if shift is not None and (shift == 0 or (_bits(op.operands[0]) == 32 and 0 < shift <= 63)):
                lo = np.where((a.lo <= 0) & (a.hi >= 0), 0, np.minimum(a.lo * a.lo, a.hi * a.hi))
                hi = np.maximum(a.lo * a.lo, a.hi * a.hi)
                if shift:
                    rnd = 1 << (shift - 1)
                    lo = np.array([(int(x) + rnd) >> shift for x in lo], dtype=object)
                    hi = np.array([(int(x) + rnd) >> shift for x in hi], dtype=object)
                r = _type_range(element_type(op.results[0]))
                if int(np.max(hi)) <= r[1]:
                    return Interval.of(lo, hi)
                if shift:
                    self._fits(lo, hi, op.results[0], f"the product rounded by 2**-{shift}")
                return None
        a, b = self._pair(op)
        shift = self._scalar(op.operands[2]) if len(op.operands) > 2 else 0
        corners = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
        lo = np.minimum(np.minimum(corners[0], corners[1]), np.minimum(corners[2], corners[3]))
        hi = np.maximum(np.maximum(corners[0], corners[1]), np.maximum(corners[2], corners[3]))
        if shift is None:
            raise _Unproven("its shift is not a constant")
        if not 0 <= shift <= 63:
            raise _Unproven(f"its shift is {shift}; MUL REQUIREs 0 <= shift <= 63")
        if _bits(op.operands[0]) == 32 and shift > 0:
            rnd = 1 << (shift - 1)
            lo = np.array([(int(x) + rnd) >> shift for x in lo], dtype=object)
            hi = np.array([(int(x) + rnd) >> shift for x in hi], dtype=object)
            self._fits(lo, hi, op.results[0], f"the product rounded by 2**-{shift}")
            return Interval.of(lo, hi)
        r = _type_range(element_type(op.results[0]))
        if int(np.min(lo)) < r[0] or int(np.max(hi)) > r[1]:
            return None        # the low bits of the product (no REQUIRE): any value of the type
        return Interval.of(lo, hi)

    @rule(tosa.NegateOp)
    def _tosa_negate(self, op):
        r = self._r(op.operands[0])
        izp = self._scalar(op.operands[1]) if len(op.operands) > 1 else 0
        ozp = self._scalar(op.operands[2]) if len(op.operands) > 2 else 0
        if izp is None or ozp is None:
            return None
        acc = (-(1 << 31), (1 << 31) - 1) if _bits(op.operands[0]) <= 32 else (-(1 << 63), (1 << 63) - 1)
        lo, hi = ozp - (r.hi - izp), ozp - (r.lo - izp)
        if int(np.min(lo)) < acc[0] or int(np.max(hi)) > acc[1]:
            raise _Unproven(f"0 - (input - zero point) reaches [{int(np.min(lo))}, {int(np.max(hi))}], "
                            f"past the accumulator ([{acc[0]}, {acc[1]}]): apply_sub_s REQUIREs it to fit")
        return Interval.of(lo, hi)

    @rule(tosa.AbsOp)
    def _tosa_abs(self, op):
        r = self._r(op.operands[0])
        tmin = _type_range(element_type(op.operands[0]))[0]
        if r.min <= tmin:
            raise _Unproven(f"its input reaches {r.min}, the type's minimum, whose negation does not fit "
                            "(apply_sub_s REQUIREs it)")
        lo = np.where(r.lo >= 0, r.lo, np.where(r.hi <= 0, -r.hi, 0))
        hi = np.maximum(np.abs(r.lo), np.abs(r.hi))
        return Interval.of(lo, hi)

    @rule(tosa.IntDivOp)
    def _tosa_intdiv(self, op):
        a, b = self._pair(op)
        spans = b.min <= 0 <= b.max
        if spans and not self._nonzero(op.operands[1]):
            raise _Unproven(f"its divisor reaches [{b.min}, {b.max}], which holds 0 (INTDIV REQUIREs "
                            "divisor != 0)")
        tmin = _type_range(element_type(op.operands[0]))[0]
        if a.min <= tmin and b.min <= -1 <= b.max:
            raise _Unproven(f"{tmin} / -1 does not fit (INTDIV REQUIREs the quotient to)")
        if spans:           # |divisor| >= 1
            top = max(abs(a.min), abs(a.max))
            return Interval.of(-top, top)

        def div(x, y):
            q = abs(x) // abs(y)
            return q if (x >= 0) == (y > 0) else -q
        a, b = a.whole(), b.whole()
        qs = [div(x, y) for x in (a.min, a.max) for y in (b.min, b.max)]
        return Interval.of(min(qs), max(qs))

    def _nonzero(self, value) -> bool:
        """select(x == 0, c, x) with c never 0: a divisor whose zeros were replaced."""
        sel = value.owner
        if not isa(sel, tosa.SelectOp):
            return False
        eq = sel.operands[0].owner
        if not isa(eq, tosa.EqualOp):
            return False
        c = self._r(sel.operands[1])
        if c.min <= 0 <= c.max:
            return False
        for x, k in ((eq.operands[0], eq.operands[1]), (eq.operands[1], eq.operands[0])):
            zero = self._r(k)
            if x == sel.operands[2] and zero.min == zero.max == 0:
                return True
        return False

    def _shift_amount(self, op, what: str) -> Interval:
        s = self._r(op.operands[1])
        bits = _bits(op.operands[0])
        if s.min < 0 or s.max > bits - 1:
            raise _Unproven(f"its shift amount reaches [{s.min}, {s.max}]; {what} of i{bits} REQUIREs "
                            f"0 <= shift <= {bits - 1}")
        return s

    @rule(tosa.ArithmeticRightShiftOp)
    def _tosa_arithmetic_right_shift(self, op):
        a = self._r(op.operands[0])
        s = self._shift_amount(op, "ARITHMETIC_RIGHT_SHIFT").whole()
        lo = np.minimum(a.lo >> s.min, a.lo >> s.max)
        hi = np.maximum(a.hi >> s.min, a.hi >> s.max)
        if _attr_int(op, "round", False):
            hi = hi + 1
        return Interval.of(lo, hi)

    @rule(tosa.LogicalLeftShiftOp)
    def _tosa_logical_left_shift(self, op):
        a = self._r(op.operands[0])
        s = self._shift_amount(op, "LOGICAL_LEFT_SHIFT").whole()
        lo = np.minimum(a.lo << s.min, a.lo << s.max)
        hi = np.maximum(a.hi << s.min, a.hi << s.max)
        r = _type_range(element_type(op.results[0]))
        if int(np.min(lo)) < r[0] or int(np.max(hi)) > r[1]:
            span = 1 << _bits(op.operands[0])
            if s.min == s.max and int(np.max(hi - lo)) < span:
                # One shift: the bits shifted out wrap each bound alike; contiguous unless the wrap splits it.
                wrap = lambda v: ((int(v) - r[0]) % span) + r[0]   # noqa: E731
                wlo = np.array([wrap(v) for v in lo], dtype=object)
                whi = np.array([wrap(v) for v in hi], dtype=object)
                if (wlo <= whi).all() and ((whi - wlo) == (hi - lo)).all():
                    return Interval.of(wlo, whi)
            c = self._normalising(op)
            if c is not None:
                return Interval.of(0, (1 << (_bits(op.operands[0]) - c)) - 1)
            return None        # bits shifted out (no REQUIRE): any value of the type
        return Interval.of(lo, hi)

    def _normalising(self, op) -> int | None:
        """c when the shift is clz(x) - c (maybe masked by an AND) of the non-negative x it shifts: x < 2**(bits -
        clz(x)), so x << (clz(x) - c) < 2**(bits - c)."""
        x, s = op.operands[0], op.operands[1]
        if self._r(x).min < 0:
            return None
        owner = s.owner
        if isa(owner, tosa.BitwiseAndOp) and self._r(owner.operands[0]).min >= 0:
            owner = owner.operands[0].owner      # y & m <= y for y >= 0
        if not isa(owner, tosa.SubOp):
            return None
        clz, c = owner.operands[0].owner, self._scalar(owner.operands[1])
        if not isa(clz, tosa.ClzOp) or clz.operands[0] != x or c is None or c < 0:
            return None
        return c

    @rule(tosa.LogicalRightShiftOp)
    def _tosa_logical_right_shift(self, op):
        a = self._r(op.operands[0])
        s = self._shift_amount(op, "LOGICAL_RIGHT_SHIFT").whole()
        if a.min >= 0:
            return Interval.of(a.lo >> s.max, a.hi >> s.min)
        if s.min >= 1:
            return Interval.of(0, ((1 << _bits(op.operands[0])) - 1) >> s.min)
        return None

    @rule(tosa.ClzOp)
    def _tosa_clz(self, op):
        a = self._r(op.operands[0]).whole()
        bits = _bits(op.operands[0])
        if a.min < 0:
            return Interval.of(0, bits if a.max >= 0 else 0)
        return Interval.of(bits - a.max.bit_length(), bits - a.min.bit_length())

    @rule(tosa.BitwiseAndOp)
    def _tosa_bitwise_and(self, op):
        a, b = self._r(op.operands[0]).whole(), self._r(op.operands[1]).whole()
        for x, m in ((a, b), (b, a)):
            k = (m.min + 1).bit_length() - 1
            if m.min == m.max and m.min >= 0 and m.min == (1 << k) - 1 and x.min >> k == x.max >> k:
                return Interval.of(x.min & m.min, x.max & m.min)    # the low k bits of one block
            k = (-m.min).bit_length() - 1
            if m.min == m.max and m.min < 0 and m.min == -(1 << k):
                return Interval.of(x.min & m.min, x.max & m.min)    # rounded down to a multiple of 2**k
        his = [x.max for x in (a, b) if x.min >= 0]
        return Interval.of(0, min(his)) if his else None

    @rule(tosa.CastOp)
    def _tosa_cast(self, op):
        r = self._r(op.operands[0])
        out = _type_range(element_type(op.results[0]))
        if out is None:
            return None
        if r.min < out[0] or r.max > out[1]:
            return None        # truncated (no REQUIRE): any value of the type
        return r if _type_range(element_type(op.operands[0])) is not None else None

    @rule(tosa.TableOp)
    def _tosa_table(self, op):
        table = const_array(op.operands[1])
        r = self._r(op.operands[0]).whole()
        if table is None:
            return None
        table = np.asarray(table).astype(np.int64).reshape(-1)
        held = self._r(op.operands[0]).attains
        if _bits(op.operands[0]) == 8:
            part = table[max(r.min + 128, 0):min(r.max + 128, 255) + 1]
            out = Interval.of(int(part.min()), int(part.max()))
            entry = (lambda v: int(table[v + 128])) if len(table) == 256 else None
        else:
            # int16: (base << 7) + (next - base) * fraction over entries index and index + 1.
            first, last = (r.min + 32768) >> 7, (r.max + 32768) >> 7
            part = table[max(first, 0):min(last + 1, len(table) - 1) + 1]
            out = Interval.of(int(part.min()) << 7, int(part.max()) << 7)

            def entry(v):
                i, fraction = (v + 32768) >> 7, (v + 32768) & 127
                return (int(table[i]) << 7) + (int(table[i + 1]) - int(table[i])) * fraction
            entry = entry if len(table) == 513 else None
        if held is not None and entry is not None:
            shape, axis, v, kept = held     # each row's element that holds v looks up one entry
            out = dataclasses.replace(out, attains=(shape, axis, entry(v), kept))
        return out

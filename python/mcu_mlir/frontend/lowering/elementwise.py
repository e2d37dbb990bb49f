"""Elementwise arithmetic on quantized tensors: add / sub / mul / min / max, and clamp-like tails
(relu, relu6, hardtanh, clamp) that fuse into the op before them."""

from __future__ import annotations

import math

import numpy as np

from ...diagnostics import UserError
from ...fixed_point.qmath import quantize_multiplier
from .values import DQ, RANGE, Clamp, Const, Indices, Pending, Q, dequantize_const
from ..graph.nodes import aten, describe, qd, shape_of


def _lower_add_sub(self, node, ins, scale, zp, elem, clamp):
    a, b = ins[0], ins[1]
    if not all(isinstance(v, (DQ, Const)) for v in (a, b)) or any(
            isinstance(v, Const) and v.scales is None for v in (a, b)):
        return None   # scalar operand: a table
    if len(ins) > 2 and ins[2] not in (1, 1.0) or node.kwargs.get("alpha", 1) != 1:
        return None
    qa, qb = self.operand(a), self.operand(b)
    out_shape = shape_of(node)
    left_shift = 20 if elem == "i8" else 15
    twice_max = 2 * max(qa.scale, qb.scale)
    parts = []
    for q in (qa, qb):
        # (x - zp) << left_shift, exactly, then scaled to the common scale (CMSIS-NN's add).
        if q.elem == "i8":
            shifted = self.w.rescale(q.v, [1 << 30], [30 - left_shift], q.zp, 0, "i32")
        else:   # int16 (zero point 0): a rescale cannot shift 16-bit values left by 15 exactly
            wide = self.w.cast(q.v, "i32")
            amount = self.w.const(np.array([left_shift]), "i32", (1,) * len(q.shape))
            shifted = self.w.logical_left_shift(wide, amount)
        m, s = quantize_multiplier(q.scale / twice_max)
        parts.append(self.w.rescale(shifted, [m], [s], 0, 0, "i32"))
    pa, pb = (self.w.reshape(p, (1,) * (len(out_shape) - len(p.shape)) + tuple(p.shape)) for p in parts)
    add = node.target in (aten.add.Tensor, aten.add_.Tensor)
    acc = self.w.add(pa, pb) if add else self.w.sub(pa, pb)
    m, s = quantize_multiplier(twice_max / ((1 << left_shift) * scale))
    out = Q(self.w.rescale(acc, [m], [s], 0, zp, elem), scale, zp)
    self.record_layer(node, "add" if add else "sub", qa, None, scale, zp, [qb])
    return self.apply_clamp(out, clamp)


def _lower_mul(self, node, ins, scale, zp, elem, clamp):
    a, b = ins[0], ins[1]
    if not all(isinstance(v, (DQ, Const)) for v in (a, b)) or any(
            isinstance(v, Const) and v.scales is None for v in (a, b)):
        return None
    qa, qb = self.operand(a), self.operand(b)
    out_shape = shape_of(node)
    ops = []
    for q in (qa, qb):
        wide = self.w.rescale(q.v, [1 << 30], [30], q.zp, 0, "i32")   # x - zp, exactly
        ops.append(self.w.reshape(wide, (1,) * (len(out_shape) - len(q.shape)) + tuple(q.shape)))
    acc = self.w.mul(ops[0], ops[1])
    m, s = quantize_multiplier(qa.scale * qb.scale / scale)
    out = Q(self.w.rescale(acc, [m], [s], 0, zp, elem), scale, zp)
    self.record_layer(node, "mul", qa, None, scale, zp, [qb])
    return self.apply_clamp(out, clamp)


def _lower_div(self, node, ins, scale, zp, elem, clamp):
    """a / b of two run-time tensors as an integer division: ((a - zp_a) << k) / (b - zp_b) in
    int32 (TOSA INTDIV truncates toward zero; with k = 21 the truncation is far below an output
    step), then one rescale by s_a / (s_b 2**k s_out). Where the divisor is 0 the quotient
    saturates with a's sign, as the quantized a / 0 = +-inf does (0 / 0: the zero point). A table
    of 1 / b would keep b's 8 bits where 1 / b spans orders of magnitude (EfficientViT's linear
    attention normaliser lost 25-30 dB there)."""
    a, b = ins[0], ins[1]
    if not (isinstance(a, DQ) and isinstance(b, DQ)) or node.kwargs:
        return None
    qa, qb = a.q, b.q
    out_shape = shape_of(node)
    # The shift by a rescale needs |a - zp| < 2**(29 - k) (the reference model's bound): 255 for
    # int8, 32768 for int16 (zero point 0).
    k = 21 if qa.elem == "i8" else 13
    w = self.w

    def widened(q, shift):
        v = w.rescale(q.v, [1 << 30], [30 - shift], q.zp, 0, "i32")     # (x - zp) << shift, exactly
        return w.reshape(v, (1,) * (len(out_shape) - len(q.shape)) + tuple(q.shape))
    num, den = widened(qa, k), widened(qb, 0)
    rank = len(out_shape)
    zero = w.equal(den, w.scalar(0, rank))
    safe = w.select(zero, w.scalar(1, rank), den)
    quotient = w.intdiv(num, safe)
    m, sh = quantize_multiplier(qa.scale / (qb.scale * 2.0 ** k * scale))
    value = w.rescale(quotient, [m], [sh], 0, zp, elem)
    # a / 0 is +-inf where a is not 0 (the quantized float saturates), 0 / 0 the zero point.
    lo, hi = RANGE[elem]
    for bound, compared in ((hi, [num, w.scalar(0, rank)]), (lo, [w.scalar(0, rank), num])):
        signed = w.greater(*compared)
        hit = w.logical_and(zero, signed)
        value = w.select(hit, w.scalar(bound, rank, elem), value)
    zero_over_zero = w.logical_and(zero, w.equal(num, w.scalar(0, rank)))
    value = w.select(zero_over_zero, w.scalar(zp, rank, elem), value)
    out = Q(value, scale, zp)
    self.record_layer(node, "div", qa, None, scale, zp, [qb])
    return self.apply_clamp(out, clamp)


def _lower_min_max(self, node, ins, scale, zp, elem, clamp):
    """Elementwise maximum / minimum: both operands in the output's parameters, then compare
    (rounding is monotonic, so this equals quantizing the float result)."""
    if not all(isinstance(v, (DQ, Const)) for v in ins[:2]) or any(
            isinstance(v, Const) and v.scales is None for v in ins[:2]):
        return None
    out_shape = shape_of(node)
    qs = [self.requantize(self.operand(v), scale, zp, elem) for v in ins[:2]]
    # TOSA compares int32 only: widen (exactly), compare, narrow (the values fit).
    vs = [self.w.cast(q.v, "i32") for q in qs]
    vs = [self.w.reshape(v, (1,) * (len(out_shape) - len(v.shape)) + tuple(v.shape)) for v in vs]
    maximum = node.target in (aten.maximum.default, aten.max.other)
    wide = self.w.maximum(*vs) if maximum else self.w.minimum(*vs)
    out = Q(self.w.cast(wide, elem), scale, zp)
    return self.apply_clamp(out, clamp)


def _lower_clamp_tail(self, node, ins, scale, zp, elem, clamp):
    """relu/hardtanh/clamp on an already-integer tensor: rescale then clamp."""
    if not isinstance(ins[0], DQ):
        return None
    c = _CLAMPS[node.target](node)
    out = self.requantize(ins[0].q, scale, zp, elem)
    return self.apply_clamp(self.apply_clamp(out, c), clamp)


def _eager_relu(self, node, ins):
    # relu keeps the parameters only when the quantizer shared them; else it is lowered at its quantize.
    users = [u for u in node.users if u.target == qd.quantize_per_tensor.default]
    q = ins[0].q
    if len(users) != len(node.users) or any((float(u.args[1]), int(u.args[2])) != (q.scale, q.zp) for u in users):
        return None
    c = _CLAMPS[node.target](node)
    return DQ(self.apply_clamp(q, c))


def _clamp_of(node) -> Clamp:
    t = node.target
    if t in (aten.relu.default, aten.relu_.default):
        return Clamp(0.0, None)
    if t == aten.relu6.default:
        return Clamp(0.0, 6.0)
    if t in (aten.hardtanh.default, aten.hardtanh_.default):
        a = list(node.args) + [None, None]
        lo = a[1] if a[1] is not None else node.kwargs.get("min_val", -1.0)
        hi = a[2] if a[2] is not None else node.kwargs.get("max_val", 1.0)
        return Clamp(float(lo), float(hi))
    a = list(node.args) + [None, None]
    lo = a[1] if a[1] is not None else node.kwargs.get("min")
    hi = a[2] if a[2] is not None else node.kwargs.get("max")
    return Clamp(None if lo is None else float(lo), None if hi is None else float(hi))


_CLAMPS = {t: _clamp_of for t in (aten.relu.default, aten.relu_.default, aten.relu6.default,
                                  aten.hardtanh.default, aten.hardtanh_.default,
                                  aten.clamp.default, aten.clamp_.default)}


def _softmax_readers(node) -> bool:
    """Whether every reader of `node` (through PT2E's quantize / dequantize) is a softmax."""
    readers, pending = [], list(node.users)
    while pending:
        user = pending.pop()
        if user.target in (qd.quantize_per_tensor.default, qd.dequantize_per_tensor.default):
            pending.extend(user.users)
        else:
            readers.append(user)
    return bool(readers) and all(r.target in (aten.softmax.int, aten._softmax.default) for r in readers)


def runtime_condition(self, cond, shape):
    """A run-time flag tensor (int32, 0 / 1) as booleans, its rank that of `shape` (broadcast)."""
    rank = len(shape)
    v = self.w.reshape(cond.v, (1,) * (rank - len(cond.v.shape)) + tuple(cond.v.shape))
    return self.w.greater(v, self.w.scalar(0, rank))


def _lower_where(self, node, ins, scale, zp, elem, clamp):
    """where(condition, a, b): a select between a and b, each requantized to the output (an
    activation) or its constant's integer. The condition is constant, a 0 / 1 flag computed at run
    time (from a mask input, or a comparison of an activation with a constant: _eager_compare).
    A -inf b (a masked fill before softmax) is the smallest integer, allowed only where every
    reader is a softmax, which takes the mask itself (the exponential of a masked value is 0)."""
    cond, a, b = ins[0], ins[1], ins[2]
    runtime = isinstance(cond, Indices)
    if any(isinstance(v, Pending) for v in (a, b)) or not (runtime or any(isinstance(v, DQ) for v in (a, b))):
        return None
    if not runtime and (not isinstance(cond, Const) or cond.scales is not None):
        raise UserError(f"{describe(node)}: this condition is computed from activations in a way that is not "
                        "supported (a constant one, a comparison of an activation with a constant, or one "
                        "computed from an integer input such as an attention mask, is)")
    lo, hi = RANGE[elem]
    shape = tuple(shape_of(node))

    def side(v, fill_ok):
        if isinstance(v, DQ):
            q = self.requantize(v.q, scale, zp, elem)
            return self.w.reshape(q.v, (1,) * (len(shape) - len(q.shape)) + tuple(q.shape))
        values = np.asarray(dequantize_const(v) if isinstance(v, Const) else v, np.float64)
        if np.isinf(values).any():
            if values.size != 1 or values.reshape(-1)[0] > 0 or not fill_ok or not _softmax_readers(node):
                raise UserError(f"{describe(node)}: filling with {values.reshape(-1)[0]} is supported only as a "
                                "mask before softmax")
            return self.w.scalar(lo, len(shape), elem)
        ints = np.clip(np.round(values / scale) + zp, lo, hi).astype(np.int64)
        if ints.size == 1:
            return self.w.scalar(int(ints.reshape(-1)[0]), len(shape), elem)
        return self.w.const(ints.reshape((1,) * (len(shape) - ints.ndim) + ints.shape), elem)

    va, vb = side(a, False), side(b, True)
    if runtime:
        cond_v = runtime_condition(self, cond, shape)
    else:
        mask = np.broadcast_to(np.asarray(cond.data).astype(bool), shape)
        if mask.all() and isinstance(a, DQ):    # keeps every value (an attention mask without padding)
            return self.apply_clamp(self.requantize(a.q, scale, zp, elem), clamp)
        cond_v = self.w.const(mask.astype(np.int64), "i1")
    out = self.w.select(cond_v, va, vb)
    inputs = [v.q for v in (a, b) if isinstance(v, DQ)]
    if inputs:      # (two constants selected by a run-time flag: no quantized input to report)
        self.record_layer(node, "where", inputs[0], None, scale, zp, inputs[1:])
    return self.apply_clamp(Q(out, scale, zp), clamp)


_COMPARISONS = {aten.gt.Scalar: "gt", aten.gt.Tensor: "gt", aten.ge.Scalar: "ge", aten.ge.Tensor: "ge",
                aten.lt.Scalar: "lt", aten.lt.Tensor: "lt", aten.le.Scalar: "le", aten.le.Tensor: "le",
                aten.eq.Scalar: "eq", aten.eq.Tensor: "eq", aten.ne.Scalar: "ne", aten.ne.Tensor: "ne"}


def _eager_compare(self, node, ins):
    """x > c (>=, <, <=, ==, !=) of an activation and a constant: a 0 / 1 flag (int32) that where /
    masked_fill select with. The quantized model compares x's dequantized float32 value, a
    monotonic function of its integer, so the integers that pass are read off all of them (every
    int8 / int16 value, through torch's own dequantize and comparison): a run from the top (>, >=),
    from the bottom (<, <=), at most one value (==) or all but it (!=), one integer comparison."""
    import torch
    x, c = ins[0], ins[1]
    if isinstance(c, Const) and c.scales is None and np.asarray(c.data).size == 1:
        c = np.asarray(c.data).reshape(-1)[0]
    if not isinstance(x, DQ) or isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, float, np.number)):
        return None
    q = x.q
    lo, hi = RANGE[q.elem]
    ints = torch.arange(lo, hi + 1, dtype=torch.int32)
    dtype = torch.int8 if q.elem == "i8" else torch.int16
    values = qd.dequantize_per_tensor.default(ints.to(dtype), q.scale, q.zp, lo, hi, dtype)
    kind = _COMPARISONS[node.target]
    passing = np.nonzero(getattr(torch, kind)(values, float(c)).numpy())[0] + lo
    shape = tuple(shape_of(node))
    rank = len(shape)
    if passing.size in (0, hi - lo + 1):         # never or always: a constant flag
        return Const(np.full(shape, int(passing.size > 0), np.int64))
    wide = self.w.cast(q.v, "i32")
    wide = self.w.reshape(wide, (1,) * (rank - len(q.shape)) + tuple(q.shape))
    if kind in ("gt", "ge"):
        hit = self.w.greater_equal(wide, self.w.scalar(int(passing[0]), rank))
    elif kind in ("lt", "le"):
        hit = self.w.greater_equal(self.w.scalar(int(passing[-1]), rank), wide)
    else:
        value = int(passing[0]) if kind == "eq" else int(np.setdiff1d(np.arange(lo, hi + 1), passing)[0])
        hit = self.w.equal(wide, self.w.scalar(value, rank))
    yes, no = (0, 1) if kind == "ne" else (1, 0)
    return Indices(self.w.select(hit, self.w.scalar(yes, rank), self.w.scalar(no, rank)),
                   flag=True, activation=True)


# sqrt of the normalised sum of squares n (top bit at 29 or 30) from its top 16 bits v = n >> 16
# (8192 <= v < 32768), looked up at v - 16384: halved so that every entry fits int16.
_SQRT_TABLE = np.array([round(math.sqrt(max(j * 128 - 16384, 8192) * 65536.0) / 2) for j in range(513)])


def _lower_hypot(self, node, ins, scale, zp, elem, clamp):
    """hypot(a, b) = sqrt(a^2 + b^2) (a spectrogram's magnitude) on the integers: the sum of squares
    exact in int32, shifted left by an even amount (CLZ) so its square root is a table lookup of
    its top bits times 2**-shift/2; then one rescale and a per-element rounding shift. Squaring in
    int8 / int16 first would lose the quiet bins (a square's range is the square of its input's)."""
    a, b = ins[0], ins[1]
    if not all(isinstance(v, DQ) for v in (a, b)):
        return None
    qa = a.q
    qb = self.requantize(b.q, qa.scale, qa.zp)
    w = self.w
    shape = shape_of(node)
    rank = len(shape)

    def s(v):
        return w.scalar(v, rank)
    wide = []
    for q in (qa, qb):
        x = q.v
        if x.elem == "i16":
            # |x - zp| <= 32767: two squares of -32768 would sum to 2**31, past int32 (UNPREDICTABLE).
            x = w.clamp(x, max(-32768, q.zp - 32767), min(32767, q.zp + 32767))
        v = w.rescale(x, [1 << 30], [30], q.zp, 0, "i32")     # x - zp, exactly
        wide.append(w.reshape(v, (1,) * (rank - len(q.shape)) + tuple(q.shape)))
    squares = [w.mul(v, v) for v in wide]
    total = w.add(*squares)          # < 2**31: |x - zp| <= 32767
    clz = w.clz(total)
    even = w.bitwise_and(w.sub(clz, s(1)), s(-2))
    normalised = w.logical_left_shift(total, even)
    index = w.sub(w.logical_right_shift(normalised, s(16)), s(16384))
    root = w.table(w.cast(index, "i16"), w.const(_SQRT_TABLE, "i16", (513,)))    # ~ sqrt(normalised) * 2**6
    # The rescale's factor stays below 2**8 (its shift >= 23: TOSA requires |root| < 2**(shift - 1),
    # and the root reaches 2**21.5); the bits given up come back in the final per-element shift.
    ratio = qa.scale / scale
    headroom = min(16, 13 - math.ceil(math.log2(ratio))) if ratio > 0 else 16
    if headroom < 0:
        raise UserError(f"{describe(node)}: output scale {scale} is too fine for the magnitude's input scale")
    m, sh = quantize_multiplier(ratio * 2.0 ** (headroom - 6))
    scaled = w.rescale(root, [m], [sh], 0, 0, "i32")
    shift = w.add(w.arithmetic_right_shift(even, s(1), round=False), s(headroom))
    y = w.arithmetic_right_shift(scaled, shift, round=True)
    zero = w.equal(total, s(0))
    y = w.select(zero, s(0), y)
    out = Q(w.rescale(y, [1 << 30], [30], 0, zp, elem), scale, zp)
    self.record_layer(node, "hypot", qa, None, scale, zp, [qb])
    return self.apply_clamp(out, clamp)


LOWER = {
    aten.hypot.default: _lower_hypot,
    aten.where.ScalarOther: _lower_where, aten.where.self: _lower_where, aten.where.ScalarSelf: _lower_where,
    aten.where.Scalar: _lower_where,
    aten.add.Tensor: _lower_add_sub, aten.add_.Tensor: _lower_add_sub, aten.sub.Tensor: _lower_add_sub,
    aten.mul.Tensor: _lower_mul, aten.mul_.Tensor: _lower_mul,
    aten.div.Tensor: _lower_div, aten.div_.Tensor: _lower_div,
    aten.maximum.default: _lower_min_max, aten.minimum.default: _lower_min_max,
    aten.max.other: _lower_min_max, aten.min.other: _lower_min_max,     # torch.max(a, b): elementwise
    **{t: _lower_clamp_tail for t in _CLAMPS},
}
EAGER = {aten.relu.default: _eager_relu, aten.relu_.default: _eager_relu, **{t: _eager_compare for t in _COMPARISONS}}
CLAMPS = _CLAMPS

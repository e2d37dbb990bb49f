"""One LSTM step (`mcu_mlir::lstm_cell`) as the integers CMSIS-NN's arm_lstm_unidirectional_s8
computes (fixed_point/cmsis_lstm.py), in TOSA that tosa_reference_model runs:

    per gate:  acc_x = matmul(x, Wx) + bias           gx = rescale(acc_x -> i16, mx)
               acc_h = matmul(h, Wh)                  gh = rescale(acc_h -> i32, mh)
               gate  = lut(sat16(cast32(gx) + gh))
    fc = rescale(mul(f, c) -> i16, forget_to_cell)
    c' = clamp(sat16(rescale(mul(i, g) -> i32, input_to_cell) + cast32(fc)), -clip, clip)
    h' = rescale(mul(o, lut_tanh(c')) -> i8, output, zero point of h)

`sat16` is an identity rescale to int16 (it saturates), `lut` a gather from the 65536 values of
arm_nn_activation_s16 for the gate's activation. The conversion matches this form as one kernel
call; anything else reads it as the TOSA ops above.

Every rescale is given the largest input it can see (`bound`): TOSA's apply_scale_32 REQUIREs
|value| < 2**(shift-1), and a scale too large for it (a cell state at 2**-34 made input_to_cell
2**4) is an UNPREDICTABLE graph to the reference model and an overflow in the kernel.
"""

from __future__ import annotations

import math

import numpy as np

from ...fixed_point import cmsis_lstm
from ...diagnostics import UserError
from ..graph.lstm_cell import LSTM_CELL
from ...fixed_point.qmath import apply_rescale, quantize_multiplier, rescale_admits
from .lstm_integers import PRODUCT_BOUND, activation_lut, product16, saturate16, shared_const
from .values import DQ, Const, Q, Tup, dequantize_const
from ..graph.nodes import describe


def _float(node, v, what: str) -> np.ndarray:
    if not isinstance(v, Const):
        raise UserError(f"{describe(node)}: the LSTM {what} must be a constant")
    return np.asarray(dequantize_const(v) if v.scales is not None else v.data, np.float64)


def _scaled_bound(bound: int, m: int, s: int) -> int:
    """The largest |rescale| of values up to `bound`."""
    return max(abs(apply_rescale(v, m, s)) for v in (-bound, bound))


def _gate(self, x: Q, h: Q, wx, wh, bias, kind: str):
    w = self.w
    rows = x.shape[0]
    hidden = wx.shape[0]
    parts, bounds = [], []
    for q, weights, b in ((x, wx, bias), (h, wh, None)):
        qw, w_scale = cmsis_lstm.quantize_gate_weights(weights)
        a = w.reshape(q.v, (1, rows, q.shape[1]))
        wv = shared_const(self, qw.T.reshape(1, q.shape[1], hidden), "i8")
        acc = w.matmul(a, wv, q.zp, 0)
        # |x - zp| <= 255 times the weights' row sums, plus the bias.
        bound = int(np.abs(qw).sum(axis=1).max(initial=0)) * max(128 + q.zp, 127 - q.zp)
        if b is not None:
            bias_q = np.round(b / (q.scale * w_scale)).astype(np.int64)
            if np.abs(bias_q).max(initial=0) >= 2 ** 31:
                raise UserError(f"{describe(self.node)}: an LSTM bias does not fit in int32 at its scale "
                                f"(input scale x weight scale {q.scale * w_scale:.3g})")
            acc = w.add(acc, w.const(bias_q.reshape(1, 1, hidden), "i32", (1, 1, hidden)))
            bound += int(np.abs(bias_q).max(initial=0))
        gain = q.scale * w_scale / 2.0 ** cmsis_lstm.GATE_POWER
        m, s = quantize_multiplier(gain)
        if not rescale_admits(bound, m, s):
            raise UserError(f"{describe(self.node)}: an LSTM gate's {'input' if b is not None else 'hidden'} "
                            f"scale x weight scale is {gain:.3g} times the gates' 2**-12: its accumulators "
                            f"(up to {bound}) overflow the kernel's int32 requantization")
        parts.append(w.rescale(acc, [m], [s], 0, 0, "i16" if b is not None else "i32", bound=bound))
        bounds.append(min(_scaled_bound(bound, m, s), 1 << 15) if b is not None else _scaled_bound(bound, m, s))
    gx = w.cast(parts[0], "i32")
    pre = w.reshape(saturate16(w, w.add(gx, parts[1]), sum(bounds)),
                    (rows, hidden))
    return activation_lut(self, pre, 0, kind)


def _lower_lstm_cell(self, node, ins):
    x_v, h_v, c_v, w_ih, w_hh, bias = ins[:6]
    x, h, c = (self.operand(v) for v in (x_v, h_v, c_v))
    if x.elem != "i8" or h.elem != "i8" or c.elem != "i16" or c.zp != 0:
        raise UserError(f"{describe(node)}: an LSTM step takes int8 x and h and an int16 cell state")
    power = math.log2(c.scale)
    if power != int(power):
        raise UserError(f"{describe(node)}: the LSTM cell state's scale {c.scale} is not a power of two")
    power = int(power)
    w_ih, w_hh, bias = (_float(node, v, what) for v, what in
                        ((w_ih, "input weights"), (w_hh, "hidden weights"), (bias, "bias")))
    shape = tuple(h.shape)
    hidden = w_hh.shape[1]
    w = self.w
    x2, h2, c2 = (Q(w.reshape(q.v, (int(np.prod(q.shape[:-1], dtype=np.int64)), q.shape[-1])),
                    q.scale, q.zp) for q in (x, h, c))
    # A zero cell state (a first step without one): f x c adds nothing, so the forget gate is not
    # computed (the backend gives the kernel a stand-in).
    zero_cell = isinstance(c_v, Const) and not np.any(c_v.data)
    gates = {}
    for k, name in enumerate(cmsis_lstm.GATES):
        if name == "forget" and zero_cell:
            continue
        rows = slice(k * hidden, (k + 1) * hidden)
        gates[name] = _gate(self, x2, h2, w_ih[rows], w_hh[rows], bias[rows],
                            "tanh" if name == "cell" else "sigmoid")
    mults = cmsis_lstm.cell_multipliers(power, h.scale)
    m, s = mults["input_to_cell"]
    total_bound = _scaled_bound(PRODUCT_BOUND, m, s) + (1 << 15)
    if not rescale_admits(PRODUCT_BOUND, m, s) or not rescale_admits(total_bound, 1 << 30, 30):
        raise UserError(f"{describe(node)}: the LSTM cell state's scale 2**{power} is finer than the kernel's "
                        f"input-to-cell requantization takes (2**{cmsis_lstm.MIN_CELL_POWER} at the finest)")
    total = w.rescale(product16(w, gates["input"], gates["cell"]), [m], [s], 0, 0, "i32", bound=PRODUCT_BOUND)
    if not zero_cell:
        m, s = mults["forget_to_cell"]
        fc = w.rescale(product16(w, gates["forget"], c2.v), [m], [s], 0, 0, "i16", bound=PRODUCT_BOUND)
        total = w.add(total, w.cast(fc, "i32"))
    c_next = w.clamp(saturate16(w, total, total_bound), -cmsis_lstm.CELL_CLIP, cmsis_lstm.CELL_CLIP)
    squashed = activation_lut(self, c_next, cmsis_lstm.tanh_left_shift(power), "tanh")
    m, s = mults["output"]
    if not rescale_admits(PRODUCT_BOUND, m, s):
        raise UserError(f"{describe(node)}: the LSTM hidden state's scale {h.scale:.3g} is too fine for the "
                        "kernel's output requantization")
    h_next = w.rescale(product16(w, gates["output"], squashed), [m], [s], 0, h.zp, "i8", bound=PRODUCT_BOUND)
    self.record_layer(node, "lstm_cell", x, None, h.scale, h.zp)
    return Tup([DQ(Q(w.reshape(h_next, shape), h.scale, h.zp)),
                DQ(Q(w.reshape(c_next, shape), c.scale, 0))])


LOWER = {}
EAGER = {LSTM_CELL: _lower_lstm_cell}

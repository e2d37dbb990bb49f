"""UNIDIRECTIONAL_SEQUENCE_LSTM, int8 (int8 input, hidden state and weights, int32 bias, int16
cell state at a power-of-two scale), as TFLite Micro's reference kernel computes it
(lstm_eval.h LstmStep, lstm_eval_common.cc for its parameters), step by step over the sequence:

  per gate:  fx   = sat16(MBQM(x . Wx + bias, sx * swx / 2**-12))      FullyConnected, int16 out
             fh   = sat16(MBQM(h . Wh, sh * swh / 2**-12))             (no recurrent bias)
             gate = act(sat16(fx + fh))                                AddElementWise, Logistic / Tanh
  c' = sat16(sat16(MBQM(f * c, 2**-15)) + sat16(MBQM(i * g, 2**-30 / sc))), clipped when cell_clip > 0
  h' = sat8(MBQM(o * tanh(c'), 2**-30 / sh) + zp_h); the output at that step is h'

The activations are TFLM's int16 Logistic / Tanh, which CMSIS-NN's arm_nn_activation_s16 computes
too (fixed_point/cmsis_lstm.py): its interpolation in the 256-entry sigmoid table, in int32 TOSA
ops. Unlike CMSIS-NN's arm_lstm_unidirectional_s8, the reference saturates each fully connected
and each product to int16 before it adds them, so this form is not the one the backend puts on that
kernel: it runs as its parts (matmuls, rescales, the activations' int32 arithmetic). The hidden and cell states are variable tensors: the state
carried from call to call (variables.py); TFLM starts the hidden state at its zero point and the cell
state at 0. Batches are independent, so batch-major and time-major sequences run the same steps.
"""

from __future__ import annotations

import math

import numpy as np

from ...diagnostics import UserError
from ...fixed_point import cmsis_lstm
from ..lowering.lstm_integers import product16, saturate16
from .lower import Lowering
from .reader import Operator

TANH = 4
GATE_INPUT_SCALE = 2.0 ** -12      # the gates' pre-activations, Q3.12
GATE_OUTPUT_SCALE = 2.0 ** -15     # the gates, Q0.15
# (gate, input weights, recurrent weights, bias) inputs of the op, in TFLM's order of computing them
GATES = (("forget", 2, 6, 13), ("input", 1, 5, 12), ("cell", 3, 7, 14), ("output", 4, 8, 15))
UNSUPPORTED_INPUTS = {9: "peephole", 10: "peephole", 11: "peephole", 16: "projection", 17: "projection",
                      20: "layer normalisation", 21: "layer normalisation", 22: "layer normalisation",
                      23: "layer normalisation"}
CELL_ZERO_POINT_RULE = "TFLite Micro's LSTM reads the cell state without one"


def _activation(lw: Lowering, v, left_shift: int, kind: str):
    """TFLM's int16 Logistic / Tanh (reference_integer_ops; cmsis_lstm.activation_s16) of int16 `v`
    [rows, n] in int32 TOSA arithmetic: the input times 3 (shifted), its magnitude's top bits index
    CMSIS-NN's 256-entry sigmoid table, the low bits interpolate, the sign picks the branch. (A
    lookup in a table of every int16 input would take 128 KB of flash per activation and shift.)"""
    w = lw.w
    sigmoid = kind == "sigmoid"
    bits = 9 if sigmoid else 8
    rank = len(v.shape)

    def k(value):
        return w.scalar(value, rank)
    data = w.mul(w.cast(v, "i32"), k(3 << max(left_shift, 0)))
    if left_shift < 0:
        data = w.arithmetic_right_shift(w.add(data, k(1 << (-left_shift - 1))), k(-left_shift), round=False)
    magnitude = w.abs(data)
    top = w.arithmetic_right_shift(magnitude, k(bits), round=False)
    index = w.minimum(top, k(254))
    table = _shared_table(lw)
    rows, n = v.shape
    ua, ub = (w.reshape(w.gather(table, w.reshape(w.add(index, k(d)) if d else index, (1, rows * n))), (rows, n))
              for d in (0, 1))
    fraction = w.bitwise_and(magnitude, k((1 << bits) - 1))
    inside = w.add(w.logical_left_shift(ua, k(bits)), w.mul(fraction, w.sub(ub, ua)))
    saturated = (0x7FFF << 10) if sigmoid else (0xFFFF << 8)
    result = w.select(w.greater(k(255), top), inside, k(saturated))
    if sigmoid:
        positive, negative = w.add(result, k(1 << 9)), w.sub(k((1 << 25) + (1 << 9) - 1), result)
        shift = 10
    else:
        positive, negative = w.add(result, k(-(1 << 23) + (1 << 7))), w.sub(k((1 << 23) + (1 << 7) - 1), result)
        shift = 8
    chosen = w.select(w.greater_equal(data, k(0)), positive, negative)
    return w.cast(w.arithmetic_right_shift(chosen, k(shift), round=False), "i16")


def _shared_table(lw: Lowering):
    """CMSIS-NN's sigmoid_table_uint16 as a gather's values [1, 256, 1], one constant per model."""
    cache = lw.__dict__.setdefault("_sigmoid_table", {})
    if "table" not in cache:
        cache["table"] = lw.w.const(cmsis_lstm.SIGMOID_TABLE.reshape(1, 256, 1), "i32")
    return cache["table"]


def _weights(lw: Lowering, op: Operator, position: int, shape) -> tuple:
    if position >= len(op.inputs) or op.inputs[position] < 0:
        raise UserError(f"{lw.where(op)}: its input {position} (a gate's weights) is missing; CIFG (no input gate) "
                        "is not supported")
    t = lw.quantized(op, op.inputs[position], f"weights (input {position})")
    if t.data is None or tuple(t.shape) != tuple(shape):
        raise UserError(f"{lw.where(op)}: its weights '{t.name}' must be a constant {list(shape)}, not "
                        f"{list(t.shape)}")
    if t.quant.per_channel or t.quant.zero_point != 0:
        raise UserError(f"{lw.where(op)}: its weights '{t.name}' must be quantized per tensor, symmetric")
    return t.data, t.quant.scale


def _bias(lw: Lowering, op: Operator, position: int, hidden: int) -> np.ndarray:
    if position >= len(op.inputs) or op.inputs[position] < 0:
        return np.zeros(hidden, np.int64)
    t = lw.tensor(op.inputs[position])
    if t.elem != "i32" or t.data is None or t.data.size != hidden:
        raise UserError(f"{lw.where(op)}: its bias '{t.name}' must be a constant int32 vector of {hidden} values")
    return t.data.reshape(hidden).astype(np.int64)


def _check_unsupported(lw: Lowering, op: Operator, options: dict) -> None:
    for position, what in UNSUPPORTED_INPUTS.items():
        if position < len(op.inputs) and op.inputs[position] >= 0:
            raise UserError(f"{lw.where(op)}: it has {what} weights (input {position}); TFLite Micro's integer LSTM "
                            "has none")
    if options.get("FusedActivationFunction", 0) != TANH:
        raise UserError(f"{lw.where(op)}: its cell gate activation {options.get('FusedActivationFunction')} is not "
                        "TANH, the only one supported")


class _Step:
    """The constants every step shares, and one step's TOSA."""

    def __init__(self, lw: Lowering, op: Operator, x, hidden_t, cell_t, depth: int, hidden: int, clip: float):
        self.lw, self.op, self.w = lw, op, lw.w
        self.hidden = hidden
        self.x_zp, self.h_zp = x.quant.zero_point, hidden_t.quant.zero_point
        self.gates = {}
        for name, wx_at, wh_at, bias_at in GATES:
            wx, swx = _weights(lw, op, wx_at, (hidden, depth))
            wh, swh = _weights(lw, op, wh_at, (hidden, hidden))
            mx = lw.multiplier(op, x.quant.scale * swx / GATE_INPUT_SCALE)
            mh = lw.multiplier(op, hidden_t.quant.scale * swh / GATE_INPUT_SCALE)
            self.gates[name] = (self.w.const(wx.T.reshape(1, depth, hidden), "i8"),
                                self.w.const(wh.T.reshape(1, hidden, hidden), "i8"),
                                self.w.const(_bias(lw, op, bias_at, hidden).reshape(1, 1, hidden), "i32"), mx, mh)
        cell_scale = cell_t.quant.scale
        power = math.log2(cell_scale)
        if power != int(power):
            raise UserError(f"{lw.where(op)}: its cell state's scale {cell_scale:g} is not a power of two")
        self.cell_power = int(power)
        self.forget_cell = lw.multiplier(op, GATE_OUTPUT_SCALE)
        self.input_cell = lw.multiplier(op, GATE_OUTPUT_SCALE * GATE_OUTPUT_SCALE / cell_scale)
        self.to_hidden = lw.multiplier(op, GATE_OUTPUT_SCALE * GATE_OUTPUT_SCALE / hidden_t.quant.scale)
        # CreateLstmCellStateInfo: the clip in cell units, truncated to int16.
        self.clip = int(min(max(clip / cell_scale, -32768.0), 32767.0)) if clip > 0 else None

    def _gate(self, name: str, x, h, rows: int):
        w = self.w
        wx, wh, bias, (mx, sx), (mh, sh) = self.gates[name]
        fx = w.rescale(w.add(w.matmul(w.reshape(x, (1, rows, x.shape[-1])), wx, self.x_zp, 0), bias),
                       [mx], [sx], 0, 0, "i16")
        fh = w.rescale(w.matmul(w.reshape(h, (1, rows, self.hidden)), wh, self.h_zp, 0), [mh], [sh], 0, 0, "i16")
        pre = saturate16(w, w.add(w.cast(fx, "i32"), w.cast(fh, "i32")), 1 << 16)
        return _activation(self.lw, w.reshape(pre, (rows, self.hidden)), 0, "tanh" if name == "cell" else "sigmoid")

    def __call__(self, x, h, c):
        """(h', c') of one step: x [rows, depth], h int8 and c int16 [rows, hidden]."""
        w, rows = self.w, x.shape[0]
        g = {name: self._gate(name, x, h, rows) for name, *_ in GATES}
        m, s = self.forget_cell
        kept = w.rescale(product16(w, g["forget"], c), [m], [s], 0, 0, "i16")
        m, s = self.input_cell
        added = w.rescale(product16(w, g["input"], g["cell"]), [m], [s], 0, 0, "i16")
        c_next = saturate16(w, w.add(w.cast(kept, "i32"), w.cast(added, "i32")), 1 << 16)
        if self.clip is not None:
            c_next = w.clamp(c_next, -self.clip, self.clip)
        squashed = _activation(self.lw, c_next, self.cell_power + 12, "tanh")
        m, s = self.to_hidden
        h_next = w.rescale(product16(w, g["output"], squashed), [m], [s], 0, self.h_zp, "i8")
        return h_next, c_next


def _sequence_lstm(lw: Lowering, op: Operator):
    options = op.options or {}
    _check_unsupported(lw, op, options)
    if not op.inputs or op.inputs[0] < 0:
        raise UserError(f"{lw.where(op)}: its input (input 0) is missing")
    if lw.tensor(op.inputs[0]).elem == "i16":
        raise UserError(f"{lw.where(op)}: int16 activations (the int16x8 LSTM, arm_lstm_unidirectional_s16) are not "
                        "supported yet")
    x = lw.quantized(op, op.inputs[0], "input")
    out = lw.quantized(op, op.outputs[0], "output")
    if len(op.inputs) < 20 or min(op.inputs[18], op.inputs[19]) < 0:
        raise UserError(f"{lw.where(op)}: its hidden and cell states (inputs 18 and 19) are missing")
    hidden_t = lw.quantized(op, op.inputs[18], "hidden state")
    cell_t = lw.quantized(op, op.inputs[19], "cell state", ("i16",))
    time_major = bool(options.get("TimeMajor", False))
    if len(x.shape) != 3 or len(out.shape) != 3:
        raise UserError(f"{lw.where(op)}: its input and output must be 3-D sequences")
    steps, batch = (x.shape[0], x.shape[1]) if time_major else (x.shape[1], x.shape[0])
    depth, hidden = x.shape[2], out.shape[2]
    if tuple(out.shape[:2]) != tuple(x.shape[:2]) or int(np.prod(hidden_t.shape)) != batch * hidden \
            or int(np.prod(cell_t.shape)) != batch * hidden:
        raise UserError(f"{lw.where(op)}: input {list(x.shape)}, output {list(out.shape)}, hidden state "
                        f"{list(hidden_t.shape)} and cell state {list(cell_t.shape)} do not fit together")
    step = _Step(lw, op, x, hidden_t, cell_t, depth, hidden, float(options.get("CellClip", 0.0)))
    w = lw.w
    h = w.reshape(lw.state.tensor_state(op, op.inputs[18]), (batch, hidden))
    c = w.reshape(lw.state.tensor_state(op, op.inputs[19], CELL_ZERO_POINT_RULE), (batch, hidden))
    seq = lw.value(x.index, op)
    outputs = []
    for t in range(steps):
        start, size = ((t, 0, 0), (1, batch, depth)) if time_major else ((0, t, 0), (batch, 1, depth))
        h, c = step(w.reshape(w.slice(seq, start, size), (batch, depth)), h, c)
        outputs.append(w.reshape(h, (1, batch, hidden) if time_major else (batch, 1, hidden)))
    lw.state.update_tensor(op.inputs[18], w.reshape(h, hidden_t.shape))
    lw.state.update_tensor(op.inputs[19], w.reshape(c, cell_t.shape))
    return outputs[0] if steps == 1 else w.concat(outputs, 0 if time_major else 1)


LOWER = {"UNIDIRECTIONAL_SEQUENCE_LSTM": _sequence_lstm}

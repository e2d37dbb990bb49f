"""CMSIS-NN's int8 LSTM (arm_lstm_unidirectional_s8) arithmetic, the numbers its parameters hold.

One time step of the kernel (arm_nn_lstm_step_s8), with x and h int8, the cell state c int16 at a
power-of-two scale 2**cell_power, the gates int16:

    gate   = act(clamp16(clamp16(rq(x . Wx + bias', mx)) + rq(h . Wh + hidden_bias', mh)))
    c'     = clamp(rq(i * g, input_to_cell) + clamp16(rq(f * c, forget_to_cell)), -clip, clip)
    h'     = clamp8(rq(o * act_tanh(c', cell_power + 12), output) + zp_h)

where rq is arm_nn_requantize, the gate pre-activations are Q3.12 and the gates Q0.15, and `act`
is arm_nn_activation_s16: a 256-entry sigmoid table read at |x| * 3 with linear interpolation
(tanh through tanh(x) = 2 sigmoid(2x) - 1). `activation_s16` computes it for every int16 input,
so the frontend's TOSA form looks the activation up in a 65536-entry table (a gather the reference
model runs) and the conversion checks a table against this arithmetic before it calls the kernel.
The scales follow TFLite's integer LSTM: gate pre-activations 2**-12, gates 2**-15.
"""

from __future__ import annotations

import functools

import numpy as np

from .qmath import quantize_multiplier

GATE_POWER = -12          # gate pre-activations: Q3.12
GATE_OUT_POWER = -15      # sigmoid / tanh outputs: Q0.15
CELL_CLIP = 32767         # PyTorch clips nothing: the int16 range
# The finest cell state scale, 2**MIN_CELL_POWER: input_to_cell is then 2**(-30 - power) = 2**-2, whose
# rescale admits every |i * g| < 2**30 and whose sum with f * c saturates to int16 in one rescale
# (apply_scale_32 REQUIREs |value| < 2**(shift-1)). Finer scales saturated every c' (2**-34: h all zeros).
MIN_CELL_POWER = -28
GATES = ("input", "forget", "cell", "output")   # PyTorch's order in weight_ih / weight_hh

# CMSIS-NN's sigmoid_table_uint16 (arm_nntables.c): 65536 * sigmoid(i / 24), i = 0..255.
SIGMOID_TABLE = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432,
    42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475,
    49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485,
    55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519,
    59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036,
    62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308, 64357, 64405,
    64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179,
    65194, 65208, 65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337,
    65345, 65352, 65360, 65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425,
    65429, 65433, 65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516, 65517,
    65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524, 65525, 65525,
    65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533,
    65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535
], np.int64)


def activation_s16(x, left_shift: int, kind: str) -> np.ndarray:
    """arm_nn_activation_s16(x, left_shift, ARM_SIGMOID / ARM_TANH) on int16 values."""
    x = np.asarray(x, np.int64)
    sigmoid = kind == "sigmoid"
    abs_shift = 9 if sigmoid else 8
    max_saturation = (0x7FFF << 10) if sigmoid else (0xFFFF << 8)
    multiplier = 3 if left_shift < 0 else 3 << left_shift
    right = -left_shift if left_shift < 0 else 0
    rounding = (1 << (right - 1)) if right > 0 else 0
    data = (x * multiplier + rounding) >> right
    magnitude = np.abs(data)
    uh = magnitude >> abs_shift
    inside = uh < 255
    index = np.where(inside, uh, 0)
    ua, ub = SIGMOID_TABLE[index], SIGMOID_TABLE[index + 1]
    ut = magnitude & ((1 << abs_shift) - 1)
    result = np.where(inside, (ua << abs_shift) + ut * (ub - ua), max_saturation)
    if sigmoid:
        result = np.where(data >= 0, result + (1 << 9), (1 << 25) - result + (1 << 9) - 1) >> 10
    else:
        result = np.where(data >= 0, result - (1 << 23) + (1 << 7), -result + (1 << 23) + (1 << 7) - 1) >> 8
    # The kernel stores the low 16 bits (uint32 arithmetic, then an int16 cast).
    return ((result + (1 << 15)) & 0xFFFF) - (1 << 15)


@functools.lru_cache(maxsize=16)
def activation_table(left_shift: int, kind: str) -> np.ndarray:
    """activation_s16 of every int16 input, -32768 first (a gather's table; read-only, shared)."""
    table = activation_s16(np.arange(-32768, 32768), left_shift, kind)
    table.flags.writeable = False
    return table


def tanh_left_shift(cell_power: int) -> int:
    """The activation's input shift that reads a cell state at 2**cell_power as Q3.12."""
    return cell_power - GATE_POWER


def cell_multipliers(cell_power: int, hidden_scale: float) -> dict:
    """The three fixed requantizations of a step: forget x cell -> cell, input x cell gate -> cell,
    output gate x tanh(cell) -> h."""
    return {"forget_to_cell": quantize_multiplier(2.0 ** GATE_OUT_POWER),
            "input_to_cell": quantize_multiplier(2.0 ** (2 * GATE_OUT_POWER - cell_power)),
            "output": quantize_multiplier(2.0 ** (2 * GATE_OUT_POWER) / hidden_scale)}


def quantize_gate_weights(w: np.ndarray) -> tuple[np.ndarray, float]:
    """int8 symmetric per-tensor weights of one gate (the kernel takes one multiplier a gate)."""
    amax = float(np.max(np.abs(w))) if w.size else 0.0
    scale = amax / 127.0 if amax > 0 else 1.0
    return np.clip(np.round(w / scale), -127, 127).astype(np.int64), scale

"""SVDF (int8 input and output, int8 feature weights; time weights and state both int8 or both
int16) as TFLite Micro's reference kernel computes it (svdf_common.cc EvalIntegerSvdfReference,
which arm_svdf_s8 / arm_svdf_state_s16_s8 compute too with a state zero point of 0):

  state [B, F * M] is F rows of M past activations per batch; every call
  1. shifts each row left by one (the oldest activation drops out),
  2. puts feature[b, f] = sat_T(MBQM(sum_c w_feature[f, c] * (x[b, c] - zp_x), scale 1)) last,
  3. scratch[b, f] = sum_j w_time[f, j] * state[b, f, j] (int32),
  4. out[b, u] = sat_i8(MBQM(bias[u] + sum over the rank of scratch[b, u * R + r], scale 2) + zp_out),
with scale 1 = input scale * feature scale / state scale and scale 2 = state scale * time scale /
output scale, products of float32 as TFLM computes them. The fused activation is not applied
(TFLM's integer kernels apply none). The state is a variable tensor: one more input and output of
the model (variables.py), the new state this op's result.

In TOSA: the feature product is fully connected's matmul + rescale, the shift a slice + concat, the
time product an int32 multiply and reduce_sum, the rank sum a reduce_sum, then bias and rescale.
"""

from __future__ import annotations

import numpy as np

from ...diagnostics import UserError
from .lower import Lowering
from .reader import Operator

STATE_ZERO_POINT_RULE = ("TFLite Micro's CMSIS-NN SVDF kernels and the int16 reference ignore a state zero point, "
                         "so only 0 is exact")


def _tensor(lw: Lowering, op: Operator, position: int, role: str, elems, const: bool = False):
    if position >= len(op.inputs) or op.inputs[position] < 0:
        raise UserError(f"{lw.where(op)}: its {role} (input {position}) is missing")
    t = lw.quantized(op, op.inputs[position], role, elems)
    if const and t.data is None:
        raise UserError(f"{lw.where(op)}: its {role} ('{t.name}') is not a constant")
    if t.quant.per_channel:
        raise UserError(f"{lw.where(op)}: its {role} ('{t.name}') is quantized per channel; TFLite's SVDF takes "
                        "one scale")
    return t


def _svdf(lw: Lowering, op: Operator):
    w = lw.w
    options = op.options or {}
    x = _tensor(lw, op, 0, "input", ("i8",))
    wf = _tensor(lw, op, 1, "feature weights", ("i8",), const=True)
    wt = _tensor(lw, op, 2, "time weights", ("i8", "i16"), const=True)
    out = lw.quantized(op, op.outputs[0], "output")
    state_index = op.inputs[4] if len(op.inputs) > 4 else -1
    if state_index < 0:
        raise UserError(f"{lw.where(op)}: its state (input 4) is missing")
    state_t = lw.tensor(state_index)
    if np.any(wf.quant.zero_points != 0) or np.any(wt.quant.zero_points != 0):
        raise UserError(f"{lw.where(op)}: its weights have a non-zero zero point")
    rank = int(options.get("Rank", 0))
    if len(x.shape) != 2 or len(wf.shape) != 2 or len(wt.shape) != 2 or len(out.shape) != 2:
        raise UserError(f"{lw.where(op)}: input, weights and output must be 2-D")
    batch, depth = x.shape
    filters, memory = wt.shape
    if rank < 1 or filters % rank or wf.shape != (filters, depth) or memory < 1:
        raise UserError(f"{lw.where(op)}: feature weights {list(wf.shape)}, time weights {list(wt.shape)} and rank "
                        f"{rank} do not fit an input of depth {depth}")
    units = filters // rank
    if tuple(out.shape) != (batch, units) or tuple(state_t.shape) != (batch, filters * memory):
        raise UserError(f"{lw.where(op)}: output {list(out.shape)} and state {list(state_t.shape)} must be "
                        f"[{batch}, {units}] and [{batch}, {filters * memory}]")
    if state_t.elem != wt.elem:
        raise UserError(f"{lw.where(op)}: its state is {state_t.elem} but its time weights {wt.elem}; TFLite Micro "
                        "takes both int8 or both int16")
    state = lw.state.tensor_state(op, state_index, STATE_ZERO_POINT_RULE)
    sq = np.float32(state_t.quant.scale)
    scale_1 = float(np.float32(np.float32(x.quant.scale) * np.float32(wf.quant.scale)) / sq)
    scale_2 = float(np.float32(sq * np.float32(wt.quant.scale)) / np.float32(out.quant.scale))
    bias = _bias(lw, op, units, float(sq * np.float32(wt.quant.scale)))

    # 1-2: the feature activations, saturated to the state's type, become each row's newest entry.
    product = w.matmul(w.reshape(lw.value(x.index, op), (1, batch, depth)),
                       w.const(wf.data.T.reshape(1, depth, filters), "i8"), x.quant.zero_point, 0)
    m1, s1 = lw.multiplier(op, scale_1)
    feature = w.reshape(w.rescale(product, [m1], [s1], 0, 0, state_t.elem), (batch, filters, 1))
    rows = w.reshape(state, (batch, filters, memory))
    if memory > 1:
        feature = w.concat([w.slice(rows, (0, 0, 1), (batch, filters, memory - 1)), feature], 2)
    lw.state.update_tensor(state_index, w.reshape(feature, (batch, filters * memory)))
    # 3-4: the time product per filter, the sum over the rank, the bias, the output rescale.
    timed = w.reduce_sum(w.mul(feature, w.const(wt.data.reshape(1, filters, memory), wt.elem)), 2)
    summed = w.reduce_sum(w.reshape(timed, (batch, units, rank)), 2)
    acc = w.add(w.reshape(summed, (batch, units)), w.reshape(bias, (1, units)))
    m2, s2 = lw.multiplier(op, scale_2)
    return w.rescale(acc, [m2], [s2], 0, out.quant.zero_point, "i8")


def _bias(lw: Lowering, op: Operator, units: int, expected_scale: float):
    if len(op.inputs) < 4 or op.inputs[3] < 0:
        return lw.w.const(np.zeros(units, np.int64), "i32", (units,))
    b = lw.tensor(op.inputs[3])
    if b.elem != "i32" or b.data is None or b.data.size != units:
        raise UserError(f"{lw.where(op)}: its bias ('{b.name}') must be a constant int32 vector of {units} values")
    if b.quant is not None and abs(b.quant.scale - expected_scale) >= 1e-5:
        raise UserError(f"{lw.where(op)}: its bias scale {b.quant.scale:g} is not state scale * time weights scale "
                        f"({expected_scale:g}), which TFLite Micro requires")
    return lw.w.const(b.data.reshape(units).astype(np.int64), "i32", (units,))


LOWER = {"SVDF": _svdf}

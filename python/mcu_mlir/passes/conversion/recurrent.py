"""The frontend's LSTM step (frontend/lowering/recurrent.py) matched whole onto
arm_lstm_unidirectional_s8 (mcu_lstm_step_s8, the same integers, without CMSIS-NN): one call per
step, the hidden and cell state in and out.

The TOSA form computes the kernel's integers (fixed_point/cmsis_lstm.py); the match checks every part the
kernel fixes: the activation tables equal arm_nn_activation_s16 for the gate and the cell
state's scale, each requantization is one arm_nn_requantize computes exactly, the saturations are
the kernel's. Weights become the kernel's [H, K] rows and the biases its effective biases
(bias - zero point x row sum). Anything else stays TOSA for the per-op patterns.
"""

from __future__ import annotations

import numpy as np

from ..._mlir import ir, tosa
from ...fixed_point import cmsis_lstm
from ...dialects import cmsisnn, portable
from . import dag_pattern as dag
from .common import OUTER, CONVERTED, NO_MATCH, clamp_bounds, elem, fused_location, make_const, make_op, read_rescale, \
    numel, shape, users

ANY = dag.Const(lambda a: True)
ZERO = dag.scalar(0)


def _named(name):
    return dag.Const(lambda a: True, name)


def _rescale(prefix, source):
    return dag.Node(tosa.RescaleOp, (source, ANY, ANY, ZERO, _named(prefix + "ozp")))


def _lut(prefix, source):
    """reshape(gather(table, reshape(cast32(source) + 32768)))."""
    return {prefix + "lut": dag.Node(tosa.GatherOp, (dag.table(prefix + "table"), prefix + "index")),
            prefix + "index": dag.Node(tosa.AddOp, (prefix + "wide", dag.scalar(32768))),
            prefix + "wide": dag.Node(tosa.CastOp, (source,))}


def _gate(g):
    """One gate: lut(sat16(cast32(rescale16(matmul(x, Wx) + bias)) + rescale32(matmul(h, Wh))))."""
    nodes = _lut(g, g + "pre")
    nodes.update({
        g + "pre": _rescale(g + "pre", g + "sum"),
        g + "sum": dag.Node(tosa.AddOp, (g + "gx32", g + "gh")),
        g + "gx32": dag.Node(tosa.CastOp, (g + "gx",)),
        g + "gx": _rescale(g + "gx", g + "accx"),
        g + "accx": dag.Node(tosa.AddOp, (g + "mmx", _named(g + "bias")), absent_is=0),   # a zero bias folds
        g + "mmx": dag.Node(tosa.MatMulOp, ("$x", _named(g + "wx"), _named(g + "xzp"), ZERO)),
        g + "gh": _rescale(g + "gh", g + "mmh"),
        g + "mmh": dag.Node(tosa.MatMulOp, ("$h", _named(g + "wh"), _named(g + "hzp"), ZERO)),
    })
    return nodes


def _product(name, a, b):
    return {name: dag.Node(tosa.MulOp, (name + "_a", name + "_b", ZERO)),
            name + "_a": dag.Node(tosa.CastOp, (a,)), name + "_b": dag.Node(tosa.CastOp, (b,))}


def _pattern(with_cell: bool):
    """The step; without `with_cell`, a first step from a zero cell state (the frontend leaves
    out the forget term, f x 0)."""
    nodes = {"h_next": _rescale("h_next", "o_prod")}
    nodes.update(_product("o_prod", "o_lut", "t_lut"))
    nodes.update(_lut("t_", "c_next"))
    nodes.update({
        "c_next": dag.Node(tosa.ClampOp, ("c_sat",)),
        "c_sat": _rescale("c_sat", "c_sum" if with_cell else "ig"),
        "ig": _rescale("ig", "ig_prod"),
    })
    if with_cell:
        nodes.update({"c_sum": dag.Node(tosa.AddOp, ("ig", "fc32")),
                      "fc32": dag.Node(tosa.CastOp, ("fc",)),
                      "fc": _rescale("fc", "fc_prod")})
        nodes.update(_product("fc_prod", "f_lut", "$c"))
    nodes.update(_product("ig_prod", "i_lut", "g_lut"))
    for g in ("i_", "f_", "g_", "o_"):
        nodes.update(_gate(g))
    return nodes


PATTERNS_BY_STATE = (_pattern(True), _pattern(False))
GATE_PREFIX = {"input": "i_", "forget": "f_", "cell": "g_", "output": "o_"}


def _saturation(rs) -> bool:
    """An identity rescale (it only saturates to its output type)."""
    return rs is not None and rs.multiplier == [1 << 30] and rs.shift == [30] and rs.input_zp == 0 \
        and rs.output_zp == 0 and not rs.per_channel and rs.scale32


def _requantize(rs, bound: int):
    """(multiplier, CMSIS shift) when arm_nn_requantize computes this per-tensor rescale exactly."""
    if rs is None or rs.per_channel or rs.input_zp != 0 or not rs.requantize_exact(bound):
        return None
    (m, *_), (shift, *_) = rs.cmsis_requantize()
    return m, shift


def _is_table(values, left_shift: int, kind: str) -> bool:
    """Whether a gather's values [1, 65536, 1] are arm_nn_activation_s16's for every int16 input."""
    values = np.asarray(values)
    return values.shape == (1, 65536, 1) and np.array_equal(values.reshape(-1),
                                                             cmsis_lstm.activation_table(left_shift, kind))


def _gate_params(m, g):
    """The kernel's weights, effective biases and requantizations of gate prefix `g`, or None."""
    c = m.consts
    wx, wh = np.asarray(c[g + "wx"], np.int64)[0].T, np.asarray(c[g + "wh"], np.int64)[0].T   # [H, K]
    bias = np.asarray(c[g + "bias"], np.int64).reshape(-1) if g + "bias" in c else np.zeros(wx.shape[0], np.int64)
    xzp, hzp = int(c[g + "xzp"].reshape(-1)[0]), int(c[g + "hzp"].reshape(-1)[0])
    if bias.size != wx.shape[0]:
        return None
    x_bound = int((np.abs(wx).sum(axis=1) * max(127 - xzp, xzp + 128) + np.abs(bias)).max())
    h_bound = int((np.abs(wh).sum(axis=1) * max(127 - hzp, hzp + 128)).max())
    if max(x_bound, h_bound) >= 2 ** 31:
        return None    # the int32 accumulator could overflow
    gx = _requantize(read_rescale(m.ops[g + "gx"]), x_bound)
    gh = _requantize(read_rescale(m.ops[g + "gh"]), h_bound)
    if gx is None or gh is None or not _saturation(read_rescale(m.ops[g + "pre"])):
        return None
    if elem(m.ops[g + "gx"].results[0]) != "i16" or elem(m.ops[g + "gh"].results[0]) != "i32":
        return None
    if not _is_table(c[g + "table"], 0, "tanh" if g == "g_" else "sigmoid"):
        return None
    return {"wx": wx, "wh": wh, "bx": bias - xzp * wx.sum(axis=1), "bh": -hzp * wh.sum(axis=1),
            "xzp": xzp, "mx": gx, "mh": gh}


def _view(value, dims, loc, before):
    """`value` seen as `dims` (a cmsisnn.reshape: no code), or itself when it has that shape."""
    if shape(value) == dims:
        return value
    ty = ir.RankedTensorType.get(dims, ir.RankedTensorType(value.type).element_type)
    return make_op(cmsisnn.ReshapeOp, [value], ty, {}, before=before, loc=loc,
                   source_op=tosa.ReshapeOp.OPERATION_NAME).results[0]


def convert_lstm(op, rw):
    if elem(op.results[0]) != "i8" or elem(op.operands[0]) != "i32":
        return NO_MATCH
    m = next((m for m in (dag.match(p, "h_next", op) for p in PATTERNS_BY_STATE) if m is not None), None)
    if m is None:
        return NO_MATCH
    x, h, cell = m.values["$x"], m.values["$h"], m.values.get("$c")
    inputs, hidden = np.asarray(m.consts["i_wx"]).shape[1:]
    rows = numel(h) // hidden
    if elem(x) != "i8" or elem(h) != "i8" or (cell is not None and elem(cell) != "i16") or \
            numel(op.results[0]) != rows * hidden or numel(m.ops["c_next"].results[0]) != rows * hidden or \
            numel(x) != rows * inputs or (cell is not None and numel(cell) != rows * hidden):
        return NO_MATCH
    gates = {name: _gate_params(m, g) for name, g in GATE_PREFIX.items() if g + "wx" in m.consts}
    if any(p is None for p in gates.values()) or len({p["xzp"] for p in gates.values()}) != 1:
        return NO_MATCH
    if "forget" not in gates:
        # No cell state to forget: the kernel's forget gate multiplies zeros, whatever it is (the
        # input gate's parameters stand in: no arrays of its own).
        gates["forget"] = gates["input"]
    c_next_op = m.ops["c_next"]
    bounds = clamp_bounds(c_next_op)
    fc = _requantize(read_rescale(m.ops["fc"]), 32768 * 32768) if cell is not None else None
    ig_rs = read_rescale(m.ops["ig"])
    ig = _requantize(ig_rs, 32768 * 32768)
    out_rs = read_rescale(op)
    out = _requantize(out_rs, 32768 * 32768)
    if bounds is None or bounds[0] != -bounds[1] or ig is None or out is None \
            or not _saturation(read_rescale(m.ops["c_sat"])) or elem(ig_rs.op.results[0]) != "i32":
        return NO_MATCH
    # The cell state's scale 2**p: input x cell gate (both Q0.15) -> cell is 2**(-30 - p).
    if ig_rs.multiplier[0] != 1 << 30:
        return NO_MATCH
    power = ig_rs.shift[0] - 60
    forget_m, forget_s = cmsis_lstm.cell_multipliers(power, 1.0)["forget_to_cell"]
    if cell is not None and (fc != (forget_m, 31 - forget_s) or elem(m.ops["fc"].results[0]) != "i16"):
        return NO_MATCH    # forget (Q0.15) x cell -> cell, saturated to int16
    if not _is_table(m.consts["t_table"], cmsis_lstm.tanh_left_shift(power), "tanh"):
        return NO_MATCH
    order = cmsis_lstm.GATES
    loc = fused_location([op, c_next_op])
    x_w = make_const(np.stack([gates[n]["wx"] for n in order]).astype(np.int8), op, loc)
    h_w = make_const(np.stack([gates[n]["wh"] for n in order]).astype(np.int8), op, loc)
    x_b = make_const(np.stack([gates[n]["bx"] for n in order]).astype(np.int32), op, loc)
    h_b = make_const(np.stack([gates[n]["bh"] for n in order]).astype(np.int32), op, loc)
    attrs = {"input_offset": -gates["input"]["xzp"],
             "input_multipliers": [gates[n]["mx"][0] for n in order],
             "input_shifts": [gates[n]["mx"][1] for n in order],
             "hidden_multipliers": [gates[n]["mh"][0] for n in order],
             "hidden_shifts": [gates[n]["mh"][1] for n in order],
             "forget_to_cell": [forget_m, 31 - forget_s], "input_to_cell": list(ig), "cell_clip": bounds[1],
             "cell_scale_power": power, "output_multiplier": out[0], "output_shift": out[1],
             "output_offset": out_rs.output_zp}
    if cell is None:   # a zero cell state: the kernel starts from zeros (f x 0 adds nothing)
        cell = make_const(np.zeros((rows, hidden), np.int16), op, loc)
    x, h, cell = (_view(v, [rows, n], loc, op) for v, n in ((x, inputs), (h, hidden), (cell, hidden)))
    h_type = ir.RankedTensorType.get([rows, hidden], ir.IntegerType.get_signless(8))
    c_type = ir.RankedTensorType.get([rows, hidden], ir.IntegerType.get_signless(16))
    kernel = cmsisnn.LstmOp if rw.use_cmsis else portable.LstmOp
    new = make_op(kernel, [x, h, cell, x_w, h_w, x_b, h_b], [h_type, c_type], attrs, before=op, loc=loc,
                  source_op="tosa.lstm_step")
    h_out = _view(new.results[0], shape(op.results[0]), loc, op)
    c_out = _view(new.results[1], shape(c_next_op.results[0]), loc, op)
    c_next_op.results[0].replace_all_uses_with(c_out)
    rw.rewriter.replace_op(op, [h_out])
    # The kernel reads only x, h and c: matched ops that other computations also read (a cast of
    # the cell state the next step shares) stay for them, the rest go.
    absorbed = [o for o in dag.absorbed(m) if o.operation != op.operation]
    dead, changed = set(), True
    while changed:
        changed = False
        for o in absorbed:
            if o.operation not in dead and all(not isinstance(u, ir.Block) and u.operation in dead
                                               for r in o.results for u in users(r)):
                dead.add(o.operation)
                changed = True
    rw.erase(*[o for o in absorbed if o.operation in dead])
    return CONVERTED


PATTERNS = [("lstm-s8", tosa.RescaleOp, convert_lstm, OUTER)]

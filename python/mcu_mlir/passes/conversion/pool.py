"""avg_pool2d / max_pool2d (+ clamp fused into the activation bounds)."""

from __future__ import annotations

from ..base import PassError
from .common import (CONVERTED, clamp_bounds, const_scalar, elem, fused_location, i64_array,
                     make_kernel_op, make_portable, shape, single_user)

_LIMITS = {"i8": (-128, 127), "i16": (-32768, 32767)}


def _convert(op, rw, avg: bool):
    name = op.operation.name
    inp = op.operands[0]
    et = elem(inp)
    if et not in _LIMITS:
        raise PassError(op, f"'{name}' on {et} has no kernel (int8 / int16 only)")
    izp = ozp = 0
    if avg:
        izp, ozp = const_scalar(op.operands[1]), const_scalar(op.operands[2])
        if izp is None or ozp is None:
            raise PassError(op, f"'{name}' needs constant zero points")
    kernel, stride, pad = i64_array(op, "kernel"), i64_array(op, "stride"), i64_array(op, "pad")
    act = list(_LIMITS[et])
    ops, last = [op], op
    clamp = single_user(op, "tosa.clamp")
    bounds = clamp_bounds(clamp)
    if bounds is not None:
        act = [max(act[0], bounds[0]), min(act[1], bounds[1])]
        ops.append(clamp)
        last = clamp
    in_shape, out_shape = shape(inp), shape(op.results[0])
    loc = fused_location(ops)
    if kernel == [1, 1] and stride == [1, 1] and not any(pad) and izp == ozp \
            and act == list(_LIMITS[et]):
        # A 1x1 window copies every element (the mean of one value is itself): a view.
        new = make_kernel_op("reshape", [inp], last.results[0].type, {}, before=op, loc=loc,
                             source_op="+".join(o.operation.name for o in ops))
        rw.replace(ops, last, new)
        return CONVERTED
    source = "+".join(o.operation.name for o in ops)
    # CMSIS-NN's average pool has no zero points: bit for bit when both are 0 (what the frontend
    # emits); with equal non-zero ones a tie may round the other way (1 LSB).
    cmsis_ok = rw.use_cmsis and (not avg or izp == ozp) and (et == "i8" or izp == ozp == 0)
    suffix = "s8" if et == "i8" else "s16"
    if cmsis_ok:
        attrs = {"stride": stride, "padding": [pad[0], pad[2], pad[1], pad[3]],
                 "kernel_size": kernel, "activation": act,
                 "kernel": f"arm_avgpool_{suffix}" if avg else f"arm_max_pool_{suffix}"}
        new = make_kernel_op("avg_pool" if avg else "max_pool", [inp], last.results[0].type,
                             attrs, before=op, loc=loc, source_op=source)
    else:
        params = {"n": in_shape[0], "h": in_shape[1], "w": in_shape[2], "c": in_shape[3],
                  "out_h": out_shape[1], "out_w": out_shape[2], "kernel_h": kernel[0],
                  "kernel_w": kernel[1], "stride_h": stride[0], "stride_w": stride[1],
                  "pad_top": pad[0], "pad_left": pad[2], "pad_bottom": pad[1], "pad_right": pad[3],
                  "input_zp": izp, "output_zp": ozp, "act_min": act[0], "act_max": act[1],
                  "type": "MCU_I8" if et == "i8" else "MCU_I16"}
        new = make_portable("avg_pool2d" if avg else "max_pool2d", [inp], last.results[0].type,
                            params, before=op, loc=loc, source_op=source)
    rw.replace(ops, last, new)
    return CONVERTED


def convert_avg_pool2d(op, rw):
    return _convert(op, rw, avg=True)


def convert_max_pool2d(op, rw):
    return _convert(op, rw, avg=False)


PATTERNS = [
    ("avg-pool2d", "tosa.avg_pool2d", convert_avg_pool2d),
    ("max-pool2d", "tosa.max_pool2d", convert_max_pool2d),
]

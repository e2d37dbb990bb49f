"""avg_pool2d / max_pool2d (+ clamp fused into the activation bounds)."""

from __future__ import annotations

from ..._mlir import ir, tosa
from ...dialects import cmsisnn, portable
from ...ir import attributes as mcu_attrs
from ..base import PassError
from .common import (UNIT, LIMITS, CONVERTED, clamp_bounds, const_scalar, elem, fused_location, i64_array,
                     make_op, single_user)

_LIMITS = LIMITS


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
    clamp = single_user(op, tosa.ClampOp)
    bounds = clamp_bounds(clamp)
    if bounds is not None:
        act = [max(act[0], bounds[0]), min(act[1], bounds[1])]
        ops.append(clamp)
        last = clamp
    loc = fused_location(ops)
    if kernel == [1, 1] and stride == [1, 1] and not any(pad) and izp == ozp \
            and act == list(_LIMITS[et]):
        # A 1x1 window copies every element (the mean of one value is itself): a view.
        new = make_op(cmsisnn.ReshapeOp, [inp], last.results[0].type, {}, before=op, loc=loc,
                      source_op="+".join(o.operation.name for o in ops))
        rw.replace(ops, last, new)
        return CONVERTED
    source = "+".join(o.operation.name for o in ops)
    # CMSIS-NN's average pool has no zero points: bit for bit when both are 0 (what the frontend
    # emits); with equal non-zero ones a tie may round the other way (1 LSB), so those stay portable.
    fallback = None
    if avg and (izp, ozp) != (0, 0):
        fallback = f"zero points {izp} / {ozp}: arm_avgpool has none (a tie could round the other way)"
    cmsis_ok = rw.use_cmsis and fallback is None
    attrs = {"stride": stride, "padding": [pad[0], pad[2], pad[1], pad[3]], "kernel_size": kernel,
             "activation": act}
    if cmsis_ok:
        cls = cmsisnn.AvgPoolOp if avg else cmsisnn.MaxPoolOp
    else:
        cls = portable.AvgPool2DOp if avg else portable.MaxPool2DOp
        attrs.update(input_zp=izp, output_zp=ozp)
    new = make_op(cls, [inp], last.results[0].type, attrs, before=op, loc=loc, source_op=source)
    if rw.use_cmsis and fallback is not None:
        new.attributes[mcu_attrs.FALLBACK] = ir.StringAttr.get(fallback)
    rw.replace(ops, last, new)
    return CONVERTED


def convert_avg_pool2d(op, rw):
    return _convert(op, rw, avg=True)


def convert_max_pool2d(op, rw):
    return _convert(op, rw, avg=False)


PATTERNS = [
    ("avg-pool2d", tosa.AvgPool2dOp, convert_avg_pool2d, UNIT),
    ("max-pool2d", tosa.MaxPool2dOp, convert_max_pool2d, UNIT),
]

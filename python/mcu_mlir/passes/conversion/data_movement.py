"""Data movement: reshape (a view), transpose, concat, pad, slice, tile, reverse, gather, resize."""

from __future__ import annotations

from ..._mlir import ir
from ..base import PassError
from ...dialects.cmsisnn import MAX_OPERANDS
from .common import (CONVERTED, DTYPE_BYTES, DTYPES, const_ints, const_scalar, elem,
                     make_kernel_op, make_portable, shape, str_attr)


def _bytes(op, value) -> int:
    et = elem(value)
    if et not in DTYPE_BYTES:
        raise PassError(op, f"'{op.operation.name}' on {et} has no kernel (integer types only)")
    return DTYPE_BYTES[et]


def _consts(op, index: int, what: str) -> list[int]:
    vals = const_ints(op.operands[index])
    if vals is None:
        raise PassError(op, f"'{op.operation.name}' needs a constant {what}")
    return vals


def convert_reshape(op, rw):
    _bytes(op, op.operands[0])
    new = make_kernel_op("reshape", [op.operands[0]], op.results[0].type, {}, before=op,
                         loc=op.location, source_op=op.operation.name)
    rw.replace([op], op, new)
    return CONVERTED


def _cmsis_4d_s8(rw, *values) -> bool:
    """CMSIS-NN's data-movement kernels take int8 tensors of rank 4 with 16-bit dimensions."""
    return rw.use_cmsis and all(elem(v) == "i8" and len(shape(v)) == 4 and max(shape(v)) < 65536
                                for v in values)


def convert_transpose(op, rw):
    a = op.operands[0]
    perms = [int(x) for x in ir.DenseI32ArrayAttr(op.attributes["perms"])]
    if _cmsis_4d_s8(rw, a):
        new = make_kernel_op("transpose", [a], op.results[0].type,
                             {"perms": perms, "kernel": "arm_transpose_s8"}, before=op,
                             loc=op.location, source_op="tosa.transpose")
        rw.replace([op], op, new)
        return CONVERTED
    params = {"elem_bytes": _bytes(op, a), "in_shape": shape(a), "perms": perms}
    new = make_portable("transpose", [a], op.results[0].type, params, before=op, loc=op.location,
                        source_op="tosa.transpose")
    rw.replace([op], op, new)
    return CONVERTED


def convert_concat(op, rw):
    inputs = list(op.operands)
    axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
    if _cmsis_4d_s8(rw, op.results[0], *inputs) and len(inputs) <= MAX_OPERANDS:
        # CMSIS-NN names NHWC's axes from the innermost: x = C, y = W, z = H, w = N.
        kernel = "arm_concatenation_s8_" + "wzyx"[axis]
        new = make_kernel_op("concat", inputs, op.results[0].type, {"axis": axis, "kernel": kernel},
                             before=op, loc=op.location, source_op="tosa.concat", segmented=True)
        rw.replace([op], op, new)
        return CONVERTED
    params = {"elem_bytes": _bytes(op, op.results[0]), "axis": axis,
              "out_shape": shape(op.results[0])}
    new = make_portable("concat", inputs, op.results[0].type, params, before=op, loc=op.location,
                        source_op="tosa.concat")
    rw.replace([op], op, new)
    return CONVERTED


def convert_pad(op, rw):
    a = op.operands[0]
    padding = _consts(op, 1, "padding")
    value = const_scalar(op.operands[2])
    if value is None:
        raise PassError(op, "'tosa.pad' needs a constant pad value")
    et = elem(a)
    if et not in DTYPES:
        raise PassError(op, f"'tosa.pad' on {et} has no kernel (integer types only)")
    if _cmsis_4d_s8(rw, a, op.results[0]):
        new = make_kernel_op("pad", [a], op.results[0].type,
                             {"padding": padding, "pad_value": value, "kernel": "arm_pad_s8"},
                             before=op, loc=op.location, source_op="tosa.pad")
        rw.replace([op], op, new)
        return CONVERTED
    params = {"type": DTYPES[et], "in_shape": shape(a), "padding": padding, "pad_value": value}
    new = make_portable("pad", [a], op.results[0].type, params, before=op, loc=op.location,
                        source_op="tosa.pad")
    rw.replace([op], op, new)
    return CONVERTED


def convert_slice(op, rw):
    a = op.operands[0]
    start = _consts(op, 1, "start")
    params = {"elem_bytes": _bytes(op, a), "in_shape": shape(a),
              "out_shape": shape(op.results[0]), "start": start}
    new = make_portable("slice", [a], op.results[0].type, params, before=op, loc=op.location,
                        source_op="tosa.slice")
    rw.replace([op], op, new)
    return CONVERTED


def convert_tile(op, rw):
    a = op.operands[0]
    params = {"elem_bytes": _bytes(op, a), "in_shape": shape(a), "out_shape": shape(op.results[0])}
    new = make_portable("tile", [a], op.results[0].type, params, before=op, loc=op.location,
                        source_op="tosa.tile")
    rw.replace([op], op, new)
    return CONVERTED


def convert_reverse(op, rw):
    a = op.operands[0]
    params = {"elem_bytes": _bytes(op, a), "shape": shape(a),
              "axis": int(ir.IntegerAttr(op.attributes["axis"]).value)}
    new = make_portable("reverse", [a], op.results[0].type, params, before=op, loc=op.location,
                        source_op="tosa.reverse")
    rw.replace([op], op, new)
    return CONVERTED


def convert_gather(op, rw):
    values, indices = op.operands
    if elem(indices) != "i32":
        raise PassError(op, "'tosa.gather' needs int32 indices")
    n, k, c = shape(values)
    params = {"elem_bytes": _bytes(op, values), "n": n, "k": k, "c": c, "w": shape(indices)[1]}
    new = make_portable("gather", [values, indices], op.results[0].type, params, before=op,
                        loc=op.location, source_op="tosa.gather")
    rw.replace([op], op, new)
    return CONVERTED


def convert_resize(op, rw):
    a, out = op.operands[0], op.results[0]
    scale, offset, border = _consts(op, 1, "scale"), _consts(op, 2, "offset"), _consts(op, 3, "border")
    mode = str_attr(op, "mode")
    if elem(a) not in ("i8", "i16"):
        raise PassError(op, f"'tosa.resize' on {elem(a)} has no kernel (integer only)")
    n, h, w, c = shape(a)
    params = {"n": n, "h": h, "w": w, "c": c, "out_h": shape(out)[1], "out_w": shape(out)[2],
              "scale_y_n": scale[0], "scale_y_d": scale[1], "scale_x_n": scale[2],
              "scale_x_d": scale[3], "offset_y": offset[0], "offset_x": offset[1],
              "border_y": border[0], "border_x": border[1], "bilinear": int("BILINEAR" in mode),
              "in_type": DTYPES[elem(a)], "out_type": DTYPES[elem(out)]}
    new = make_portable("resize", [a], out.type, params, before=op, loc=op.location,
                        source_op="tosa.resize")
    rw.replace([op], op, new)
    return CONVERTED


PATTERNS = [
    ("reshape", "tosa.reshape", convert_reshape),
    ("identity", "tosa.identity", convert_reshape),
    ("transpose", "tosa.transpose", convert_transpose),
    ("concat", "tosa.concat", convert_concat),
    ("pad", "tosa.pad", convert_pad),
    ("slice", "tosa.slice", convert_slice),
    ("tile", "tosa.tile", convert_tile),
    ("reverse", "tosa.reverse", convert_reverse),
    ("gather", "tosa.gather", convert_gather),
    ("resize", "tosa.resize", convert_resize),
]

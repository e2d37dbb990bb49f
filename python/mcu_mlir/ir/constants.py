"""Reading and writing the data of `tosa.const` / `tosa.const_shape` ops as numpy arrays
(dense, dense_resource, and types numpy lacks such as int48)."""

from __future__ import annotations

import re

import numpy as np

from .._mlir import ir, tosa
from .resources import read_blobs, resource_blobs, resource_name
from .types import NUMPY


class ConstantData:
    """Numpy views of the constants of one module (blobs parsed lazily, once)."""

    def __init__(self, module_op):
        self._module_op = module_op
        self._blobs: dict[str, bytes] | None = None

    def _blob(self, name: str) -> bytes | None:
        if self._blobs is None:
            self._blobs = read_blobs(self._module_op)
        return self._blobs.get(name)

    def array(self, value) -> np.ndarray | None:
        """The data of a `tosa.const` result, or None if it is not a readable constant."""
        owner = value.owner
        if not isinstance(owner, tosa.ConstOp):
            return None
        attr = owner.attributes["values"]
        ty = ir.RankedTensorType(value.type)
        dtype = NUMPY.get(str(ty.element_type))
        if dtype is None:
            return None
        shape = tuple(ty.shape)
        if isinstance(attr, ir.DenseElementsAttr):
            dense = attr
            if dense.is_splat:
                return np.full(shape, _scalar(dense.get_splat_value()), dtype=dtype)
            return np.array(dense).astype(dtype, copy=False).reshape(shape)
        name = resource_name(attr)
        blob = self._blob(name) if name is not None else None
        if blob is None:
            return None
        data = np.frombuffer(blob, dtype=dtype)
        if data.size != int(np.prod(shape, dtype=np.int64)):
            return None
        return data.reshape(shape)


def _scalar(attr):
    if isinstance(attr, ir.BoolAttr):
        return attr.value
    if isinstance(attr, (ir.IntegerAttr, ir.FloatAttr)):
        return attr.value
    raise ValueError(f"unsupported splat {attr}")


def make_constant(array: np.ndarray, like_type, loc=None):
    """A new `tosa.const` (at the current insertion point) holding `array` with like_type's element type."""
    ty = ir.RankedTensorType(like_type)
    new_type = ir.RankedTensorType.get(list(array.shape), ty.element_type)
    data = np.ascontiguousarray(array)
    attr = ir.DenseElementsAttr.get(data, type=new_type)
    return ir.Operation.create("tosa.const", results=[new_type], attributes={"values": attr},
                               loc=loc).result


def make_shape(values, loc=None):
    """A `tosa.const_shape` holding `values`."""
    n = len(values)
    idx = ir.IndexType.get()
    attr = ir.DenseElementsAttr.get(np.asarray(values, dtype=np.int64),
                                    type=ir.RankedTensorType.get([n], idx))
    return ir.Operation.create("tosa.const_shape", results=[ir.Type.parse(f"!tosa.shape<{n}>")],
                               attributes={"values": attr}, loc=loc).result


def shape_values(value) -> list[int] | None:
    """The integers of a `tosa.const_shape` result, or None."""
    owner = value.owner
    if not isinstance(owner, tosa.ConstShapeOp):
        return None
    return [int(x) for x in np.array(owner.attributes["values"])]


def attr_array(attr, ty: ir.RankedTensorType, module_op=None) -> np.ndarray:
    """The values of a dense (or dense_resource) elements attribute as a numpy array of `ty`'s shape."""
    shp = tuple(ty.shape)
    et = str(ty.element_type)
    if et == "i48":
        return parse_dense_text(str(attr), shp, 48)
    if et == "i4" and str(attr).startswith("dense<"):
        # numpy has no int4: read the text (in hex, one element a byte, the value in its low nibble).
        raw = parse_dense_text(str(attr), shp, 8)
        return (((raw & 0xF) ^ 8) - 8).astype(np.int8)
    if isinstance(attr, ir.DenseElementsAttr) or isinstance(attr, ir.DenseIntElementsAttr):
        if attr.is_splat:
            value = np.array(attr).reshape(-1)[0] if et != "index" else int(attr.get_splat_value().value)
            return np.full(shp, value, dtype=NUMPY.get(et, np.int64))
        arr = np.array(attr)
        return arr.reshape(shp)
    name = resource_name(attr)
    if name is not None and module_op is not None:
        blob = resource_blobs(module_op).get(name)
        if blob is not None:
            if et == "i1":
                return np.frombuffer(blob, dtype=np.uint8).astype(bool).reshape(shp)
            return np.frombuffer(blob, dtype=NUMPY[et]).reshape(shp).copy()
    raise ValueError(f"cannot read constant {str(attr)[:80]}")


def parse_dense_text(text: str, shp: tuple, bits: int) -> np.ndarray:
    """Integers of a printed dense attribute whose type numpy lacks (i48 accumulators / biases)."""
    n = int(np.prod(shp, dtype=np.int64))
    m = re.match(r'dense<"0x([0-9A-Fa-f]+)"', text)
    if m:
        raw = bytes.fromhex(m.group(1))
        width = (bits + 7) // 8
        vals = [int.from_bytes(raw[i:i + width], "little", signed=True) for i in range(0, len(raw), width)]
    else:
        body = text[text.index("<") + 1:text.rindex(">", 0, text.index(":"))]
        vals = [int(v) for v in re.findall(r"-?\d+", body)]
    if len(vals) == 1 and n != 1:
        vals = vals * n
    return np.array(vals, dtype=np.int64).reshape(shp)


def module_of(op):
    """The top-level operation (the module) an op is in."""
    cur = op.operation
    while cur.parent is not None:
        cur = cur.parent
    return cur


def const_array(value) -> np.ndarray | None:
    """The value of a tensor produced by tosa.const / tosa.const_shape, else None."""
    op = value.owner
    if not isinstance(op, (tosa.ConstOp, tosa.ConstShapeOp)):
        return None
    attr = op.attributes["values"]
    return attr_array(attr, ir.RankedTensorType(attr.type), module_of(op))

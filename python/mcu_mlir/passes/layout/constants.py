"""Reading and writing the data of `tosa.const` ops as numpy arrays (dense and dense_resource).

The bindings give no access to a dense_resource blob, so the blobs are read once from the module's
printed resource section (hex: 4 bytes of alignment, then the raw little-endian data).
"""

from __future__ import annotations

import re

import numpy as np

from ..._mlir import ir

_NUMPY_OF = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
             "f16": np.float16, "f32": np.float32, "f64": np.float64, "ui8": np.uint8}
_RESOURCE = re.compile(r'^\s*"?([^":\s]+)"?\s*:\s*"0x([0-9A-Fa-f]*)"', re.M)
_RESOURCE_NAME = re.compile(r"dense_resource<([^>]+)>")


class ConstantData:
    """Numpy views of the constants of one module (blobs parsed lazily, once)."""

    def __init__(self, module_op):
        self._module_op = module_op
        self._blobs: dict[str, bytes] | None = None

    def _blob(self, name: str) -> bytes | None:
        if self._blobs is None:
            text = self._module_op.get_asm(binary=False, large_elements_limit=None)
            start = text.rfind("dialect_resources")
            self._blobs = {m.group(1): bytes.fromhex(m.group(2))
                           for m in _RESOURCE.finditer(text[start:])} if start >= 0 else {}
        return self._blobs.get(name)

    def array(self, value) -> np.ndarray | None:
        """The data of a `tosa.const` result, or None if it is not a readable constant."""
        owner = value.owner
        if isinstance(owner, ir.Block) or owner.operation.name != "tosa.const":
            return None
        attr = owner.attributes["values"]
        ty = ir.RankedTensorType(value.type)
        dtype = _NUMPY_OF.get(str(ty.element_type))
        if dtype is None:
            return None
        shape = tuple(ty.shape)
        if isinstance(attr, ir.DenseElementsAttr):
            dense = attr
            if dense.is_splat:
                return np.full(shape, _scalar(dense.get_splat_value()), dtype=dtype)
            return np.array(dense).astype(dtype, copy=False).reshape(shape)
        m = _RESOURCE_NAME.match(str(attr))
        if m is None:
            return None
        blob = self._blob(m.group(1).strip('"'))
        if blob is None:
            return None
        data = np.frombuffer(blob[4:], dtype=dtype)
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
    if isinstance(owner, ir.Block) or owner.operation.name != "tosa.const_shape":
        return None
    return [int(x) for x in np.array(owner.attributes["values"])]

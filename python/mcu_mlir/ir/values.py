"""Reading an SSA value: its tensor type, shape, element type and size, its producer and users.

Every pass and the emitter read values through these (each once had its own `_shape`, `_elem`
and `_nbytes`, with differences no one meant).
"""

from __future__ import annotations

import numpy as np

from .._mlir import ir
from .ops import isa
from .types import BYTES


def tensor_type(value) -> ir.RankedTensorType:
    """The value's ranked tensor type (raises if it has another type)."""
    return ir.RankedTensorType(value.type)


def shape(value) -> list[int]:
    return list(tensor_type(value).shape)


def elem(value) -> str:
    """The MLIR spelling of the element type ("i8", "f32", ...)."""
    return str(tensor_type(value).element_type)


def numel(value) -> int:
    return int(np.prod(shape(value), dtype=np.int64))


def elem_bytes(value) -> int:
    """Bytes per element in memory (4 for a type the project has no storage for)."""
    return BYTES.get(elem(value), 4)


def nbytes(value) -> int:
    """Bytes of the whole tensor in memory."""
    return numel(value) * elem_bytes(value)


def ranked_shape(value) -> tuple[int, ...] | None:
    """The shape of a ranked tensor (dynamic dims included), else None."""
    ty = value.type
    return tuple(ty.shape) if isinstance(ty, ir.RankedTensorType) else None


def static_shape(value) -> list[int] | None:
    """The shape of a ranked tensor with static dims, else None."""
    ty = value.type
    return list(ty.shape) if isinstance(ty, ir.RankedTensorType) and ty.has_static_shape else None


def is_static_tensor(value) -> bool:
    ty = value.type
    return isinstance(ty, ir.RankedTensorType) and ty.has_static_shape


def element_type(value) -> ir.Type | None:
    """The element type of a shaped value, else None."""
    ty = value.type
    return ty.element_type if isinstance(ty, ir.ShapedType) else None


def element_name(value) -> str | None:
    """The spelling of the element type of any shaped value (unranked too), else None."""
    ty = element_type(value)
    return None if ty is None else str(ty)


def rank(value) -> int | None:
    ty = value.type
    return ty.rank if isinstance(ty, ir.RankedTensorType) else None


def producer(value):
    """The op defining `value`, or None for a block argument."""
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner


def users(value) -> list:
    return [u.owner for u in value.uses]


def only_user(value, *classes):
    """The op of the value's only use (of one of `classes`, if given), else None."""
    us = users(value)
    if len(us) != 1 or (classes and not isa(us[0], *classes)):
        return None
    return us[0]


def i32_array(attr) -> list[int]:
    """The integers of a `array<i32: ...>` attribute."""
    return [int(x) for x in ir.DenseI32ArrayAttr(attr)]

"""A conv / linear layer and its requantization, recomputed for a block of its output channels.

Output channels of a convolution or a fully connected layer are independent: channels [c0, c0 + n)
are the same layer with those rows of the weights and the bias and, when the requantization is per
channel, those multipliers and shifts. The passes that split one layer into several
(mcu-split-sliced-convs, mcu-heads-from-linears) find the layer with `read_layer` and build each
part with `build_block`.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..._mlir import ir, tosa
from ..conversion.common import const_array, make_const, read_rescale
from ...ir.ops import create, op_class
from ...ir.values import elem, only_user, producer

# Per-element ops that commute with a channel block (per-tensor parameters).
PER_ELEMENT = (tosa.TableOp, tosa.ClampOp)


def copy_op(op, operands, result_type, before):
    attrs = {name: op.attributes[name] for name in op.attributes}
    return create(op_class(op), results=[result_type], operands=operands, attributes=attrs, loc=op.location,
                  ip=ir.InsertionPoint(before))


def _const_like(array: np.ndarray, like, before, loc) -> ir.Value:
    """A tosa.const of `array` with the element type of the value `like` (int48 and int4 have no
    numpy type: an int4 layer's weights must stay i4, as its weight zero point is)."""
    et = ir.RankedTensorType(like.type).element_type
    width = et.width if isinstance(et, ir.IntegerType) else None
    if width not in (4, 48):
        return make_const(array, before, loc)
    ty = ir.RankedTensorType.get(list(array.shape), et)
    if width == 4:
        attr = ir.DenseElementsAttr.get(np.ascontiguousarray(array.astype(np.int8)), type=ty)
    else:
        attr = ir.Attribute.parse(f"dense<[{', '.join(str(int(v)) for v in array.reshape(-1))}]> : {ty}")
    return create(tosa.ConstOp, results=[ty], attributes={"values": attr}, loc=loc,
                  ip=ir.InsertionPoint(before)).results[0]


def with_channels(value, channels: int):
    t = ir.RankedTensorType(value.type)
    return ir.RankedTensorType.get(list(t.shape[:-1]) + [channels], t.element_type)


@dataclasses.dataclass
class Layer:
    """core (a conv2d, or a matmul with a constant [1, K, N] right-hand side) [-> add of a constant
    bias] -> rescale [-> per-element ops]: every op in data order in `ops`."""
    core: object
    add: object
    rescale: object
    per_element: list
    weights: np.ndarray
    bias: np.ndarray            # [N]
    bias_shape: tuple = ()      # of the added constant ([1, 1, N] after a matmul)

    @property
    def ops(self) -> list:
        return [self.core] + ([self.add] if self.add is not None else []) + [self.rescale] + self.per_element

    @property
    def channels(self) -> int:
        return int(self.bias.size)


def read_layer(value, elems=("i8",), matmul: bool = False) -> Layer | None:
    """The layer computing `value` when each op of it is read by the next one alone: a conv2d
    (with `matmul`, also a tosa.matmul of a constant) whose activations are one of `elems`."""
    per_element, v = [], value
    while isinstance(producer(v), PER_ELEMENT) and elem(v) == "i8":
        per_element.append(producer(v))
        v = producer(v).operands[0]
        if only_user(v) is None:
            return None
    rescale = producer(v)
    if read_rescale(rescale) is None or elem(v) not in elems or only_user(rescale.operands[0]) is None:
        return None
    core, add = producer(rescale.operands[0]), None
    bias = None
    if matmul and isinstance(core, tosa.AddOp):
        add, (acc, b) = core, core.operands
        bias, core = const_array(b), producer(acc)
        if bias is None or only_user(acc) is None or not isinstance(core, tosa.MatMulOp):
            return None
    if isinstance(core, tosa.Conv2DOp) and elem(core.operands[0]) in elems:
        weights, bias = const_array(core.operands[1]), const_array(core.operands[2])
        if weights is None or bias is None or bias.size != weights.shape[0]:
            return None
        return Layer(core, None, rescale, per_element[::-1], weights, np.asarray(bias).reshape(-1))
    if matmul and isinstance(core, tosa.MatMulOp) and elem(core.operands[0]) in elems:
        weights = const_array(core.operands[1])
        if weights is None or weights.shape[0] != 1:
            return None
        n = weights.shape[2]
        if add is None:
            return Layer(core, None, rescale, per_element[::-1], weights, np.zeros(n, np.int64))
        if bias.size != n or bias.shape[-1] != n:
            return None
        return Layer(core, add, rescale, per_element[::-1], weights, bias.reshape(-1), bias.shape)
    return None


def build_block(layer: Layer, c0: int, n: int, before, loc) -> ir.Value:
    """The layer's output channels [c0, c0 + n), computed by a copy of its ops inserted before
    `before`."""
    core, rescale = layer.core, layer.rescale
    if isinstance(core, tosa.MatMulOp):
        w = make_const(np.ascontiguousarray(layer.weights[:, :, c0:c0 + n]), before, loc)
        out = copy_op(core, [core.operands[0], w] + list(core.operands)[2:], with_channels(core.results[0], n),
                      before).results[0]
        if layer.add is not None:
            shape = list(layer.bias_shape[:-1]) + [n]
            b = make_const(np.ascontiguousarray(layer.bias[c0:c0 + n].reshape(shape)), before, loc)
            out = copy_op(layer.add, [out, b], with_channels(layer.add.results[0], n), before).results[0]
    else:
        w = _const_like(np.ascontiguousarray(layer.weights[c0:c0 + n]), core.operands[1], before, loc)
        b = _const_like(np.ascontiguousarray(layer.bias[c0:c0 + n]), core.operands[2], before, loc)
        out = copy_op(core, [core.operands[0], w, b] + list(core.operands)[3:], with_channels(core.results[0], n),
                      before).results[0]
    operands = list(rescale.operands)
    operands[0] = out
    if read_rescale(rescale).per_channel:
        for index in (1, 2):
            values = np.asarray(const_array(rescale.operands[index]))
            operands[index] = make_const(np.ascontiguousarray(values.reshape(-1)[c0:c0 + n]), before, loc)
    out = copy_op(rescale, operands, with_channels(rescale.results[0], n), before).results[0]
    for op in layer.per_element:
        out = copy_op(op, [out] + list(op.operands)[1:], with_channels(op.results[0], n), before).results[0]
    return out


def erase_layer(layer: Layer, rewriter) -> None:
    for op in reversed(layer.ops):      # users first
        rewriter.erase_op(op)


"""Multiply-accumulates of one kernel call, from its operand and result shapes."""

from __future__ import annotations

import math

from .._mlir import ir
from ..dialects import cmsisnn, portable

_CONVS = (cmsisnn.ConvOp, portable.Conv2DOp)
_DEPTHWISE = (cmsisnn.DepthwiseConvOp, portable.DepthwiseConv2DOp)


def _shape(value) -> list[int]:
    return list(ir.RankedTensorType(value.type).shape)


def kernel_macs(op) -> int:
    """MACs of a convolution, depthwise convolution, fully connected layer or matmul (0 for others)."""
    if isinstance(op, _CONVS + _DEPTHWISE):
        f = _shape(op.operands[1])
        per_output = f[1] * f[2] * (1 if isinstance(op, _DEPTHWISE) else f[3])
        return math.prod(_shape(op.results[0])) * per_output
    if isinstance(op, cmsisnn.FullyConnectedOp):
        return math.prod(_shape(op.results[0])) * _shape(op.operands[1])[1]
    if isinstance(op, (cmsisnn.BatchMatmulOp, portable.MatmulOp)):
        return math.prod(_shape(op.results[0])) * _shape(op.operands[0])[-1]
    return 0

"""What the FX -> TOSA lowering tracks for every graph node, and how it names a node in messages.

  Q       an integer tensor already in the TOSA being written (with its scale / zero point);
  DQ      the float view of a Q (the output of a dequantize);
  Const   a constant (integer with scales, or float);
  Pending a float op not yet lowered: it becomes integer ops when a quantize of it is reached,
          because only then the output parameters are known (conv -> rescale -> clamp as a unit);
  Indices a run-time integer tensor (token ids) that lookups read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from ...ir import types
from ..graph.nodes import aten
from .tosa_builder import Value


ELEM = {torch.int8: "i8", torch.int16: "i16", torch.int32: "i32"}


def weight_elem(qmin, qmax, dtype) -> str:
    """The element type of a quantized constant: int8 storage holding [-8, 7] is int4 (weights the
    quantizer gave int4's range: frontend/quantize/int4_weights.py)."""
    if dtype == torch.int8 and int(qmin) >= -8 and int(qmax) <= 7:
        return "i4"
    return ELEM[dtype]


RANGE = types.RANGE


@dataclass
class Q:
    v: Value
    scale: float
    zp: int

    @property
    def shape(self):
        return self.v.shape

    @property
    def elem(self):
        return self.v.elem


@dataclass
class DQ:
    q: Q


@dataclass
class Const:
    data: np.ndarray                  # integers when quantized, floats otherwise
    scales: np.ndarray | None = None  # per channel (or one) when quantized
    zps: np.ndarray | None = None
    axis: int = 0
    elem: str | None = None


@dataclass
class FloatInput:
    index: int
    shape: tuple
    q: Q | None = None


@dataclass
class Indices:
    """A run-time integer tensor (token ids): an int32 graph input or a view of one; lookups read it.
    flag: its values are 0 / 1 (a comparison, a cast to bool: an attention mask); activation: a
    comparison of an activation with a constant made it."""
    v: Value
    flag: bool = False
    activation: bool = False


@dataclass
class Pending:
    node: torch.fx.Node


@dataclass
class Tup:
    items: list


@dataclass
class Clamp:
    lo: float | None
    hi: float | None


@dataclass
class LoweringResult:
    module: object          # the integer TOSA (an ir.Module)
    inputs: list            # (shape, elem, scale, zp) per graph input
    outputs: list
    layers: list = field(default_factory=list)


PASS_RESHAPES = {aten.view.default, aten.reshape.default, aten._unsafe_view.default,
                 aten.flatten.using_ints, aten.unflatten.int, aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default,
                 aten.unsqueeze.default, aten.clone.default, aten.contiguous.default,
                 aten.alias.default, aten.detach.default, aten.dropout.default,
                 aten.view_copy.default, aten.lift_fresh_copy.default, aten.reshape_as.default,
                 aten.view_as.default}


# Dropout in all its forms is the identity in an evaluated model (the frontend refuses training mode),
# the in-place ones (nn.Dropout(inplace=True)) included.
PASS_RESHAPES |= {getattr(aten, name).default for name in (
    "dropout_", "feature_dropout", "feature_dropout_", "alpha_dropout", "alpha_dropout_",
    "feature_alpha_dropout", "feature_alpha_dropout_") if hasattr(aten, name)}


def dequantize_const(c: Const) -> np.ndarray:
    data = np.asarray(c.data, np.float64)
    shape = [1] * data.ndim
    if data.ndim:
        shape[c.axis] = -1
    s = np.asarray(c.scales, np.float64)
    z = np.asarray(c.zps, np.float64)
    if s.size > 1:
        s, z = s.reshape(shape), z.reshape(shape)
    return (data - z) * s



"""Ops that are the identity in an evaluated model, taken out of the graph before the rewrites.

Dropout in every form (the frontend refuses training mode), alias, detach: each returns its input.
So does a bound that bounds nothing: max(x, -inf) and min(x, +inf) with a constant bound (timm's
Gemma4 clips every linear's input and output between buffers that are +-inf until a checkpoint
sets them); kept, an infinite constant has no int8 scale.
Left in, each stands between ops that the rewrites merge (a conv, its dropout, its layer scale:
PoolFormer's and the MetaFormers' MLPs). One is kept where an in-place op writes to it or to its
input: there it is the copy the in-place op works on. Clone and contiguous stay (a view after
one may need the copy's strides).
"""

from __future__ import annotations

import math

import torch

from .constant_folding import constant_value, writes_first_argument
from .nodes import recompiled

aten = torch.ops.aten
_IDENTITIES = {getattr(aten, name).default for name in (
    "dropout", "dropout_", "feature_dropout", "feature_dropout_", "alpha_dropout", "alpha_dropout_",
    "feature_alpha_dropout", "feature_alpha_dropout_", "alias", "detach")
    if hasattr(aten, name)}


def _written(node, besides=None) -> bool:
    """Whether an in-place op (its first argument written) other than `besides` takes `node` as that argument."""
    return any(user is not besides and writes_first_argument(user) and user.args and user.args[0] is node
               for user in node.users)


def drop_identity_ops(gm) -> int:
    """Replaces each identity op (see the module docstring) by its input; returns how many went."""
    dropped = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in _IDENTITIES or not node.args:
            continue
        x = node.args[0]
        val, before = node.meta.get("val"), getattr(x, "meta", {}).get("val")
        if not isinstance(x, torch.fx.Node) or not isinstance(val, torch.Tensor) or \
                not isinstance(before, torch.Tensor) or val.shape != before.shape or val.dtype != before.dtype:
            continue
        if _written(node) or _written(x, besides=node):
            continue
        node.replace_all_uses_with(x)
        gm.graph.erase_node(node)
        dropped += 1
    if dropped:
        gm.recompile()
    return dropped


# maximum / minimum and the infinity that makes each the identity.
_BOUNDS = {aten.maximum.default: -math.inf, aten.minimum.default: math.inf,
           aten.clamp_min.Tensor: -math.inf, aten.clamp_max.Tensor: math.inf}


def _unbounded(gm, node):
    """x of max(x, -inf) / min(x, +inf) with the bound a constant, infinite in every element; else None."""
    if node.op != "call_function" or node.target not in _BOUNDS or len(node.args) != 2 or node.kwargs:
        return None
    val = node.meta.get("val")
    for x, bound in (node.args, reversed(node.args)):
        value = constant_value(gm, bound)
        before = getattr(x, "meta", {}).get("val")
        if value is not None and value.dtype.is_floating_point and value.numel() and \
                bool((value == _BOUNDS[node.target]).all()) and isinstance(before, torch.Tensor) and \
                isinstance(val, torch.Tensor) and before.shape == val.shape and before.dtype == val.dtype:
            return x
    return None


def drop_infinite_bounds(gm) -> int:
    """Replaces each bound that bounds nothing (see the module docstring) by its input; returns how many went."""
    dropped = 0
    for node in list(gm.graph.nodes):
        x = _unbounded(gm, node)
        if x is None:
            continue
        node.replace_all_uses_with(x)
        gm.graph.erase_node(node)
        dropped += 1
    return recompiled(gm, dropped)

"""Attention masks written by hand, made the masked fill the integer softmax takes.

Model code masks attention scores before a softmax in several ways: `scores + mask` with a mask of
0 and torch.finfo.min (HuggingFace's eager attention, BERT's extended mask), `masked_fill(~keep,
finfo.min)`, `where(keep, scores, tensor(finfo.min))` (GPT-2). In float each gives the masked
places probability 0 (exp underflows). Quantized as written, the -3.4e38 would set the scale of the
sum and every kept score would round to the same integer. Each is rewritten, before quantization,
into where(keep, scores [+ the mask's finite part], -inf): the fill the quantizer and the softmax
lowering already take (kept values keep their scale, masked places get probability 0 exactly).

`keep_masks_in_simulation` makes PT2E's fake-quantized graph do the same: there the -inf is
quantized to the smallest integer and dequantized to a finite value that the float softmax gives a
share; the integer program gives it none. The per-layer SQNR and the int16 choice read that graph.
"""

from __future__ import annotations

import copy
import math

import torch

from .nodes import recompiled

aten = torch.ops.aten

# Fill values at or below this are "minus infinity" (torch.finfo(float32).min, -1e9 and -10000
# are what libraries use; a score near -1e4 is already probability 0 after exp).
MASKED = -1e4
SOFTMAX = (aten.softmax.int, aten._softmax.default)


def _constant(gm, node):
    from .constant_folding import constant_value
    return constant_value(gm, node)


def _scalar(gm, value):
    """A literal or a one-element constant tensor as a float, else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    tensor = _constant(gm, value)
    if tensor is not None and tensor.numel() == 1 and tensor.dtype.is_floating_point:
        return float(tensor.reshape(()))
    return None


def _register(gm, node, name: str, value: torch.Tensor):
    """A get_attr node for a new constant, inserted before `node`."""
    from .constant_folding import constant_node
    return constant_node(gm, node, f"_mcu_mask_{node.name}_{name}", value)


def _runtime_flag(gm, node):
    """A boolean node computed at run time (from a mask input: the lowering refuses one computed
    from activations), else None."""
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    if _constant(gm, node) is None and isinstance(val, torch.Tensor) and val.dtype == torch.bool:
        return node
    return None


def _logical(gm, before, op, *args):
    """A boolean op on graph nodes, inserted before `before`."""
    with gm.graph.inserting_before(before):
        out = gm.graph.call_function(op, args)
    out.meta.update({k: v for k, v in before.meta.items() if k in ("stack_trace", "nn_module_stack")})
    out.meta["val"] = op(*[a.meta["val"] for a in args])
    return out


def _fill(gm, node, x, keep, value: float = float("-inf")):
    """where(keep, x, value) in place of `node` (keep a constant tensor, or a run-time boolean
    node); returns it."""
    cond = keep if isinstance(keep, torch.fx.Node) else _register(gm, node, "keep", keep)
    with gm.graph.inserting_before(node):
        fill = gm.graph.call_function(aten.where.ScalarOther, (cond, x, value))
    fill.meta.update({k: v for k, v in node.meta.items() if k != "val"})
    fill.meta["val"] = node.meta.get("val")
    node.replace_all_uses_with(fill)
    gm.graph.erase_node(node)
    return fill


def _is_fill(node) -> bool:
    return node.target is aten.where.ScalarOther and isinstance(node.args[2], float) \
        and node.args[2] == float("-inf")


def _additive(gm, node):
    """scores + mask (either order), the mask a constant with masked places <= MASKED."""
    a, b = node.args[:2]
    for x, m in ((a, b), (b, a)):
        mask = _constant(gm, m)
        if mask is None or not mask.dtype.is_floating_point or not isinstance(x, torch.fx.Node):
            continue
        keep = mask > MASKED
        if bool(keep.all()):
            return None
        if bool((mask[keep] != 0).any()):
            finite = _register(gm, node, "bias", torch.where(keep, mask, torch.zeros(())))
            with gm.graph.inserting_before(node):
                x = gm.graph.call_function(aten.add.Tensor, (x, finite))
            x.meta.update({k: v for k, v in node.meta.items()})
        return _fill(gm, node, x, keep)
    return None


def _masked_fill(gm, node, masking: bool = True):
    """masked_fill(x, masked, value), the mask a constant or computed at run time: with `masking`
    value <= MASKED (made -inf), else a finite value above it (kept)."""
    masked = _constant(gm, node.args[1])
    value = _scalar(gm, node.args[2])
    if value is None or not _wanted(value, masking):
        return None
    fill = float("-inf") if masking else value
    flag = _runtime_flag(gm, node.args[1])
    if flag is not None:
        return _fill(gm, node, node.args[0], _logical(gm, node, aten.logical_not.default, flag), fill)
    if masked is None or masked.dtype != torch.bool:
        return None
    return _fill(gm, node, node.args[0], ~masked, fill)


def _wanted(value: float, masking: bool) -> bool:
    return value <= MASKED if masking else math.isfinite(value) and value > MASKED


def _where(gm, node, masking: bool = True):
    """where(keep, x, value) or where(masked, value, x), the condition a constant or computed at
    run time, value as _masked_fill takes it."""
    cond, flag = _constant(gm, node.args[0]), _runtime_flag(gm, node.args[0])
    if flag is None and (cond is None or cond.dtype != torch.bool):
        return None
    a, b = node.args[1:3]
    fill_a, fill_b = _scalar(gm, a), _scalar(gm, b)
    if isinstance(b, torch.fx.Node) and _constant(gm, b) is None and fill_a is not None and _wanted(fill_a, masking):
        return _fill(gm, node, b, ~cond if flag is None else _logical(gm, node, aten.logical_not.default, flag),
                     float("-inf") if masking else fill_a)
    if isinstance(a, torch.fx.Node) and _constant(gm, a) is None and fill_b is not None and _wanted(fill_b, masking):
        if not masking and node.target is aten.where.ScalarOther:
            return None     # already the form the lowering takes
        return _fill(gm, node, a, cond if flag is None else flag, float("-inf") if masking else fill_b)
    return None


_REWRITES = {aten.add.Tensor: _additive, aten.masked_fill.Scalar: _masked_fill,
             aten.masked_fill.Tensor: _masked_fill, aten.where.self: _where, aten.where.ScalarSelf: _where,
             aten.where.ScalarOther: _where, aten.where.Scalar: _where}


def masks_as_fills(gm) -> int:
    """Rewrites the masks whose values reach only softmaxes (above) into where(keep, x, -inf), and
    nested fills into one (GPT-Neo masks its causal window, then adds the attention mask). Returns
    how many masks were rewritten."""
    fills, rewritten = set(), 0
    for node in reversed(list(gm.graph.nodes)):
        if node.op != "call_function" or not node.users \
                or any(u.target not in SOFTMAX and u not in fills for u in node.users):
            continue
        if _is_fill(node):
            fills.add(node)
            continue
        rewrite = _REWRITES.get(node.target)
        fill = rewrite(gm, node) if rewrite is not None else None
        if fill is not None:
            fills.add(fill)
            rewritten += 1
    for node in list(gm.graph.nodes):           # where(k1, where(k2, x, -inf), -inf): where(k1 & k2, x, -inf)
        inner = node.args[1] if node in fills else None
        if inner in fills and len(inner.users) == 1:
            outer_keep, inner_keep = _constant(gm, node.args[0]), _constant(gm, inner.args[0])
            if outer_keep is None or inner_keep is None:    # one computed at run time: a logical and
                cond = _logical(gm, node, aten.logical_and.default, node.args[0], inner.args[0])
            else:
                cond = _register(gm, node, "both", outer_keep & inner_keep)
            node.args = (cond, inner.args[1], float("-inf"))
            gm.graph.erase_node(inner)
            fills.discard(inner)
    return recompiled(gm, rewritten)


_FILLS = {aten.masked_fill.Scalar: _masked_fill, aten.masked_fill.Tensor: _masked_fill,
          aten.where.self: _where, aten.where.ScalarSelf: _where, aten.where.ScalarOther: _where,
          aten.where.Scalar: _where}


def _is_float(node) -> bool:
    """Whether the op's value is a float tensor (or of unknown type): a fill of integers (token ids:
    BART's decoder ids shifted from the input ids, the ignored label -100 set to the pad id) stays
    an integer op."""
    val = node.meta.get("val")
    return not isinstance(val, torch.Tensor) or val.dtype.is_floating_point


def fills_as_where(gm) -> int:
    """Every other masked_fill / where of an activation with a finite scalar, under a constant
    condition or one computed from a mask input (zeroing padded frames, a fixed region), as
    where(keep, x, value): one select in the integers. Returns how many were rewritten."""
    rewritten = 0
    for node in list(gm.graph.nodes):
        rewrite = _FILLS.get(node.target) if node.op == "call_function" and _is_float(node) else None
        if rewrite is not None and rewrite(gm, node, masking=False) is not None:
            rewritten += 1
    return recompiled(gm, rewritten)


def keep_masks_in_simulation(converted):
    """A copy of PT2E's converted graph in which each softmax reading a dequantized where(keep, x,
    -inf) reads where(keep, dequantized, -inf): masked places get probability 0, as in integers."""
    from ..graph.nodes import qd
    from .nodes import is_masked_fill
    softmaxes = [n for n in converted.graph.nodes if n.op == "call_function" and n.target in SOFTMAX]
    fills = []
    for node in softmaxes:
        src = node.args[0]
        while isinstance(src, torch.fx.Node) and src.target in (qd.quantize_per_tensor.default,
                                                                 qd.dequantize_per_tensor.default):
            src = src.args[0]
        if src is not node.args[0] and is_masked_fill(src):
            fills.append((node.name, src.args[0].name, src.args[2]))
    if not fills:
        return converted
    sim = copy.deepcopy(converted)
    nodes = {n.name: n for n in sim.graph.nodes}
    for softmax_name, cond_name, value in fills:
        softmax, cond = nodes[softmax_name], nodes[cond_name]
        with sim.graph.inserting_before(softmax):
            fill = sim.graph.call_function(aten.where.ScalarOther, (cond, softmax.args[0], value))
        softmax.replace_input_with(softmax.args[0], fill)
    sim.recompile()
    return sim

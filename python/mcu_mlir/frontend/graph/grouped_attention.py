"""Grouped-query attention without repeated copies of the key / value heads.

HuggingFace's repeat_kv (and scaled_dot_product_attention(enable_gqa=True), decomposed) repeats each
key / value head for the query heads that share it: an expand and a reshape, a copy in integers.
Read instead as a broadcast over a [groups, repeats] split of the query heads, the activation matmul
folds the repeats into its rows (frontend/lowering/matmul.py) and nothing is copied.
"""

from __future__ import annotations

import torch

from .nodes import recompiled

aten = torch.ops.aten


_VIEWS = (aten.view.default, aten.reshape.default, aten._unsafe_view.default)


def _repeated_heads(b):
    """(source with a unit dim at i, i, transposed) when `b` is [transpose(-2, -1) of]
    reshape(expand(source)) that repeats each of source's heads `rep` times in place (HuggingFace's
    repeat_kv, repeat_interleave on the head dim), else None."""
    transposed = False
    if b.target is aten.transpose.int and sorted(d % b.meta["val"].dim() for d in b.args[1:3]) == \
            [b.meta["val"].dim() - 2, b.meta["val"].dim() - 1]:
        transposed, b = True, b.args[0]
    if b.target not in _VIEWS or len(b.args[0].users) != 1:
        return None
    expanded = b.args[0]
    if expanded.target is aten.clone.default:
        expanded = expanded.args[0]
    if expanded.target is not aten.expand.default or not isinstance(expanded.args[0], torch.fx.Node):
        return None
    source = expanded.args[0]
    shape, big = tuple(source.meta["val"].shape), tuple(expanded.meta["val"].shape)
    grown = [d for d in range(len(big)) if len(shape) == len(big) and shape[d] != big[d]]
    if len(grown) != 1 or shape[grown[0]] != 1 or not 1 <= grown[0] <= len(big) - 3:
        return None
    i = grown[0]
    merged = big[:i - 1] + (big[i - 1] * big[i],) + big[i + 1:]
    if tuple(b.meta["val"].shape) != merged:
        return None
    return source, i, transposed, big


def repeated_heads_broadcast(gm: torch.fx.GraphModule) -> int:
    """matmul(q, repeat(k)) with k's heads repeated for grouped-query attention (Llama, Mistral,
    Gemma: repeat_kv) becomes matmul(q split into [groups, repeats], k) broadcast over the repeats:
    the lowering folds the repeats into q's rows, so no repeated copy of k or v is made. Returns how
    many."""
    graph = gm.graph
    rewritten = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not aten.matmul.default:
            continue
        a, b = node.args
        if not isinstance(b, torch.fx.Node) or not isinstance(a, torch.fx.Node):
            continue
        found = _repeated_heads(b)
        if found is None:
            continue
        source, i, transposed, big = found
        a_shape = tuple(a.meta["val"].shape)
        if a_shape[:-2] != big[:i - 1] + (big[i - 1] * big[i],) + big[i + 1:-2]:
            continue
        split = big[:i + 1] + big[i + 1:-2] + a_shape[-2:]
        with graph.inserting_before(node):
            a5 = graph.call_function(aten.reshape.default, (a, list(split)))
            a5.meta["val"] = a.meta["val"].reshape(split)
            b5 = source
            if transposed:
                b5 = graph.call_function(aten.transpose.int, (source, -2, -1))
                b5.meta["val"] = source.meta["val"].transpose(-2, -1)
            product = graph.call_function(aten.matmul.default, (a5, b5))
            product.meta.update(node.meta)
            product.meta["val"] = torch.matmul(a5.meta["val"], b5.meta["val"])
            out = graph.call_function(aten.reshape.default, (product, list(node.meta["val"].shape)))
            out.meta.update(node.meta)
        node.replace_all_uses_with(out)
        graph.erase_node(node)
        rewritten += 1
    return recompiled(gm, rewritten)

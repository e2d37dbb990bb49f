"""A concat split back into the same parts reads the parts themselves.

YOLO26's NMS-free head decodes cat((boxes in pixels, sigmoid scores), 1), permutes it and splits it
into the same boxes and scores again before its top-k (ultralytics' Detect.postprocess). Quantized
as written, the concat gives both parts one scale and every score rounds to 0 or one step of the
boxes' (0 dB); the top-k then orders ties. Each part taken from its producer (the permute applied
to it alone) keeps the parameters it was quantized with, and the concat, read by nothing else,
goes. Only a split whose sizes are exactly the concat's parts along the same dim (through
permutes) is rewritten: the values are the same tensors, no arithmetic changes.
"""

from __future__ import annotations

import operator

import torch

aten = torch.ops.aten
_SPLITS = {aten.split_with_sizes.default, aten.split.Tensor}
_CATS = {aten.cat.default, aten.concat.default}


def _shape(node):
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return tuple(val.shape) if isinstance(val, torch.Tensor) else None


def _split_sizes(split) -> tuple[list[int], int]:
    """(the sizes of the split's pieces, its dim)."""
    shape = _shape(split.args[0])
    dim = int(split.args[2] if len(split.args) > 2 else split.kwargs.get("dim", 0)) % len(shape)
    sizes = split.args[1]
    if isinstance(sizes, int):      # split(x, size): equal chunks, the last one shorter
        sizes = [min(sizes, shape[dim] - start) for start in range(0, shape[dim], sizes)]
    return [int(s) for s in sizes], dim


def _parts_of(split):
    """(the concat's parts, the permutation from them to the split's input) or None."""
    x, perm = split.args[0], None
    while x.op == "call_function" and x.target is aten.permute.default:
        step = [int(p) for p in x.args[1]]
        perm = step if perm is None else [step[p] for p in perm]    # compose: outer reads inner's dims
        x = x.args[0]
    if x.op != "call_function" or x.target not in _CATS:
        return None
    parts = list(x.args[0])
    rank = len(_shape(x))
    cat_dim = int(x.args[1] if len(x.args) > 1 else x.kwargs.get("dim", 0)) % rank
    perm = perm or list(range(rank))
    sizes, dim = _split_sizes(split)
    if perm[dim] != cat_dim or sizes != [_shape(p)[cat_dim] for p in parts]:
        return None
    return parts, perm


def concat_splits_as_parts(gm) -> int:
    """Rewires each part of such a split (see the module docstring) to its own producer; returns how many."""
    rewired = 0
    for split in list(gm.graph.nodes):
        if split.op != "call_function" or split.target not in _SPLITS or _shape(split.args[0]) is None:
            continue
        found = _parts_of(split)
        if found is None:
            continue
        parts, perm = found
        for user in list(split.users):
            if user.target is not operator.getitem:
                break
        else:
            for user in list(split.users):
                part = parts[int(user.args[1])]
                with gm.graph.inserting_before(user):
                    moved = part if perm == list(range(len(perm))) else \
                        gm.graph.call_function(aten.permute.default, (part, perm))
                if moved is not part:
                    moved.meta["val"] = user.meta.get("val")
                    moved.meta.update({k: v for k, v in split.meta.items() if k in ("stack_trace", "nn_module_stack")})
                user.replace_all_uses_with(moved)
                rewired += 1
    if rewired:
        gm.graph.eliminate_dead_code()
        gm.recompile()
    return rewired

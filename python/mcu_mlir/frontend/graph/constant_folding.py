"""Subgraphs made only of parameters and constants, evaluated before quantization.

Model code computes tensors that do not depend on the input: a position embedding sliced to the
sequence length, a class token expanded to the batch, a relative-position bias gathered from its
table, a mask moved to a device, a gate `sigmoid(alpha) * 2`, a weight re-parametrised. In float
each is one value; left in the graph, each op would be quantized and lowered on its own (and many
have no integer lowering). Folded here, before PT2E sees the graph, each is one constant that the
quantizer treats like any other buffer: the same function, evaluated once in float.
"""

from __future__ import annotations


def _random(node) -> bool:
    """Ops that draw random numbers (randn, rand_like, bernoulli): a value per call, never a constant."""
    import torch
    return torch.Tag.nondeterministic_seeded in getattr(node.target, "tags", ())


def constant_node(gm, before, name: str, value):
    """A get_attr node for `value`, registered as buffer `name` of `gm`, inserted before `before`:
    how the frontend's rewrites put a constant they computed into the graph."""
    gm.register_buffer(name, value.detach().contiguous().clone())
    with gm.graph.inserting_before(before):
        attr = gm.graph.get_attr(name)
    attr.meta["val"] = getattr(gm, name)
    return attr


def constant_value(gm, node):
    """The tensor a get_attr node holds (a parameter, buffer or folded constant), else None."""
    import torch

    from ..graph.nodes import fetch_attr
    if isinstance(node, torch.fx.Node) and node.op == "get_attr":
        value = fetch_attr(gm, node.target)
        return value.detach() if isinstance(value, torch.Tensor) else None
    return None


def writes_first_argument(node) -> bool:
    """Whether `node` is an in-place aten op: one that writes its first argument."""
    import torch
    schema = getattr(node.target, "_schema", None)
    return isinstance(node.target, torch._ops.OpOverload) and schema is not None and bool(schema.arguments) \
        and schema.arguments[0].alias_info is not None and schema.arguments[0].alias_info.is_write


def _in_place_on_own_value(node) -> bool:
    """An in-place aten op (`buckets += where(...)`, WavLM's relative position buckets) on a value
    that only it reads: the same as its out-of-place form. Left in the graph, it would update a
    folded constant on every run."""
    import torch
    if not writes_first_argument(node):
        return False
    first = node.args[0] if node.args else None
    return isinstance(first, torch.fx.Node) and len(first.users) == 1


def _reads_only_the_shape(node):
    """The tensor argument of ones_like / zeros_like / full_like / new_ones / new_zeros / new_full,
    whose value is a constant of that tensor's shape and type (PatchTST's observed mask
    `ones_like(past_values)`), or None."""
    import torch
    aten = torch.ops.aten
    if node.target not in (aten.ones_like.default, aten.zeros_like.default, aten.full_like.default,
                           aten.new_ones.default, aten.new_zeros.default, aten.new_full.default):
        return None
    first = node.args[0] if node.args else None
    val = first.meta.get("val") if isinstance(first, torch.fx.Node) else None
    return first if isinstance(val, torch.Tensor) else None


def _zeros_as(node):
    import torch
    val = node.meta["val"]         # a fake tensor: its shape and type only
    return torch.zeros(tuple(val.shape), dtype=val.dtype)


def fold_parameter_subgraphs(gm) -> int:
    """Replaces every op whose inputs are all constants (parameters, buffers, literals) and that
    feeds a non-constant op by a buffer holding its value. Returns the number of ops folded."""
    import torch
    from torch.fx.node import map_aggregate

    from ..graph.nodes import fetch_attr

    values: dict = {}
    for node in gm.graph.nodes:
        if node.op == "get_attr":
            value = fetch_attr(gm, node.target)
            if isinstance(value, torch.Tensor):
                values[node] = value.detach()
        elif node.op == "call_function" and (not node.is_impure() or _in_place_on_own_value(node)) \
                and not _random(node):
            inputs = [a for a in node.all_input_nodes]
            shape_only = _reads_only_the_shape(node)
            if not all(a in values or a is shape_only for a in inputs):
                continue
            # (the inputs are constants, or the tensor whose shape alone the op reads)
            args = map_aggregate(node.args, lambda a: (values[a] if a in values else _zeros_as(a))
                                 if isinstance(a, torch.fx.Node) else a)
            if node.is_impure():      # computed on a copy: the value it would overwrite is read by no one else
                args = (args[0].clone(),) + tuple(args[1:])
            kwargs = map_aggregate(node.kwargs, lambda a: values[a] if isinstance(a, torch.fx.Node) else a)
            try:
                with torch.no_grad():
                    result = node.target(*args, **kwargs)
            except Exception:      # left as it is: the lowering names the op if it cannot take it
                continue
            if isinstance(result, torch.Tensor):
                values[node] = result.detach()
            elif isinstance(result, (tuple, list)) and result and all(isinstance(r, torch.Tensor) for r in result):
                # meshgrid / split / unbind of constants, read through getitem (BEiT's relative
                # position index is built from a meshgrid of aranges)
                values[node] = tuple(r.detach() for r in result)

    folded = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or not isinstance(values.get(node), torch.Tensor):
            continue
        if all(user in values for user in node.users):
            continue        # an inner op of a larger constant subgraph: its consumer is folded instead
        attr = constant_node(gm, node, f"_mcu_folded_{node.name}", values[node])
        attr.meta = dict(node.meta, val=attr.meta["val"])
        node.replace_all_uses_with(attr)
        folded += 1
    if folded:
        gm.graph.eliminate_dead_code()     # the folded ops: an in-place op they read is then unread
    for node in reversed(list(gm.graph.nodes)):
        # An in-place op nothing reads after it (detach_ of an empty cache HuggingFace lifts):
        # dead code, though the graph keeps in-place ops as impure.
        if node.op == "call_function" and not node.users and _in_place_on_own_value(node):
            gm.graph.erase_node(node)
            folded += 1
    from .nodes import recompiled
    return recompiled(gm, folded)


def drop_empty_concat_operands(gm) -> int:
    """Drops the empty tensors a concat reads: an empty key / value cache that HuggingFace's decoders
    concatenate with the new keys on the first call (torch.cat skips a (0,) tensor and any tensor
    of size 0 along the axis). Left in, each would be a zero-sized constant that TOSA does not
    allow. A concat left with one operand is that operand. Returns the number of operands dropped."""
    import torch
    dropped = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in (torch.ops.aten.cat.default,
                                                             torch.ops.aten.concat.default):
            continue
        tensors = node.args[0]
        kept = [t for t in tensors if not (isinstance(t, torch.fx.Node) and isinstance(t.meta.get("val"),
                                                                                     torch.Tensor)
                                           and t.meta["val"].numel() == 0)]
        if len(kept) == len(tensors) or not kept:
            continue
        dropped += len(tensors) - len(kept)
        if len(kept) == 1:
            node.replace_all_uses_with(kept[0])
        else:
            node.args = (kept,) + tuple(node.args[1:])
    from .nodes import recompiled
    return recompiled(gm, dropped)

"""Reading the nodes of an exported FX graph: their source line and layer for messages, shapes,
attributes and casts. Every frontend stage reads nodes through these."""

from __future__ import annotations

import math
import os
import re

import numpy as np
import torch

from ...diagnostics import UserError

aten = torch.ops.aten
qd = torch.ops.quantized_decomposed


# Casts and device moves between float types (x.float() in float32 code, .to(device)): the
# identity here, where everything float is float32 until quantized.
FLOAT_CASTS = {aten._to_copy.default, aten.to.dtype, aten.to.dtype_layout, aten.to.device, aten.type_as.default}


def is_float_cast(node, input_is_float: bool | None = None) -> bool:
    """A cast from a float tensor to a float tensor (input_is_float: known already, e.g. a
    dequantized value, whose node PT2E leaves without a recorded value)."""
    def is_float(n):
        val = n.meta.get("val") if hasattr(n, "meta") else None
        return val is not None and hasattr(val, "dtype") and val.dtype.is_floating_point
    if node.target not in FLOAT_CASTS or not node.args or not is_float(node):
        return False
    return input_is_float if input_is_float is not None else is_float(node.args[0])


def source_node(node):
    """The op whose value a PT2E (de)quantize node carries (itself for any other node): its source
    line and module, and for a layer outside any module its op ('sigmoid', 'add')."""
    while not node.meta.get("nn_module_stack") and "quantize" in str(getattr(node, "target", "")) \
            and node.args and isinstance(node.args[0], torch.fx.Node) and node.args[0].op == "call_function":
        node = node.args[0]
    return node


_FRONTEND_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def node_location(node) -> tuple[str | None, int | None, str]:
    """(file, line, module path) of the PyTorch source of an FX node."""
    # (De)quantize nodes that PT2E inserted have no source of their own: they belong to the layer
    # whose value they carry, so the layer is named after the module (e.g. 'features.3.conv').
    node = source_node(node)
    trace = node.meta.get("stack_trace") or ""
    found = re.findall(r'File "([^"]+)", line (\d+)', trace)
    # Frames of torch and of the frontend's own rewrites (decompose.py's unrolled LSTM calls its
    # step op) are not the user's line.
    user = [f for f in found if "/torch/" not in f[0] and "/torchao/" not in f[0]
            and not f[0].startswith(_FRONTEND_DIR)]
    pick = (user or found)[-1] if found else None
    file, line = (pick[0], int(pick[1])) if pick else (None, None)
    stack = node.meta.get("nn_module_stack") or {}
    path = ""
    if stack:
        path = list(stack.values())[-1][0]
        path = re.sub(r"^L\['self'\]\.?", "", path)
        path = re.sub(r"\._modules\['([^']+)'\]", r".\1", path)
        path = path.replace("L['self']", "")
    return file, line, path


def describe(node) -> str:
    file, line, path = node_location(node)
    where = f"{file}:{line}" if file else "unknown source line"
    layer = f"module '{path}'" if path else "the top-level module"
    return f"op '{op_name(node)}' at {where} in {layer}"


def op_name(node) -> str:
    t = node.target
    return getattr(t, "__name__", str(t)) if not hasattr(t, "_schema") else str(t).replace(".default", "")


def shape_of(node) -> tuple:
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor):
        for d in val.shape:
            if not isinstance(d, int):
                raise UserError(f"dynamic dimension {d} in {describe(node)}: mcu-mlir needs static shapes")
        return tuple(int(d) for d in val.shape)
    raise UserError(f"{describe(node)} does not produce one tensor")


def tuple_of(v, n):
    if isinstance(v, (list, tuple)):
        v = list(v)
        return tuple(v * n if len(v) == 1 else v)
    return (v,) * n


def clip_index(i, size):
    if i < 0:
        i += size
    return max(0, min(size, i))


def to_numpy(t):
    if isinstance(t, torch.Tensor):
        return t.detach().cpu().numpy()
    return np.asarray(t)


def fetch_attr(gm, target: str):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def nodes_of(node) -> list:
    found = []
    torch.fx.node.map_arg((node.args, node.kwargs), found.append)
    return found


def is_masked_fill(node) -> bool:
    """where(mask, x, -inf): an attention mask's fill."""
    return isinstance(node, torch.fx.Node) \
        and node.target is aten.where.ScalarOther and isinstance(node.args[2], float) \
        and math.isinf(node.args[2])


def recompiled(gm, rewritten: int) -> int:
    """`rewritten`, after dropping the nodes the rewrites left unread and recompiling `gm` when there
    were any: how every graph rewrite ends."""
    if rewritten:
        gm.graph.eliminate_dead_code()
        gm.recompile()
    return rewritten

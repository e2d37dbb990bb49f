"""The float path: torch-mlir's FX importer and its torch -> TOSA pipeline.

BatchNorm is folded into convolutions first (torch-mlir would keep it as float arithmetic), and the
TOSA is produced in a Context from `new_context()` so that other dialects can join it later.
"""

from __future__ import annotations

import re

from .._mlir import ir, new_context
from ..diagnostics import UserError


def import_float(ep, example_inputs):
    """ExportedProgram -> (float TOSA module, input shapes, output shapes)."""
    import torch
    from torch_mlir.dialects import torch as torch_d
    from torch_mlir.extras.fx_importer import FxImporter
    from torch_mlir.fx import export_and_import

    from . import export, fold_batch_norm

    try:
        folded = export(fold_batch_norm(ep.module()), example_inputs)
    except UserError:
        folded = ep
    ctx = new_context()
    torch_d.register_dialect(ctx)
    try:
        module = export_and_import(folded, output_type="tosa", func_name="main",
                                   fx_importer=FxImporter(context=ctx))
    except Exception as e:
        raise UserError(_explain_failure(str(e), folded)) from None
    with torch.no_grad():
        outs = ep.module()(*example_inputs)
    if isinstance(outs, torch.Tensor):
        outs = (outs,)
    return module, [tuple(x.shape) for x in example_inputs], [tuple(o.shape) for o in outs]


def _explain_failure(message: str, ep) -> str:
    """Names the op, its source line and module path when torch-mlir could not lower it."""
    from .fx_to_tosa import describe
    m = re.search(r"failed to legalize operation '([\w.]+)'", message) or \
        re.search(r"'(torch\.[\w.]+)'", message)
    if m:
        op = m.group(1).replace("torch.aten.", "").replace("torch.", "")
        for node in ep.graph.nodes:
            if node.op == "call_function" and op.split(".")[0] in str(node.target):
                return f"{describe(node)} cannot be lowered to TOSA (float path)"
        return f"op '{op}' cannot be lowered to TOSA (float path)"
    first = message.strip().split("\n")
    return "torch-mlir import failed: " + "\n".join(first[:8])

"""The float path: torch-mlir's FX importer and its torch -> TOSA pipeline.

BatchNorm is folded into convolutions first (torch-mlir would keep it as float arithmetic), and the
TOSA is produced in a Context from `new_context()` so that other dialects can join it later.
"""

from __future__ import annotations

import re

from ..._mlir import new_context
from ...diagnostics import UserError


def import_float(ep, example_inputs):
    """ExportedProgram -> (float TOSA module, input shapes, output shapes, torch-dialect text)."""
    import torch
    from torch_mlir.dialects import torch as torch_d
    from torch_mlir.extras.fx_importer import FxImporter
    from torch_mlir.fx import export_and_import

    from .torch_export import export, fold_batch_norm

    from .complex_ops import complex_as_real_parts
    gm = fold_batch_norm(ep.module())
    complex_as_real_parts(gm, hypot=False)       # torch-mlir lowers no complex tensor to TOSA: FFTs as real ops
    try:
        folded = export(gm, example_inputs)
    except UserError:
        folded = ep
    ctx = new_context()
    torch_d.register_dialect(ctx)
    table = decomposition_table()
    from torch_mlir.compiler_utils import OutputType, lower_mlir_module
    try:
        module = export_and_import(folded, output_type="torch", func_name="main",
                                   fx_importer=FxImporter(context=ctx), decomposition_table=table)
        torch_text = module.operation.get_asm()
        module = lower_mlir_module(False, OutputType.TOSA, module)
    except Exception as e:
        raise UserError(_explain_failure(str(e), folded)) from None
    with torch.no_grad():
        outs = ep.module()(*example_inputs)
    import torch.utils._pytree as pytree
    outs = pytree.tree_leaves(outs)
    return module, [tuple(x.shape) for x in example_inputs], [tuple(o.shape) for o in outs], torch_text


def decomposition_table() -> dict:
    """torch-mlir's FX decompositions, plus nearest upsampling its TOSA conversion cannot lower."""
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table
    table = dict(get_decomposition_table())
    for op in _UPSAMPLE_NEAREST:
        table[op] = _upsample_nearest
    return table


def _upsample_nearest(x, output_size=None, scale_factors=None, *rest):
    """Nearest upsampling by integer factors as expand + reshape (torch-mlir's TOSA path cannot
    lower interpolate)."""
    spatial = x.shape[2:]
    if output_size is None:
        output_size = [int(s * f) for s, f in zip(spatial, scale_factors)]
    factors = [o // s for o, s in zip(output_size, spatial)]
    if any(o != f * s for o, f, s in zip(output_size, factors, spatial)):
        return NotImplemented
    view = list(x.shape[:2])
    expanded = list(x.shape[:2])
    for s, f in zip(spatial, factors):
        view += [s, 1]
        expanded += [s, f]
    return x.reshape(view).expand(expanded).reshape(list(x.shape[:2]) + list(output_size))


def _ops():
    import torch
    aten = torch.ops.aten
    return (aten.upsample_nearest2d.vec, aten.upsample_nearest1d.vec, aten.upsample_nearest2d.default)


_UPSAMPLE_NEAREST = _ops()


def _explain_failure(message: str, ep) -> str:
    """Names the op, its source line and module path when torch-mlir could not lower it."""
    from ..graph.nodes import describe
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

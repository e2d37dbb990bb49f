"""torch.export with static shapes, and BatchNorm folded into the op before it."""

from __future__ import annotations

import warnings

from ..diagnostics import UserError


def export(model, example_inputs):
    """torch.export with static shapes; failures become UserError."""
    import torch
    from .. import diagnostics
    try:
        with warnings.catch_warnings():
            if not diagnostics.verbose:   # torch's tracing warnings are not the user's to act on
                warnings.simplefilter("ignore")
            return torch.export.export(model, example_inputs, strict=False)
    except Exception as e:
        msg = str(e).strip().split("\n")
        raise UserError("torch.export failed: " + "\n".join(msg[:12])) from None


def fold_batch_norm(gm):
    """Folds BatchNorm into the preceding conv (eval mode), as PT2E does before quantizing."""
    import torch
    from torchao.quantization.pt2e.utils import _fuse_conv_bn_, fold_bn_weights_into_conv_node
    _fuse_conv_bn_(gm)
    # Linear + BatchNorm1d folds the same way (the weight's first axis is the output channel).
    bns = (torch.ops.aten.batch_norm.default, torch.ops.aten._native_batch_norm_legit_no_training.default)
    folded = set()
    for bn in list(gm.graph.nodes):
        if bn.op != "call_function" or bn.target not in bns:
            continue
        lin = bn.args[0]
        if (getattr(lin, "target", None) != torch.ops.aten.linear.default or len(lin.users) != 1
                or lin.args[1] in folded or lin.args[1].op != "get_attr"
                or len(lin.meta["val"].shape) != 2):
            continue
        bias = lin.args[2] if len(lin.args) > 2 else None
        fold_bn_weights_into_conv_node(lin, lin.args[1], bias, bn, gm, False)
        folded.add(lin.args[1])
    gm.graph.eliminate_dead_code()
    gm.recompile()
    return gm

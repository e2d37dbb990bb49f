"""torch.export with static shapes, autocast regions inlined, and BatchNorm folded into the op before it."""

from __future__ import annotations

import contextlib
import io
import logging
import warnings

from ...diagnostics import UserError


_NOISY_LOGGERS = ("torch._subclasses.fake_tensor", "torch.fx.experimental.symbolic_shapes")


def export(model, example_inputs):
    """torch.export with static shapes; failures become UserError."""
    import torch
    from ... import diagnostics
    # torch's fake tensors log the traceback of a shape mismatch that the export then raises, and
    # its symbolic shapes a warning on a data-dependent branch: the UserError below states either
    # with the model's file and line.
    loggers = [logging.getLogger(name) for name in _NOISY_LOGGERS]
    levels = [log.level for log in loggers]
    try:
        # torch prints the graph traced so far of a data-dependent branch to stderr: -v shows it.
        printed = contextlib.nullcontext() if diagnostics.verbose else contextlib.redirect_stderr(io.StringIO())
        with warnings.catch_warnings(), printed:
            if not diagnostics.verbose:   # torch's tracing warnings are not the user's to act on
                warnings.simplefilter("ignore")
                for log in loggers:
                    log.setLevel(logging.CRITICAL)
            return torch.export.export(model, example_inputs, strict=False)
    except Exception as e:
        lines = [line.rstrip() for line in (str(e).strip() or type(e).__name__).split("\n")]
        # torch's data-dependent guard error names its symbols twice more: the user's line says more.
        reason = lines[0].split(" (unhinted:")[0].split("(Size-like symbols:")[0].strip()
        where = _model_frame(e)
        if where:
            reason = f"{reason} (at {where})"
        if "data-dependent" in lines[0]:
            reason += ("\nthe model branches on, or sizes a tensor by, a value computed from its inputs; a compiled "
                       "model has one static graph (torch.where computes both branches)")
        ints = [f"input {i} is {x.dtype}" for i, x in enumerate(example_inputs)
                if isinstance(x, torch.Tensor) and not x.dtype.is_floating_point]
        hint = (f"\n({', '.join(ints)}: integer inputs are indices, read only by lookups such as nn.Embedding)"
                if ints else "")
        # torch's own message goes on with its graph dump and debugging advice: shown with -v.
        rest = [line for line in lines[1:] if line.strip()]
        more = ("\n" + "\n".join(rest)) if diagnostics.verbose else (
            "\n(-v shows torch's whole message)" if rest else "")
        raise UserError("torch.export failed: " + reason + hint + more) from None
    finally:
        for log, level in zip(loggers, levels):
            log.setLevel(level)


def inline_autocast_regions(gm) -> int:
    """`with torch.autocast(...)` blocks (timm's EfficientViT-MIT keeps its attention in float32 that
    way) export as a wrap_with_autocast call of a submodule: its ops are put back in line, since
    the model runs in float32 here and is quantized after. Returns how many were inlined."""
    import torch
    from torch._higher_order_ops.wrap import wrap_with_autocast
    graph, inlined = gm.graph, 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not wrap_with_autocast:
            continue
        sub = getattr(gm, node.args[4].target)
        args, env, outputs = list(node.args[5:]), {}, None
        placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
        with graph.inserting_before(node):
            for n in sub.graph.nodes:
                if n.op == "placeholder":
                    env[n] = args[placeholders.index(n)]
                elif n.op == "output":
                    outputs = torch.fx.node.map_arg(n.args[0], lambda a: env[a])
                elif n.op == "get_attr":
                    name = f"_autocast{inlined}_{n.target.replace('.', '_')}"
                    value = sub
                    for part in n.target.split("."):
                        value = getattr(value, part)
                    setattr(gm, name, value)
                    env[n] = graph.get_attr(name)
                    env[n].meta.update(n.meta)
                else:
                    env[n] = graph.node_copy(n, lambda a: env[a])
        for user in list(node.users):
            if user.op == "call_function" and user.target.__name__ == "getitem":
                user.replace_all_uses_with(outputs[user.args[1]])
                graph.erase_node(user)
        if node.users:
            node.replace_all_uses_with(outputs if not isinstance(outputs, (tuple, list)) else outputs[0])
        graph.erase_node(node)
        inlined += 1
    if inlined:
        graph.eliminate_dead_code()
        gm.delete_all_unused_submodules()
        gm.recompile()
    return inlined


def fold_batch_norm(gm):
    """Folds BatchNorm into the preceding conv (eval mode), as PT2E does before quantizing."""
    import torch
    from torchao.quantization.pt2e.utils import _fuse_conv_bn_, fold_bn_weights_into_conv_node
    # A BatchNorm whose input something else reads too (RepGhostNet's identity BN beside a conv on
    # the same tensor) cannot fold into the conv producing it: the other reader would see the
    # normalized values. torchao's fusion does not check that; such a BN is its own scale and shift.
    _standalone_batch_norms_as_depthwise(gm, shared_input_only=True)
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
    _standalone_batch_norms_as_depthwise(gm)
    gm.graph.eliminate_dead_code()
    gm.recompile()
    return gm


def _param(gm, node):
    """The tensor a get_attr node names (a dotted path such as `bn.weight`), else None."""
    from ..graph.nodes import fetch_attr
    if node is None or not hasattr(node, "op") or node.op != "get_attr":
        return None
    return fetch_attr(gm, node.target)


def _standalone_batch_norms_as_depthwise(gm, shared_input_only: bool = False) -> None:
    """A BatchNorm that follows no conv or linear (after a ReLU, on a model input, before a
    classifier's linear as in EfficientViT's head) is a per-channel scale and shift: the same function as a 1x1 depthwise convolution, which the quantizer and the
    kernels already take (CMSIS-NN's depthwise conv)."""
    import torch
    aten = torch.ops.aten
    legit = aten._native_batch_norm_legit_no_training.default
    for bn in list(gm.graph.nodes):
        # batch_norm(x, w, b, mean, var, training, momentum, eps), or the inference-only form export
        # may leave, (x, w, b, mean, var, momentum, eps) -> (out, ...) read through getitem 0.
        if bn.op != "call_function" or not (bn.target == aten.batch_norm.default and not bn.args[5]
                                             or bn.target == legit):
            continue
        outputs = [bn]
        if bn.target == legit:
            outputs = list(bn.users)
            if any(u.target.__name__ != "getitem" or u.args[1] != 0 for u in outputs):
                continue
        eps = float(bn.args[6] if bn.target == legit else bn.args[7])
        x = bn.args[0]
        if shared_input_only and len(x.users) < 2:
            continue
        params = [_param(gm, a) for a in bn.args[1:5]]
        rank = len(x.meta["val"].shape) if "val" in x.meta else 0
        if rank not in (2, 3, 4) or params[2] is None or params[3] is None:
            continue
        mean, var = params[2].detach().double(), params[3].detach().double()
        channels = mean.numel()
        gamma = params[0].detach().double() if params[0] is not None else torch.ones(channels, dtype=torch.float64)
        beta = params[1].detach().double() if params[1] is not None else torch.zeros(channels, dtype=torch.float64)
        scale = gamma / torch.sqrt(var + eps)
        weight = scale.float().reshape((channels, 1) + (1,) * max(rank - 2, 1))
        bias = (beta - mean * scale).float()
        names = []
        for kind, tensor in (("weight", weight), ("bias", bias)):
            name = f"_mcu_bn_{bn.name}_{kind}"
            gm.register_buffer(name, tensor)
            names.append(name)
        out_val = bn.meta["val"][0] if bn.target == legit else bn.meta["val"]
        with gm.graph.inserting_before(bn):
            w_node, b_node = (gm.graph.get_attr(n) for n in names)
            w_node.meta["val"], b_node.meta["val"] = weight, bias
            conv = aten.conv2d.default if rank == 4 else aten.conv1d.default
            ones, zeros = [1] * max(rank - 2, 1), [0] * max(rank - 2, 1)
            if rank == 2:     # (N, C): a length-1 sequence of the 1-D form, as BatchNorm1d treats it
                x = gm.graph.call_function(aten.unsqueeze.default, (x, -1))
                x.meta = dict(bn.meta, val=bn.args[0].meta["val"].unsqueeze(-1))
            node = gm.graph.call_function(conv, (x, w_node, b_node, ones, zeros, ones, channels))
            node.meta = dict(bn.meta, val=out_val)
            if rank == 2:
                node.meta["val"] = out_val.unsqueeze(-1)
                node = gm.graph.call_function(aten.squeeze.dim, (node, -1))
                node.meta = dict(bn.meta, val=out_val)
        for out in outputs:
            out.replace_all_uses_with(node)
            if out is not bn:
                gm.graph.erase_node(out)
        gm.graph.erase_node(bn)


def _model_frame(error: BaseException) -> str:
    """FILE:LINE and the line's code, of the innermost frame of the error's traceback in model code
    (not torch's own, not this package's; a model library's counts): where the model did what
    export could not follow."""
    import os
    import traceback

    import torch
    skip = (os.path.dirname(torch.__file__), os.path.dirname(os.path.dirname(__file__)))
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith(skip)
              and "/contextlib.py" not in f.filename and not f.filename.startswith("<")]
    if not frames:
        return ""
    frame = frames[-1]
    code = (frame.line or "").strip()
    # The line's own text: the statement to change, without opening the file.
    return f"{frame.filename}:{frame.lineno}" + (f", in `{code}`" if code else "")

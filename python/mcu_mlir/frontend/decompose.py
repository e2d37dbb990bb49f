"""Module-level rewrites before export: layers torch.export keeps as one opaque op (LSTM, LSTM/GRU cells,
PReLU) become the linear / sigmoid / tanh / mul / add / conv they compute, so each part is quantized and lowered.
The user's model is not modified (a copy is rewritten)."""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn


class LSTMCellOps(nn.Module):
    """nn.LSTMCell written as its gates (same parameters, same results)."""

    def __init__(self, cell: nn.LSTMCell):
        super().__init__()
        self.hidden_size = cell.hidden_size
        self.ih = nn.Linear(cell.input_size, 4 * cell.hidden_size, bias=cell.bias)
        self.hh = nn.Linear(cell.hidden_size, 4 * cell.hidden_size, bias=cell.bias)
        with torch.no_grad():
            self.ih.weight.copy_(cell.weight_ih)
            self.hh.weight.copy_(cell.weight_hh)
            if cell.bias:
                self.ih.bias.copy_(cell.bias_ih)
                self.hh.bias.copy_(cell.bias_hh)
        # Without a state, hh(0) is just its bias: one linear with both biases.
        self.ih_no_state = nn.Linear(cell.input_size, 4 * cell.hidden_size, bias=cell.bias)
        with torch.no_grad():
            self.ih_no_state.weight.copy_(cell.weight_ih)
            if cell.bias:
                self.ih_no_state.bias.copy_(cell.bias_ih + cell.bias_hh)

    def forward(self, x, state=None):
        if state is None:
            gates = self.ih_no_state(x)
            c = None
        else:
            h, c = state
            gates = self.ih(x) + self.hh(h)
        i, f, g, o = gates.chunk(4, dim=1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c_next = i * g if state is None else f * c + i * g
        return o * torch.tanh(c_next), c_next


class GRUCellOps(nn.Module):
    """nn.GRUCell written as its gates."""

    def __init__(self, cell: nn.GRUCell):
        super().__init__()
        self.hidden_size = cell.hidden_size
        self.ih = nn.Linear(cell.input_size, 3 * cell.hidden_size, bias=cell.bias)
        self.hh = nn.Linear(cell.hidden_size, 3 * cell.hidden_size, bias=cell.bias)
        with torch.no_grad():
            self.ih.weight.copy_(cell.weight_ih)
            self.hh.weight.copy_(cell.weight_hh)
            if cell.bias:
                self.ih.bias.copy_(cell.bias_ih)
                self.hh.bias.copy_(cell.bias_hh)

    def forward(self, x, h=None):
        if h is None:
            h = torch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype)
        ri, zi, ni = self.ih(x).chunk(3, dim=1)
        rh, zh, nh = self.hh(h).chunk(3, dim=1)
        r = torch.sigmoid(ri + rh)
        z = torch.sigmoid(zi + zh)
        n = torch.tanh(ni + r * nh)
        return (1 - z) * n + z * h


class LSTMOps(nn.Module):
    """nn.LSTM (unidirectional, no projection) unrolled over its static sequence length."""

    def __init__(self, lstm: nn.LSTM):
        super().__init__()
        if lstm.bidirectional or lstm.proj_size:
            raise NotImplementedError("bidirectional or projected LSTM")
        self.batch_first = lstm.batch_first
        self.hidden_size = lstm.hidden_size
        self.num_layers = lstm.num_layers
        cells = []
        for layer in range(lstm.num_layers):
            cell = nn.LSTMCell(lstm.input_size if layer == 0 else lstm.hidden_size, lstm.hidden_size,
                               bias=lstm.bias)
            with torch.no_grad():
                cell.weight_ih.copy_(getattr(lstm, f"weight_ih_l{layer}"))
                cell.weight_hh.copy_(getattr(lstm, f"weight_hh_l{layer}"))
                if lstm.bias:
                    cell.bias_ih.copy_(getattr(lstm, f"bias_ih_l{layer}"))
                    cell.bias_hh.copy_(getattr(lstm, f"bias_hh_l{layer}"))
            cells.append(LSTMCellOps(cell))
        self.cells = nn.ModuleList(cells)

    def forward(self, x, state=None):
        unbatched = x.dim() == 2
        if unbatched:
            x = x.unsqueeze(1 if not self.batch_first else 0)
        if self.batch_first:
            x = x.transpose(0, 1)
        if state is not None and unbatched:
            state = (state[0].unsqueeze(1), state[1].unsqueeze(1))
        h_n, c_n = [], []
        for layer, cell in enumerate(self.cells):
            layer_state = None if state is None else (state[0][layer], state[1][layer])
            outputs = []
            for t in range(x.shape[0]):
                h, c = cell(x[t], layer_state)
                layer_state = (h, c)
                outputs.append(h)
            x = torch.stack(outputs, 0)
            h_n.append(layer_state[0])
            c_n.append(layer_state[1])
        out = x.transpose(0, 1) if self.batch_first else x
        h_n, c_n = torch.stack(h_n, 0), torch.stack(c_n, 0)
        if unbatched:
            out = out.squeeze(1 if not self.batch_first else 0)
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return out, (h_n, c_n)


def _lstm(module: nn.LSTM):
    if module.bidirectional or module.proj_size:
        return None     # left alone: the lowering names it as unsupported
    return LSTMOps(module)


def prelu_by_depthwise(x, slopes):
    """PReLU with a slope per channel (`slopes`, one per channel of dim 1): relu(x) + slope * min(x, 0),
    the product a 1x1 depthwise conv of the negative part (min(x, 0) = x - relu(x)), which the
    quantizer and the kernels take."""
    channels = slopes.numel()
    positive = torch.relu(x)
    negative = x - positive
    if x.dim() == 4:
        return positive + F.conv2d(negative, slopes.reshape(channels, 1, 1, 1), groups=channels)
    weight = slopes.reshape(channels, 1, 1)
    if x.dim() == 2:
        return positive + F.conv1d(negative.unsqueeze(-1), weight, groups=channels).squeeze(-1)
    return positive + F.conv1d(negative, weight, groups=channels)


class PReLUOps(nn.Module):
    """nn.PReLU as ops the quantizer and kernels take: one slope is a leaky ReLU (a table); a slope
    per channel is prelu_by_depthwise."""

    def __init__(self, prelu: nn.PReLU):
        super().__init__()
        slopes = prelu.weight.detach().clone()
        # A single slope read here: in forward it would be data-dependent. The reshape of the
        # per-channel slopes in forward is folded into a constant before quantization.
        self.slope = float(slopes.reshape(-1)[0]) if slopes.numel() == 1 else None
        self.register_buffer("slopes", slopes.reshape(-1))

    def forward(self, x):
        if self.slope is not None:
            return F.leaky_relu(x, self.slope)
        return prelu_by_depthwise(x, self.slopes)


_REWRITES = {nn.LSTMCell: LSTMCellOps, nn.GRUCell: GRUCellOps, nn.LSTM: _lstm, nn.PReLU: PReLUOps}


def decompose_modules(model: nn.Module) -> nn.Module:
    """A copy of `model` with the layers above rewritten (the model itself if none)."""
    if not any(type(m) in _REWRITES for m in model.modules()):
        return model
    model = copy.deepcopy(model)
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            rewrite = _REWRITES.get(type(child))
            replacement = rewrite(child) if rewrite is not None else None
            if replacement is not None:
                setattr(module, child_name, replacement.eval())
    return model


class FoldedBatchNorm(nn.Module):
    """Stands where a BatchNorm was folded into the conv before it; counts its calls (see below)."""

    @property
    def calls(self) -> int:
        return _FOLD_CALLS.get(id(self), 0)

    def forward(self, x):
        _FOLD_CALLS[id(self)] = self.calls + 1
        return x


# Calls per FoldedBatchNorm, kept outside the modules: export restores the attributes it saw change.
_FOLD_CALLS: dict[int, int] = {}


_FOLDABLE = ((nn.Conv1d, nn.BatchNorm1d), (nn.Conv2d, nn.BatchNorm2d))


def fold_sequential_batch_norms(model: nn.Module) -> tuple[nn.Module, dict]:
    """A copy of `model` with every Conv -> BatchNorm pair of an nn.Sequential folded in eager mode.

    The same folding the exported graph gets (`torch.nn.utils.fusion.fuse_conv_bn_weights`), done
    before export so that export does not trace the BatchNorms (a third of MobileNetV2's ops).
    Returns (model, {conv path: its FoldedBatchNorm}); `sequential_folds_hold` checks afterwards
    that neither module was also called on its own. The user's model is not modified.
    """
    from torch.nn.utils.fusion import fuse_conv_bn_eval
    uses: dict[int, int] = {}
    for _, m in model.named_modules(remove_duplicate=False):
        uses[id(m)] = uses.get(id(m), 0) + 1
    pairs = []
    for path, seq in model.named_modules():
        if type(seq) is not nn.Sequential:
            continue
        names = list(seq._modules)
        for a, b in zip(names, names[1:]):
            conv, bn = seq._modules[a], seq._modules[b]
            if (any(type(conv) is c and type(bn) is n for c, n in _FOLDABLE)
                    and bn.running_mean is not None and bn.running_var is not None
                    and uses[id(conv)] == 1 and uses[id(bn)] == 1
                    and not _has_hooks_or_parametrizations(conv) and not _has_hooks_or_parametrizations(bn)):
                pairs.append((f"{path}.{a}" if path else a, f"{path}.{b}" if path else b))
    if not pairs:
        return model, {}
    model = copy.deepcopy(model)
    folds = {}
    for conv_path, bn_path in pairs:
        parent_path, _, conv_name = conv_path.rpartition(".")
        seq = model.get_submodule(parent_path)
        bn_name = bn_path.rpartition(".")[2]
        seq._modules[conv_name] = fuse_conv_bn_eval(seq._modules[conv_name], seq._modules[bn_name])
        folds[conv_path] = seq._modules[bn_name] = FoldedBatchNorm()
    return model, folds


def _has_hooks_or_parametrizations(m: nn.Module) -> bool:
    return bool(m._forward_hooks or m._forward_pre_hooks or getattr(m, "parametrizations", None))


def sequential_folds_hold(graph: torch.fx.Graph, folds: dict) -> bool:
    """True when every folded conv ran inside its Sequential, straight into its FoldedBatchNorm.

    A conv or BatchNorm of a Sequential that the model also calls on its own would compute the
    folded function there; then the fold does not hold and the caller exports the model as it is.
    """
    if not folds:
        return True
    through_sequential = dict.fromkeys(folds, 0)
    for node in graph.nodes:
        stack = [path for path, _ in (node.meta.get("nn_module_stack") or {}).values()]
        if not stack or stack[-1] not in folds or node.op != "call_function":
            continue
        if "conv" not in str(node.target):
            continue
        parent = stack[-1].rpartition(".")[0]
        if len(stack) < 2 or stack[-2] != parent:
            return False
        through_sequential[stack[-1]] += 1
    held = all(folds[p].calls == n for p, n in through_sequential.items())
    for marker in folds.values():
        _FOLD_CALLS.pop(id(marker), None)
    return held


__all__ = ["decompose_modules", "LSTMCellOps", "GRUCellOps", "LSTMOps", "F", "fold_sequential_batch_norms",
           "sequential_folds_hold", "FoldedBatchNorm"]

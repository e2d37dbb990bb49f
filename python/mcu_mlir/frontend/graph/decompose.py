"""Module-level rewrites before export: layers torch.export keeps as one opaque op (LSTM, GRU, RNN and
their cells, PReLU) become the linear / sigmoid / tanh / mul / add / conv they compute, so each part is
quantized and lowered.
The user's model is not modified (a copy is rewritten)."""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn


class LSTMCellOps(nn.Module):
    """nn.LSTMCell written as its gates (same parameters, same results); with `kernel`, as one
    `mcu_mlir::lstm_cell` op per step (int8 models: the step CMSIS-NN's LSTM kernel computes)."""

    def __init__(self, cell: nn.LSTMCell, kernel: bool = False):
        super().__init__()
        self.hidden_size = cell.hidden_size
        self.kernel = kernel
        self.ih = nn.Linear(cell.input_size, 4 * cell.hidden_size, bias=cell.bias)
        self.hh = nn.Linear(cell.hidden_size, 4 * cell.hidden_size, bias=cell.bias)
        with torch.no_grad():
            self.ih.weight.copy_(cell.weight_ih)
            self.hh.weight.copy_(cell.weight_hh)
            if cell.bias:
                self.ih.bias.copy_(cell.bias_ih)
                self.hh.bias.copy_(cell.bias_hh)
        if kernel:
            # The kernel's one bias per gate: both biases summed (a buffer: a constant in the graph).
            self.register_buffer("kernel_bias", (cell.bias_ih + cell.bias_hh).detach().clone() if cell.bias
                                 else torch.zeros(4 * cell.hidden_size))
        # Without a state, hh(0) is just its bias: one linear with both biases.
        self.ih_no_state = nn.Linear(cell.input_size, 4 * cell.hidden_size, bias=cell.bias)
        with torch.no_grad():
            self.ih_no_state.weight.copy_(cell.weight_ih)
            if cell.bias:
                self.ih_no_state.bias.copy_(cell.bias_ih + cell.bias_hh)

    def forward(self, x, state=None):
        if self.kernel:
            from .lstm_cell import lstm_cell
            if state is None:
                # Two tensors: h and c are quantized differently (each input its own annotation).
                shape = x.shape[:-1] + (self.hidden_size,)
                state = (torch.zeros(shape), torch.zeros(shape))
            return lstm_cell(x, state[0], state[1], self.ih.weight, self.hh.weight, self.kernel_bias)
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
        self.ih_no_state = nn.Linear(cell.input_size, 3 * cell.hidden_size, bias=cell.bias)
        hidden = cell.hidden_size
        with torch.no_grad():
            self.ih.weight.copy_(cell.weight_ih)
            self.hh.weight.copy_(cell.weight_hh)
            self.ih_no_state.weight.copy_(cell.weight_ih)
            if cell.bias:
                self.ih.bias.copy_(cell.bias_ih)
                self.hh.bias.copy_(cell.bias_hh)
                folded = cell.bias_ih.clone()
                folded[:2 * hidden] += cell.bias_hh[:2 * hidden]
                self.ih_no_state.bias.copy_(folded)
        self.register_buffer("bias_hn", cell.bias_hh.detach()[2 * hidden:].clone() if cell.bias else None)

    def forward(self, x, h=None):
        if h is None:
            # hh(0) is its bias: r and z take theirs in one linear, n's is scaled by r.
            ri, zi, ni = self.ih_no_state(x).chunk(3, dim=1)
            r, z = torch.sigmoid(ri), torch.sigmoid(zi)
            n = torch.tanh(ni + r * self.bias_hn) if self.bias_hn is not None else torch.tanh(ni)
            return (1 - z) * n
        ri, zi, ni = self.ih(x).chunk(3, dim=1)
        rh, zh, nh = self.hh(h).chunk(3, dim=1)
        r = torch.sigmoid(ri + rh)
        z = torch.sigmoid(zi + zh)
        n = torch.tanh(ni + r * nh)
        return (1 - z) * n + z * h


class RNNCellOps(nn.Module):
    """nn.RNNCell (tanh or relu) written as its linears and activation."""

    def __init__(self, cell: nn.RNNCell):
        super().__init__()
        self.hidden_size = cell.hidden_size
        self.activation = torch.tanh if cell.nonlinearity == "tanh" else torch.relu
        self.ih = nn.Linear(cell.input_size, cell.hidden_size, bias=cell.bias)
        self.hh = nn.Linear(cell.hidden_size, cell.hidden_size, bias=False)
        # Without a state, hh(0) is its bias: one linear with both biases.
        self.ih_no_state = nn.Linear(cell.input_size, cell.hidden_size, bias=cell.bias)
        with torch.no_grad():
            self.ih.weight.copy_(cell.weight_ih)
            self.hh.weight.copy_(cell.weight_hh)
            self.ih_no_state.weight.copy_(cell.weight_ih)
            if cell.bias:
                self.ih.bias.copy_(cell.bias_ih + cell.bias_hh)
                self.ih_no_state.bias.copy_(cell.bias_ih + cell.bias_hh)

    def forward(self, x, h=None):
        if h is None:
            return self.activation(self.ih_no_state(x))
        return self.activation(self.ih(x) + self.hh(h))


_CELLS = {nn.LSTM: (nn.LSTMCell, LSTMCellOps), nn.GRU: (nn.GRUCell, GRUCellOps), nn.RNN: (nn.RNNCell, RNNCellOps)}


class RecurrentOps(nn.Module):
    """nn.LSTM / nn.GRU / nn.RNN (any layers, batch_first either way, initial state given or not,
    bidirectional) unrolled over the static sequence length: a cell per layer and direction (the
    cells above) called once per step; a reverse direction runs from the last step, and a
    bidirectional layer's output per step is both directions' hidden states concatenated. Returns
    what the module returns: (output, h_n), or (output, (h_n, c_n)) for an LSTM."""

    def __init__(self, rnn: nn.RNNBase, lstm_kernel: bool = False):
        super().__init__()
        cell_cls, ops_cls = _CELLS[type(rnn)]
        self.is_lstm = isinstance(rnn, nn.LSTM)
        self.batch_first = rnn.batch_first
        self.hidden_size = rnn.hidden_size
        self.num_layers = rnn.num_layers
        self.directions = 2 if rnn.bidirectional else 1
        cells = []
        for layer in range(rnn.num_layers):
            for direction in range(self.directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                size_in = rnn.input_size if layer == 0 else rnn.hidden_size * self.directions
                extra = {"nonlinearity": rnn.nonlinearity} if isinstance(rnn, nn.RNN) else {}
                cell = cell_cls(size_in, rnn.hidden_size, bias=rnn.bias, **extra)
                with torch.no_grad():
                    cell.weight_ih.copy_(getattr(rnn, "weight_ih" + suffix))
                    cell.weight_hh.copy_(getattr(rnn, "weight_hh" + suffix))
                    if rnn.bias:
                        cell.bias_ih.copy_(getattr(rnn, "bias_ih" + suffix))
                        cell.bias_hh.copy_(getattr(rnn, "bias_hh" + suffix))
                cells.append(ops_cls(cell, lstm_kernel) if ops_cls is LSTMCellOps else ops_cls(cell))
        self.cells = nn.ModuleList(cells)

    def flatten_parameters(self):
        """nn.RNNBase's cuDNN weight packing, which model code calls before each forward: nothing
        to pack here."""

    def forward(self, x, state=None):
        unbatched = x.dim() == 2
        if unbatched:
            x = x.unsqueeze(0 if self.batch_first else 1)
            if state is not None:
                state = tuple(s.unsqueeze(1) for s in state) if self.is_lstm else state.unsqueeze(1)
        if self.batch_first:
            x = x.transpose(0, 1)
        finals = []
        for layer in range(self.num_layers):
            per_direction = []
            for direction in range(self.directions):
                index = layer * self.directions + direction
                cell = self.cells[index]
                if state is None:
                    s = None
                else:
                    s = (state[0][index], state[1][index]) if self.is_lstm else state[index]
                outputs = [None] * x.shape[0]
                steps = range(x.shape[0]) if direction == 0 else range(x.shape[0] - 1, -1, -1)
                for t in steps:
                    s = cell(x[t], s)
                    outputs[t] = s[0] if self.is_lstm else s
                per_direction.append(outputs)
                finals.append(s)
            x = torch.stack([torch.cat([o[t] for o in per_direction], -1) if self.directions > 1
                             else per_direction[0][t] for t in range(x.shape[0])], 0)
        out = x.transpose(0, 1) if self.batch_first else x
        if self.is_lstm:
            h_n, c_n = torch.stack([f[0] for f in finals], 0), torch.stack([f[1] for f in finals], 0)
        else:
            h_n = torch.stack(finals, 0)
        if unbatched:
            out = out.squeeze(0 if self.batch_first else 1)
            h_n = h_n.squeeze(1)
            if self.is_lstm:
                c_n = c_n.squeeze(1)
        return (out, (h_n, c_n)) if self.is_lstm else (out, h_n)


def _recurrent(module: nn.RNNBase, lstm_kernel: bool = False):
    if getattr(module, "proj_size", 0):
        return None     # left alone: the lowering names it as unsupported
    return RecurrentOps(module, lstm_kernel)


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


_REWRITES = {nn.LSTMCell: LSTMCellOps, nn.GRUCell: GRUCellOps, nn.RNNCell: RNNCellOps, nn.LSTM: _recurrent,
             nn.GRU: _recurrent, nn.RNN: _recurrent, nn.PReLU: PReLUOps}


def decompose_modules(model: nn.Module, lstm_kernel: bool = False) -> nn.Module:
    """A copy of `model` with the layers above rewritten (the model itself if none). With
    `lstm_kernel` (int8 models), every LSTM step is one `mcu_mlir::lstm_cell` op."""
    if not any(type(m) in _REWRITES for m in model.modules()):
        return model
    model = copy.deepcopy(model)
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            rewrite = _REWRITES.get(type(child))
            if rewrite is None:
                continue
            kernel_aware = rewrite in (LSTMCellOps, _recurrent)
            replacement = rewrite(child, lstm_kernel) if kernel_aware else rewrite(child)
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


__all__ = ["decompose_modules", "LSTMCellOps", "GRUCellOps", "RNNCellOps", "RecurrentOps", "F",
           "fold_sequential_batch_norms",
           "sequential_folds_hold", "FoldedBatchNorm"]

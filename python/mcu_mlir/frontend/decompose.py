"""Module-level rewrites before export: layers torch.export keeps as one opaque op (LSTM/GRU cells)
become the linear / sigmoid / tanh / mul / add they compute, so each part is quantized and lowered.
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


_REWRITES = {nn.LSTMCell: LSTMCellOps, nn.GRUCell: GRUCellOps}


def decompose_modules(model: nn.Module) -> nn.Module:
    """A copy of `model` with the layers above rewritten (the model itself if none)."""
    if not any(type(m) in _REWRITES for m in model.modules()):
        return model
    model = copy.deepcopy(model)
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            rewrite = _REWRITES.get(type(child))
            if rewrite is not None:
                setattr(module, child_name, rewrite(child).eval())
    return model


__all__ = ["decompose_modules", "LSTMCellOps", "GRUCellOps", "F"]

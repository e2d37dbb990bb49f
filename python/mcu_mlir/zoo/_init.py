"""Deterministic random initialisation for zoo models (fixed seeds, non-trivial BatchNorm)."""

from __future__ import annotations

import torch
from torch import nn


def seeded(model: nn.Module, seed: int) -> nn.Module:
    """Re-initialises every parameter and BatchNorm statistic from `seed`; returns model.eval()."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Linear)):
                fan_in = m.weight[0].numel()
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * (2.0 / fan_in) ** 0.5)
                if m.bias is not None:
                    m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.05)
            elif isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
                c = m.num_features
                m.weight.copy_(1.0 + 0.2 * torch.randn(c, generator=g))
                m.bias.copy_(0.1 * torch.randn(c, generator=g))
                m.running_mean.copy_(0.1 * torch.randn(c, generator=g))
                m.running_var.copy_(1.0 + 0.5 * torch.rand(c, generator=g))
            elif isinstance(m, (nn.LSTMCell, nn.GRUCell)):
                for p in m.parameters():
                    p.copy_(torch.randn(p.shape, generator=g) * (1.0 / m.hidden_size) ** 0.5)
    return model.eval()

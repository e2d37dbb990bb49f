"""One LSTM time step as a single op through torch.export and PT2E (`mcu_mlir::lstm_cell`).

CMSIS-NN's arm_lstm_unidirectional_s8 computes a whole step from int8 x and h and an int16 cell
state at a power-of-two scale, with its gates at fixed scales (fixed_point/cmsis_lstm.py). Decomposed into
linears and activations, each part would be quantized on its own and no kernel could compute
those integers; kept whole, the quantizer annotates x, h and c only (h with the one int8
observer every step of the layer shares, c with a power-of-two int16 one) and the lowering
writes the kernel's arithmetic (lowering/recurrent.py). The op's float result is the PyTorch
cell's.
"""

from __future__ import annotations

import torch


@torch.library.custom_op("mcu_mlir::lstm_cell", mutates_args=())
def lstm_cell(x: torch.Tensor, h: torch.Tensor, c: torch.Tensor, weight_ih: torch.Tensor,
              weight_hh: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(h', c') of nn.LSTMCell with gate order input, forget, cell, output; `bias` is
    bias_ih + bias_hh."""
    gates = x @ weight_ih.t() + h @ weight_hh.t() + bias
    i, f, g, o = gates.chunk(4, dim=-1)
    c_next = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c_next), c_next


@lstm_cell.register_fake
def _(x, h, c, weight_ih, weight_hh, bias):
    return torch.empty_like(h), torch.empty_like(c)


LSTM_CELL = torch.ops.mcu_mlir.lstm_cell.default

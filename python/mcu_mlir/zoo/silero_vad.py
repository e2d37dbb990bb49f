"""A Silero-VAD-like net: STFT as a Conv1d with in_channels=1, magnitude, 4 encoder Conv1d+ReLU,
an LSTM cell carrying state between calls, a 1x1 Conv1d and a sigmoid."""

from __future__ import annotations

import torch
from torch import nn

from mcu_mlir.zoo._init import seeded


class SileroVADLike(nn.Module):
    def __init__(self, n_fft: int = 256, hop: int = 128, hidden: int = 128):
        super().__init__()
        self.bins = n_fft // 2 + 1
        self.stft = nn.Conv1d(1, 2 * self.bins, n_fft, stride=hop, bias=False)
        self.encoder = nn.Sequential(
            nn.Conv1d(self.bins, 128, 3, padding=1), nn.ReLU(),
            nn.Conv1d(128, 64, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv1d(64, 64, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv1d(64, hidden, 3, padding=1), nn.ReLU())
        self.rnn = nn.LSTMCell(hidden, hidden)
        self.decoder = nn.Sequential(nn.ReLU(), nn.Conv1d(hidden, 1, 1), nn.Sigmoid())

    def forward(self, x, h, c):
        spec = self.stft(x)
        real, imag = spec[:, :self.bins], spec[:, self.bins:]
        mag = torch.sqrt(real * real + imag * imag)
        feats = self.encoder(mag)
        feats = feats.mean(dim=2)
        h, c = self.rnn(feats, (h, c))
        prob = self.decoder(h.unsqueeze(-1))
        return prob.squeeze(-1), h, c


def silero_vad() -> nn.Module:
    """Input: 1x1x576 audio (512 samples + 64 of context), state h, c: 1x128 each."""
    model = SileroVADLike()
    seeded(model, 20)
    with torch.no_grad():   # a real DFT basis for the STFT filter, so the magnitudes mean something
        n = torch.arange(256, dtype=torch.float64)
        k = torch.arange(model.bins, dtype=torch.float64)[:, None]
        window = torch.hann_window(256, periodic=True, dtype=torch.float64)
        basis = torch.cat([torch.cos(2 * torch.pi * k * n / 256), -torch.sin(2 * torch.pi * k * n / 256)])
        model.stft.weight.copy_((basis * window / 16).float().unsqueeze(1))
    return model.eval()


INPUTS = {"silero_vad": [(1, 1, 576), (1, 128), (1, 128)]}

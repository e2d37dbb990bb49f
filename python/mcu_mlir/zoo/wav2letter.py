"""Wav2Letter (torchaudio.models.Wav2Letter, waveform input): 12 Conv1d+ReLU, then log_softmax."""

from __future__ import annotations

import torch
from torch import nn

from mcu_mlir.zoo._init import seeded


class Wav2Letter(nn.Module):
    def __init__(self, num_classes: int = 40, num_features: int = 1, width: int = 250, wide: int = 2000):
        super().__init__()
        layers = [nn.Conv1d(num_features, width, 250, stride=160, padding=45), nn.ReLU(inplace=True),
                  nn.Conv1d(width, width, 48, stride=2, padding=23), nn.ReLU(inplace=True)]
        for _ in range(7):
            layers += [nn.Conv1d(width, width, 7, stride=1, padding=3), nn.ReLU(inplace=True)]
        layers += [nn.Conv1d(width, wide, 32, stride=1, padding=16), nn.ReLU(inplace=True),
                   nn.Conv1d(wide, wide, 1), nn.ReLU(inplace=True),
                   nn.Conv1d(wide, num_classes, 1), nn.ReLU(inplace=True)]
        self.acoustic_model = nn.Sequential(*layers)

    def forward(self, x):
        x = self.acoustic_model(x)
        return nn.functional.log_softmax(x, dim=1)


def wav2letter() -> nn.Module:
    """torchaudio's sizes (40 classes, 250/2000 channels); input 1x1x16000 (1 s at 16 kHz)."""
    return seeded(Wav2Letter(), 10)


def wav2letter_small() -> nn.Module:
    """Same 12 layers with 32/64 channels, for fast tests; input 1x1x4000."""
    return seeded(Wav2Letter(num_classes=29, width=32, wide=64), 11)


INPUTS = {"wav2letter": [(1, 1, 16000)], "wav2letter_small": [(1, 1, 4000)]}

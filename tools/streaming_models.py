"""Streaming model definitions (state as inputs and outputs) for tools/streaming_benchmark.py and
test/e2e/test_streaming.py. `MODELS` maps a name to (factory, input shapes, --state pairs)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class SileroSTFT(nn.Module):
    """Silero VAD v5's front end: reflect padding, a strided conv1d whose filters are a windowed
    cos / sin basis (buffer `forward_basis_buffer`), the magnitude of each bin."""

    def __init__(self, n_fft: int = 256, hop: int = 128, pad: int = 64):
        super().__init__()
        self.n_fft, self.hop, self.pad = n_fft, hop, pad
        bins = n_fft // 2 + 1
        t = torch.arange(n_fft)
        k = torch.arange(bins).unsqueeze(1)
        window = torch.hann_window(n_fft, periodic=True)
        angle = 2 * torch.pi * k * t / n_fft
        basis = torch.cat([torch.cos(angle) * window, -torch.sin(angle) * window])
        self.register_buffer("forward_basis_buffer", basis.unsqueeze(1))

    def forward(self, x):
        x = F.pad(x, (0, self.pad), mode="reflect")
        x = F.conv1d(x.unsqueeze(1), self.forward_basis_buffer, stride=self.hop)
        cutoff = self.n_fft // 2 + 1
        return torch.sqrt(x[:, :cutoff] ** 2 + x[:, cutoff:] ** 2)


class SileroBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.reparam_conv = nn.Conv1d(cin, cout, 3, stride=stride, padding=1)

    def forward(self, x):
        return F.relu(self.reparam_conv(x))


class SileroVADv5(nn.Module):
    """The Silero VAD v5 architecture at 16 kHz: a 512-sample chunk after 64 samples of context from
    the previous chunk, STFT, four conv1d encoder blocks, an LSTMCell decoder whose h and c are
    carried, conv1d + sigmoid: the speech probability. State: context, h, c."""

    def __init__(self):
        super().__init__()
        self.stft = SileroSTFT()
        self.encoder = nn.Sequential(SileroBlock(129, 128, 1), SileroBlock(128, 64, 2), SileroBlock(64, 64, 2),
                                     SileroBlock(64, 128, 1))
        self.rnn = nn.LSTMCell(128, 128)
        self.decoder = nn.Sequential(nn.Dropout(0.1), nn.ReLU(), nn.Conv1d(128, 1, 1), nn.Sigmoid())

    def forward(self, chunk, context, h, c):
        x = torch.cat([context, chunk], dim=1)
        features = self.encoder(self.stft(x)).mean(-1)
        h, c = self.rnn(features, (h, c))
        return self.decoder(h.unsqueeze(-1)).squeeze(-1), x[:, -64:], h, c


class ConvLSTMStream(nn.Module):
    """A chunk of 4 frames through a conv, an LSTMCell whose h and c are carried between calls."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(8, 16, 3, padding=1)
        self.cell = nn.LSTMCell(16 * 4, 24)
        self.head = nn.Linear(24, 2)

    def forward(self, x, h, c):
        h, c = self.cell(torch.relu(self.conv(x)).flatten(1), (h, c))
        return torch.sigmoid(self.head(h)), h, c


class CRNNStream(nn.Module):
    """A CRNN keyword spotter run chunk by chunk: 4 frames of 40 MFCCs through two convs, a GRUCell
    whose h is carried, class scores."""

    def __init__(self, mfcc: int = 40, frames: int = 4, hidden: int = 64, classes: int = 12):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(mfcc, 64, 3, padding=1), nn.BatchNorm1d(64), nn.ReLU(),
                                  nn.Conv1d(64, 64, 3, padding=1), nn.ReLU())
        self.gru = nn.GRUCell(64 * frames, hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x, h):
        h = self.gru(self.conv(x).flatten(1), h)
        return self.head(h), h


class LSTM2Stream(nn.Module):
    """A 2-layer LSTM sequence model one step at a time: both layers' h and c carried."""

    def __init__(self, features: int = 16, hidden: int = 48):
        super().__init__()
        self.l1, self.l2 = nn.LSTMCell(features, hidden), nn.LSTMCell(hidden, hidden)
        self.head = nn.Linear(hidden, 4)

    def forward(self, x, h1, c1, h2, c2):
        h1, c1 = self.l1(x, (h1, c1))
        h2, c2 = self.l2(h1, (h2, c2))
        return self.head(h2), h1, c1, h2, c2


class DeepSpeechStream(nn.Module):
    """DeepSpeech-like: a chunk of 8 frames of 40 features through a strided conv and two fully
    connected layers, then an LSTMCell per chunk with its state carried, character scores."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(40, 64, 5, stride=2, padding=2)
        self.fc = nn.Sequential(nn.Linear(64 * 4, 128), nn.Hardtanh(0, 20), nn.Linear(128, 128), nn.Hardtanh(0, 20))
        self.lstm = nn.LSTMCell(128, 96)
        self.out = nn.Linear(96, 29)

    def forward(self, x, h, c):
        y = torch.relu(self.conv(x)).flatten(1)
        h, c = self.lstm(self.fc(y), (h, c))
        return self.out(h), h, c


class TCNStream(nn.Module):
    """A causal TCN (Conv-TasNet-like blocks of dilated depthwise convs) streamed: each block keeps the
    last (kernel - 1) x dilation frames of its input as a context state."""

    def __init__(self, channels: int = 32, kernel: int = 3, dilations=(1, 2, 4)):
        super().__init__()
        self.inp = nn.Conv1d(16, channels, 1)
        self.blocks = nn.ModuleList(nn.Conv1d(channels, channels, kernel, dilation=d, groups=channels)
                                    for d in dilations)
        self.mix = nn.ModuleList(nn.Conv1d(channels, channels, 1) for _ in dilations)
        self.context = [(kernel - 1) * d for d in dilations]
        self.out = nn.Conv1d(channels, 16, 1)

    def forward(self, x, c0, c1, c2):
        y = self.inp(x)
        states = []
        for block, mix, ctx, past in zip(self.blocks, self.mix, self.context, (c0, c1, c2)):
            joined = torch.cat([past, y], dim=2)
            states.append(joined[:, :, -ctx:])
            y = y + mix(torch.relu(block(joined)))
        return (self.out(y), *states)


def _seeded(cls):
    def make():
        torch.manual_seed(0)
        return cls().eval()
    return make


silero_vad_v5 = _seeded(SileroVADv5)
conv_lstm_stream = _seeded(ConvLSTMStream)
crnn_stream = _seeded(CRNNStream)
lstm2_stream = _seeded(LSTM2Stream)
deepspeech_stream = _seeded(DeepSpeechStream)
tcn_stream = _seeded(TCNStream)

MODELS = {
    "silero_vad_v5": (silero_vad_v5, [(1, 512), (1, 64), (1, 128), (1, 128)], [(1, 1), (2, 2), (3, 3)]),
    "crnn_gru_stream": (crnn_stream, [(1, 40, 4), (1, 64)], [(1, 1)]),
    "lstm2_stream": (lstm2_stream, [(1, 16), (1, 48), (1, 48), (1, 48), (1, 48)], [(1, 1), (2, 2), (3, 3), (4, 4)]),
    "deepspeech_stream": (deepspeech_stream, [(1, 40, 8), (1, 96), (1, 96)], [(1, 1), (2, 2)]),
    "tcn_stream": (tcn_stream, [(1, 16, 8), (1, 32, 2), (1, 32, 4), (1, 32, 8)], [(1, 1), (2, 2), (3, 3)]),
    "conv_lstm_stream": (conv_lstm_stream, [(1, 8, 4), (1, 24), (1, 24)], [(1, 1), (2, 2)]),
}


def train_vad(signal, speech_mask, iterations: int = 150, sequence: int = 16, seed: int = 0) -> SileroVADv5:
    """A SileroVADv5 trained for a few seconds on `signal` (16 kHz) against per-chunk labels (speech
    in more than half of a chunk's samples), sequences of `sequence` chunks with the state carried:
    a VAD whose decisions mean something, for comparing float and firmware decisions on speech."""
    import numpy as np
    torch.manual_seed(seed)
    model = SileroVADv5()
    size = 512
    n = len(signal) // size
    x = torch.from_numpy(np.asarray(signal[:n * size], np.float32).reshape(n, 1, size))
    y = torch.tensor(np.asarray(speech_mask[:n * size], np.float32).reshape(n, size).mean(1) > 0.5,
                     dtype=torch.float32)
    rng = np.random.default_rng(seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=2e-3)
    model.train()
    for _ in range(iterations):
        start = int(rng.integers(1, n - sequence))
        state = [x[start - 1, :, -64:], torch.zeros(1, 128), torch.zeros(1, 128)]
        loss = 0.0
        for k in range(sequence):
            p, *state = model(x[start + k], *state)
            loss = loss + F.binary_cross_entropy(p.reshape(1), y[start + k].reshape(1))
        optimiser.zero_grad()
        (loss / sequence).backward()
        optimiser.step()
    return model.eval()

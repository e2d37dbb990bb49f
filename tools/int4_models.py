"""Models of int4's acceptance set that the zoo lacks: two MLPerf Tiny architectures in PyTorch
(Visual Wake Words' MobileNetV1-0.25 at 96x96, the streaming wake word's 1-D depthwise-separable
net, shaped as str_ww_ref_model.tflite) and a small CNN trained on real data (scikit-learn's 8x8
digits, 1,797 images). The weights of the first two are random (fixed seeds); the digits model
is trained here in a few seconds.

Each factory is also usable as `mcu-compile tools/int4_models.py:<name>`.

The digits data: `pip download --no-deps scikit-learn` and unzip `sklearn/datasets/data/digits.csv.gz`
from the wheel; its path in MCU_DIGITS_CSV (default: digits.csv.gz in the current folder).
"""

from __future__ import annotations

import gzip
import os

import numpy as np
import torch
from torch import nn

from mcu_mlir.zoo._init import seeded

DIGITS_CSV = os.environ.get("MCU_DIGITS_CSV", "digits.csv.gz")


def _dw_pw(cin: int, cout: int, stride: int) -> list[nn.Module]:
    return [nn.Conv2d(cin, cin, 3, stride, 1, groups=cin), nn.BatchNorm2d(cin), nn.ReLU(),
            nn.Conv2d(cin, cout, 1), nn.BatchNorm2d(cout), nn.ReLU()]


class MobileNetV1VWW(nn.Module):
    """MLPerf Tiny VWW: MobileNetV1 with width 0.25 on 1x3x96x96, 2 classes."""

    def __init__(self, alpha: float = 0.25, classes: int = 2):
        super().__init__()
        plan = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + [(1024, 2), (1024, 1)]
        c = int(32 * alpha)
        layers = [nn.Conv2d(3, c, 3, 2, 1), nn.BatchNorm2d(c), nn.ReLU()]
        for width, stride in plan:
            layers += _dw_pw(c, int(width * alpha), stride)
            c = int(width * alpha)
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return self.fc(self.features(x).mean((2, 3)))


class StreamingWakeWord(nn.Module):
    """MLPerf Tiny streaming wake word (str_ww_ref_model.tflite without its streaming state):
    1x40x30 (40 features, 30 frames), depthwise 1-D convolutions of widths 3, 5, 10, 15 between
    pointwise ones, 3 classes."""

    def __init__(self):
        super().__init__()
        layers, c = [], 40
        for k, width in ((3, 128), (5, 128), (10, 128), (15, 32)):
            layers += [nn.Conv1d(c, c, k, groups=c), nn.BatchNorm1d(c), nn.ReLU(),
                       nn.Conv1d(c, width, 1), nn.BatchNorm1d(width), nn.ReLU()]
            c = width
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(c, 3)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


class DigitsCNN(nn.Module):
    """1x1x8x8 digits, 10 classes."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1),
                                      nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU())
        self.fc1 = nn.Linear(64 * 16, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(self.features(x).flatten(1))))


def vww() -> nn.Module:
    return seeded(MobileNetV1VWW(), 43)


def sww() -> nn.Module:
    return seeded(StreamingWakeWord(), 44)


def digits_data() -> tuple[np.ndarray, np.ndarray]:
    """(images [N, 1, 8, 8] scaled to about zero mean and unit variance, labels [N])."""
    if not os.path.exists(DIGITS_CSV):
        raise FileNotFoundError(f"{DIGITS_CSV}: the digits data (see this module's docstring)")
    with gzip.open(DIGITS_CSV, "rt") as f:
        rows = np.loadtxt(f, delimiter=",")
    x = ((rows[:, :64] - 4.9) / 6.0).astype(np.float32).reshape(-1, 1, 8, 8)
    return x, rows[:, 64].astype(np.int64)


def digits_split() -> tuple:
    """(train x, train y, test x, test y): a fixed 70 / 30 split."""
    x, y = digits_data()
    order = np.random.default_rng(0).permutation(len(y))
    cut = int(0.7 * len(y))
    return x[order[:cut]], y[order[:cut]], x[order[cut:]], y[order[cut:]]


def digits() -> nn.Module:
    """DigitsCNN trained on 70 % of the digits (Adam, 15 epochs, ~98 % on the rest); the trained
    weights are kept next to the data (training takes minutes on a loaded machine)."""
    torch.manual_seed(0)
    model = DigitsCNN()
    cache = DIGITS_CSV + ".cnn.pt"
    if os.path.exists(cache):
        model.load_state_dict(torch.load(cache))
        return model.eval()
    xtr, ytr, _, _ = digits_split()
    opt = torch.optim.Adam(model.parameters(), 2e-3)
    xs, ys = torch.from_numpy(xtr), torch.from_numpy(ytr)
    g = torch.Generator().manual_seed(0)
    for _ in range(15):
        for idx in torch.randperm(len(ys), generator=g).split(64):
            opt.zero_grad()
            nn.functional.cross_entropy(model(xs[idx]), ys[idx]).backward()
            opt.step()
    torch.save(model.state_dict(), cache)
    return model.eval()


INPUTS = {"vww": [(1, 3, 96, 96)], "sww": [(1, 40, 30)], "digits": [(1, 1, 8, 8)]}

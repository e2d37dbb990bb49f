"""A YOLO11n-like stack: Conv-BN-SiLU, C3k2 (split / bottlenecks / concat), SPPF max pools,
nearest upsampling and a two-scale head. Small input (64x64) for tests."""

from __future__ import annotations

import torch
from torch import nn

from mcu_mlir.zoo._init import seeded


class Conv(nn.Module):
    def __init__(self, cin, cout, k=1, s=1, g=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, s, k // 2, groups=g, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c, shortcut=True):
        super().__init__()
        self.cv1 = Conv(c, c, 3)
        self.cv2 = Conv(c, c, 3)
        self.add = shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C3k2(nn.Module):
    def __init__(self, cin, cout, n=1, shortcut=True):
        super().__init__()
        self.c = cout // 2
        self.cv1 = Conv(cin, 2 * self.c, 1)
        self.cv2 = Conv((2 + n) * self.c, cout, 1)
        self.m = nn.ModuleList(Bottleneck(self.c, shortcut) for _ in range(n))

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        y.extend(m(y[-1]) for m in self.m)
        return self.cv2(torch.cat(y, 1))


class SPPF(nn.Module):
    def __init__(self, cin, cout, k=5):
        super().__init__()
        hidden = cin // 2
        self.cv1 = Conv(cin, hidden, 1)
        self.cv2 = Conv(hidden * 4, cout, 1)
        self.m = nn.MaxPool2d(k, 1, k // 2)

    def forward(self, x):
        y = [self.cv1(x)]
        y.extend(self.m(y[-1]) for _ in range(3))
        return self.cv2(torch.cat(y, 1))


class YOLO11nLike(nn.Module):
    def __init__(self, num_outputs: int = 20):
        super().__init__()
        self.b0 = Conv(3, 16, 3, 2)
        self.b1 = Conv(16, 32, 3, 2)
        self.b2 = C3k2(32, 32, 1, False)
        self.b3 = Conv(32, 64, 3, 2)
        self.b4 = C3k2(64, 64, 1, True)
        self.b5 = Conv(64, 64, 3, 2)
        self.sppf = SPPF(64, 64)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.h1 = C3k2(128, 64, 1, False)
        self.down = Conv(64, 64, 3, 2)
        self.h2 = C3k2(128, 64, 1, True)
        self.out_p3 = nn.Conv2d(64, num_outputs, 1)
        self.out_p4 = nn.Conv2d(64, num_outputs, 1)

    def forward(self, x):
        x = self.b2(self.b1(self.b0(x)))
        p3 = self.b4(self.b3(x))
        p4 = self.sppf(self.b5(p3))
        y3 = self.h1(torch.cat([self.up(p4), p3], 1))
        y4 = self.h2(torch.cat([self.down(y3), p4], 1))
        return self.out_p3(y3), self.out_p4(y4)


class GroupedConvNet(nn.Module):
    """Grouped (not depthwise) convolutions with groups=2 and 4, 2-D and 1-D."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.g2 = nn.Conv2d(16, 32, 3, padding=1, groups=2)
        self.g4 = nn.Conv2d(32, 32, 3, stride=2, padding=1, groups=4)
        self.g4_1d = nn.Conv1d(32, 16, 3, padding=1, groups=4)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        x = torch.relu(self.g2(x))
        x = torch.relu(self.g4(x))
        x = x.flatten(2)
        x = torch.relu(self.g4_1d(x))
        return self.fc(x.mean(dim=2))


def yolo11n_like() -> nn.Module:
    return seeded(YOLO11nLike(), 50)


def grouped_conv() -> nn.Module:
    return seeded(GroupedConvNet(), 51)


INPUTS = {"yolo11n_like": [(1, 3, 64, 64)], "grouped_conv": [(1, 3, 16, 16)]}

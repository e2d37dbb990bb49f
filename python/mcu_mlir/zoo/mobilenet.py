"""MobileNetV2 and MobileNetV3-small (torchvision's architectures, defined here; random weights)."""

from __future__ import annotations

from functools import partial

import torch
from torch import nn

from mcu_mlir.zoo._init import seeded


def _make_divisible(v: float, divisor: int = 8) -> int:
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def conv_bn_act(cin, cout, k=3, stride=1, groups=1, act=nn.ReLU6):
    layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act(inplace=True) if act in (nn.ReLU6, nn.ReLU, nn.Hardswish) else act())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = int(round(cin * expand))
        self.use_res = stride == 1 and cin == cout
        layers = []
        if expand != 1:
            layers.append(conv_bn_act(cin, hidden, 1))
        layers += [conv_bn_act(hidden, hidden, 3, stride, groups=hidden), conv_bn_act(hidden, cout, 1, act=None)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, width: float = 1.0, num_classes: int = 1000):
        super().__init__()
        settings = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1],
                    [6, 160, 3, 2], [6, 320, 1, 1]]
        cin = _make_divisible(32 * width)
        last = _make_divisible(1280 * max(1.0, width))
        features = [conv_bn_act(3, cin, 3, 2)]
        for t, c, n, s in settings:
            cout = _make_divisible(c * width)
            for i in range(n):
                features.append(InvertedResidual(cin, cout, s if i == 0 else 1, t))
                cin = cout
        features.append(conv_bn_act(cin, last, 1))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, num_classes))

    def forward(self, x):
        x = self.features(x)
        x = nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.classifier(x)


class SqueezeExcitation(nn.Module):
    def __init__(self, cin, squeeze):
        super().__init__()
        self.fc1 = nn.Conv2d(cin, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, cin, 1)
        self.relu = nn.ReLU()
        self.scale_act = nn.Hardsigmoid()

    def forward(self, x):
        s = nn.functional.adaptive_avg_pool2d(x, 1)
        s = self.scale_act(self.fc2(self.relu(self.fc1(s))))
        return s * x


class V3Block(nn.Module):
    def __init__(self, cin, k, exp, cout, se, act, stride):
        super().__init__()
        self.use_res = stride == 1 and cin == cout
        layers = []
        if exp != cin:
            layers.append(conv_bn_act(cin, exp, 1, act=act))
        layers.append(conv_bn_act(exp, exp, k, stride, groups=exp, act=act))
        if se:
            layers.append(SqueezeExcitation(exp, _make_divisible(exp // 4)))
        layers.append(conv_bn_act(exp, cout, 1, act=None))
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        y = self.block(x)
        return x + y if self.use_res else y


class MobileNetV3Small(nn.Module):
    def __init__(self, num_classes: int = 1000):
        super().__init__()
        RE, HS = nn.ReLU, nn.Hardswish
        cfg = [(16, 3, 16, 16, True, RE, 2), (16, 3, 72, 24, False, RE, 2), (24, 3, 88, 24, False, RE, 1),
               (24, 5, 96, 40, True, HS, 2), (40, 5, 240, 40, True, HS, 1), (40, 5, 240, 40, True, HS, 1),
               (40, 5, 120, 48, True, HS, 1), (48, 5, 144, 48, True, HS, 1), (48, 5, 288, 96, True, HS, 2),
               (96, 5, 576, 96, True, HS, 1), (96, 5, 576, 96, True, HS, 1)]
        layers = [conv_bn_act(3, 16, 3, 2, act=HS)]
        layers += [V3Block(*c) for c in cfg]
        layers.append(conv_bn_act(96, 576, 1, act=HS))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Linear(576, 1024), nn.Hardswish(inplace=True), nn.Dropout(0.2),
                                        nn.Linear(1024, num_classes))

    def forward(self, x):
        x = self.features(x)
        x = nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.classifier(x)


def mobilenet_v2() -> nn.Module:
    """Width 0.35 at 96x96 (the TinyML configuration)."""
    return seeded(MobileNetV2(0.35), 30)


def mobilenet_v2_100() -> nn.Module:
    """Width 1.0 at 224x224 (benchmark only)."""
    return seeded(MobileNetV2(1.0), 31)


def mobilenet_v3_small() -> nn.Module:
    return seeded(MobileNetV3Small(), 32)


INPUTS = {"mobilenet_v2": [(1, 3, 96, 96)], "mobilenet_v2_100": [(1, 3, 224, 224)],
          "mobilenet_v3_small": [(1, 3, 96, 96)]}

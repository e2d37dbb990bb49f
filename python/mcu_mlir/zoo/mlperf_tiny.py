"""MLPerf Tiny models: DS-CNN keyword spotting, ResNet-8 (CIFAR-10), the FC autoencoder (ToyADMOS)."""

from __future__ import annotations

from torch import nn

from mcu_mlir.zoo._init import seeded


class DSCNN(nn.Module):
    """Input 1x1x49x10 (MFCC frames x coefficients), 12 classes."""

    def __init__(self, filters: int = 64, blocks: int = 4, num_classes: int = 12):
        super().__init__()
        layers = [nn.Conv2d(1, filters, (10, 4), stride=2, padding=(5, 1)), nn.BatchNorm2d(filters), nn.ReLU()]
        for _ in range(blocks):
            layers += [nn.Conv2d(filters, filters, 3, padding=1, groups=filters), nn.BatchNorm2d(filters), nn.ReLU(),
                       nn.Conv2d(filters, filters, 1), nn.BatchNorm2d(filters), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.pool = nn.AvgPool2d((25, 5))
        self.fc = nn.Linear(filters, num_classes)

    def forward(self, x):
        return self.fc(self.pool(self.features(x)).flatten(1))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Conv2d(cin, cout, 1, stride) if stride != 1 or cin != cout else nn.Identity()

    def forward(self, x):
        y = nn.functional.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return nn.functional.relu(y + self.shortcut(x))


class ResNet8(nn.Module):
    """Input 1x3x32x32, 10 classes."""

    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.stack = nn.Sequential(BasicBlock(16, 16, 1), BasicBlock(16, 32, 2), BasicBlock(32, 64, 2))
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x):
        x = self.stack(self.stem(x))
        return self.fc(nn.functional.avg_pool2d(x, 8).flatten(1))


class FCAutoencoder(nn.Module):
    """Input 1x640 (5 frames x 128 mel bins); Dense+BN+ReLU layers, bottleneck 8."""

    def __init__(self, inputs: int = 640, hidden: int = 128, bottleneck: int = 8):
        super().__init__()
        sizes = [inputs, hidden, hidden, hidden, hidden, bottleneck, hidden, hidden, hidden, hidden]
        layers = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(a, b), nn.BatchNorm1d(b), nn.ReLU()]
        layers.append(nn.Linear(hidden, inputs))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def ds_cnn() -> nn.Module:
    return seeded(DSCNN(), 40)


def resnet8() -> nn.Module:
    return seeded(ResNet8(), 41)


def autoencoder() -> nn.Module:
    return seeded(FCAutoencoder(), 42)


INPUTS = {"ds_cnn": [(1, 1, 49, 10)], "resnet8": [(1, 3, 32, 32)], "autoencoder": [(1, 640)]}

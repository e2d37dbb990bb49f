"""Parallel convolutions summed (RepVGG / MobileOne branches) merge into one convolution that
computes the same float function; anything that is not such a sum is left alone."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from mcu_mlir.frontend.graph.reparameterize import merge_parallel_convs  # noqa: E402
from mcu_mlir.frontend.graph.torch_export import export, fold_batch_norm  # noqa: E402

aten = torch.ops.aten


def _graph(model, x):
    torch.manual_seed(0)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-1, 1)
            m.running_var.uniform_(0.5, 2)
            m.weight.data.uniform_(0.5, 1.5)
    return fold_batch_norm(export(model.eval(), (x,)).module())


def _convs(gm):
    return [n for n in gm.graph.nodes if n.target in (aten.conv2d.default, aten.conv1d.default)]


class RepBlock(nn.Module):
    """MobileOne's block: a 3x3 conv + BN, a 1x1 conv + BN and a BN of the input, summed."""

    def __init__(self, channels=6, groups=1, stride=1):
        super().__init__()
        self.kxk = nn.Sequential(nn.Conv2d(channels, channels, 3, stride, 1, groups=groups, bias=False),
                                 nn.BatchNorm2d(channels))
        self.scale = nn.Sequential(nn.Conv2d(channels, channels, 1, stride, 0, groups=groups, bias=False),
                                   nn.BatchNorm2d(channels))
        self.identity = nn.BatchNorm2d(channels) if stride == 1 else None

    def forward(self, x):
        out = self.scale(x) + (self.identity(x) if self.identity is not None else 0)
        return torch.relu(out + self.kxk(x))


class RepMixerLike(nn.Module):
    """FastViT's RepMixer: x + layer_scale * (mixer(x) - norm(x)), both depthwise on x."""

    def __init__(self, channels=6):
        super().__init__()
        self.mixer = nn.Sequential(nn.Conv2d(channels, channels, 3, 1, 1, groups=channels, bias=False),
                                   nn.BatchNorm2d(channels))
        self.norm = nn.BatchNorm2d(channels)
        self.gamma = nn.Parameter(torch.rand(channels, 1, 1) + 0.5)

    def forward(self, x):
        return x + self.gamma * (self.mixer(x) - self.norm(x))


class Conv1dPair(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv1d(4, 5, 5, padding=4, dilation=2)
        self.b = nn.Conv1d(4, 5, 3, padding=2, dilation=2)

    def forward(self, x):
        return self.a(x) + self.b(x)


def test_subtracted_branches_and_layer_scale_merge():
    x = torch.randn(1, 6, 9, 9)
    gm = _graph(RepMixerLike(), x)
    want = gm(x)
    assert merge_parallel_convs(gm) == 2          # the sub, then the layer scale
    assert len(_convs(gm)) == 1
    assert not [n for n in gm.graph.nodes if n.target in (aten.sub.Tensor, aten.mul.Tensor)]
    # The residual add stays (an identity tap would coarsen the conv's weights).
    assert [n for n in gm.graph.nodes if n.target == aten.add.Tensor]
    assert torch.allclose(gm(x), want, atol=1e-5)


@pytest.mark.parametrize("make, shape", [
    (lambda: RepBlock(), (1, 6, 9, 9)),
    (lambda: RepBlock(groups=6), (1, 6, 9, 9)),
    (lambda: RepBlock(stride=2), (1, 6, 9, 9)),
    (lambda: Conv1dPair(), (1, 4, 20)),
], ids=["dense_with_identity", "depthwise_with_identity", "strided_no_identity", "conv1d_dilated"])
def test_branches_merge_into_one_conv(make, shape):
    x = torch.randn(shape)
    gm = _graph(make(), x)
    want = gm(x)
    assert len(_convs(gm)) >= 2
    assert merge_parallel_convs(gm) >= 1
    assert len(_convs(gm)) == 1
    assert not [n for n in gm.graph.nodes if n.target in (aten.add.Tensor, aten.add_.Tensor)]
    assert torch.allclose(gm(x), want, atol=1e-5)


class NotASum(nn.Module):
    """Convs that cannot merge: different inputs, a branch read twice, different dilations."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Conv2d(3, 4, 3, padding=1), nn.Conv2d(3, 4, 3, padding=1)
        self.c, self.d = nn.Conv2d(3, 4, 3, padding=1), nn.Conv2d(3, 4, 1)
        self.e, self.f = nn.Conv2d(3, 4, 3, padding=2, dilation=2), nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        other = torch.relu(x)
        first = self.a(x) + self.b(other)          # different inputs
        c = self.c(x)
        second = c + self.d(x) + c                 # c read twice
        third = self.e(x) + self.f(x)             # dilation 2 beside dilation 1
        return first + second + third


def test_other_sums_are_left_alone():
    x = torch.randn(1, 3, 8, 8)
    gm = _graph(NotASum(), x)
    convs = len(_convs(gm))
    want = gm(x)
    merge_parallel_convs(gm)
    assert len(_convs(gm)) == convs
    assert torch.allclose(gm(x), want, atol=1e-6)


class SpatialScale(nn.Module):
    """A constant that is not one value per channel (a spatial map) stays a multiply."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.map = nn.Parameter(torch.rand(1, 1, 8, 8))
        self.per_channel = nn.Parameter(torch.rand(4, 1, 1))

    def forward(self, x):
        return self.conv(x) * self.map, self.conv(torch.relu(x)) * self.per_channel


def test_only_per_channel_scales_fold():
    x = torch.randn(1, 3, 8, 8)
    gm = _graph(SpatialScale(), x)
    want = gm(x)
    assert merge_parallel_convs(gm) == 1
    assert len([n for n in gm.graph.nodes if n.target == aten.mul.Tensor]) == 1
    assert all(torch.allclose(g, w, atol=1e-6) for g, w in zip(gm(x), want))

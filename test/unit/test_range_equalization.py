"""Range equalization (frontend/quantize/range_equalization.py): the scaled float graph computes the
model's function, its channel ranges move toward one, and the per-layer SQNR of a scaled layer is
measured in the model's own units. The float model is the oracle."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from mcu_mlir.frontend import export  # noqa: E402
from mcu_mlir.frontend.stages import _quantize_graph  # noqa: E402
from mcu_mlir.frontend.quantize.range_equalization import equalized  # noqa: E402

SPREAD = torch.logspace(-2, 0, 8)       # channel i's scale: 0.01 ... 1


class Imbalanced(nn.Module):
    """conv -> ReLU -> depthwise -> ReLU6 -> 1x1 conv -> ReLU -> mean -> linear, the first conv's
    channels 100x apart in range (a BatchNorm folded into it can do that); the last ReLU reaches the
    linear through a spatial mean."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pw = nn.Conv2d(8, 16, 1)
        self.fc = nn.Linear(16, 10)
        with torch.no_grad():
            self.conv.weight.mul_(SPREAD.reshape(-1, 1, 1, 1) * 3)
            self.conv.bias.mul_(SPREAD)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = nn.functional.relu6(self.dw(x))
        x = torch.relu(self.pw(x))
        return self.fc(x.mean((2, 3)))


def _samples(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(1, 3, 12, 12, generator=g),) for _ in range(n)]


def _values(gm, sample, names):
    out = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            v = super().run_node(n)
            if n.name in names:
                out[n.name] = v.detach().clone()
            return v
    with torch.no_grad():
        Recorder(gm).run(*sample)
    return out


def _gm():
    return export(Imbalanced().eval(), _samples(1, 0)[0]).module()


def test_equalized_graph_computes_the_model_with_closer_channel_ranges():
    gm = _gm()
    before = {k: v.clone() for k, v in gm.state_dict().items()}
    calibration = _samples(8, 1)
    copy, factors = equalized(gm, calibration)
    assert all(torch.equal(v, gm.state_dict()[k]) for k, v in before.items())      # the model's graph is left
    acts = [n.name for n in gm.graph.nodes if n.target in (torch.ops.aten.relu.default,
                                                            torch.ops.aten.relu6.default)]
    assert set(acts) <= set(factors)     # the last ReLU through the mean into the linear
    for sample in calibration + _samples(4, 7):
        with torch.no_grad():
            want, got = gm(*sample), copy(*sample)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
    for name in acts[:2]:
        scale, axis = factors[name]
        original = torch.cat([_values(gm, s, {name})[name] for s in calibration])
        scaled = torch.cat([_values(copy, s, {name})[name] for s in calibration])
        shape = [1] * original.dim()
        shape[axis] = -1
        # The copy's values times the factors are the model's.
        np.testing.assert_allclose((scaled * torch.from_numpy(scale).reshape(shape).float()).numpy(),
                                   original.numpy(), rtol=1e-4, atol=1e-5)
        spread = [float(v.amax((0, 2, 3)).max() / v.amax((0, 2, 3)).min()) for v in (original, scaled)]
        # Halfway in log: the largest over the smallest channel range is its square root.
        assert spread[1] == pytest.approx(spread[0] ** 0.5, rel=0.05) and spread[0] > 20


def test_a_clipped_channel_keeps_its_scale():
    """A ReLU6 channel that reaches 6 on the calibration data is not scaled: scaled up, its
    clip would fall inside the values it takes."""
    class Clipped(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.a, self.b = nn.Linear(4, 3), nn.Linear(3, 2)
            with torch.no_grad():
                self.a.weight.mul_(torch.tensor([[100.0], [1.0], [0.1]]))

        def forward(self, x):
            return self.b(nn.functional.relu6(self.a(x)))
    gm = export(Clipped().eval(), (torch.randn(8, 4),)).module()
    samples = [(torch.randn(8, 4, generator=torch.Generator().manual_seed(s)),) for s in range(4)]
    copy, factors = equalized(gm, samples)
    scale, axis = next(iter(factors.values()))      # the linear's and the ReLU6's, one set
    assert axis == -1 and scale[0] == 1.0 and 0 < scale[2] < scale[1] < 1
    for sample in samples:
        np.testing.assert_allclose(copy(*sample).detach().numpy(), gm(*sample).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_views_that_mix_positions_into_channels_end_a_pair():
    """conv -> ReLU -> flatten -> linear: the linear reads channel and position together, so a
    per-channel factor has no input channel of the linear to go to."""
    class Flat(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.fc = nn.Conv2d(3, 4, 3), nn.Linear(4 * 4 * 4, 2)

        def forward(self, x):
            return self.fc(torch.relu(self.conv(x)).flatten(1))
    gm = export(Flat().eval(), (torch.randn(1, 3, 6, 6),)).module()
    assert equalized(gm, [(torch.randn(1, 3, 6, 6),)]) is None


def test_every_reader_takes_the_factors_back():
    """An activation two layers read is scaled with both compensating; one the model also returns
    (or any op other than a layer or a per-channel op reads) is not scaled."""
    class Shared(nn.Module):
        def __init__(self, returned):
            super().__init__()
            torch.manual_seed(0)
            self.a, self.b, self.c = nn.Linear(4, 3), nn.Linear(3, 2), nn.Linear(3, 2)
            self.returned = returned
            with torch.no_grad():
                self.a.weight.mul_(torch.tensor([[10.0], [1.0], [0.1]]))

        def forward(self, x):
            y = torch.relu(self.a(x))
            return (self.b(y) + self.c(y), y) if self.returned else self.b(y) + self.c(y)
    samples = [(torch.randn(8, 4, generator=torch.Generator().manual_seed(s)),) for s in range(4)]
    gm = export(Shared(False).eval(), samples[0]).module()
    copy, factors = equalized(gm, samples)
    assert len(factors) == 2
    for sample in samples:
        np.testing.assert_allclose(copy(*sample).detach().numpy(), gm(*sample).detach().numpy(), rtol=1e-4, atol=1e-5)
    assert equalized(export(Shared(True).eval(), samples[0]).module(), samples) is None


def test_squeeze_excitation_gate_carries_the_scale():
    """dw conv -> ReLU -> x * SE(x) -> 1x1 conv: the gate's first linear reads the mean of the
    scaled channels and takes the factors back, so the gate is the model's, and the product
    carries the scale to the 1x1 conv. x * x is not scaled."""
    class SE(nn.Module):
        def __init__(self, square=False):
            super().__init__()
            torch.manual_seed(0)
            self.dw, self.pw = nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.Conv2d(8, 4, 1)
            self.reduce, self.expand = nn.Conv2d(8, 2, 1), nn.Conv2d(2, 8, 1)
            self.square = square
            with torch.no_grad():
                self.dw.weight.mul_(SPREAD.reshape(-1, 1, 1, 1))

        def forward(self, x):
            y = torch.relu(self.dw(x))
            gate = y if self.square else torch.sigmoid(self.expand(torch.relu(self.reduce(y.mean((2, 3), True)))))
            return self.pw(y * gate)
    samples = [(torch.randn(1, 8, 6, 6, generator=torch.Generator().manual_seed(s)),) for s in range(4)]
    gm = export(SE().eval(), samples[0]).module()
    copy, factors = equalized(gm, samples)
    scaled = {n.target for n in gm.graph.nodes if n.name in factors}
    assert {torch.ops.aten.mean.dim, torch.ops.aten.mul.Tensor} <= scaled
    for x in [s[0] for s in samples] + [torch.randn(1, 8, 6, 6) * 3]:
        np.testing.assert_allclose(copy(x).detach().numpy(), gm(x).detach().numpy(), rtol=1e-4, atol=1e-5)
    assert equalized(export(SE(square=True).eval(), samples[0]).module(), samples) is None


class Residual(nn.Module):
    """A linear bottleneck stream (MobileNetV2: convs without activation summed, the sum read by
    convs) and a ResNet block (relu(conv(a) + a), conv reading and writing one stream); with
    `from_input`, the stream adds the model's input, which no factor can scale."""

    def __init__(self, from_input=False):
        super().__init__()
        torch.manual_seed(0)
        self.a, self.b, self.c = nn.Conv2d(4, 8, 1), nn.Conv2d(8, 8, 3, padding=1), nn.Conv2d(8, 8, 1)
        self.d, self.f, self.e = nn.Conv2d(8, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1), nn.Conv2d(8, 3, 1)
        self.from_input = from_input
        with torch.no_grad():
            self.a.weight.mul_(SPREAD.reshape(-1, 1, 1, 1))

    def forward(self, x):
        s1 = self.a(x)                                  # no activation: the stream starts signed
        s2 = s1 + self.c(torch.relu(self.b(s1)))
        if self.from_input:
            s2 = s2 + x.repeat(1, 2, 1, 1)
        r = torch.relu(self.d(s2))
        return self.e(torch.relu(self.f(r) + r))


def test_residual_streams_are_one_group():
    samples = [(torch.randn(1, 4, 6, 6, generator=torch.Generator().manual_seed(s)),) for s in range(4)]
    gm = export(Residual().eval(), samples[0]).module()
    copy, factors = equalized(gm, samples)
    convs = {n.name: n for n in gm.graph.nodes if n.target is torch.ops.aten.conv2d.default}
    adds = [n.name for n in gm.graph.nodes if n.target is torch.ops.aten.add.Tensor]
    assert set(adds) <= set(factors) and {"conv2d", "conv2d_2"} <= set(factors)     # a and c write the stream
    assert np.array_equal(factors["conv2d"][0], factors["add"][0])
    for x in [s[0] for s in samples] + [torch.randn(1, 4, 6, 6) * 4]:
        np.testing.assert_allclose(copy(x).detach().numpy(), gm(x).detach().numpy(), rtol=1e-4, atol=1e-4)
    assert len(convs) == 6 and {"relu_1", "relu_2", "conv2d_4"} <= set(factors)   # the ResNet block: one group
    gm = export(Residual(from_input=True).eval(), samples[0]).module()
    copy, factors = equalized(gm, samples)
    assert "conv2d" not in factors and "add" not in factors      # the first stream reaches the input


def test_layer_sqnr_of_a_scaled_layer_is_in_the_models_units():
    """The row of a scaled activation is the SQNR of the model's own value (from the unscaled
    float graph) against the quantized value times its factors; in the scaled graph's units the
    small channels would weigh as much as the large ones."""
    from mcu_mlir.frontend.quantize.layer_sqnr import sqnr_db
    from mcu_mlir.frontend.graph.nodes import qd
    gm = _gm()
    calibration, measure = _samples(8, 1), _samples(4, 9)
    copy, factors = equalized(gm, calibration)
    converted, rows = _quantize_graph(copy, calibration, "int8", measure_on=measure, factors=factors)
    carriers = {q.args[0].name: next(iter(q.users)).name for q in converted.graph.nodes
                if q.target == qd.quantize_per_tensor.default and q.args[0].name in factors}
    checked = 0
    for row in rows:
        if row["node"] not in carriers:
            continue
        scale, axis = factors[row["node"]]
        want, got = [], []
        for sample in measure:
            v = _values(converted, sample, {carriers[row["node"]]})[carriers[row["node"]]]
            shape = [1] * v.dim()
            shape[axis] = -1
            got.append((v.double() * torch.from_numpy(scale).reshape(shape)).numpy().ravel())
            want.append(_values(gm, sample, {row["node"]})[row["node"]].double().numpy().ravel())
        model_units = sqnr_db(np.concatenate(want), np.concatenate(got))
        assert row["sqnr_db"] == pytest.approx(model_units, abs=0.01)
        assert model_units > 25
        checked += 1
    assert checked == 4       # the three ReLUs and the mean after the last

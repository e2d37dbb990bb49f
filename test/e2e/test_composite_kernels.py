"""Composite ops on one kernel each: PReLU (per channel, a slope broadcast from one, after a conv or
a linear layer) on mcu_prelu, InstanceNorm / GroupNorm / LayerNorm over any axes on mcu_norm. The
integer TOSA stays the oracle: each fused kernel's C equals tosa_reference_model on random shapes
(the host; one small model under QEMU on Cortex-M55 and M4)."""

from __future__ import annotations

import collections
import re
import shutil
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

import mcu_mlir  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402

if shutil.which("tosa_reference_model") is None:
    pytest.skip("tosa-tools (tosa_reference_model) not installed", allow_module_level=True)


def _slopes(channels, gen):
    """Slopes of both signs and above 1 (a PReLU learns any)."""
    return torch.rand(channels, generator=gen) * 3 - 1.2


class PReLUs(nn.Module):
    """PReLU after a conv (channel-last kernel view of NCHW), after a Conv1d, after a linear layer,
    and F.prelu with one slope broadcast to every channel."""

    def __init__(self, cin, channels, seed):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.conv = nn.Conv2d(cin, channels, 3, padding=1)
        self.act = nn.PReLU(channels)
        self.conv_b = nn.Conv2d(cin, channels, 1)
        self.conv1d = nn.Conv1d(cin, channels, 1)
        self.act1d = nn.PReLU(channels)
        self.fc = nn.Linear(cin, channels)
        self.act_fc = nn.PReLU(channels)
        with torch.no_grad():
            for act in (self.act, self.act1d, self.act_fc):
                act.weight.copy_(_slopes(channels, gen))
        self.register_buffer("one_slope", torch.tensor([0.3]))

    def forward(self, x):
        y = self.act(self.conv(x))
        seq = self.act1d(self.conv1d(x.flatten(2)))
        vec = self.act_fc(self.fc(x[:, :, 0, 0]))
        return y, seq, vec, F.prelu(self.conv_b(x), self.one_slope)


def _affine(norm, seed):
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        norm.weight.copy_(torch.rand(norm.weight.shape, generator=gen) * 3 - 1.5)
        norm.bias.copy_(torch.rand(norm.bias.shape, generator=gen) - 0.5)
    return norm


class Norms(nn.Module):
    """InstanceNorm2d with and without affine parameters, InstanceNorm1d, GroupNorm with one group
    (over channels and space) and with C groups, LayerNorm over (C, H, W)."""

    def __init__(self, channels, size, seed):
        super().__init__()
        # A conv each: norms of one tensor share their statistics' TOSA after CSE (the ops are then
        # left to the per-op kernels, which is right, but not what this tests).
        self.convs = nn.ModuleList(nn.Conv2d(2, channels, 3, padding=1) for _ in range(6))
        self.inorm = _affine(nn.InstanceNorm2d(channels, affine=True), seed)
        self.inorm_plain = nn.InstanceNorm2d(channels)
        self.inorm1d = _affine(nn.InstanceNorm1d(channels, affine=True), seed + 1)
        self.gn_one = _affine(nn.GroupNorm(1, channels), seed + 2)
        self.gn_each = _affine(nn.GroupNorm(channels, channels), seed + 3)
        self.ln_chw = nn.LayerNorm([channels, size, size], elementwise_affine=False)

    def forward(self, x):
        y = [conv(x) for conv in self.convs]
        return (self.inorm(y[0]), self.inorm_plain(F.relu(y[1])), self.inorm1d(y[2].flatten(2)), self.gn_one(y[3]),
                self.gn_each(y[4]), self.ln_chw(y[5]))


def _calls(out):
    calls = re.findall(r"^\s+(?:status = )?((?:arm|mcu)_\w+)\(", (out / "model.c").read_text(), re.M)
    return collections.Counter(c for c in calls if c != "mcu_layer_marker" and "buffer_size" not in c)


def _compile_and_compare(model, shape, target, backend, out):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mcu_mlir.compile(model.eval(), (torch.randn(shape),), target=target, backend=backend,
                                  calibration=8, emit="c", output_dir=str(out))
    # The fused kernels keep their int32 intermediates out of the arena.
    assert result.report["int32_temporaries"] is None, result.report["int32_temporaries"]
    inputs = [(torch.randn(shape, generator=torch.Generator().manual_seed(5)) * 1.5).numpy()]
    want = run.run_reference_outdir(out, inputs)
    got = run.run(out, inputs, target=target)
    for c, ref in zip(got.outputs_q, want.outputs_q):
        assert np.array_equal(c, ref.reshape(c.shape))
    return _calls(out)


# (input channels, channels, size): one channel, odd channels, more than 256 pixels a channel
# (the kernel's per-channel table), a 1-pixel image.
PRELU_SHAPES = [(1, 1, 5), (3, 7, 4), (2, 4, 17), (5, 16, 1)]


@pytest.mark.parametrize("cin,channels,size", PRELU_SHAPES)
def test_prelu_is_one_kernel_bit_exact(cin, channels, size, tmp_path):
    calls = _compile_and_compare(PReLUs(cin, channels, seed=channels), (1, cin, size, size), "host", "portable",
                                 tmp_path)
    # One channel: nn.PReLU's single slope is a leaky ReLU (one table); F.prelu's is broadcast.
    assert calls["mcu_prelu"] == (1 if channels == 1 else 4), calls
    assert calls["mcu_table_s8"] == (3 if channels == 1 else 0), calls
    assert not calls["mcu_binary"] and not calls["mcu_clamp"], calls


@pytest.mark.parametrize("channels,size", [(1, 3), (4, 5), (6, 17)])
def test_norms_over_any_axes_are_one_kernel_bit_exact(channels, size, tmp_path):
    calls = _compile_and_compare(Norms(channels, size, seed=channels), (1, 2, size, size), "host", "portable",
                                 tmp_path)
    assert calls["mcu_norm"] == 6, calls
    assert not calls["mcu_binary"] and not calls["mcu_reduce"], calls


class PReLUInstanceNorm(nn.Module):
    """A MTCNN / MONAI-style block: conv, PReLU, conv, InstanceNorm."""

    def __init__(self):
        super().__init__()
        self.conv1, self.act = nn.Conv2d(3, 8, 3), nn.PReLU(8)
        self.conv2, self.norm = nn.Conv2d(8, 8, 3, padding=1), _affine(nn.InstanceNorm2d(8, affine=True), 3)
        with torch.no_grad():
            self.act.weight.copy_(_slopes(8, torch.Generator().manual_seed(2)))

    def forward(self, x):
        return self.norm(self.conv2(self.act(self.conv1(x))))


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m4"])
def test_fused_kernels_bit_exact_on_cortex_m(target, tmp_path):
    import os
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("needs qemu-system-arm and arm-none-eabi-gcc")
    if not os.environ.get("CMSIS_NN_PATH"):
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")
    torch.manual_seed(0)
    calls = _compile_and_compare(PReLUInstanceNorm(), (1, 3, 18, 18), target, "cmsis-nn", tmp_path)
    assert calls["mcu_prelu"] == 1 and calls["mcu_norm"] == 1, calls

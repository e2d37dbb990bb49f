"""A small pre-norm transformer encoder (patch embedding, LayerNorm, multi-head attention through
F.scaled_dot_product_attention, GELU MLP, residuals, mean pooling) compiled with CMSIS-NN: the C
equals tosa_reference_model on the host, on Cortex-M55 (MVE) and Cortex-M4 (DSP); activation
matmuls run on arm_batch_matmul_s8, softmax in arm_softmax_s8's integers (looked up by mcu_softmax_s8,
or arm_softmax_s8 itself), projections on arm_fully_connected_* (Q, K and V one call per head, no
transpose splitting the heads), norms on mcu_norm."""

from __future__ import annotations

import collections
import os
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
if not os.environ.get("CMSIS_NN_PATH"):
    pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout", allow_module_level=True)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(b, t, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(a)
        return x + self.mlp(self.norm2(x))


class TinyEncoder(nn.Module):
    def __init__(self, dim=32, heads=2, depth=2, classes=5):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, 4, stride=4)
        self.pos = nn.Parameter(torch.randn(1, 16, dim) * 0.5)
        self.blocks = nn.Sequential(*[Block(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        tokens = self.embed(x).flatten(2).transpose(1, 2) + self.pos
        return self.head(self.norm(self.blocks(tokens)).mean(1))


SHAPE = (1, 3, 16, 16)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return TinyEncoder().eval()


def _compile(model, target, out, quantize="int8", softmax="table"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(model, (torch.randn(SHAPE),), target=target, backend="cmsis-nn", calibration=16, emit="c",
                         output_dir=str(out), quantize=quantize, softmax=softmax)
    calls = re.findall(r"^\s+(?:status = )?((?:arm|mcu)_\w+)\(", (out / "model.c").read_text(), re.M)
    return collections.Counter(c for c in calls if c not in ("mcu_layer_marker",) and "buffer_size" not in c)


def _bit_exact(out, target):
    inputs = [torch.randn(SHAPE, generator=torch.Generator().manual_seed(5)).numpy()]
    want = run.run_reference_outdir(out, inputs)
    got = run.run(out, inputs, target=target)
    return all(np.array_equal(c, r.reshape(c.shape)) for c, r in zip(got.outputs_q, want.outputs_q))


def test_encoder_on_cmsis_nn_kernels_bit_exact_on_host(model, tmp_path):
    calls = _compile(model, "host", tmp_path)
    assert calls["arm_batch_matmul_s8"] == 4, calls          # Q K^T and attention V per block
    assert calls["mcu_softmax_s8"] == 2, calls                # one per block, no portable arithmetic
    assert not any(k in calls for k in ("mcu_gather", "mcu_binary", "mcu_select")), calls
    assert calls["mcu_norm"] == 5, calls                      # two per block and the final one
    assert "mcu_matmul" not in calls, calls                   # every linear on arm_fully_connected_*
    # Q / K / V one linear per head (2 x 3 per block, written in place as the heads' tensor), the
    # projection, two MLP linears, the head: no transpose splits the heads.
    assert calls["arm_fully_connected_s8"] + calls["arm_fully_connected_per_channel_s8"] == 19, calls
    # The input to NHWC, then per block V^T for arm_batch_matmul_s8 and the heads' merge.
    assert calls["arm_transpose_s8"] == 5, calls
    assert _bit_exact(tmp_path, "host")


@pytest.mark.parametrize("target", ["host", "cortex-m55", "cortex-m4"])
def test_int16_encoder_on_s16_kernels(model, target, tmp_path):
    """a16w8: activation matmuls on arm_batch_matmul_s16, softmax on arm_softmax_s16 (its integers
    in the TOSA form), the rest bit-exact too."""
    if target != "host" and (shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None):
        pytest.skip("needs qemu-system-arm and arm-none-eabi-gcc")
    calls = _compile(model, target, tmp_path, quantize="int16")
    assert calls["arm_batch_matmul_s16"] == 4 and calls["mcu_norm"] == 5 and calls["arm_softmax_s16"] == 2, calls
    assert _bit_exact(tmp_path, target)


class ChannelsFirstAttention(nn.Module):
    """EfficientViT's form: Q, K, V split from a 1x1 conv in NCHW, attention over the flattened
    pixels with the channels first (q^T k, v attn^T), the result viewed back as an image."""
    def __init__(self, dim=16, key_dim=8):
        super().__init__()
        self.key_dim = key_dim
        self.qkv = nn.Conv2d(3, 2 * key_dim + dim, 1)
        self.proj = nn.Conv2d(dim, 8, 1)

    def forward(self, x):
        b, _, h, w = x.shape
        q, k, v = self.qkv(x).split([self.key_dim, self.key_dim, self.qkv.out_channels - 2 * self.key_dim], 1)
        q, k, v = q.flatten(2), k.flatten(2), v.flatten(2)
        attn = (q.transpose(-2, -1) @ k * self.key_dim ** -0.5).softmax(-1)
        return self.proj((v @ attn.transpose(-2, -1)).view(b, -1, h, w))


def test_channels_first_attention_reads_its_operands_in_place(tmp_path):
    """In NHWC, K^T and the result's view back are the activations as stored: arm_batch_matmul_s8
    reads K through a view and computes the transposed product (attn . v^T) straight into NHWC.
    Left: the model's input and output layouts, and V to channels first (the call's right-hand side
    is [N, K]: V^T's transpose is V as channels-first rows); 4 before."""
    torch.manual_seed(0)
    model = ChannelsFirstAttention().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(model, (torch.randn(1, 3, 6, 6),), target="host", backend="cmsis-nn", calibration=16,
                         emit="c", output_dir=str(tmp_path))
    calls = re.findall(r"^\s+(?:status = )?((?:arm|mcu)_\w+)\(", (tmp_path / "model.c").read_text(), re.M)
    calls = collections.Counter(calls)
    assert calls["arm_batch_matmul_s8"] == 2 and calls["arm_transpose_s8"] == 3, calls
    inputs = [torch.randn(1, 3, 6, 6, generator=torch.Generator().manual_seed(5)).numpy()]
    want = run.run_reference_outdir(tmp_path, inputs)
    got = run.run(tmp_path, inputs, target="host")
    assert all(np.array_equal(c, r.reshape(c.shape)) for c, r in zip(got.outputs_q, want.outputs_q))


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m4"])
@pytest.mark.parametrize("softmax", ["table", "cmsis-nn"])
def test_encoder_bit_exact_on_cortex_m(model, target, softmax, tmp_path):
    """Both softmax kernels (the looked-up one and arm_softmax_s8 itself) give the same integers."""
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("needs qemu-system-arm and arm-none-eabi-gcc")
    calls = _compile(model, target, tmp_path, softmax=softmax)
    assert calls["arm_softmax_s8" if softmax == "cmsis-nn" else "mcu_softmax_s8"] == 2, calls
    assert _bit_exact(tmp_path, target)

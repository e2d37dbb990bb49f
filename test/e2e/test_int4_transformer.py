"""int4 weights in a transformer block: the qkv linear that mcu-heads-from-linears splits into heads
keeps its int4 weights in every head (the split once rebuilt them as int8 constants beside an int4
zero point, IR that does not verify), and every linear layer runs on arm_fully_connected_s4, the C
bit-exact with tosa_reference_model."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mcu_mlir  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402

CMSIS_NN_PATH = os.environ.get("CMSIS_NN_PATH")


class Block(torch.nn.Module):
    """timm's Attention (qkv in one linear, split into heads by reshape + permute) and an MLP."""

    def __init__(self, dim: int = 24, heads: int = 2):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.fc1 = torch.nn.Linear(dim, 2 * dim)
        self.fc2 = torch.nn.Linear(2 * dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1) * (c // self.heads) ** -0.5).softmax(-1)
        x = x + self.proj((attn @ v).transpose(1, 2).reshape(b, n, c))
        return x + self.fc2(torch.relu(self.fc1(x)))


def test_split_heads_keep_int4_weights_on_fully_connected_s4(tmp_path):
    if not CMSIS_NN_PATH:
        pytest.skip("CMSIS_NN_PATH is not set: the CMSIS-NN backend cannot be built")
    torch.manual_seed(0)
    model = Block().eval()
    example = (torch.randn(1, 8, 24, generator=torch.Generator().manual_seed(0)),)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mcu_mlir.compile(model, example, target="host", emit="c", calibration=16, weights="int4",
                                  output_dir=str(tmp_path), cmsis_nn_path=CMSIS_NN_PATH)
    int4 = result.report["quantization"]["int4"]
    assert int4["int4_layers"] == 4 and int4["weight_bytes"] == sum((n + 1) // 2 for n in (
        24 * 72, 24 * 24, 24 * 48, 48 * 24))
    linears = [op for op in result.report["ops"] if op["name"] in ("qkv", "proj", "fc1", "fc2")
               and "conv2d" in op["tosa_op"]]
    # qkv is split into its q / k / v heads (at least one call per part), all on the s4 kernel.
    assert len(linears) > 4 and {op["kernel"] for op in linears} == {"arm_fully_connected_s4"}, linears
    g = torch.Generator().manual_seed(5)
    inputs = [torch.randn(1, 8, 24, generator=g).numpy()]
    want = run.run_reference_outdir(tmp_path, inputs)
    got = run.run(tmp_path, inputs, target="host", cmsis_nn_path=CMSIS_NN_PATH)
    for c, ref in zip(got.outputs_q, want.outputs_q):
        assert np.array_equal(c, ref.reshape(c.shape))


class StridedShortcut(torch.nn.Module):
    """ResNet's downsampling shortcut: a 1x1 stride-2 conv of an even-sized input, which the lowering
    slices to the rows and columns the conv reads."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.shortcut = torch.nn.Conv2d(8, 16, 1, stride=2)

    def forward(self, x):
        return self.shortcut(torch.relu(self.conv(x)))


@pytest.mark.parametrize("target", ["host", "cortex-m55"])
def test_strided_1x1_s4_reads_past_the_slice(target, tmp_path):
    """The slice before the shortcut is read past by arm_convolve_wrapper_s4, as the s8 kernel
    does: no portable slice copy left (ResNet-8 in int4 had two)."""
    if not CMSIS_NN_PATH:
        pytest.skip("CMSIS_NN_PATH is not set: the CMSIS-NN backend cannot be built")
    torch.manual_seed(0)
    example = (torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(0)),)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mcu_mlir.compile(StridedShortcut().eval(), example, target=target, emit="c", calibration=16,
                                  weights="int4", output_dir=str(tmp_path), cmsis_nn_path=CMSIS_NN_PATH)
    convs = [op for op in result.report["ops"] if "conv2d" in op["tosa_op"]]
    assert [op["kernel"] for op in convs] == ["arm_convolve_wrapper_s4"] * 2, convs
    assert convs[1]["tosa_op"].startswith("tosa.slice"), convs[1]
    assert not [op for op in result.report["ops"] if op["kernel"].startswith("portable:")]
    inputs = [torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(5)).numpy()]
    want = run.run_reference_outdir(tmp_path, inputs)
    got = run.run(tmp_path, inputs, target=target, cmsis_nn_path=CMSIS_NN_PATH)
    for c, ref in zip(got.outputs_q, want.outputs_q):
        assert np.array_equal(c, ref.reshape(c.shape))

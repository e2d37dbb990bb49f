"""docs/fuzzing.md's finding 2: UBSan's `INT32_MIN - 1` in CMSIS-NN's arm_nn_divide_by_power_of_two,
reached after a LayerNorm over one element. Such a norm outputs its bias whatever the input (0 by
default): observed as 0 on every calibration sample, it keeps the 2**-24 floor scale, and a layer
reading it scales a channel whose weight scale is also at the floor (weights of ~1e-8) by
2**-24 x 2**-24 / its output scale, under 2**-31: a TOSA shift of 62, a right shift of 31 in
arm_nn_requantize, whose remainder mask (1 << 31) - 1 overflows. The conversion passes such a
channel, whose results are 0 for every accumulator it can reach, as multiplier 0 and shift 0; the
floor scale stays (scale 1 for an all-zero activation broke the flushing and the one-element int16
softmax tests). The C runs under ASan / UBSan and equals tosa_reference_model."""

from __future__ import annotations

import os
import shutil
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

import mcu_mlir  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402


class OneElementNorm(nn.Module):
    """Linear(8, 1), LayerNorm(1), Linear(1, 4) whose first output has a tiny weight and no bias."""
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(8, 1)
        self.l2 = nn.LayerNorm(1)
        self.l3 = nn.Linear(1, 4)
        with torch.no_grad():
            self.l3.weight[0] = 1e-8
            self.l3.bias[0] = 0.0

    def forward(self, x):
        return self.l3(self.l2(self.l1(x)))


def test_layer_norm_over_one_element_runs_clean_under_sanitizers(tmp_path):
    cmsis_nn_path = os.environ.get("CMSIS_NN_PATH")
    if shutil.which("tosa_reference_model") is None or shutil.which("cmake") is None or not cmsis_nn_path:
        pytest.skip("tosa_reference_model, cmake and CMSIS_NN_PATH are needed to run the C against the reference")
    torch.manual_seed(0)
    model = OneElementNorm().eval()
    x = torch.randn(1, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(model, (x,), calibration=8, quantize="int8", backend="cmsis-nn", target="host",
                         emit="c", output_dir=str(tmp_path), cmsis_nn_path=cmsis_nn_path)
    tosa_text = (tmp_path / "model.tosa.mlir").read_text()
    assert "dense<[62," in tosa_text, "the case at hand: a TOSA rescale shift of 62"
    text = (tmp_path / "cmsisnn.mlir").read_text()
    calls = [line for line in text.splitlines() if "cmsisnn.fully_connected" in line]
    assert len(calls) == 2 and "multiplier = array<i32: 0," in calls[1] and "shift = array<i32: 0," in calls[1]
    inputs = [x.numpy()]
    want = run.run_reference_outdir(tmp_path, inputs)
    got = run.run(tmp_path, inputs, target="host", cmsis_nn_path=cmsis_nn_path, sanitize=True)
    assert np.array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))

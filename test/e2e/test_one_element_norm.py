"""A LayerNorm over one element (issue 35's fuzzing finding): its output is its bias whatever the
input, 0 by default. Observed as 0 on every calibration sample, it used to get the floor scale
2**-24, so the linear reading it took a multiplier below 2**-31 (CMSIS-NN's arm_nn_requantize then
computed INT32_MIN - 1, undefined behaviour UBSan reports) and a bias past int32 at that scale.
Now an all-zero activation gets scale 1: the model's C equals tosa_reference_model under ASan /
UBSan on CMSIS-NN and the portable kernels, and PT2E's output (the linear's bias) exactly."""

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
    """docs/fuzzing.md's model 100000336 reduced: Embedding, Linear(8, 1), LayerNorm(1), Linear(1, 10)."""
    def __init__(self):
        super().__init__()
        self.l0 = nn.Embedding(50, 8)
        self.l1 = nn.Linear(8, 1, bias=True)
        self.l2 = nn.LayerNorm(1)
        self.l3 = nn.Linear(1, 10, bias=True)

    def forward(self, x):
        return self.l3(self.l2(self.l1(self.l0(x))))


def _model():
    torch.manual_seed(100000336)
    return OneElementNorm().eval()


@pytest.mark.parametrize("backend", ["portable", "cmsis-nn"])
def test_layer_norm_over_one_element_runs_clean_under_sanitizers(backend, tmp_path):
    if shutil.which("tosa_reference_model") is None or shutil.which("cmake") is None:
        pytest.skip("tosa_reference_model and cmake are needed to run the C against the reference")
    cmsis_nn_path = os.environ.get("CMSIS_NN_PATH") if backend == "cmsis-nn" else None
    if backend == "cmsis-nn" and not cmsis_nn_path:
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")
    model = _model()
    torch.manual_seed(337)
    ids = torch.randint(0, 50, (1, 1))
    calibration = [(torch.randint(0, 50, (1, 1)),) for _ in range(16)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(model, (ids,), calibration=calibration, quantize="int8", backend=backend,
                                  target="host", emit="c", output_dir=str(tmp_path), cmsis_nn_path=cmsis_nn_path)
    text = (tmp_path / "cmsisnn.mlir").read_text()
    shifts = [int(s) for line in text.splitlines() if "shift = array<i32:" in line
              for s in line.split("shift = array<i32:")[1].split(">")[0].split(",")]
    assert min(shifts) > -31, f"a requantization shift of {min(shifts)}"
    inputs = [ids.numpy().astype(np.int32)]
    want = run.run_reference_outdir(tmp_path, inputs)
    got = run.run(tmp_path, inputs, target="host", cmsis_nn_path=cmsis_nn_path, sanitize=True)
    assert np.array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))
    # The output is l3's bias as PT2E computes it: quantized at input scale (1) x weight scale,
    # then at the output's (the int32 bias requantized, not the float one rounded): within a step
    # of the output and half a step of the bias.
    info = got.outputs[0]
    got_float = (got.outputs_q[0].astype(np.float64).reshape(-1) - info.zero_point) * info.scale
    expect = model.l3.bias.detach().numpy().astype(np.float64)
    weight_steps = np.abs(model.l3.weight.detach().numpy()).max(axis=1) / 127
    assert (np.abs(got_float - expect) <= info.scale + 0.5 * weight_steps + 1e-9).all(), (got_float, expect)

"""A classifier that returns its class index (argmax, torch.max(...).indices) as a deployed keyword
spotter or image classifier does: one int32 output from tosa.argmax of the integer logits, in C
equal to tosa_reference_model and to the argmax of the C's own logits."""

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

if shutil.which("tosa_reference_model") is None:
    pytest.skip("tosa-tools (tosa_reference_model) not installed", allow_module_level=True)


class Classifier(nn.Module):
    """conv -> ReLU -> pool -> linear; returns the logits and their argmax, and the index of the
    largest value of each row of a [5, 4] view by torch.max(dim)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, 20)

    def forward(self, x):
        logits = self.fc(torch.relu(self.conv(x)).mean((2, 3)))
        return logits, logits.argmax(-1), torch.max(logits.reshape(-1, 5, 4), dim=2).indices


@pytest.mark.parametrize("backend", ["portable", "cmsis-nn"])
def test_argmax_outputs(tmp_path, backend):
    if backend == "cmsis-nn" and not os.environ.get("CMSIS_NN_PATH"):
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN backend needs a CMSIS-NN checkout")
    torch.manual_seed(0)
    model = Classifier().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mcu_mlir.compile(model, (torch.randn(1, 3, 8, 8),), target="host", backend=backend,
                                  calibration=16, emit="c", output_dir=str(tmp_path))
    outputs = result.report["quantization"]["outputs"]
    assert [o["dtype"] for o in outputs] == ["int8", "int32", "int32"]
    agree = 0
    for seed in range(8):
        x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(seed))
        got = run.run(tmp_path, [x.numpy()], target="host")
        want = run.run_reference_outdir(tmp_path, [x.numpy()])
        for a, b in zip(got.outputs_q, want.outputs_q):
            assert np.array_equal(a, b.reshape(a.shape))
        logits, best, rows = got.outputs_q
        assert best.dtype == np.int32 and best.reshape(-1)[0] == int(np.argmax(logits.reshape(-1)))
        assert np.array_equal(rows.reshape(5), np.argmax(logits.reshape(5, 4), axis=1))
        with torch.no_grad():
            agree += int(best.reshape(-1)[0]) == int(model(x)[1])
    assert agree >= 6      # the float model's class, but where int8 rounding ties or swaps two logits

"""Models the differential fuzzer (tools/fuzz, docs/fuzzing.md) found failing, minimised by it: each
compiles and its C equals tosa_reference_model bit for bit on the host, on the portable kernels and
on CMSIS-NN (where a CMSIS-NN checkout is given)."""

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

if shutil.which("tosa_reference_model") is None or shutil.which("cmake") is None:
    pytest.skip("tosa_reference_model and cmake are needed to run the C against the reference", allow_module_level=True)


class Int4Attention(nn.Module):
    """Model 421 of the CI subset with int4 weights: q / k / v linears, K transposed for the scores.
    mcu-heads-from-linears rebuilt the int4 linear (a 1x1 conv) with i8 weights beside its i4
    weight zero point: 'tosa.conv2d' op expect both weight and its zero point are the same element
    type (a crash in --weights int4 and --int4-layers auto)."""
    def __init__(self):
        super().__init__()
        self.l0 = nn.Linear(8, 8)
        self.l1 = nn.Linear(8, 8)
        self.l2 = nn.Linear(8, 8)

    def forward(self, x):
        x = torch.softmax(x, dim=-1)
        t4 = torch.softmax(self.l0(x) @ self.l1(x).transpose(1, 2) * 0.3536, dim=-1)
        return t4 @ self.l2(x)


CASES = {
    "int4_attention": (Int4Attention, 421, (1, 3, 8), {"weights": "int4"}),
}


@pytest.mark.parametrize("backend", ["portable", "cmsis-nn"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_c_matches_reference(name, backend, tmp_path):
    cls, seed, shape, options = CASES[name]
    cmsis_nn_path = os.environ.get("CMSIS_NN_PATH") if backend == "cmsis-nn" else None
    if backend == "cmsis-nn" and not cmsis_nn_path:
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")
    torch.manual_seed(seed)
    model = cls().eval()
    torch.manual_seed(0)
    example = (torch.randn(shape),)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(model, example, calibration=16, quantize="int8", backend=backend, target="host", emit="c",
                         output_dir=str(tmp_path), cmsis_nn_path=cmsis_nn_path, **options)
    inputs = [torch.randn(shape, generator=torch.Generator().manual_seed(5)).numpy()]
    want = run.run_reference_outdir(tmp_path, inputs)
    got = run.run(tmp_path, inputs, target="host", cmsis_nn_path=cmsis_nn_path)
    for c, ref in zip(got.outputs_q, want.outputs_q):
        assert np.array_equal(c, ref.reshape(c.shape))

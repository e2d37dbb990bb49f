"""A graph output's buffer is the caller's and holds that output only: no larger tensor it was
computed from may be planned into it (found by tools/fuzz: a 1-byte heap overflow)."""

import json
import shutil

import numpy as np
import pytest
import torch
from torch import nn

from mcu_mlir.driver import compile as compile_model
from mcu_mlir.firmware import run


class HalvesAdded(nn.Module):
    """A conv's two channel halves added in place: the add's result is the output (3 bytes), its
    input the conv's 6-byte result; the conv's result was planned into the output buffer."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(200000636)
        self.conv = nn.Conv2d(3, 6, (3, 1), stride=3, padding=(1, 0), groups=3)

    def forward(self, x):
        a, b = self.conv(x).chunk(2, dim=1)
        return a + b


def test_a_larger_tensor_is_not_planned_into_an_output(tmp_path):
    if not shutil.which("cc"):
        pytest.skip("no host C compiler")
    x = torch.randn(1, 3, 1, 1)
    compile_model(HalvesAdded().eval(), (x,), target="host", backend="portable", emit="c",
                  calibration=[(torch.randn(1, 3, 1, 1, generator=torch.Generator().manual_seed(s)),)
                               for s in range(16)], output_dir=str(tmp_path))
    conv = next(op for op in json.loads((tmp_path / "report.json").read_text())["ops"]
                if "depthwise" in op["kernel"])
    assert conv["arena_offset"] is not None, conv        # in the arena, not in the 3-byte output
    inputs = [np.random.default_rng(0).standard_normal((1, 3, 1, 1)).astype(np.float32)]
    got = run.run(tmp_path, inputs, target="host", sanitize=True)       # AddressSanitizer: no overflow
    want = run.run_reference_outdir(tmp_path, inputs)
    np.testing.assert_array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))

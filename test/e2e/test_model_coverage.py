"""CI subset of the coverage benchmark (tools/model_coverage.py): public torchvision / timm /
transformers / torchaudio definitions through `mcu-compile` and `mcu-run` as a user runs them.
Each one compiles, runs on the host bit-exact against tosa_reference_model, with no interior
data-moving transpose; a model that needs an op family not landed yet fails with the op and its
source line, exit 1, and no traceback."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))

missing = [m for m in ("torchvision", "timm", "transformers") if importlib.util.find_spec(m) is None]
if missing:
    pytest.skip(f"the models extra is not installed ({', '.join(missing)}): pip install -e .[models]",
                allow_module_level=True)
if shutil.which("tosa_reference_model") is None:
    pytest.skip("tosa-tools (tosa_reference_model) not installed", allow_module_level=True)

import model_coverage  # noqa: E402

BACKEND = "cmsis-nn" if os.environ.get("CMSIS_NN_PATH") else "portable"
SUBSET = ["tv_mobilenet_v3_small_050", "timm_lcnet_050", "timm_ghostnet_050", "hf_resnet_small"]


@pytest.mark.parametrize("name", SUBSET)
def test_public_model_bit_exact(name, tmp_path):
    row = model_coverage.measure(name, str(tmp_path), BACKEND, m55=False, timeout=600, seed=1)
    assert row["compiles"], row.get("error")
    assert row.get("bit_exact_host") is True, row
    assert row["interior_transposes"] == 0, row
    assert row["arena_bytes"] <= row["bound_bytes"], row
    if BACKEND == "cmsis-nn":   # every conv, depthwise and linear on a CMSIS-NN kernel
        assert not any(k in p for p in row["portable_kernels"] for k in ("conv", "fully", "matmul")), row
    assert row["sqnr_db"] >= 20, row


def test_recurrent_public_model_bit_exact(tmp_path):
    """torchaudio's DeepSpeech: its bidirectional ReLU nn.RNN unrolled, bit-exact."""
    row = model_coverage.measure("ta_deepspeech_small", str(tmp_path), BACKEND, m55=False, timeout=600, seed=1)
    assert row["compiles"] and row.get("bit_exact_host") is True, row
    assert row["sqnr_db"] >= 25, row


def test_unlanded_op_is_named_with_its_source_line(tmp_path):
    row = model_coverage.measure("hf_convnextv2_small_config", str(tmp_path), BACKEND, m55=False, timeout=600,
                                 seed=1)
    if row["compiles"]:
        assert row.get("bit_exact_host") is True, row
        return
    assert row["exit_code"] == 1 and not row["traceback"], row
    assert re.search(r"op 'aten\.\w+(\.\w+)?' at \S+\.py:\d+", row["error"]), row["error"]


def test_shufflenet_runs_no_transpose(tmp_path):
    """torchvision's ShuffleNetV2: each block's concat writes its result already shuffled, in the two
    halves the next block reads one after the other (the chunk is two views); a shuffle read by a
    stage's first depthwise conv is folded into that conv's constants. No transpose and no slice
    runs as a kernel."""
    row = model_coverage.measure("tv_shufflenet_v2_x0_5", str(tmp_path), BACKEND, m55=False, timeout=600, seed=1)
    assert row["compiles"] and row.get("bit_exact_host") is True, row
    assert "portable:slice" not in row["portable_kernels"], row
    if BACKEND == "cmsis-nn":
        assert row["portable_kernels"] == ["portable:copy_strided"], row
    assert row["transpose_kernels"] == 0, row

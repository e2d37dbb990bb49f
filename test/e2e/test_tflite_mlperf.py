"""The five trained MLPerf Tiny int8 models (../shared/models/mlperf_tiny, beside the checkout),
compiled from their .tflite files with the CMSIS-NN and the portable backend: outputs equal to
TFLite Micro's interpreter bit for bit on 100 int8 inputs on the host and 10 under QEMU on the
Cortex-M55 and M4 (all -128, all 127, the two mixed, then uniform), no transposes, every conv /
depthwise / fully connected / pool / add / softmax on its CMSIS-NN kernel.

Under QEMU only the CMSIS-NN build runs in CI (the portable C is the one the host runs, cross-compiled;
MCU_TFLITE_ALL_CORES=1 adds it on both cores, 10 more QEMU runs of about 15 s)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tflite_oracle import check_kernels, compare_with_tflm, need_build

MODELS_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "models" / "mlperf_tiny"
MODELS = ["kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8", "str_ww_ref_model"]
INPUTS = {"host": 100, "cortex-m55": 10, "cortex-m4": 10}


CASES = [(backend, target) for backend in ("cmsis-nn", "portable") for target in INPUTS
         if backend == "cmsis-nn" or target == "host" or os.environ.get("MCU_TFLITE_ALL_CORES") == "1"]


@pytest.mark.parametrize("backend,target", CASES)
@pytest.mark.parametrize("name", MODELS)
def test_mlperf_tiny_bit_exact_with_tflite_micro(name, backend, target, tmp_path):
    path = MODELS_DIR / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{path} is absent: the MLPerf Tiny models sit in ../shared/models beside the checkout")
    need_build(backend, target)
    report, differing = compare_with_tflm(path.read_bytes(), tmp_path, backend, INPUTS[target], target)
    assert not differing, differing[:10]
    check_kernels(report, backend)

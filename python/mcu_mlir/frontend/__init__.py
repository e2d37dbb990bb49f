"""PyTorch -> TOSA: torch.export, the CMSIS-NN PT2E quantizer, QDQ legalisation to integer TOSA.

    result = import_model(model, (x,), quantize="int8", calibration=100)
    result.module      # integer TOSA (NCHW, as PyTorch lays it out)
    result.inputs      # TensorQuant per graph input (what the caller quantizes with)

Float models (`quantize="none"`) go through torch-mlir's FX importer and its TOSA pipeline.
"""

from __future__ import annotations

import importlib
import logging

from .. import diagnostics as _diagnostics

# torchao logs that its optional GPU extensions are absent, and torch that an enum torchao registers
# is deprecated: neither concerns a CPU-only int8 flow, and both would bury our own messages.
if not _diagnostics.verbose:   # a tool's -v shows them
    logging.getLogger("torchao").setLevel(logging.ERROR)
    logging.getLogger("torch.utils._pytree").setLevel(logging.ERROR)

# The names below load torch: they are imported on first use, so that the `.tflite` frontend (a
# subpackage, whose import runs this file first) starts without it.
_SOURCES = {
    "DEFAULT_CALIBRATION_SAMPLES": ".quantize.calibration", "calibration_samples": ".quantize.calibration",
    "carry_state": ".quantize.calibration", "random_inputs": ".quantize.calibration",
    "sqnr_samples": ".quantize.calibration",
    "load_factory": ".graph.model_loading", "preload_torch": ".graph.model_loading",
    "FrontendResult": ".stages", "TensorQuant": ".stages", "flush_denormals": ".stages", "import_model": ".stages",
    "export": ".graph.torch_export", "fold_batch_norm": ".graph.torch_export",
}
__all__ = sorted(_SOURCES)


def __getattr__(name: str):
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_SOURCES[name], __name__), name)
    globals()[name] = value
    return value

"""PyTorch -> TOSA: torch.export, the CMSIS-NN PT2E quantizer, QDQ legalisation to integer TOSA.

    result = import_model(model, (x,), quantize="int8", calibration=100)
    result.module      # integer TOSA (NCHW, as PyTorch lays it out)
    result.inputs      # TensorQuant per graph input (what the caller quantizes with)

Float models (`quantize="none"`) go through torch-mlir's FX importer and its TOSA pipeline.
"""

from __future__ import annotations

import logging

from .. import diagnostics as _diagnostics

# torchao logs that its optional GPU extensions are absent, and torch that an enum torchao registers
# is deprecated: neither concerns a CPU-only int8 flow, and both would bury our own messages.
if not _diagnostics.verbose:   # a tool's -v shows them
    logging.getLogger("torchao").setLevel(logging.ERROR)
    logging.getLogger("torch.utils._pytree").setLevel(logging.ERROR)

from .quantize.calibration import (DEFAULT_CALIBRATION_SAMPLES, calibration_samples, carry_state, random_inputs, sqnr_samples)
from .graph.model_loading import load_factory, preload_torch  # noqa: E402
from .stages import FrontendResult, TensorQuant, flush_denormals, import_model  # noqa: E402
from .graph.torch_export import export, fold_batch_norm  # noqa: E402

__all__ = ["FrontendResult", "TensorQuant", "import_model", "load_factory", "export", "fold_batch_norm",
           "calibration_samples", "sqnr_samples", "random_inputs", "carry_state", "preload_torch",
           "flush_denormals", "DEFAULT_CALIBRATION_SAMPLES"]

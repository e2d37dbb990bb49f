"""mcu-tosa-layout-pipeline: NCHW TOSA (as torch-mlir or anyone writes it) to NHWC TOSA without
interior transposes.

Order matters: constants are folded into views first so that no transpose hides behind a constant
(torch-mlir's own order, constant folding before `tosa-reduce-transposes`, is what leaves 104
transposes in MobileNetV2); conv1d is re-laid out before the layout choice so its views join the
regions around it; the transposes that split a linear's output into attention heads go after the
folding (each head its own linear); canonicalize merges the reshape chains the folding leaves,
cse merges the constants it duplicates.
"""

from __future__ import annotations

from ..diagnostics import UserError
from .options_parser import split_options

IO_LAYOUTS = ("nchw", "nhwc")


def layout_pipeline(options: str) -> str:
    """NCHW TOSA to NHWC TOSA without interior transposes (options: io-layout=nchw|nhwc)."""
    io_layout = "nchw"
    for key, value in split_options(options):
        if key != "io-layout":
            raise UserError(f"pipeline 'mcu-tosa-layout-pipeline' has no option '{key}' (options: io-layout)")
        if value not in IO_LAYOUTS:
            raise UserError(f"pipeline 'mcu-tosa-layout-pipeline': bad value '{value}' for option "
                              f"'io-layout' (expected one of {', '.join(IO_LAYOUTS)})")
        io_layout = value
    return ("builtin.module(mcu-nhwc-canonicalize,mcu-conv1d-to-conv2d,canonicalize,"
            f"mcu-fold-transposes{{io-layout={io_layout}}},mcu-heads-from-linears,"
            "func.func(tosa-layerwise-constant-fold),canonicalize,cse)")

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

import dataclasses

from ...options import IO_LAYOUTS
from ..base import Options
from ..transforms.conv1d_to_conv2d import Conv1dToConv2d
from ..transforms.fold_transposes import FoldTransposes
from ..transforms.heads_from_linears import HeadsFromLinears
from ..transforms.nhwc_canonicalize import NhwcCanonicalize


@dataclasses.dataclass(frozen=True)
class LayoutOptions(Options):
    """NCHW TOSA to NHWC TOSA without interior transposes."""

    NAME = "mcu-tosa-layout-pipeline"
    KIND = "pipeline"
    io_layout: str = dataclasses.field(default="nchw", metadata={
        "choices": IO_LAYOUTS, "help": "nhwc: the graph's inputs and outputs are NHWC (mcu-fold-transposes)"})

    def passes(self) -> list:
        return layout_pipeline(self)


def layout_pipeline(options: LayoutOptions) -> list:
    """Our passes as instances, upstream ones as their MLIR text, in order."""
    return [NhwcCanonicalize(), Conv1dToConv2d(), "canonicalize", FoldTransposes(io_layout=options.io_layout),
            HeadsFromLinears(), "func.func(tosa-layerwise-constant-fold)", "canonicalize", "cse"]

"""Which CMSIS-NN function a window call (conv, depthwise conv, pool) runs on a core, and whether
that function computes the window's padding as TOSA does.

A call passes `padding = {.h = top, .w = left}` and the output dims: a bottom / right padding is
only implied by an output larger than the input and the top / left padding give. Read from
CMSIS-NN's Source (ConvolutionFunctions, PoolingFunctions), per function:

- arm_convolve_s8 / _s16, arm_depthwise_conv_s8 / _s8_opt / _s16 / _fast_s16, arm_avgpool_*,
  arm_max_pool_*: every window is clipped to the input on all four sides (C, DSP and MVE code):
  any padding holds.
- arm_convolve_1x1_s8_fast: one matrix product over the input's H*W rows: an output row or column
  past the input is never written.
- arm_convolve_1x1_s8: one product per output row, reading input rows at the stride: an output
  row or column past the input is computed from the bytes after it.
- arm_convolve_1_x_n_s8 on MVE: computes output row 0 from input row 0 (no vertical padding), and
  its horizontal padding must split as left = total // 2 (the rest on the right); C / DSP builds
  forward it to arm_convolve_s8.
- arm_depthwise_conv_3x3_s8 (C / DSP; the wrapper takes it for pads <= 1): always reads a window's
  middle column, so at most one column of right padding.
- arm_depthwise_conv_wrapper_s8 on MVE with one input channel (and more outputs than CMSIS-NN's
  threshold) is arm_convolve_wrapper_s8 with the filter transposed: that wrapper's choice applies.
- The int4-weight functions (arm_convolve_wrapper_s4, arm_depthwise_conv_wrapper_s4) pick like the
  s8 wrappers and their kernels share the s8 contracts: arm_convolve_s4 / _even_s4 and
  arm_depthwise_conv_s4 / _s4_opt clip (but arm_depthwise_conv_s4 is wrong for an odd input
  channel count whatever the padding, and _s4_opt's MVE path as GCC 12.2 builds it is wrong
  always), arm_convolve_1x1_s4_fast / _1x1_s4 are the s8 1x1 kernels
  over packed weights. arm_convolve_1_x_n_s4 on MVE also reads every filter row from a byte
  boundary (an odd input channel count splits them) and returns an error when its left- and
  right-padded outputs overlap.

`problem` names what a call would compute wrongly; the conversion chooses a call without one and
the emitter refuses any call with one.
"""

from __future__ import annotations

import dataclasses
import math

from ..cores import Core

from ..dialects.cmsisnn import DW_ONE_INPUT_CH_THRESHOLD

# Functions that clip every window to the input on all sides.
CLIPPING = frozenset({
    "arm_convolve_s8", "arm_convolve_s16", "arm_depthwise_conv_s8", "arm_depthwise_conv_s8_opt",
    "arm_depthwise_conv_s16", "arm_depthwise_conv_fast_s16", "arm_avgpool_s8", "arm_avgpool_s16",
    "arm_max_pool_s8", "arm_max_pool_s16", "arm_convolve_s4", "arm_convolve_even_s4"})

# arm_depthwise_conv_s4 with an odd input channel count walks the packed filter by nibble parity
# as if every window were whole and a tap's weights took C / 2 bytes: clipped windows and depth
# multipliers read the wrong weights (measured on every such shape in test_int4_kernels.py).
DEPTHWISE_S4_ODD_CHANNELS = ("arm_depthwise_conv_s4 reads the packed filter of an odd input channel "
                             "count wrongly")
# arm_depthwise_conv_s4_opt's MVE path, as the GCC 12.2 the targets build with compiles it, gives
# wrong outputs on every shape tried (odd and even channels; CMSIS-NN's own int4 depthwise unit
# tests fail on the M55 with that compiler too: TARGET.md). Its C / DSP paths clip and are exact.
DEPTHWISE_S4_OPT_MVE = "arm_depthwise_conv_s4_opt (MVE, built by GCC 12.2) computes wrong outputs"


@dataclasses.dataclass(frozen=True)
class Window:
    """A window op's geometry: NHWC input / output, filter H x W (input channels, for a conv),
    stride, dilation and padding [top, left, bottom, right] (the cmsisnn ops' order)."""
    in_shape: tuple
    out_shape: tuple
    kernel: tuple
    stride: tuple
    dilation: tuple
    padding: tuple
    filter_c: int = 0

    def reads_past(self) -> tuple[int, int]:
        """(rows below, columns right of) the input the last window reads: the padding the
        output size implies beyond what the top / left padding give."""
        def past(i):
            last = (self.out_shape[1 + i] - 1) * self.stride[i] - self.padding[i] + \
                (self.kernel[i] - 1) * self.dilation[i]
            return max(0, last - (self.in_shape[1 + i] - 1))
        return past(0), past(1)


def window(in_shape, out_shape, kernel, stride, dilation, padding, filter_c=0) -> Window:
    return Window(tuple(in_shape), tuple(out_shape), tuple(kernel), tuple(stride), tuple(dilation),
                  tuple(padding), filter_c)


def conv_s8_function(core: Core, algorithm: str, w: Window) -> str:
    """The function arm_convolve_wrapper_s8 (or the algorithm named) runs for `w` on `core`."""
    if algorithm == "generic":
        return "arm_convolve_s8"
    if algorithm == "1x1":
        return "arm_convolve_1x1_s8"
    if w.padding[0] == 0 and w.padding[1] == 0 and w.kernel == (1, 1) and w.dilation == (1, 1) \
            and w.in_shape[3] == w.filter_c:
        return "arm_convolve_1x1_s8_fast" if w.stride == (1, 1) else "arm_convolve_1x1_s8"
    if w.in_shape[1] == 1 and w.dilation[1] == 1 and w.kernel[0] == 1 and \
            (w.stride[1] * w.in_shape[3]) % 4 == 0 and w.in_shape[3] == w.filter_c:
        return "arm_convolve_1_x_n_s8" if core.has_mve else "arm_convolve_s8"
    return "arm_convolve_s8"


def depthwise_s8_function(core: Core, algorithm: str, w: Window, ch_mult: int) -> str:
    """The function arm_depthwise_conv_wrapper_s8 (or the algorithm named) runs for `w` on `core`."""
    if algorithm == "generic":
        return "arm_depthwise_conv_s8"
    if core.has_mve and w.in_shape[3] == 1 and w.out_shape[3] > DW_ONE_INPUT_CH_THRESHOLD:
        return conv_s8_function(core, "wrapper", dataclasses.replace(w, filter_c=1))
    if ch_mult == 1 and w.in_shape[0] == 1 and w.dilation == (1, 1):
        if not core.has_mve and w.kernel == (3, 3) and w.padding[0] <= 1 and w.padding[1] <= 1:
            return "arm_depthwise_conv_3x3_s8"
        return "arm_depthwise_conv_s8_opt"
    return "arm_depthwise_conv_s8"


def conv_s4_function(core: Core, algorithm: str, w: Window) -> str:
    """The function arm_convolve_wrapper_s4 (or the algorithm named) runs for `w` on `core`."""
    if algorithm == "generic":
        return "arm_convolve_s4"
    s8 = conv_s8_function(core, "wrapper", w)
    if s8 != "arm_convolve_s8":
        return s8.replace("_s8", "_s4")
    if core.has_mve and (w.kernel[0] * w.kernel[1] * w.in_shape[3]) % 2 == 0:
        return "arm_convolve_even_s4"
    return "arm_convolve_s4"


def depthwise_s4_function(core: Core, algorithm: str, w: Window, ch_mult: int) -> str:
    """The function arm_depthwise_conv_wrapper_s4 (or the algorithm named) runs for `w` (no 3x3 or
    one-input-channel special cases, unlike s8)."""
    if algorithm != "generic" and ch_mult == 1 and w.in_shape[0] == 1 and w.dilation == (1, 1):
        return "arm_depthwise_conv_s4_opt"
    return "arm_depthwise_conv_s4"


def s4_refusal(core: Core, w: Window, depthwise: bool, ch_mult: int) -> str:
    """Why neither the s4 wrapper's pick nor the generic s4 kernel computes window `w` exactly."""
    if depthwise:
        picks = (depthwise_s4_function(core, "wrapper", w, ch_mult), "arm_depthwise_conv_s4")
    else:
        picks = (conv_s4_function(core, "wrapper", w), "arm_convolve_s4")
    reasons = dict.fromkeys(why for why in (problem(fn, core, w) for fn in picks) if why)
    return "; ".join(reasons) or "no s4 kernel computes it exactly"


def _mve_1xn_s4_problem(w: Window) -> str | None:
    if w.in_shape[3] % 2:
        return (f"arm_convolve_1_x_n_s4 (MVE) reads each filter row from a byte boundary: "
                f"{w.in_shape[3]} input channels split them")
    total = (w.out_shape[2] - 1) * w.stride[1] + w.kernel[1] - w.in_shape[2]
    pad_w, stride_w = w.padding[1], w.stride[1]
    asym = int(math.fmod(total, 2))   # C's remainder: -1 for a negative total
    right = max(1, (pad_w + asym + stride_w - 1) // stride_w) if pad_w + asym else 0
    left = max(1, (pad_w + stride_w - 1) // stride_w) if pad_w else 0
    if left + right > w.out_shape[2]:
        return "arm_convolve_1_x_n_s4 (MVE) fails when its left- and right-padded outputs overlap"
    return None


def _mve_1xn_split_ok(w: Window) -> bool:
    total = (w.out_shape[2] - 1) * w.stride[1] + w.kernel[1] - w.in_shape[2]
    return w.padding[1] * 2 + total % 2 == total


def problem(function: str, core: Core, w: Window) -> str | None:
    """What `function` would compute wrongly for `w` on `core`, or None when it is exact."""
    if function in CLIPPING:
        return None
    if function == "arm_depthwise_conv_s4":
        return DEPTHWISE_S4_ODD_CHANNELS if w.in_shape[3] % 2 else None
    if function == "arm_depthwise_conv_s4_opt":
        return DEPTHWISE_S4_OPT_MVE if core.has_mve else None
    if function == "arm_convolve_1_x_n_s4" and core.has_mve:
        why = _mve_1xn_s4_problem(w)
        if why is not None:
            return why
    if function in ("arm_convolve_1x1_s4_fast", "arm_convolve_1x1_s4", "arm_convolve_1_x_n_s4"):
        function = function.replace("_s4", "_s8")   # the same padding contract over packed weights
    below, right = w.reads_past()
    past = f"{below} row(s) below and {right} column(s) right of the input"
    if function == "arm_convolve_1x1_s8_fast":
        if below or right:
            return f"{function} sizes its work from the input: the outputs of the padding {past} are never computed"
        return None
    if function == "arm_convolve_1x1_s8":
        if below or right:
            return f"{function} takes no padding: the outputs of the padding {past} read past the input"
        return None
    if function == "arm_convolve_1_x_n_s8":
        if not core.has_mve:
            return None
        if w.out_shape[1] != 1 or w.padding[0] != 0:
            return f"{function} (MVE) computes one output row from input row 0: no vertical padding"
        if not _mve_1xn_split_ok(w):
            return f"{function} (MVE) needs the horizontal padding split as left = total // 2"
        return None
    if function == "arm_depthwise_conv_3x3_s8":
        if w.padding[1] > 1 or right > 1:
            return (f"{function} reads every window's middle column: at most one column of padding "
                    f"left and right ({w.padding[1]} left, {right} right)")
        return None
    raise AssertionError(f"no padding contract for {function}")


def op_window(op) -> Window:
    """The geometry of a cmsisnn conv, depthwise conv or pool op."""
    in_shape, out_shape = op.shape(0), op.shape(0, result=True)
    if "kernel_size" in op.operation.attributes:   # a pool
        return window(in_shape, out_shape, op.ints("kernel_size"), op.ints("stride"), (1, 1), op.ints("padding"))
    f = op.filter_shape() if hasattr(op, "filter_shape") else op.shape(1)
    return window(in_shape, out_shape, f[1:3], op.ints("stride"), op.ints("dilation"), op.ints("padding"), f[3])


def op_function(op, core: Core) -> str:
    """The CMSIS-NN function that does the work of a cmsisnn window op's call on `core`."""
    fn = op.function_name()
    if fn == "arm_convolve_wrapper_s8":
        return conv_s8_function(core, "wrapper", op_window(op))
    if fn == "arm_depthwise_conv_wrapper_s8":
        return depthwise_s8_function(core, "wrapper", op_window(op), op.int("ch_mult"))
    if fn == "arm_convolve_wrapper_s4":
        return conv_s4_function(core, "wrapper", op_window(op))
    if fn == "arm_depthwise_conv_wrapper_s4":
        return depthwise_s4_function(core, "wrapper", op_window(op), op.int("ch_mult"))
    return {"arm_convolve_wrapper_s16": "arm_convolve_s16",
            # The s16 wrapper takes arm_depthwise_conv_fast_s16 or arm_depthwise_conv_s16: both clip.
            "arm_depthwise_conv_wrapper_s16": "arm_depthwise_conv_s16"}.get(fn, fn)


def op_problem(op, core: Core) -> str | None:
    """What a cmsisnn window op's call would compute wrongly on `core`, or None."""
    return problem(op_function(op, core), core, op_window(op))

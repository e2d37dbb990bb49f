"""The float arithmetic of calibration on the same code on every x86-64 CPU.

torch picks its float kernels by the CPU: ATen's vectorised loops and reductions run AVX-512, AVX2
or baseline code; MKL's matrix products (also the im2col convolutions) take a code path per CPU
family, and on AMD CPUs another one than on Intel CPUs of the same instruction set; oneDNN blocks
its convolutions by ISA and cache size; reductions split by thread count. Their sums round apart in
the last bit, a calibrated range one ulp apart is a different scale, and the same model and data
would give different C on two machines (capping at AVX2 was not enough: an AMD EPYC still differed
from an Intel machine in 9 of the 11 zoo models).

So calibration runs code that does not depend on the CPU at all:
- ATen's baseline kernels (`ATEN_CPU_CAPABILITY=default`, the same SSE2 code on every x86-64 CPU),
- MKL's conditional numerical reproducibility in its COMPATIBLE mode (`MKL_CBWR=COMPATIBLE`, the
  one mode MKL documents as giving the same results on Intel and non-Intel processors),
- no oneDNN or NNPACK convolutions (their kernels are chosen by the CPU), and one thread
  (`reproducible()`, around the whole frontend).
The first two are read when torch starts: the command-line tools and the tests call `pin()` before
importing torch, replacing any other value in the environment; from Python, set them before
importing torch (or import mcu_mlir and call `pin()` first). `test/e2e/test_same_c_everywhere.py`
compiles under other CPU settings and compares the C byte for byte.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import warnings

CAPS = {"MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "default"}


def overridden() -> dict[str, str]:
    """The environment's values that `pin()` replaces (name -> the value that was set)."""
    return {k: os.environ[k] for k, v in CAPS.items() if k in os.environ and os.environ[k] != v}


def pin() -> bool:
    """Sets the caps unless torch is already loaded (too late: its kernels are chosen). Returns
    whether they are in effect."""
    if "torch" in sys.modules:
        return in_effect()
    os.environ.update(CAPS)
    return True


def in_effect() -> bool:
    """Whether this process's torch runs the pinned paths (the environment it started with)."""
    if any(os.environ.get(k) != v for k, v in CAPS.items()):
        return False
    backends = getattr(sys.modules.get("torch"), "backends", None)    # None until torch is loaded
    return backends is None or backends.cpu.get_cpu_capability() == "DEFAULT"


@contextlib.contextmanager
def reproducible():
    """One thread (also the faster choice for MCU-sized tensors: with more threads than free cores
    OpenMP's waiting turned DS-CNN's calibration forwards from 0.013 s into seconds), and
    convolutions on ATen's own im2col + MKL path rather than oneDNN or NNPACK,
    for the float work whose results become quantization parameters; depthwise convolutions as a
    sum of shifted products (`_depthwise_by_taps`), since ATen's own path loops over the channels."""
    import torch
    threads = torch.get_num_threads()
    mkldnn, nnpack = torch._C._get_mkldnn_enabled(), torch._C._get_nnpack_enabled()
    torch.set_num_threads(1)
    torch._C._set_mkldnn_enabled(False)
    torch._C._set_nnpack_enabled(False)
    library = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():     # "overriding a previously registered kernel": on purpose
        warnings.simplefilter("ignore")
        library.impl("convolution", _convolution, "AutogradCPU")
    try:
        yield
    finally:
        library._destroy()
        torch.set_num_threads(threads)
        torch._C._set_mkldnn_enabled(mkldnn)
        torch._C._set_nnpack_enabled(nnpack)


def reproducibly(fn):
    """`fn` run inside `reproducible()` (a decorator whose frame is this package's own, so a
    warning's stacklevel still lands on our code)."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with reproducible():
            return fn(*args, **kwargs)
    return run


def _convolution(x, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """aten.convolution on real CPU tensors: a depthwise one (each output channel reads one input
    channel) by taps, any other as ATen computes it. Traced or fake tensors (torch.export) pass
    through untouched, so no graph ever holds the taps."""
    import torch
    from torch.utils._python_dispatch import _get_current_dispatch_mode
    if (not transposed and x.dim() == 4 and groups > 1 and groups == x.shape[1] and weight.shape[1] == 1
            and type(x) is torch.Tensor and type(weight) is torch.Tensor and _get_current_dispatch_mode() is None):
        return _depthwise_by_taps(x, weight, bias, stride, padding, dilation)
    with torch._C._AutoDispatchBelowAutograd():
        return torch.ops.aten.convolution.default(x, weight, bias, stride, padding, dilation, transposed,
                                                  output_padding, groups)


def _depthwise_by_taps(x, weight, bias, stride, padding, dilation):
    """A depthwise convolution as the sum over the kernel's taps of the strided input window times
    that tap's per-channel weight: elementwise products and sums in one fixed order, the same
    rounding on every CPU, and no loop over channels (ATen's own path without oneDNN takes ~15 us
    a channel: 5 ms for a 336-channel 3x3 layer)."""
    import torch
    n, c, h, w = x.shape
    out_c, _, kh, kw = weight.shape
    if out_c != c:                              # a channel multiplier: each input channel read out_c / c times
        x = x.repeat_interleave(out_c // c, dim=1)
    x = torch.nn.functional.pad(x, (padding[1], padding[1], padding[0], padding[0]))
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    taps = weight.reshape(out_c, kh * kw).t().reshape(kh * kw, 1, out_c, 1, 1)
    out = None
    for i in range(kh):
        for j in range(kw):
            top, left = i * dilation[0], j * dilation[1]
            window = x[:, :, top:top + (oh - 1) * stride[0] + 1:stride[0], left:left + (ow - 1) * stride[1] + 1:stride[1]]
            product = window * taps[i * kw + j]
            out = product if out is None else out.add_(product)
    return out if bias is None else out.add_(bias.view(1, out_c, 1, 1))

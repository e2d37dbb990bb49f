"""The int4-weight kernels' facts (dialects/cmsisnn.py, kernel_library/cmsis_padding.py): which
function arm_convolve_wrapper_s4 / arm_depthwise_conv_wrapper_s4 pick on each core, the contracts
measured against the reference (test/e2e/test_int4_kernels.py), and the scratch sizes, checked
against CMSIS-NN's own *_get_buffer_size_mve / _dsp functions built for the host."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mcu_mlir import cores
from mcu_mlir.dialects.cmsisnn import conv_s4_scratch, depthwise_s4_scratch
from mcu_mlir.kernel_library import cmsis_padding
from mcu_mlir.passes.conversion.conv_s4 import pack_int4

M0, M4, M55 = cores.core("cortex-m0"), cores.core("cortex-m4"), cores.core("cortex-m55")


def _w(in_shape, out_hw, kernel, pad=(0, 0, 0, 0), stride=(1, 1), dil=(1, 1), filter_c=None):
    n, h, w, c = in_shape
    return cmsis_padding.window(in_shape, (n, *out_hw, 4), kernel, stride, dil, pad, c if filter_c is None else filter_c)


def test_packing_is_row_major_low_nibble_first():
    assert pack_int4(np.array([1, 2, 3, 4])).view(np.uint8).tolist() == [0x21, 0x43]
    assert pack_int4(np.array([[-1, 7, -8], [0, 5, -7]])).view(np.uint8).tolist() == [0x7F, 0x08, 0x95]
    assert pack_int4(np.array([-7])).view(np.uint8).tolist() == [0x09]


@pytest.mark.parametrize("core", [M0, M4, M55], ids=["c", "dsp", "mve"])
def test_conv_wrapper_s4_picks_as_cmsis_nn(core):
    assert cmsis_padding.conv_s4_function(core, "wrapper", _w((1, 4, 4, 3), (4, 4), (1, 1))) == "arm_convolve_1x1_s4_fast"
    strided = _w((1, 5, 5, 3), (3, 3), (1, 1), stride=(2, 2))
    assert cmsis_padding.conv_s4_function(core, "wrapper", strided) == "arm_convolve_1x1_s4"
    one_row = _w((1, 1, 9, 4), (1, 9), (1, 3), pad=(0, 1, 0, 1))
    assert cmsis_padding.conv_s4_function(core, "wrapper", one_row) == (
        "arm_convolve_1_x_n_s4" if core.has_mve else "arm_convolve_s4")
    even = _w((1, 5, 5, 2), (5, 5), (3, 3), pad=(1, 1, 1, 1))      # 3 x 3 x 2 weights a filter
    odd = _w((1, 5, 5, 3), (5, 5), (3, 3), pad=(1, 1, 1, 1))
    assert cmsis_padding.conv_s4_function(core, "wrapper", even) == (
        "arm_convolve_even_s4" if core.has_mve else "arm_convolve_s4")
    assert cmsis_padding.conv_s4_function(core, "wrapper", odd) == "arm_convolve_s4"
    assert cmsis_padding.conv_s4_function(core, "generic", even) == "arm_convolve_s4"


def test_contracts_measured_on_the_s4_kernels():
    # arm_convolve_1_x_n_s4 on MVE reads filter rows from byte boundaries: odd input channels split them.
    odd_1xn = _w((1, 1, 13, 3), (1, 4), (1, 3), pad=(0, 1, 0, 1), stride=(4, 4))
    assert "byte boundary" in cmsis_padding.problem("arm_convolve_1_x_n_s4", M55, odd_1xn)
    assert cmsis_padding.problem("arm_convolve_1_x_n_s4", M4, odd_1xn) is None   # forwards to arm_convolve_s4
    # The 1x1 kernels keep the s8 contract: no bottom / right padding.
    bottom = _w((1, 4, 4, 8), (5, 4), (1, 1), pad=(0, 0, 1, 0))
    assert "never computed" in cmsis_padding.problem("arm_convolve_1x1_s4_fast", M4, bottom)
    # arm_depthwise_conv_s4 is wrong for an odd input channel count; _s4_opt on MVE always.
    dw_odd, dw_even = _w((1, 4, 4, 3), (4, 4), (3, 3), (1, 1, 1, 1)), _w((1, 4, 4, 4), (4, 4), (3, 3), (1, 1, 1, 1))
    assert cmsis_padding.problem("arm_depthwise_conv_s4", M4, dw_odd) == cmsis_padding.DEPTHWISE_S4_ODD_CHANNELS
    assert cmsis_padding.problem("arm_depthwise_conv_s4", M55, dw_even) is None
    assert cmsis_padding.problem("arm_depthwise_conv_s4_opt", M4, dw_odd) is None
    assert cmsis_padding.problem("arm_depthwise_conv_s4_opt", M55, dw_even) == cmsis_padding.DEPTHWISE_S4_OPT_MVE
    assert cmsis_padding.depthwise_s4_function(M4, "wrapper", dw_odd, 1) == "arm_depthwise_conv_s4_opt"
    assert cmsis_padding.depthwise_s4_function(M4, "wrapper", dw_odd, 2) == "arm_depthwise_conv_s4"
    assert "odd input channel" in cmsis_padding.s4_refusal(M55, dw_odd, True, 1)


# -- scratch sizes against CMSIS-NN's own functions --------------------------------------------------

PROGRAM = textwrap.dedent(r"""
    #include <stdio.h>
    #include "arm_nnfunctions.h"
    int main(void) {
      int v[16];
      while (scanf("%d %d %d %d %d %d %d %d %d %d %d %d %d %d", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                   &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12], &v[13]) == 14) {
        cmsis_nn_dims in = {v[0], v[1], v[2], v[3]}, f = {v[4], v[5], v[6], v[7]}, out = {v[0], v[8], v[9], v[4]};
        cmsis_nn_conv_params cp = {.stride = {v[11], v[10]}, .padding = {v[13], v[12]}, .dilation = {1, 1}};
        cmsis_nn_dw_conv_params dp = {.ch_mult = 1, .stride = {v[11], v[10]}, .padding = {v[13], v[12]},
                                      .dilation = {1, 1}};
        cmsis_nn_dims dwf = {1, v[5], v[6], v[3]}, dwo = {v[0], v[8], v[9], v[3]};
        printf("%d %d %d %d\n", (int)arm_convolve_wrapper_s4_get_buffer_size_mve(&cp, &in, &f, &out),
               (int)arm_convolve_wrapper_s4_get_buffer_size_dsp(&cp, &in, &f, &out),
               (int)arm_depthwise_conv_wrapper_s4_get_buffer_size_mve(&dp, &in, &dwf, &dwo),
               (int)arm_depthwise_conv_wrapper_s4_get_buffer_size_dsp(&dp, &in, &dwf, &dwo));
      }
      return 0;
    }
    """)


def _shapes(rng, count):
    for _ in range(count):
        n, c, o = 1, int(rng.integers(1, 20)), int(rng.integers(1, 9))
        h = 1 if rng.random() < 0.4 else int(rng.integers(1, 9))
        w = int(rng.integers(1, 12))
        kh = 1 if h == 1 or rng.random() < 0.3 else int(rng.integers(1, 4))
        kw = int(rng.integers(1, 5))
        sh, sw = int(rng.integers(1, 3)), int(rng.choice([1, 2, 4]))
        ph, pw = int(rng.integers(0, kh)), int(rng.integers(0, kw))
        oh = (h - 1 + 2 * ph - (kh - 1)) // sh + 1
        ow = (w - 1 + 2 * pw - (kw - 1)) // sw + 1
        if oh >= 1 and ow >= 1:
            yield [n, h, w, c, o, kh, kw, c, oh, ow, sh, sw, ph, pw]


def test_scratch_sizes_equal_cmsis_nn_functions(tmp_path):
    cmsis, cc = os.environ.get("CMSIS_NN_PATH"), shutil.which("cc") or shutil.which("gcc")
    if not cmsis or cc is None:
        pytest.skip("needs CMSIS_NN_PATH (a CMSIS-NN checkout) and a host C compiler")
    src = Path(cmsis) / "Source" / "ConvolutionFunctions"
    (tmp_path / "sizes.c").write_text(PROGRAM)
    exe = tmp_path / "sizes"
    subprocess.run([cc, "-std=c99", "-O1", "-I", str(Path(cmsis) / "Include"), str(tmp_path / "sizes.c"),
                    str(src / "arm_convolve_get_buffer_sizes_s4.c"), str(src / "arm_depthwise_conv_get_buffer_sizes_s4.c"),
                    str(src / "arm_depthwise_conv_get_buffer_sizes_s8.c"), str(src / "arm_convolve_get_buffer_sizes_s8.c"),
                    "-o", str(exe)], check=True, capture_output=True, text=True)
    rows = list(_shapes(np.random.default_rng(4), 300))
    out = subprocess.run([str(exe)], input="\n".join(" ".join(map(str, r)) for r in rows), capture_output=True,
                         text=True, check=True).stdout.split("\n")
    for row, line in zip(rows, out):
        n, h, w, c, o, kh, kw, _, oh, ow, sh, sw, ph, pw = row
        want = list(map(int, line.split()))
        in_shape, f, out_shape = [n, h, w, c], [o, kh, kw, c], [n, oh, ow, o]
        got = [conv_s4_scratch(core, "wrapper", [sh, sw], [ph, pw], [1, 1], in_shape, f, out_shape) for core in (M55, M4)]
        got += [depthwise_s4_scratch(core, "wrapper", [1, 1], in_shape, [1, kh, kw, c], [n, oh, ow, c])
                for core in (M55, M4)]
        assert got == want, (row, got, want)

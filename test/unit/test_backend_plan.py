"""mcu-plan-memory: placement, lower bound, RAM limit; CMSIS-NN scratch sizes per core."""

from __future__ import annotations

import itertools
import subprocess
import sys

from mcu_mlir.passes.transforms.plan_memory import _Buffer, place, ALIGN
from mcu_mlir.dialects import cmsisnn
from mcu_mlir.cores import core



def _overlaps(a, b):
    return a.start <= b.end and b.start <= a.end


def test_place_never_overlaps_live_buffers_and_reaches_the_bound_on_a_chain():
    # A chain a -> b -> c -> d: two buffers live at a time, so the best plan is two slots.
    sizes = [100, 40, 100, 40]
    bufs = [_Buffer(s, i, i + 1) for i, s in enumerate(sizes)]
    total = place(bufs)
    for x, y in itertools.combinations(bufs, 2):
        if _overlaps(x, y):
            assert x.offset + x.size <= y.offset or y.offset + y.size <= x.offset
        assert x.offset % ALIGN == 0
    lower = max(sum(b.size for b in bufs if b.start <= t <= b.end) for t in range(5))
    assert lower == 140
    assert lower <= total <= 112 + 48  # the two largest, 16-byte aligned, side by side


CHAIN = """
func.func @main(%arg0: tensor<8x16xi8>) -> tensor<8x16xi8> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 1, 0>} : (tensor<8x16xi8>) -> tensor<16x8xi8>
  %1 = tosa.transpose %0 {perms = array<i32: 1, 0>} : (tensor<16x8xi8>) -> tensor<8x16xi8>
  return %1 : tensor<8x16xi8>
}
"""


def _plan(options):
    cmd = [sys.executable, "-m", "mcu_mlir.tools.mcu_opt", "-",
           f"--mcu-tosa-to-cmsisnn-pipeline=backend=portable {options}".strip()]
    return subprocess.run(cmd, input=CHAIN, capture_output=True, text=True)


def test_ram_limit_is_a_compile_time_error():
    ok = _plan("")
    assert ok.returncode == 0, ok.stderr
    assert "mcu.arena_bytes = 128" in ok.stdout and "mcu.arena_lower_bound_bytes = 128" in ok.stdout
    too_small = _plan("ram-bytes=100")
    assert too_small.returncode == 1
    assert "needs a 128-byte arena" in too_small.stderr and "ram-bytes=100" in too_small.stderr
    assert "Traceback" not in too_small.stderr


def test_scratch_sizes_follow_the_core():
    mve, dsp, c = core("cortex-m55"), core("cortex-m4"), core("cortex-m3")
    f = [16, 3, 3, 16]  # conv 3x3, 16 -> 16 channels
    args = ("arm_convolve_wrapper_s8", [1, 1], [1, 1], [1, 1], [1, 16, 16, 16], f, [1, 16, 16, 16])
    assert cmsisnn.conv_wrapper_s8_scratch(mve, *args) == 4 * ((16 * 9 + 15) // 16) * 16
    assert cmsisnn.conv_wrapper_s8_scratch(dsp, *args) == 2 * 144 * 2
    assert cmsisnn.conv_wrapper_s8_scratch(c, *args) == 2 * 144 * 2
    dw = ([1, 1], [1, 1], [1, 1], [1, 16, 16, 16], [1, 3, 3, 16], [1, 16, 16, 16])
    assert cmsisnn.depthwise_wrapper_s8_scratch(c, *dw) == 0
    assert cmsisnn.depthwise_wrapper_s8_scratch(dsp, *dw) == 0
    assert cmsisnn.depthwise_wrapper_s8_scratch(mve, *dw) == 4 * 124 * 9

"""kernel_generation: the border classes of the generated depthwise 3x3 kernel and its cost entry."""

from mcu_mlir import cores, kernel_generation
from mcu_mlir.kernel_generation import costs, dw3x3_s8


def _taps(out_size, in_size, stride, pad):
    """Per output, the taps inside the image, the direct way."""
    return [tuple(k for k in range(3) if 0 <= o * stride - pad + k < in_size) for o in range(out_size)]


def test_runs_cover_every_output_with_its_taps():
    for out_size, in_size, stride, pad in [(25, 25, 1, 1), (1, 1, 1, 1), (3, 5, 2, 1), (4, 6, 1, 0),
                                           (5, 9, 2, 0), (6, 6, 1, 2), (2, 1, 1, 2)]:
        runs, classes = dw3x3_s8._runs(out_size, in_size, stride, pad)
        expanded = [classes[cls] for first, count, cls in runs for _ in range(count)]
        assert expanded == _taps(out_size, in_size, stride, pad)
        assert [first for first, _, _ in runs] == sorted({first for first, _, _ in runs})


def test_same_padding_has_three_classes_and_a_one_pixel_image_one():
    assert dw3x3_s8._runs(25, 25, 1, 1)[1] == [(1, 2), (0, 1, 2), (0, 1)]
    assert dw3x3_s8._runs(1, 1, 1, 1)[1] == [(1,)]


def test_cost_entries_on_kws_layer_1():
    """KWS layer 1 (25x5x64, SAME) on M4: 599,644 instructions in CMSIS-NN, 189,580 in the prototype."""
    rows = [2] + [3] * 23 + [2]
    cols = [2, 3, 3, 3, 2]
    by_taps = [(1, r * c) for r in rows for c in cols]
    library = costs.cmsis_depthwise_dsp(by_taps, 64)
    generated = costs.dw3x3_s8_dsp(by_taps, 64, fold=True)
    assert abs(library / 599_644 - 1) < 0.02
    assert abs(generated / 189_580 - 1) < 0.05
    assert generated < library


def test_modes_are_the_compile_options():
    from mcu_mlir.options import KERNELS
    assert kernel_generation.MODES == KERNELS == ("auto", "cmsis-nn", "generated")
    assert all(k.OP is not None and k.NAME in kernel_generation.KERNELS for k in kernel_generation.KERNELS.values())


def test_estimates_only_on_dsp_cores_without_mve():
    import numpy as np
    row_runs, row_classes = dw3x3_s8._runs(4, 4, 1, 1)
    plan = dw3x3_s8.Plan(4, 4, 8, (1, 1), 1, 1, row_runs, row_runs, row_classes, row_classes,
                         np.zeros(36, np.int32), np.zeros(72, np.int32), np.zeros(24, np.int32), True, (-128, 127))
    for name in ("cortex-m4", "cortex-m7", "cortex-m33"):
        generated, library = dw3x3_s8.estimates(plan, cores.core(name))
        assert generated < library
    for name in ("cortex-m55", "cortex-m3", "cortex-m0", "host"):
        assert dw3x3_s8.estimates(plan, cores.core(name)) is None

"""arm_softmax_s8's arithmetic (mcu_mlir.fixed_point.cmsis_softmax): the frontend's TOSA form computes it bit for
bit in tosa_reference_model, its parameters are recovered from a table, and the Newton steps the
TOSA form multiplies by 4 without saturation stay in range."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

from mcu_mlir.fixed_point import cmsis_softmax as cs


@pytest.mark.parametrize("mve", [False, True])
def test_parameters_are_recovered_from_the_exponential_table(mve):
    rng = np.random.default_rng(0)
    for scale in np.exp(rng.uniform(np.log(0.002), np.log(1.0), size=12)):
        p = cs.params(float(scale))
        table = cs.exp_table(*p, mve=mve)
        found = cs.recover(table, mve=mve)
        assert found is not None and np.array_equal(cs.exp_table(*found, mve=mve), table), scale
    broken = cs.exp_table(*cs.params(0.05)).copy()
    broken[7] += 1
    assert cs.recover(broken) is None


def test_newton_corrections_need_no_saturation():
    val = np.concatenate([np.linspace(0, 2 ** 31 - 1, 1 << 18).astype(np.int64), np.arange(4096),
                          (2 ** 31 - 1) - np.arange(4096)])
    for step in cs.newton_corrections(val):
        assert np.abs(step).max() < (1 << 29) - 1
    # and the recomputed reciprocal is the kernel's
    assert np.array_equal(cs.one_over_one_plus_x(val)[:10], cs.one_over_one_plus_x(val[:10]))


@pytest.mark.skipif(shutil.which("tosa_reference_model") is None, reason="tosa-tools not installed")
@pytest.mark.parametrize("spread", [0.5, 3.0, 20.0, 28.0])
def test_tosa_form_is_the_kernel(spread):
    torch = pytest.importorskip("torch")
    from mcu_mlir.frontend import import_model
    from mcu_mlir.reference import run_reference

    class Softmax(torch.nn.Module):
        def forward(self, x):
            return x.softmax(-1)
    torch.manual_seed(0)
    x = torch.randn(40, 37) * spread
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = import_model(Softmax().eval(), (x,), calibration=4)
    q = result.inputs[0].quantize(x.numpy())
    (out,) = run_reference(result.module, [q])
    want = cs.softmax_s8(q, *cs.params(result.inputs[0].scale))
    assert np.array_equal(out, want)


@pytest.mark.skipif(shutil.which("tosa_reference_model") is None, reason="tosa-tools not installed")
@pytest.mark.parametrize("spread,shift_sign", [(0.25, -1), (0.6, 0), (1.5, 1), (10.0, 1)])
def test_int16_tosa_form_is_arm_softmax_s16(spread, shift_sign):
    """The three shapes of the requantize (right shift, none, left shift) all compute the kernel's
    integers; within a few LSB of the float softmax."""
    torch = pytest.importorskip("torch")
    from mcu_mlir.frontend import import_model
    from mcu_mlir.reference import run_reference

    class Softmax(torch.nn.Module):
        def forward(self, x):
            return x.softmax(-1)
    torch.manual_seed(0)
    x = torch.randn(40, 37) * spread
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = import_model(Softmax().eval(), (x,), quantize="int16", calibration=[(x,)])
    mult, shift = cs.s16_params(result.inputs[0].scale)
    assert np.sign(shift) == shift_sign
    q = result.inputs[0].quantize(x.numpy())
    (out,) = run_reference(result.module, [q])
    assert np.array_equal(out, cs.softmax_s16(q, mult, shift, *cs.s16_luts()))
    # Within a few LSB of float, but for the exp table's floor: a difference below -10 (past its
    # range) still counts exp(-10) as TFLite's table gives it (2 / 32768), taken from the others.
    xf = result.inputs[0].dequantize(q).astype(np.float64)
    want = torch.softmax(torch.from_numpy(xf), -1).numpy()
    far = (xf - xf.max(-1, keepdims=True) < -10).sum(-1, keepdims=True)
    assert (np.abs(out / 32768 - want) * 32768 <= 8 + 2 * far).all()


def test_int16_luts_are_tflite_micros():
    """gen_lut's tables: exp(0) and 1 / (1 + 0) saturate to 32767, 1 / 2 is 16384, monotone."""
    exp, obo = cs.s16_luts()
    assert exp[-1] == 32767 and obo[0] == 32767 and obo[-1] == 16384
    assert (np.diff(exp) >= 0).all() and (np.diff(obo) <= 0).all() and exp.min() >= 1

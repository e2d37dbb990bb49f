"""run_reference: the tosa_reference_model oracle on hand-written TOSA with known answers."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from mcu_mlir.reference import ReferenceError, run_reference

pytestmark = pytest.mark.skipif(shutil.which("tosa_reference_model") is None,
                                reason="tosa-tools (tosa_reference_model) not installed")

MULTI = """
func.func @main(%a: tensor<2x3xi16>, %b: tensor<2x3xi32>, %c: tensor<4xf32>, %d: tensor<3xi1>)
    -> (tensor<2x3xi32>, tensor<4xf32>, tensor<3xi1>, tensor<2x3xi16>) {
  %0 = tosa.cast %a : (tensor<2x3xi16>) -> tensor<2x3xi32>
  %1 = tosa.add %0, %b : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %2 = tosa.abs %c : (tensor<4xf32>) -> tensor<4xf32>
  %3 = tosa.logical_not %d : (tensor<3xi1>) -> tensor<3xi1>
  return %1, %2, %3, %a : tensor<2x3xi32>, tensor<4xf32>, tensor<3xi1>, tensor<2x3xi16>
}
"""


def test_several_inputs_and_outputs_of_every_dtype():
    rng = np.random.default_rng(0)
    a = rng.integers(-30000, 30000, (2, 3)).astype(np.int16)
    b = rng.integers(-1 << 20, 1 << 20, (2, 3)).astype(np.int32)
    c = rng.normal(size=4).astype(np.float32)
    d = np.array([True, False, True])
    s, f, n, same = run_reference(MULTI, [a, b, c, d])
    np.testing.assert_array_equal(s, a.astype(np.int32) + b)
    np.testing.assert_array_equal(f, np.abs(c))
    np.testing.assert_array_equal(n, ~d)
    assert same.dtype == np.int16 and (same == a).all()


RESCALE = """
func.func @main(%x: tensor<6xi32>) -> tensor<6xi8> {
  %m = "tosa.const"() <{values = dense<1431655765> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<40> : tensor<1xi8>}> : () -> tensor<1xi8>
  %iz = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %oz = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.rescale %x, %m, %s, %iz, %oz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<6xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<6xi8>
  return %0 : tensor<6xi8>
}
"""


def test_rescale_matches_the_spec_formula():
    from mcu_mlir.fixed_point.qmath import apply_rescale
    x = np.array([0, 767, -767, 12345, -99999, 1 << 20], np.int32)
    (out,) = run_reference(RESCALE, [x])
    want = [np.clip(apply_rescale(int(v), 1431655765, 40) + 3, -128, 127) for v in x]
    np.testing.assert_array_equal(out, want)


def test_errors_are_clear(tmp_path):
    with pytest.raises(ReferenceError, match="takes 1 inputs, 2 given"):
        run_reference(RESCALE, [np.zeros(6, np.int32)] * 2)
    with pytest.raises(ReferenceError, match="float64 but the model takes i32"):
        run_reference(RESCALE, [np.zeros(6)])
    with pytest.raises(ReferenceError, match="(?s)tosa-opt --tosa-serialize failed.*reproduce"):
        run_reference("func.func @main(%x: tensor<2xi8>) -> tensor<2xi8> { bogus }", [np.zeros(2, np.int8)])


def test_keep_dir_keeps_the_files(tmp_path):
    run_reference(RESCALE, [np.zeros(6, np.int32)], keep_dir=str(tmp_path))
    assert (tmp_path / "model.tosa").exists() and (tmp_path / "out0.npy").exists()


INT4_CONV = """
func.func @main(%x: tensor<1x1x1x2xi8>) -> tensor<1x1x1x1xi32> {
  %w = "tosa.const"() <{values = dense<[[[[W, 1]]]]> : tensor<1x1x1x2xi4>}> : () -> tensor<1x1x1x2xi4>
  %b = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi4>}> : () -> tensor<1xi4>
  %y = tosa.conv2d %x, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x1x2xi8>, tensor<1x1x1x2xi4>, tensor<1xi32>, tensor<1xi8>, tensor<1xi4>) -> tensor<1x1x1x1xi32>
  return %y : tensor<1x1x1x1xi32>
}
"""


def test_an_int4_weight_tosa_serializes_wrongly_is_an_error_not_an_answer():
    """TOSA's int4 is -7..7: tosa-opt writes -8 truncated, prints so and exits 0."""
    x = np.array([[[[3, 5]]]], np.int8)
    (ok,) = run_reference(INT4_CONV.replace("W", "-7"), [x])
    assert int(ok.reshape(-1)[0]) == 3 * -7 + 5
    with pytest.raises(ReferenceError, match="tosa-serialize"):
        run_reference(INT4_CONV.replace("W", "-8"), [x])

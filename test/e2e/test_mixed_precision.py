"""Mixed precision (--int16-layers): named layers or `auto` keep some layers in int16 inside an int8
model; the C equals tosa_reference_model; auto reaches a target the all-int16 model reaches, and
says so when the int8 weights keep it from one it cannot."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mcu_mlir  # noqa: E402
from mcu_mlir.diagnostics import UserError  # noqa: E402
from mcu_mlir.frontend.quantize.mixed_precision import MARGIN_DB  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402

from test_layer_sqnr import Lossy  # noqa: E402

CMSIS_NN_PATH = os.environ.get("CMSIS_NN_PATH")
EXAMPLE = (torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(0)),)


def _compile(out, **options):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mcu_mlir.compile(Lossy().eval(), EXAMPLE, target="host", calibration=8, emit="c",
                                output_dir=str(out), **options)


def _output_sqnr(result):
    return [r for r in result.report["quantization"]["layer_sqnr"] if r["kind"] == "output"][0]["sqnr_db"]


@pytest.mark.parametrize("backend", ["portable", "cmsis-nn"])
def test_named_layers_in_int16_bit_exact(backend, tmp_path):
    if backend == "cmsis-nn" and not CMSIS_NN_PATH:
        pytest.skip("CMSIS_NN_PATH is not set: the CMSIS-NN backend cannot be built")
    extra = {"cmsis_nn_path": CMSIS_NN_PATH} if backend == "cmsis-nn" else {}
    result = _compile(tmp_path, backend=backend, int16_layers="spread", **extra)
    layers = {r["name"]: r for r in result.report["quantization"]["layers"]}
    assert layers["spread"]["dtype"] == "i16" and layers["head"]["dtype"] == "i8", layers
    if backend == "cmsis-nn":
        kernels = [op["kernel"] for op in result.report["ops"]]
        assert "arm_convolve_wrapper_s16" in kernels or "arm_convolve_1x1_s16" in kernels, kernels
    g = torch.Generator().manual_seed(4)
    inputs = [torch.randn(1, 3, 8, 8, generator=g).numpy()]
    want = run.run_reference_outdir(tmp_path, inputs)
    got = run.run(tmp_path, inputs, target="host", cmsis_nn_path=CMSIS_NN_PATH)
    for c, ref in zip(got.outputs_q, want.outputs_q):
        assert np.array_equal(c, ref.reshape(c.shape))


def test_auto_reaches_a_target_all_int16_reaches(tmp_path):
    int8 = _output_sqnr(_compile(tmp_path / "int8"))
    int16 = _output_sqnr(_compile(tmp_path / "int16", quantize="int16"))
    target = (int8 + int16) / 2
    result = _compile(tmp_path / "auto", int16_layers="auto", target_sqnr_db=target)
    rows = result.report["quantization"]["layer_sqnr"]
    # Reached with the margin auto keeps for inputs other than the ones it measured on.
    assert _output_sqnr(result) >= target + MARGIN_DB, rows
    assert any(r["dtype"] == "int16" for r in rows), rows


def test_auto_says_when_the_target_is_out_of_reach(tmp_path):
    torch.manual_seed(0)
    with pytest.warns(UserWarning, match="not 80 dB"):
        mcu_mlir.compile(Lossy().eval(), EXAMPLE, target="host", calibration=8, emit="tosa",
                         output_dir=str(tmp_path), int16_layers="auto", target_sqnr_db=80)


def test_bad_requests_are_named(tmp_path):
    with pytest.raises(UserError, match="no layer named 'nope'"):
        _compile(tmp_path / "a", int16_layers="spread,nope")
    with pytest.raises(UserError, match="--int16-layers mixes int16 layers into an int8 model"):
        _compile(tmp_path / "b", int16_layers="auto", quantize="int16")


class LongSoftmax(torch.nn.Module):
    """A softmax over 40000 values: the int16 forms sum at most 32767 of them, the int8 form more."""
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 40000)

    def forward(self, x):
        return self.fc(x).softmax(-1)


def test_auto_leaves_ops_without_an_int16_lowering_in_int8(tmp_path):
    """An op whose int16 form does not exist for its shape stays int8 under auto, which still
    compiles and moves the rest."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mcu_mlir.compile(LongSoftmax().eval(), (torch.randn(2, 8),), target="host", calibration=8,
                                  emit="tosa", output_dir=str(tmp_path), int16_layers="auto", target_sqnr_db=80)
    rows = result.report["quantization"]["layer_sqnr"]
    softmax = [r for r in rows if r["node"].startswith("softmax")]
    assert softmax and all(r["dtype"] == "int8" for r in softmax), rows
    assert any(r["dtype"] == "int16" for r in rows), rows


class ZeroChannels(torch.nn.Module):
    """Half the output channels of a conv with all-zero weights and a bias (a zero-initialised last
    BatchNorm folded in, as timm's CSP / ResNet blocks have before training)."""
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.b = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.c = torch.nn.Conv2d(8, 4, 1)
        with torch.no_grad():
            self.b.weight[:4].zero_()
            self.b.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.c(torch.relu(self.b(torch.relu(self.a(x)))))


def test_zero_weight_channels_keep_their_bias_in_int16(tmp_path):
    """At the floor weight scale the bias of an all-zero channel overflowed int32 in int16 models (the
    layer measured 3.9 dB); such a channel now has weight scale 1 and the layer its int16 precision."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mcu_mlir.compile(ZeroChannels().eval(), (torch.randn(1, 3, 8, 8),), target="host",
                                  backend="portable", quantize="int16", calibration=8, emit="c",
                                  output_dir=str(tmp_path))
    rows = {r["name"]: r for r in result.report["quantization"]["layer_sqnr"]}
    assert rows["relu_1"]["sqnr_db"] > 35, rows      # b + relu: one layer, named after its relu
    g = torch.Generator().manual_seed(6)
    inputs = [torch.randn(1, 3, 8, 8, generator=g).numpy()]
    want = run.run_reference_outdir(tmp_path, inputs)
    got = run.run(tmp_path, inputs, target="host")
    assert np.array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))


class Scores(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = (torch.nn.Linear(8, 8) for _ in range(3))

    def forward(self, x):
        scores = (self.q(x) @ self.k(x).transpose(-2, -1)) * 0.5
        causal = torch.ones(6, 6, dtype=torch.bool).tril()
        return scores.masked_fill(~causal, float("-inf")).softmax(-1) @ self.v(x)


def test_int8_softmax_of_int16_scores_bit_exact(tmp_path):
    """Masked scores kept in int16 (as auto may choose; the fill keeps their parameters), their
    softmax int8: the int16 softmax rescaled to int8's 1/256, equal in C and in the reference model."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mcu_mlir.compile(Scores().eval(), (torch.randn(1, 6, 8),), target="host", calibration=8, emit="c",
                                  output_dir=str(tmp_path), int16_layers="matmul,mul,where_scalar_other",
                                  backend="cmsis-nn" if CMSIS_NN_PATH else "portable")
    layers = {r["name"]: r["dtype"] for r in result.report["quantization"]["layers"]}
    assert "i16" in layers.values() and "i8" in layers.values(), layers
    inputs = [torch.randn(1, 6, 8, generator=torch.Generator().manual_seed(4)).numpy()]
    want = run.run_reference_outdir(tmp_path, inputs)
    got = run.run(tmp_path, inputs, target="host", cmsis_nn_path=CMSIS_NN_PATH)
    assert np.array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))
    softmax = [r for r in result.report["quantization"]["layer_sqnr"] if r["node"] == "softmax"]
    assert softmax[0]["sqnr_db"] > 30, softmax

"""Per-layer SQNR (report.json quantization.layer_sqnr, layer_sqnr.md): the output row equals the
SQNR of the PT2E model against the float model on the same calibration samples, measured here
independently; the table names the largest drops first; int16 activations measure higher."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mcu_mlir  # noqa: E402
from mcu_mlir.frontend import sqnr_samples  # noqa: E402
from mcu_mlir.frontend.quantize.layer_sqnr import sqnr_db  # noqa: E402


class Lossy(torch.nn.Module):
    """conv -> relu -> a layer whose output range one channel dominates (int8 loses the seven
    small channels there; the head, which reads them, shows it) -> conv."""
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.spread = torch.nn.Conv2d(8, 8, 1)
        self.head = torch.nn.Conv2d(8, 4, 1)
        with torch.no_grad():
            self.spread.weight.mul_(torch.tensor([300.0] + [0.01] * 7).reshape(8, 1, 1, 1))

    def forward(self, x):
        return self.head(self.spread(torch.relu(self.conv(x))))


def _compile(model, example, out, quantize):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mcu_mlir.compile(model, example, target="host", backend="portable", calibration=8, emit="c",
                                quantize=quantize, output_dir=str(out))


def test_layer_sqnr_report(tmp_path):
    torch.manual_seed(0)
    model = Lossy().eval()
    example = (torch.randn(1, 3, 8, 8),)
    result = _compile(model, example, tmp_path / "int8", "int8")
    rows = result.report["quantization"]["layer_sqnr"]
    assert [r["kind"] for r in rows] == ["input", "layer", "layer", "output"]
    assert [r["name"] for r in rows] == ["x", "relu", "spread", "head"]
    # The output row against an independent measurement: PT2E model vs the float model on the
    # same (held-out) inputs.
    samples = sqnr_samples(8, example)
    want = np.concatenate([model(*s).detach().double().numpy().ravel() for s in samples])
    got = np.concatenate([np.asarray(result.frontend.reference([x.numpy() for x in s])[0], np.float64).ravel()
                          for s in samples])
    assert math.isclose(rows[-1]["sqnr_db"], sqnr_db(want, got), abs_tol=0.05)
    lossiest = max((r for r in rows if r["drop_db"] is not None), key=lambda r: r["drop_db"])
    text = (tmp_path / "int8" / "layer_sqnr.md").read_text()
    assert f"Layers that lose the most: {lossiest['name']} ({lossiest['node']}" in text
    # 8 more bits of every activation: ~48 dB more at the input; at the output the int8 weights'
    # error (a16w8) remains, so less (10 dB measured).
    wide = _compile(model, example, tmp_path / "int16", "int16").report["quantization"]["layer_sqnr"]
    assert wide[0]["sqnr_db"] > rows[0]["sqnr_db"] + 40
    assert wide[-1]["sqnr_db"] > rows[-1]["sqnr_db"] + 6


class SqueezeExcite(torch.nn.Module):
    """conv -> its output read twice: by the SE branch's mean and by the gating multiply."""
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Conv2d(8, 8, 1)

    def forward(self, x):
        y = self.conv(x)
        return y * torch.sigmoid(self.fc(y.mean((2, 3), keepdim=True)))


def test_drop_counts_every_input_of_a_value_read_twice(tmp_path):
    """PT2E gives each reader of a value its own dequantize: the multiply's drop is from the worse of
    its two inputs (the conv's output), not from the gate alone."""
    torch.manual_seed(0)
    rows = _compile(SqueezeExcite().eval(), (torch.randn(1, 3, 8, 8),), tmp_path, "int8") \
        .report["quantization"]["layer_sqnr"]
    by_node = {r["node"]: r for r in rows}
    mul, conv, gate = by_node["mul"], by_node["conv2d"], by_node["sigmoid"]
    assert conv["sqnr_db"] < gate["sqnr_db"]
    assert math.isclose(mul["drop_db"], conv["sqnr_db"] - mul["sqnr_db"], abs_tol=0.02), (mul, conv, gate)


def test_drop_across_a_change_of_dtype(tmp_path):
    """Mixed precision: where int8 meets int16 PT2E chains q -> dq -> q -> dq, and the reader sees the
    value through the second dequantize. The drop still counts from the producer, on both sides of
    both boundaries (int8 relu -> int16 spread -> int8 head); without it auto could not rank them."""
    torch.manual_seed(0)
    model = Lossy().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mcu_mlir.compile(model, (torch.randn(1, 3, 8, 8),), target="host", backend="portable",
                                  calibration=8, emit="c", int16_layers="spread", output_dir=str(tmp_path))
    rows = {r["name"]: r for r in result.report["quantization"]["layer_sqnr"]}
    layers = {r["name"]: r["dtype"] for r in result.report["quantization"]["layers"]}
    assert (layers["spread"], layers["head"]) == ("i16", "i8"), layers
    for reader, producer in (("spread", "relu"), ("head", "spread")):
        assert rows[reader]["drop_db"] is not None, rows
        assert math.isclose(rows[reader]["drop_db"], rows[producer]["sqnr_db"] - rows[reader]["sqnr_db"],
                            abs_tol=0.02), rows

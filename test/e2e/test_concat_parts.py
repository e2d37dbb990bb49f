"""An output that is a concat of parts of very different ranges (YOLO's boxes in pixels beside
sigmoid class scores, a segmentation head's mask coefficients after them): every part keeps its
own scale and zero point up to the C API (frontend/quantize/concat_parts.py: report.json's parts,
mcu_model_output_parts[] in model.c, mcu-run dequantizing part by part), the report measures each
part on held-out inputs, and a part that collapses shows there instead of hiding behind the whole
output's SQNR. The C equals tosa_reference_model bit for bit."""

from __future__ import annotations

import math
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mcu_mlir  # noqa: E402
from mcu_mlir.frontend.quantize import concat_parts  # noqa: E402
from mcu_mlir.frontend.quantize.layer_sqnr import sqnr_db  # noqa: E402
from mcu_mlir.frontend.quantize.mixed_precision import output_sqnr  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402

CMSIS_NN_PATH = os.environ.get("CMSIS_NN_PATH")
SHAPE = (1, 3, 32, 32)


class DetectHead(torch.nn.Module):
    """A small conv backbone and an ultralytics-style Detect head: boxes in pixels (up to ~300),
    sigmoid class scores, cat on dim 1; `masks` adds a segmentation head's mask coefficients."""

    def __init__(self, classes: int = 6, masks: int = 0, prior: bool = False):
        super().__init__()
        self.body = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, 2, 1), torch.nn.SiLU(), torch.nn.Conv2d(16, 32, 3, 2, 1), torch.nn.SiLU(),
            torch.nn.Conv2d(32, 32, 3, 2, 1), torch.nn.SiLU())
        self.box = torch.nn.Conv2d(32, 4, 1)
        self.cls = torch.nn.Conv2d(32, classes, 1)
        self.mc = torch.nn.Conv2d(32, masks, 1) if masks else None
        if prior:
            # ultralytics' Detect.bias_init before training: class bias log(5 / nc / (640 / stride)^2)
            # with its 80 classes at stride 8, so every score is ~1e-5 beside boxes of hundreds of pixels.
            with torch.no_grad():
                self.cls.bias.fill_(math.log(5 / 80 / (640 / 8) ** 2))

    def forward(self, x):
        f = self.body(x)
        boxes = self.box(f).flatten(2).sigmoid() * 4.0 * 75.0       # pixels: stride 8 x a 37.5-cell extent
        y = torch.cat((boxes, self.cls(f).flatten(2).sigmoid()), 1)
        return torch.cat((y, self.mc(f).flatten(2)), 1) if self.mc is not None else y


def _model(**kwargs):
    torch.manual_seed(0)
    return DetectHead(**kwargs).eval()


def _compile(model, out, **options):
    example = (torch.randn(SHAPE, generator=torch.Generator().manual_seed(0)),)
    with warnings.catch_warnings():
        # Only the warning about a collapsed part shows (the random calibration's is expected).
        warnings.filterwarnings("ignore", message="^(?!output )")
        options.setdefault("calibration", 16)
        return mcu_mlir.compile(model, example, target="host", emit="c", output_dir=str(out), **options)


def _output_row(result):
    return [r for r in result.report["quantization"]["layer_sqnr"] if r["kind"] == "output"][0]


def _fresh_inputs(count=4):
    g = torch.Generator().manual_seed(77)
    return [torch.randn(SHAPE, generator=g).numpy() for _ in range(count)]


def _c_parts_db(model, out, bounds, target="host", **run_options):
    """SQNR of each part (start, stop) of the C's output against the float model on fresh inputs;
    asserts the C equals tosa_reference_model bit for bit."""
    want, got = [], []
    for x in _fresh_inputs():
        c = run.run(out, [x], target=target, **run_options)
        ref = run.run_reference_outdir(out, [x])
        assert np.array_equal(c.outputs_q[0], ref.outputs_q[0].reshape(c.outputs_q[0].shape))
        with torch.no_grad():
            want.append(model(torch.from_numpy(x)).double().numpy())
        got.append(c.outputs_float[0].reshape(want[-1].shape).astype(np.float64))
    want, got = np.concatenate(want), np.concatenate(got)
    return [sqnr_db(want[:, lo:hi], got[:, lo:hi]) for lo, hi in bounds]


def test_a_collapsed_part_shows_in_the_report(tmp_path, monkeypatch):
    # The concat's parts sharing one int8 scale, as PT2E gives them: every score rounds to 0 or
    # one step of the boxes' (~1.2 pixels); the whole output still reads well over 40 dB.
    monkeypatch.setattr(concat_parts, "RATIO", math.inf)
    with pytest.warns(UserWarning, match=r"part \[4:10\] \(sigmoid_1, sigmoid_1\) measures 1\d\.\d dB"):
        result = _compile(_model(), tmp_path, backend="portable")
    row = _output_row(result)
    assert result.report["quantization"]["outputs"][0]["dtype"] == "int8"
    assert row["sqnr_db"] > 40, row
    boxes, scores = row["parts"]
    assert (boxes["index"], scores["index"]) == ([0, 4], [4, 10]), row
    assert boxes["sqnr_db"] > 40 and scores["sqnr_db"] < 20, row
    assert row["worst_db"] == scores["sqnr_db"] and output_sqnr([row]) == scores["sqnr_db"]
    assert "| part [4:10]" in (tmp_path / "layer_sqnr.md").read_text()
    # The C agrees: the scores are lost there too.
    assert _c_parts_db(_model(), tmp_path, [(4, 10)])[0] < 20


def _own_parts(result, k=0):
    """report.json's parts of output k as [(start, stop)], asserting the C declares the same."""
    entry = result.report["quantization"]["outputs"][k]
    assert entry["dtype"] == "int8" and entry["scale"] == 0.0, entry
    model_c = (Path(result.output_dir) / "model.c").read_text()
    for p in entry["parts"]:
        row = f"{{{k}, {entry['axis']}, {p['start']}, {p['stop']}, {p['scale']!r}f, {p['zero_point']}}}"
        assert row in model_c, (row, model_c[:2000])
    assert "MCU_MODEL_NUM_OUTPUT_PARTS" in (Path(result.output_dir) / "model.h").read_text()
    return [(p["start"], p["stop"]) for p in entry["parts"]]


@pytest.mark.parametrize("backend", ["portable", "cmsis-nn"])
@pytest.mark.parametrize("prior", [False, True], ids=["zero-bias", "prior-bias"])
def test_every_part_of_a_detect_output_is_kept(backend, prior, tmp_path):
    # With ultralytics' untrained prior the scores are ~1e-5 beside boxes of ~300 pixels: one
    # scale, even int16's, gives them 0 dB; at their own scale they are an int8 tensor of their own.
    if backend == "cmsis-nn" and not CMSIS_NN_PATH:
        pytest.skip("CMSIS_NN_PATH is not set: the CMSIS-NN backend cannot be built")
    extra = {"cmsis_nn_path": CMSIS_NN_PATH} if backend == "cmsis-nn" else {}
    model = _model(prior=prior)
    result = _compile(model, tmp_path, backend=backend, **extra)
    assert _own_parts(result) == [(0, 4), (4, 10)]
    row = _output_row(result)
    assert all(p["sqnr_db"] >= 30 for p in row["parts"]), row
    # The parts' integers are concatenated as they are: no lookup or rescale into the output.
    kernels = [op["kernel"] for op in result.report["ops"]]
    assert not any(k in kernels for k in ("portable:table_s8_s16", "portable:rescale")), kernels
    boxes, scores = _c_parts_db(model, tmp_path, [(0, 4), (4, 10)], **extra)
    assert boxes >= 30 and scores >= 30, (boxes, scores)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m4"])
def test_parts_under_qemu(target, tmp_path):
    # The prior-bias head for a Cortex-M with CMSIS-NN, under QEMU: bit-exact, every part >= 30 dB.
    missing = [t for t in ("cmake", "arm-none-eabi-gcc", "qemu-system-arm") if not shutil.which(t)]
    if missing or not CMSIS_NN_PATH:
        pytest.skip(f"{', '.join(missing) or 'CMSIS_NN_PATH'} missing: needed to build and run the C under QEMU")
    model = _model(prior=True)
    example = (torch.randn(SHAPE, generator=torch.Generator().manual_seed(0)),)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mcu_mlir.compile(model, example, target=target, backend="cmsis-nn", calibration=16, emit="c",
                                  cmsis_nn_path=CMSIS_NN_PATH, output_dir=str(tmp_path))
    assert _own_parts(result) == [(0, 4), (4, 10)]
    boxes, scores = _c_parts_db(model, tmp_path, [(0, 4), (4, 10)], target=target, cmsis_nn_path=CMSIS_NN_PATH)
    assert boxes >= 30 and scores >= 30, (boxes, scores)


def test_int16_model_keeps_parts(tmp_path):
    # --quantize int16: one int16 scale gives the prior's scores too few steps as well.
    model = _model(prior=True)
    result = _compile(model, tmp_path, backend="portable", quantize="int16")
    entry = result.report["quantization"]["outputs"][0]
    assert entry["dtype"] == "int16" and [(p["start"], p["stop"]) for p in entry["parts"]] == [(0, 4), (4, 10)]
    boxes, scores = _c_parts_db(model, tmp_path, [(0, 4), (4, 10)])
    assert boxes >= 30 and scores >= 30, (boxes, scores)


def test_parts_of_two_widths_meet_in_the_wider(tmp_path):
    # The scores' sigmoid named into int16, the boxes int8: the boxes are cast to int16 at their
    # own scale (exact) and every part keeps its parameters.
    model = _model(prior=True)
    result = _compile(model, tmp_path, backend="portable", int16_layers="sigmoid_1")
    entry = result.report["quantization"]["outputs"][0]
    assert entry["dtype"] == "int16" and len(entry["parts"]) == 2, entry
    boxes, scores = _c_parts_db(model, tmp_path, [(0, 4), (4, 10)])
    assert boxes >= 30 and scores >= 30, (boxes, scores)


def test_nested_concat_of_three_parts(tmp_path):
    # cat(cat(boxes, scores), mask coefficients): three parts, all in the int16 output.
    model = _model(masks=5)
    result = _compile(model, tmp_path, backend="portable")
    row = _output_row(result)
    assert [p["index"] for p in row["parts"]] == [[0, 4], [4, 10], [10, 15]], row
    assert _own_parts(result) == [(0, 4), (4, 10), (10, 15)]
    parts = _c_parts_db(model, tmp_path, [(0, 4), (4, 10), (10, 15)])
    assert min(parts) >= 30, parts


class LikeParts(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.b = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.cat((self.a(x), 2.0 * self.b(x)), 1)


def test_parts_of_like_ranges_stay_int8(tmp_path):
    torch.manual_seed(0)
    result = _compile(LikeParts().eval(), tmp_path, backend="portable")
    assert result.report["quantization"]["outputs"][0]["dtype"] == "int8"
    assert len(_output_row(result)["parts"]) == 2


def test_int16_auto_reads_the_worst_part(tmp_path, monkeypatch):
    # The parts sharing one int8 scale (as PT2E gives them): auto moves layers to int16 until the
    # worst part, not the whole output, clears the target.
    monkeypatch.setattr(concat_parts, "RATIO", math.inf)
    result = _compile(_model(), tmp_path, backend="portable", int16_layers="auto", target_sqnr_db=30)
    row = _output_row(result)
    assert row["worst_db"] >= 30 and row["dtype"] == "int16", row


def test_a_concat_with_ops_after_it_goes_int16(tmp_path):
    # A permute after the concat: the parts would not be slices along one dim of the output, so
    # the concat is kept in int16 (one scale, each int8 part entering through a lookup).
    class Permuted(DetectHead):
        def forward(self, x):
            return super().forward(x).permute(0, 2, 1)
    torch.manual_seed(0)
    model = Permuted().eval()
    result = _compile(model, tmp_path, backend="portable")
    entry = result.report["quantization"]["outputs"][0]
    assert entry["dtype"] == "int16" and "parts" not in entry, entry
    assert all(p["sqnr_db"] >= 30 for p in _output_row(result)["parts"])


def test_sqnr_is_measured_on_held_out_samples(tmp_path):
    # Real data of 12 samples: the last 3 measure, the first 9 calibrate.
    g = torch.Generator().manual_seed(5)
    data = [torch.randn(SHAPE, generator=g) for _ in range(12)]
    result = _compile(_model(prior=True), tmp_path, backend="portable", calibration=data)
    assert result.report["quantization"]["sqnr_measured_on"].startswith("the last 3 samples"), result.report


class PoseHead(DetectHead):
    """ultralytics' Pose head in export mode: 3 keypoints of (x, y in pixels, sigmoid visibility),
    cat on a dim of their own and viewed as one channel per coordinate, after boxes and scores."""

    def __init__(self):
        super().__init__(classes=1)
        self.kpt = torch.nn.Conv2d(32, 9, 1)

    def forward(self, x):
        f = self.body(x)
        k = self.kpt(f).flatten(2).view(1, 3, 3, -1)
        kpts = torch.cat((k[:, :, :2] * 2.0 * 32.0, k[:, :, 2:3].sigmoid()), 2).view(1, 9, -1)
        return torch.cat((super().forward(x), kpts), 1)


def test_a_part_that_is_a_concat_of_wide_parts_goes_int16(tmp_path):
    # The keypoints' concat sits behind a view: one int8 scale gave the visibilities ~24 dB (as in
    # YOLOv8n-pose); in int16 each keeps its resolution.
    torch.manual_seed(0)
    model = PoseHead().eval()
    result = _compile(model, tmp_path, backend="portable")
    entry = result.report["quantization"]["outputs"][0]
    assert entry["dtype"] == "int16", entry
    visibility = [(c, c + 1) for c in range(5 + 2, 14, 3)]
    parts = _c_parts_db(model, tmp_path, [(0, 4), (4, 5), (5, 14)] + visibility)
    assert min(parts) >= 30, parts

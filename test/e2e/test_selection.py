"""Data-dependent selection (frontend/lowering/selection.py): topk, sort / argsort, max(dim) with its
indices, gathers at the selected indices, `//` and `%` of them, and the indices as floats (YOLO26's
NMS-free head). Checked three ways: the C equals tosa_reference_model bit for bit; the selection
equals numpy's stable sort of the C's own input integers (the integer program's meaning); values
and indices match the float model within quantization."""

from __future__ import annotations

import math
import os
import shutil
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mcu_mlir  # noqa: E402
from mcu_mlir.diagnostics import UserError  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402
from mcu_mlir.frontend.quantize.layer_sqnr import sqnr_db  # noqa: E402

CMSIS_NN_PATH = os.environ.get("CMSIS_NN_PATH")


class Selections(torch.nn.Module):
    """Every selection op on one vector of 12 values: sorted both ways, top-k, max(dim), a gather."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 12)

    def forward(self, x):
        v = self.fc(x)
        s, order = v.sort(dim=1, descending=True)
        low, low_at = v.topk(5, dim=1, largest=False)
        rising = v.argsort(dim=1, stable=True)
        best, best_at = v.view(1, 3, 4).max(dim=2)
        return v, s, order.float(), low, low_at.float(), rising.float(), best, best_at.float(), v.gather(1, order)


class NmsFreeHead(torch.nn.Module):
    """A conv body and YOLO26's NMS-free head, as ultralytics' Detect.postprocess writes it: the top
    k anchors by their best class score, the top k (anchor, class) pairs among them, boxes gathered."""

    def __init__(self, classes: int = 6, k: int = 10, prior: bool = False):
        super().__init__()
        self.nc, self.k = classes, k
        self.body = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, 2, 1), torch.nn.SiLU(),
                                        torch.nn.Conv2d(16, 16, 3, 2, 1), torch.nn.SiLU())
        self.box = torch.nn.Conv2d(16, 4, 1)
        self.cls = torch.nn.Conv2d(16, classes, 1)
        if prior:   # ultralytics' untrained class bias at stride 8: scores ~1e-5 beside boxes of ~30 px
            with torch.no_grad():
                self.cls.bias.fill_(math.log(5 / 80 / (640 / 8) ** 2))

    def forward(self, x):
        f = self.body(x)
        boxes = self.box(f).flatten(2).sigmoid() * 64.0
        preds = torch.cat((boxes, self.cls(f).flatten(2).sigmoid()), 1).permute(0, 2, 1)
        boxes, scores = preds.split([4, self.nc], dim=-1)
        anchors = scores.max(dim=-1)[0].topk(self.k, dim=1)[1]
        scores = scores.gather(1, anchors[..., None].expand(-1, -1, self.nc))
        scores, pair = scores.flatten(1).topk(self.k, dim=1)
        at = anchors.gather(1, pair // self.nc)
        return torch.cat([boxes.gather(1, at[..., None].expand(-1, -1, 4)), scores[..., None],
                          (pair % self.nc)[..., None].float()], dim=-1)


def _compile(model, shape, out, **options):
    g = torch.Generator().manual_seed(0)
    calibration = [torch.randn(shape, generator=g) for _ in range(16)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        options.setdefault("target", "host")
        options.setdefault("backend", "portable")
        return mcu_mlir.compile(model, (calibration[0],), calibration=calibration, emit="c",
                                output_dir=str(out), **options)


def _fresh(shape, count):
    g = torch.Generator().manual_seed(77)
    return [torch.randn(shape, generator=g).numpy() for _ in range(count)]


def _run_exact(out, x, **options):
    c = run.run(out, [x], **options)
    ref = run.run_reference_outdir(out, [x])
    for got, want in zip(c.outputs_q, ref.outputs_q):
        assert np.array_equal(got, want.reshape(got.shape))
    return c


def test_selections_are_the_stable_order_of_the_integers(tmp_path):
    torch.manual_seed(0)
    model = Selections().eval()
    _compile(model, (1, 16), tmp_path)
    for x in _fresh((1, 16), 3):
        c = _run_exact(tmp_path, x)
        q = [o.reshape(-1) for o in c.outputs_q]
        v = q[0].astype(np.int64)
        floats = [o.reshape(-1) for o in c.outputs_float]
        order, low_at, rising, best_at = floats[2], floats[4], floats[5], floats[7]
        # The values selected are their input's integers, at its parameters.
        descending = np.argsort(-v, kind="stable")
        assert np.array_equal(order, descending) and np.array_equal(q[1], v[descending])
        ascending = np.argsort(v, kind="stable")
        assert np.array_equal(low_at, ascending[:5]) and np.array_equal(q[3], v[ascending[:5]])
        assert np.array_equal(rising, ascending)
        rows = v.reshape(3, 4)
        assert np.array_equal(best_at, rows.argmax(1)) and np.array_equal(q[6], rows.max(1))
        assert np.array_equal(q[8], v[descending])
        # Against float: the sorted values within quantization, the order where the float values
        # are more than two int8 steps apart.
        with torch.no_grad():
            want = [t.numpy().reshape(-1) for t in model(torch.from_numpy(x))]
        assert sqnr_db(want[1], floats[1]) > 30
        step = (want[0].max() - want[0].min()) / 255
        gaps = np.diff(want[1])
        clear = np.concatenate([[True], gaps < -2 * step]) & np.concatenate([gaps < -2 * step, [True]])
        assert np.array_equal(floats[2][clear], want[2][clear])


@pytest.mark.parametrize("prior", [False, True], ids=["zero-bias", "prior-bias"])
def test_nms_free_head(prior, tmp_path):
    # The concat the head splits back into boxes and scores is read part by part
    # (frontend/graph/concat_split.py): with one scale the prior's scores were all 0 (0 dB).
    torch.manual_seed(0)
    model = NmsFreeHead(prior=prior).eval()
    result = _compile(model, (1, 3, 32, 32), tmp_path)
    parts = result.report["quantization"]["outputs"][0]["parts"]
    assert [(p["start"], p["stop"]) for p in parts] == [(0, 4), (4, 5), (5, 6)]
    assert (parts[2]["scale"], parts[2]["zero_point"]) == (1.0, -128)     # class indices exact
    want, got = [], []
    for x in _fresh((1, 3, 32, 32), 3):
        c = _run_exact(tmp_path, x)
        with torch.no_grad():
            want.append(model(torch.from_numpy(x)).numpy())
        got.append(c.outputs_float[0].reshape(want[-1].shape))
        classes = got[-1][0, :, 5]
        assert np.array_equal(classes, np.round(classes)) and classes.min() >= 0 and classes.max() < 6
        # The scores come out sorted, as topk gives them.
        assert np.all(np.diff(got[-1][0, :, 4]) <= 0)
    want, got = np.concatenate(want), np.concatenate(got)
    assert sqnr_db(want[..., 4], got[..., 4]) > 30


def test_nms_free_head_under_qemu(tmp_path):
    missing = [t for t in ("cmake", "arm-none-eabi-gcc", "qemu-system-arm") if not shutil.which(t)]
    if missing or not CMSIS_NN_PATH:
        pytest.skip(f"{', '.join(missing) or 'CMSIS_NN_PATH'} missing: needed to build and run the C under QEMU")
    torch.manual_seed(0)
    _compile(NmsFreeHead().eval(), (1, 3, 32, 32), tmp_path, target="cortex-m55", backend="cmsis-nn",
             cmsis_nn_path=CMSIS_NN_PATH)
    _run_exact(tmp_path, _fresh((1, 3, 32, 32), 1)[0], target="cortex-m55", cmsis_nn_path=CMSIS_NN_PATH)


def test_topk_of_int16_is_refused(tmp_path):
    torch.manual_seed(0)
    with pytest.raises(UserError, match=r"top-k / sort of an i16 tensor"):
        _compile(Selections().eval(), (1, 16), tmp_path, quantize="int16")

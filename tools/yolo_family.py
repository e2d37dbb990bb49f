"""The YOLO family from ultralytics' own yaml at microcontroller input sizes: each model built as
ultralytics builds it (seeded random weights, its own initialisation with the Detect head's prior
bias), exported as ultralytics exports it (`export=True`: decoded boxes in pixels beside sigmoid
scores; YOLO26's NMS-free head ends in top-k and gathers), compiled, and measured part by part.

Per model, size and core: per output part (boxes, class scores, mask coefficients, prototypes,
keypoints, ...) the SQNR of the C's output against the float model on fresh inputs (never the
calibration set); whether the C equals tosa_reference_model bit for bit (host: every fresh input;
under QEMU: `--qemu-inputs`); instructions per inference under QEMU. Figures, not pass / fail:
docs/Frontend.md quotes them.

Usage: python tools/yolo_family.py [--models v8n,11n,26n,26n-one2one,v8n-seg,v8n-pose] [--sizes 64,160]
       [--targets host,cortex-m55,cortex-m4] [--inputs 4] [--qemu-inputs 1] [--json F]
ultralytics is not a dependency: install it apart (`pip install --no-deps --target DIR ultralytics`) and
point ULTRALYTICS_PATH (or PYTHONPATH) at DIR. Its optional imports (cv2, matplotlib, ...) are stubbed:
building a model from its yaml reads none of them.
"""

from __future__ import annotations

import argparse
import copy
import importlib.abc
import importlib.machinery
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path
from unittest import mock

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

# model name: (yaml, task model class, output parts per output as (name, dim, start, stop); a stop
# of None runs to the end; nc / nm / nk follow ultralytics' yaml defaults).
MODELS = {
    "v8n": ("yolov8n.yaml", "DetectionModel", [[("boxes", 1, 0, 4), ("scores", 1, 4, None)]]),
    "11n": ("yolo11n.yaml", "DetectionModel", [[("boxes", 1, 0, 4), ("scores", 1, 4, None)]]),
    "26n": ("yolo26n.yaml", "DetectionModel",
            [[("boxes", 2, 0, 4), ("score", 2, 4, 5), ("class", 2, 5, 6)]]),
    # YOLO26's NMS-free head before its top-k: what the selection reads.
    "26n-one2one": ("yolo26n.yaml", "DetectionModel", [[("boxes", 2, 0, None)], [("scores", 2, 0, None)]]),
    "v8n-seg": ("yolov8n-seg.yaml", "SegmentationModel",
                [[("boxes", 1, 0, 4), ("scores", 1, 4, 84), ("mask coefficients", 1, 84, None)],
                 [("prototypes", 1, 0, None)]]),
    "v8n-pose": ("yolov8n-pose.yaml", "PoseModel",
                 [[("boxes", 1, 0, 4), ("score", 1, 4, 5), ("keypoints xy", 1, "kxy", None),
                   ("keypoints visibility", 1, "kv", None)]]),
}
_OPTIONAL = {"cv2", "polars", "matplotlib", "psutil", "requests", "cpuinfo", "seaborn", "thop",
             "ultralytics_thop", "scipy"}


class _Stubs(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Empty modules for ultralytics' optional imports, which building from a yaml never calls."""

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in _OPTIONAL:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = mock.MagicMock()
        module.__path__, module.__spec__, module.__name__ = [], spec, spec.name
        module.__version__, module.__file__ = "4.10.0", "stub"
        return module

    def exec_module(self, module):
        pass


def build(name: str, seed: int = 0):
    """The model as ultralytics builds it from its yaml (its initialise_weights and Detect.bias_init
    run in the constructor), in export mode."""
    if os.environ.get("ULTRALYTICS_PATH"):
        sys.path.insert(0, os.environ["ULTRALYTICS_PATH"])
    if not any(isinstance(f, _Stubs) for f in sys.meta_path):
        sys.meta_path.insert(0, _Stubs())
    import torch
    from ultralytics.nn import tasks

    yaml, cls, _ = MODELS[name]
    torch.manual_seed(seed)
    model = getattr(tasks, cls)(yaml, verbose=False).eval()
    for module in model.modules():
        if hasattr(module, "export"):
            module.export = True
            module.format = "tflite"    # fixed anchors: no shape-dependent branch in the graph
    if name.startswith("26"):
        model.end2end = True    # the NMS-free head, as ultralytics exports it with nms=False
    if name == "26n-one2one":
        head = model.model[-1]
        head.postprocess = lambda preds: preds.split([4, head.nc], dim=-1)    # as postprocess splits them
    return model


def part_slices(name: str, outputs) -> list[list[tuple[str, tuple]]]:
    """Per output: (part name, index tuple) of each part, read off the float outputs' shapes."""
    result = []
    for k, parts in enumerate(MODELS[name][2]):
        shape = outputs[k].shape
        rows = []
        for label, dim, start, stop in parts:
            if start in ("kxy", "kv"):      # 17 keypoints x (x, y, visibility) after box and score
                channels = np.arange(5, shape[1])
                pick = channels[(channels - 5) % 3 < 2] if start == "kxy" else channels[(channels - 5) % 3 == 2]
                index = (slice(None), pick)
            else:
                index = (slice(None),) * dim + (slice(start, stop),)
            rows.append((label, index))
        result.append(rows)
    return result


def _float_outputs(model, x):
    import torch
    with torch.no_grad():
        y = model(torch.from_numpy(x))
    flat = y if isinstance(y, (tuple, list)) else (y,)
    out = []
    for t in flat:      # the seg model's (outputs, proto)
        out.extend(t if isinstance(t, (tuple, list)) else (t,))
    return [np.asarray(t.detach().tolist(), np.float64) for t in out]


def _sqnr(want, got) -> float:
    noise = float(np.sum((want - got) ** 2))
    signal = float(np.sum(want ** 2))
    return float("inf") if noise == 0 else 10 * np.log10(max(signal, 1e-30) / noise)


def _same_detections(want, got) -> float:
    """The share of ranks where the C's detection is the float model's: the same class and every box
    coordinate within 1 % of the largest. Scores a quantization step apart can swap ranks (ties in
    int8), and a swapped rank's box is another anchor's: per-part SQNR in rank order counts that as noise."""
    same = (want[..., 5] == got[..., 5]) & \
        (np.abs(want[..., :4] - got[..., :4]).max(-1) <= 0.01 * np.abs(want[..., :4]).max())
    return round(float(same.mean()), 3)


def measure(name: str, size: int, targets: list[str], inputs: int, qemu_inputs: int, workdir: Path,
            calibration: int = 16) -> list[dict]:
    import torch
    import mcu_mlir
    from mcu_mlir.firmware import run

    model = build(name)
    shape = (1, 3, size, size)
    g = torch.Generator().manual_seed(1)
    calib = [torch.rand(shape, generator=g) for _ in range(calibration)]
    fresh = [torch.rand(shape, generator=torch.Generator().manual_seed(1000 + i)).numpy() for i in range(inputs)]
    cmsis = os.environ.get("CMSIS_NN_PATH")
    rows = []
    for target in targets:
        out = workdir / f"{name}-{size}-{target}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # A copy: tracing leaves ultralytics' cached anchors as traced tensors on the module.
            mcu_mlir.compile(copy.deepcopy(model), (calib[0],), target=target, backend="cmsis-nn" if cmsis else "portable",
                             cmsis_nn_path=cmsis, calibration=calib, emit="c", output_dir=str(out))
        on_qemu = target != "host"
        count = qemu_inputs if on_qemu else inputs
        want, got, exact, instructions = [], [], True, None
        for x in fresh[:count]:
            c = run.run(out, [x], target=target, cmsis_nn_path=cmsis, count_instructions=on_qemu)
            ref = run.run_reference_outdir(out, [x])
            exact &= all(np.array_equal(a, b.reshape(a.shape)) for a, b in zip(c.outputs_q, ref.outputs_q))
            instructions = (c.instructions or {}).get("total", instructions)
            floats = _float_outputs(model, x)
            want.append(floats)
            got.append([o.reshape(f.shape).astype(np.float64) for o, f in zip(c.outputs_float, floats)])
        parts = {}
        for k, rows_k in enumerate(part_slices(name, want[0])):
            w = np.concatenate([s[k] for s in want])
            c = np.concatenate([s[k] for s in got])
            for label, index in rows_k:
                parts[label] = round(_sqnr(w[index], c[index]), 1)
        row = {"model": name, "size": size, "target": target, "parts_db": parts, "bit_exact": exact,
               "inputs": count, "instructions": instructions}
        if name == "26n":
            row["same_detection"] = _same_detections(np.concatenate([s[0] for s in want]),
                                                     np.concatenate([s[0] for s in got]))
        rows.append(row)
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--sizes", default="64")
    parser.add_argument("--targets", default="host")
    parser.add_argument("--inputs", type=int, default=4, help="fresh inputs measured on the host")
    parser.add_argument("--qemu-inputs", type=int, default=1, help="fresh inputs run under QEMU")
    parser.add_argument("--workdir", help="keep the builds here (default: a temporary directory)")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(args.workdir or tmp)
        for name in args.models.split(","):
            for size in (int(s) for s in args.sizes.split(",")):
                rows += measure(name, size, args.targets.split(","), args.inputs, args.qemu_inputs, workdir)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

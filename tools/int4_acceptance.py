"""int4's acceptance set (issue 40) with `--int4-layers auto --target-sqnr 30`, per model: conv /
linear weight bytes in int8 and in int4 (packed), all constants (report.json's weights_bytes),
int4 layers of all, every int4 layer on an s4 CMSIS-NN kernel, the C's SQNR against float pooled
over fresh inputs (the digits model: accuracy on its held-out 30 % against float), the C bit-exact
with tosa_reference_model on the host and, with --qemu, under QEMU on Cortex-M55 and M4 with
instructions against the int8 model.

    python tools/int4_acceptance.py [MODEL ...] [--qemu ds_cnn,sww] [--weights-int4] [--json rows.jsonl]

Calibration: 32 random inputs (seeds 2-33) for random-weight models, 64 training images for
digits. The QEMU builds take the layers auto chose on the host by name (`int4_layers=[...]`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "python"))

from mcu_mlir import cpu_paths  # noqa: E402

cpu_paths.pin()

ZOO = ("ds_cnn", "resnet8", "autoencoder", "mobilenet_v2")      # KWS, IC, AD of MLPerf Tiny; the zoo's MobileNetV2
MLPERF_EXTRA = ("vww", "sww")                                    # tools/int4_models.py
PUBLIC = ("tv_mobilenet_v2_035", "tv_mobilenet_v3_small_050", "tv_shufflenet_v2_x0_5", "tv_squeezenet1_1",
          "timm_resnet10t", "timm_regnetx_002", "timm_lcnet_050", "hf_mobilenet_v1_025",
          "hf_levit_small_config", "hf_segformer_small_config")
DEFAULT = ZOO + MLPERF_EXTRA + ("digits",) + PUBLIC
SQNR_INPUTS = 16
EXACT_INPUTS = 2


class Spec:
    """A model of the set: the module, its example inputs, fresh inputs by seed, calibration."""

    def __init__(self, name: str):
        import torch
        self.name = name
        if name in ZOO:
            from mcu_mlir import zoo
            self.model, _ = zoo.get(name)
            self.sample = lambda seed: zoo.example_inputs(name, seed=seed)
        elif name in MLPERF_EXTRA or name == "digits":
            import int4_models
            self.model = getattr(int4_models, name)()
            shapes = int4_models.INPUTS[name]
            self.sample = lambda seed: tuple(torch.randn(s, generator=torch.Generator().manual_seed(seed))
                                             for s in shapes)
        else:
            import public_models
            entry = public_models.MODELS[name]
            self.model = entry.model()
            self.sample = lambda seed: tuple(entry.samples(seed))
        self.example = self.sample(0)
        self.calibration = [self.sample(s) for s in range(2, 34)]
        self.test = None
        if name == "digits":
            import int4_models
            xtr, _, xte, yte = int4_models.digits_split()
            self.calibration = [(torch.from_numpy(xtr[i:i + 1]),) for i in range(64)]
            self.example = self.calibration[0]
            self.test = (xte, yte)
            self.sample = lambda seed: (torch.from_numpy(xte[seed % len(xte):seed % len(xte) + 1]),)

    def float_out(self, inputs) -> np.ndarray:
        import torch
        with torch.no_grad():
            y = self.model(*inputs)
        y = y[0] if isinstance(y, (tuple, list)) else y
        return y.numpy().astype(np.float64).reshape(-1)


def _compile(spec: Spec, out: str, target: str, **options):
    import mcu_mlir
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mcu_mlir.compile(spec.model, spec.example, target=target, emit="c", calibration=spec.calibration,
                                output_dir=out, **options)


def s4_check(report: dict) -> list[str]:
    """Kernels of int4 layers that are not s4 CMSIS-NN kernels ("name: kernel (note)")."""
    int4 = {e["name"] for e in report["quantization"]["int4"]["layers"] if e["weights"] == "int4"}
    bad = []
    for op in report["ops"]:
        if op.get("name") in int4 and "conv2d" in op.get("tosa_op", "") and not op["kernel"].endswith("_s4") and \
                not op["kernel"].startswith(("arm_convolve_wrapper_s4", "arm_depthwise_conv_wrapper_s4")):
            bad.append(f"{op['name']}: {op['kernel']}" + (f" ({op['kernel_note']})" if op.get("kernel_note") else ""))
    return bad


def _inputs_np(inputs) -> list[np.ndarray]:
    return [t.numpy() for t in inputs]


def host_figures(spec: Spec, out: str, row: dict) -> None:
    from mcu_mlir.firmware import build as build_mod
    from mcu_mlir.firmware import run as target_run
    from mcu_mlir.frontend.quantize.layer_sqnr import sqnr_db
    exe = build_mod.build(out, target="host", cmsis_nn_path=os.environ.get("CMSIS_NN_PATH"))
    exact = True
    for seed in range(100, 100 + EXACT_INPUTS):
        x = _inputs_np(spec.sample(seed))
        c = target_run.run_executable(exe, out, x, target="host")
        ref = target_run.run_reference_outdir(out, x)
        exact &= all(np.array_equal(a, b) for a, b in zip(c.outputs_q, ref.outputs_q))
    row["bit_exact_host"] = exact
    if spec.test is not None:
        xte, yte = spec.test
        got = [int(np.argmax(target_run.run_executable(exe, out, [xte[i:i + 1]], target="host").outputs_float[0]))
               for i in range(len(yte))]
        import torch
        with torch.no_grad():
            want = spec.model(torch.from_numpy(xte)).argmax(1).numpy()
        row.update(accuracy=round(float(np.mean(np.array(got) == yte)) * 100, 2),
                   float_accuracy=round(float(np.mean(want == yte)) * 100, 2))
    wants, gots = [], []
    for seed in range(200, 200 + SQNR_INPUTS):
        x = spec.sample(seed)
        wants.append(spec.float_out(x))
        gots.append(np.asarray(target_run.run_executable(exe, out, _inputs_np(x), target="host").outputs_float[0],
                               np.float64).reshape(-1))
    row["sqnr_db"] = round(sqnr_db(np.concatenate(wants), np.concatenate(gots)), 2)


def qemu_figures(spec: Spec, workdir: str, target: str, int4_nodes: list[str], row: dict) -> None:
    """Bit-exact under QEMU on `target` and instructions of the int4 model against int8's."""
    from mcu_mlir.firmware import run as target_run
    x = _inputs_np(spec.sample(100))
    counts = {}
    for label, options in (("int8", {}), ("int4", {"int4_layers": int4_nodes} if int4_nodes else {})):
        out = os.path.join(workdir, f"{target}-{label}")
        result = _compile(spec, out, target, **options)
        c = target_run.run(out, x, target=target, count_instructions=True, timeout=600)
        counts[label] = c.instructions.get("total") if isinstance(c.instructions, dict) else None
        if label == "int4":
            ref = target_run.run_reference_outdir(out, x)
            row[f"bit_exact_{target}"] = all(np.array_equal(a, b) for a, b in zip(c.outputs_q, ref.outputs_q))
            row[f"weights_bytes_{target}"] = result.report["weights_bytes"]
        else:
            row[f"int8_weights_bytes_{target}"] = result.report["weights_bytes"]
    row[f"instructions_{target}"] = counts


def measure(name: str, target_db: float, qemu: bool, workdir: str, every_layer: bool = False) -> dict:
    """One row; `every_layer`: --weights int4 instead of auto."""
    t0 = time.perf_counter()
    spec = Spec(name)
    row = {"model": name, "mode": "int4" if every_layer else "auto"}
    out = os.path.join(workdir, name, "host")
    options = {"weights": "int4"} if every_layer else {"int4_layers": "auto", "target_sqnr_db": target_db}
    try:
        result = _compile(spec, out, "host", **options)
    except Exception as e:  # noqa: BLE001 - a benchmark row records the failure and goes on
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        return row
    report = result.report
    int4 = report["quantization"]["int4"]
    row.update(int8_weight_bytes=int4["int8_weight_bytes"], int4_weight_bytes=int4["weight_bytes"],
               ratio=round(int4["weight_bytes"] / max(int4["int8_weight_bytes"], 1), 3),
               int4_layers=int4["int4_layers"], layers=len(int4["layers"]), auto_sqnr_db=int4.get("output_sqnr_db"),
               weights_bytes=report["weights_bytes"], not_s4=s4_check(report),
               portable=sorted({op["kernel"] for op in report["ops"] if op["kernel"].startswith("portable:")}))
    try:
        host_figures(spec, out, row)
    except Exception as e:  # noqa: BLE001
        row["host_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    nodes = [e["node"] for e in int4["layers"] if e["weights"] == "int4"]
    for target in (("cortex-m55", "cortex-m4") if qemu else ()):
        try:
            qemu_figures(spec, os.path.join(workdir, name), target, nodes, row)
        except Exception as e:  # noqa: BLE001
            row[f"{target}_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    row["seconds"] = round(time.perf_counter() - t0, 1)
    return row


def _yes(v) -> str:
    return "-" if v is None else ("yes" if v else "**no**")


def markdown(rows: list[dict]) -> str:
    lines = ["| model | int8 weights | int4 auto weights (ratio) | all constants | SQNR | int4 layers | all on s4 | "
             "bit-exact host / M55 / M4 | instructions M55 int4 / int8 | M4 int4 / int8 |", "|" + "---|" * 10]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['error']} |" + " |" * 8)
            continue
        quality = f"{r.get('sqnr_db', '-')} dB"
        if "accuracy" in r:
            quality += f"; accuracy {r['accuracy']} % (float {r['float_accuracy']} %)"
        instr = []
        for t in ("cortex-m55", "cortex-m4"):
            c = r.get(f"instructions_{t}")
            instr.append(f"{c['int4']:,} / {c['int8']:,} ({c['int4'] / c['int8']:.2f}x)"
                         if c and c.get("int4") and c.get("int8") else "-")
        model = r["model"] + (" (`--weights int4`)" if r.get("mode") == "int4" else "")
        lines.append(f"| {model} | {r['int8_weight_bytes']:,} | {r['int4_weight_bytes']:,} ({r['ratio']:.2f}x) | "
                     f"{r['weights_bytes']:,} | {quality} | {r['int4_layers']} / {r['layers']} | "
                     f"{'yes' if not r['not_s4'] else 'no: ' + '; '.join(r['not_s4'][:3])} | "
                     f"{_yes(r.get('bit_exact_host'))} / {_yes(r.get('bit_exact_cortex-m55'))} / "
                     f"{_yes(r.get('bit_exact_cortex-m4'))} | {instr[0]} | {instr[1]} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", default=list(DEFAULT))
    p.add_argument("--target-sqnr", type=float, default=30.0)
    p.add_argument("--qemu", default="", help="comma-separated models also built and run on Cortex-M55 and M4")
    p.add_argument("--weights-int4", action="store_true", help="--weights int4 (every layer) instead of auto")
    p.add_argument("--json", help="append each row (one JSON object a line) to this file")
    p.add_argument("--workdir", help="keep the compiled models here (default: a temporary directory)")
    p.add_argument("--table", help="print the table of the rows in this .jsonl file (no compiling)")
    args = p.parse_args(argv)
    if args.table:
        print(markdown([json.loads(line) for line in open(args.table) if line.strip()]))
        return 0
    qemu = set(filter(None, args.qemu.split(",")))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            row = measure(name, args.target_sqnr, name in qemu, args.workdir or tmp, args.weights_int4)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(row) + "\n")
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

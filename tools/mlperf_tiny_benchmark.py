"""The MLPerf Tiny benchmark against TFLite Micro: the five trained int8 `.tflite` models compiled by
us, counted under QEMU, beside TFLM's figures for the same files (docs/peers.md).

Per model and core: our instructions per inference, the ratio to TFLM's Invoke, arena and flash
against TFLM's, and whether our outputs equal TFLM's interpreter (PyPI `tflite-micro`, its reference
kernels) on the same input. `--layers` adds the per-layer split (kernel, instructions). Figures, not
pass / fail: the speed work of issue 38 is measured with it.

Usage: python tools/mlperf_tiny_benchmark.py [--models kws,vww,ic,ad,sww] [--targets cortex-m4,cortex-m55]
       [--backend cmsis-nn|portable] [--kernels auto|cmsis-nn|generated] [--layers] [--json F]
The models come from MCU_MLPERF_TINY_DIR (default ../shared/models/mlperf_tiny beside the checkout).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

MODELS = {"kws": "kws_ref_model.tflite", "vww": "vww_96_int8.tflite", "ic": "pretrainedResnet_quant.tflite",
          "ad": "ad01_int8.tflite", "sww": "str_ww_ref_model.tflite"}
# TFLM 90b983c2 with kernels/cmsis_nn, -O2, the same QEMU, plugin and libcmsis-nn.a (docs/peers.md):
# (Invoke instructions, arena_used_bytes, flash bytes) per model and core.
TFLM = {
    ("kws", "cortex-m4"): (7_844_047, 22_820, 166_648), ("vww", "cortex-m4"): (24_720_944, 100_708, 476_652),
    ("ic", "cortex-m4"): (29_874_336, 54_996, 210_608), ("ad", "cortex-m4"): (582_510, 2_580, 329_232),
    ("sww", "cortex-m4"): (2_226_118, 16_596, 184_488),
    ("kws", "cortex-m3"): (10_544_120, 22_820, 152_072), ("vww", "cortex-m3"): (32_083_892, 100_708, 461_980),
    ("ic", "cortex-m3"): (41_758_539, 54_980, 196_432), ("ad", "cortex-m3"): (956_110, 2_580, 323_856),
    ("sww", "cortex-m3"): (4_265_240, 15_300, 169_960),
    ("kws", "cortex-m55"): (1_774_723, 27_300, 154_300), ("vww", "cortex-m55"): (6_400_125, 100_756, 464_308),
    ("ic", "cortex-m55"): (4_791_204, 54_996, 197_908), ("ad", "cortex-m55"): (287_991, 5_172, 321_660),
    ("sww", "cortex-m55"): (408_812, 19_940, 171_468),
}


def models_dir() -> Path:
    return Path(os.environ.get("MCU_MLPERF_TINY_DIR", ROOT.parent / "shared" / "models" / "mlperf_tiny"))


def measure(name: str, target: str, backend: str, workdir: Path, kernels: str = "auto") -> dict:
    """Compile one model for one core, run one random input under QEMU with the counter, and the
    same input in TFLM's interpreter on the host."""
    import mcu_mlir
    from mcu_mlir.firmware.run import run as run_firmware
    from tflite_micro.python.tflite_micro import runtime

    model = (models_dir() / MODELS[name]).read_bytes()
    out = workdir / f"{name}-{target}-{backend}"
    report = mcu_mlir.compile(str(models_dir() / MODELS[name]), output_dir=str(out), target=target,
                              backend=backend, kernels=kernels, emit="elf").report
    interpreter = runtime.Interpreter.from_bytes(model, arena_size=2_000_000)
    rng = np.random.default_rng(0)
    xs = []
    for i in range(len(report["quantization"]["inputs"])):
        detail = interpreter.get_input_details(i)
        info = np.iinfo(detail["dtype"])
        xs.append(rng.integers(info.min, info.max + 1, size=tuple(detail["shape"])).astype(detail["dtype"]))
        interpreter.set_input(xs[-1], i)
    interpreter.invoke()
    fw = run_firmware(out, xs, target=target, count_instructions=True)
    exact = all(np.array_equal(got.reshape(-1), interpreter.get_output(i).reshape(-1))
                for i, got in enumerate(fw.outputs_q))
    ins = fw.instructions or {}
    tflm = TFLM.get((name, target), (None, None, None))
    return {"model": name, "target": target, "backend": backend, "instructions": ins.get("total"),
            "arena": report.get("arena_bytes"), "flash": report.get("flash_bytes"), "exact": exact,
            "tflm_instructions": tflm[0], "tflm_arena": tflm[1], "tflm_flash": tflm[2],
            "layers": [{"name": layer["name"], "kernel": layer.get("kernel", "?"),
                        "instructions": layer["instructions"]} for layer in ins.get("layers", [])]}


def _ratio(ours, theirs) -> str:
    return f"{ours / theirs:.3f}" if ours and theirs else "-"


def _count(value) -> str:
    return f"{value:,}" if isinstance(value, int) else "-"


def print_table(rows: list[dict], layers: bool) -> None:
    print("| model | core | backend | ours instr | TFLM instr | ours/TFLM | arena B (TFLM) | flash B (TFLM) | "
          "= TFLM interpreter |")
    print("|---|---|---|--:|--:|--:|--:|--:|:-:|")
    for r in rows:
        print(f"| {r['model']} | {r['target']} | {r['backend']} | {_count(r['instructions'])} | "
              f"{_count(r['tflm_instructions'])} | {_ratio(r['instructions'], r['tflm_instructions'])} | "
              f"{_count(r['arena'])} ({_count(r['tflm_arena'])}) | {_count(r['flash'])} ({_count(r['tflm_flash'])}) | "
              f"{'yes' if r['exact'] else 'NO'} |")
    if not layers:
        return
    for r in rows:
        print(f"\n{r['model']} on {r['target']} ({r['backend']}): per layer")
        for layer in r["layers"]:
            share = layer["instructions"] / r["instructions"] if r["instructions"] else 0
            print(f"  {layer['instructions']:>12,}  {share:6.1%}  {layer['kernel']:<40} {layer['name'][:60]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS), help="of: " + ", ".join(MODELS))
    parser.add_argument("--targets", default="cortex-m4,cortex-m55")
    parser.add_argument("--backend", default="cmsis-nn", choices=("cmsis-nn", "portable"))
    parser.add_argument("--kernels", default="auto", choices=("auto", "cmsis-nn", "generated"),
                        help="generated kernels (mcu-compile --kernels); cmsis-nn: the library everywhere")
    parser.add_argument("--layers", action="store_true", help="also the per-layer split")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args(argv)
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; the models are {', '.join(MODELS)}")
    if not models_dir().is_dir():
        print(f"the MLPerf Tiny models are not at {models_dir()} (set MCU_MLPERF_TINY_DIR)", file=sys.stderr)
        return 1
    rows = []
    with tempfile.TemporaryDirectory(prefix="mcu-mlperf-") as tmp:
        for name in names:
            for target in args.targets.split(","):
                rows.append(measure(name, target, args.backend, Path(tmp), args.kernels))
                print(f"{name} {target}: {_count(rows[-1]['instructions'])} instructions", file=sys.stderr)
    print_table(rows, args.layers)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

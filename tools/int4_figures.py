"""docs/int4.md's figures: zoo models compiled with int8 weights, --weights int4 and
--int4-layers auto --target-sqnr 30: conv / linear weight bytes (int4 packed two a byte), the
output's SQNR against the float model (16 held-out random inputs) and which layers auto took.

    python tools/int4_figures.py [MODEL ...] [--emit tosa|c] [--target-sqnr 30]

Calibration: 32 random inputs of the zoo's example shape (seeds 2-33), as the zoo's tests do.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings

from mcu_mlir import cpu_paths

cpu_paths.pin()

DEFAULT_MODELS = ("ds_cnn", "resnet8", "mobilenet_v2", "autoencoder")


def _output_sqnr(result) -> float:
    rows = result.report["quantization"]["layer_sqnr"]
    return min(r["sqnr_db"] for r in rows if r["kind"] == "output")


def measure(name: str, emit: str, target_db: float, only=("int8", "int4", "auto")) -> dict:
    import mcu_mlir
    from mcu_mlir import zoo
    model, example = zoo.get(name)
    calibration = [zoo.example_inputs(name, seed=s) for s in range(2, 34)]
    figures = {"model": name}
    runs = (("int8", {}), ("int4", {"weights": "int4"}),
            ("auto", {"int4_layers": "auto", "target_sqnr_db": target_db}))
    for label, options in (r for r in runs if r[0] in only):
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as out, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = mcu_mlir.compile(model, example, target="cortex-m55", emit=emit, calibration=calibration,
                                      output_dir=out, **options)
        int4 = result.report["quantization"].get("int4")
        figures[label] = {"output_sqnr_db": round(_output_sqnr(result), 2), "seconds": round(time.perf_counter() - t0, 1)}
        if int4:
            figures[label].update(weight_bytes=int4["weight_bytes"], int8_weight_bytes=int4["int8_weight_bytes"],
                                  int4_layers=int4["int4_layers"], layers=len(int4["layers"]))
            if label == "auto":
                figures[label]["choice"] = [(e["name"], e["weights"], e.get("cost_db")) for e in int4["layers"]]
        if "weights_bytes" in result.report:
            figures[label]["all_weights_bytes"] = result.report["weights_bytes"]
        print(f"{name} {label}: {figures[label]}", file=sys.stderr)
    return figures


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", default=list(DEFAULT_MODELS))
    p.add_argument("--emit", default="tosa", choices=("tosa", "c"))
    p.add_argument("--target-sqnr", type=float, default=30.0)
    p.add_argument("--only", default="int8,int4,auto", help="which of int8,int4,auto to compile")
    args = p.parse_args(argv)
    rows = [measure(m, args.emit, args.target_sqnr, args.only.split(",")) for m in args.models]
    print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

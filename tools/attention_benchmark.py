"""Attention models on Cortex-M55: where the instructions go, per layer kind, in int8 and a16w8.

For each model (tools/public_models.py; the issue's acceptance set that the project compiles):
compile seconds, share of multiply-accumulates in CMSIS-NN kernels, instructions of one inference
on Cortex-M55 under QEMU split by layer kind (norm / softmax / matmul of two activations / fully
connected / conv / other), arena and flash, SQNR of the C's output against the float model, and
whether the C equals tosa_reference_model on that input. Figures, not pass/fail.

Usage: python tools/attention_benchmark.py [--models a,b] [--quantize int8,int16] [--m4] [--softmax cmsis-nn]
       [--markdown FILE]
       [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import tempfile
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import figures  # noqa: E402

MODELS = ("timm_vit_p8_64", "timm_kwt_like", "timm_mobilevit_xxs", "timm_edgenext_xx_small", "timm_convnext_atto",
          "timm_efficientvit_m0", "timm_test_vit", "hf_bert_2layer")
KINDS = ("norm", "softmax", "matmul", "fc", "conv", "other")


def kind_of(kernel: str) -> str:
    """The layer kind of a kernel name from report.json ("arm_softmax_s8", "portable:norm", ...)."""
    k = kernel.replace("portable:", "")
    if "norm" in k:
        return "norm"
    if "softmax" in k:
        return "softmax"
    if "batch_matmul" in k or k.startswith("matmul"):
        return "matmul"
    if "fully_connected" in k:
        return "fc"
    if "conv" in k:
        return "conv"
    return "other"


def macs(cmsisnn_text: str) -> tuple[int, int]:
    """(MACs in CMSIS-NN kernels, all MACs) of the planned kernel ops: convolutions, fully connected
    layers and matmuls."""
    from mcu_mlir._mlir import ir, new_context
    from mcu_mlir.dialects import load_all
    from mcu_mlir.dialects.kernel_op import KernelOp

    inside = total = 0
    ctx = new_context()
    load_all(ctx)
    with ctx:
        module = ir.Module.parse(cmsisnn_text)
        for op in module.body.operations[0].regions[0].blocks[0].operations:
            op = op.opview if hasattr(op, "opview") else op
            n = op.macs() if isinstance(op, KernelOp) else 0
            total += n
            if op.operation.name.startswith("cmsisnn."):
                inside += n
    return inside, total


def bench(name: str, quantize: str, out: str, m4: bool = False, softmax: str = "table") -> dict:
    import numpy as np
    import torch

    import mcu_mlir
    import public_models
    from mcu_mlir.firmware import run

    entry = public_models.MODELS[name]
    model = entry.model()
    example = (entry.sample(0),)
    row = {"model": name, "quantize": quantize}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mcu_mlir.compile(model, example, target="cortex-m55", backend="cmsis-nn", emit="elf",
                                  output_dir=out, quantize=quantize, softmax=softmax)
    report = result.report
    row.update(compile_s=report["compile_seconds"], arena=report.get("arena_bytes"), flash=report.get("flash_bytes"),
               weights=report.get("weights_bytes"), transposes=report.get("interior_transposes"))
    kernel_ir = open(os.path.join(out, "cmsisnn.mlir")).read()
    inside, total = macs(kernel_ir)
    # The transposes the C runs (a K^T the batch matmul reads itself is none; the V^T it needs is one).
    row["transpose_calls"] = len(re.findall(r'"(?:cmsisnn|portable)\.transpose"', kernel_ir))
    row["macs"], row["cmsis_mac_share"] = total, inside / total if total else 0.0
    x = entry.sample(7)
    fw = run.run(out, [x.numpy()], target="cortex-m55", count_instructions=True)
    ref = run.run_reference_outdir(out, [x.numpy()])
    row["bit_exact"] = all(np.array_equal(c, r.reshape(c.shape)) for c, r in zip(fw.outputs_q, ref.outputs_q))
    with torch.no_grad():
        want = model(x).numpy().reshape(-1)
    got = np.asarray(fw.outputs_float[0]).reshape(-1)
    noise = float(((want - got) ** 2).sum())
    row["sqnr_db"] = round(10 * math.log10(float((want ** 2).sum()) / noise), 1) if noise > 0 else float("inf")
    ins = fw.instructions or {}
    row["instructions"] = ins.get("total")
    per_kind = dict.fromkeys(KINDS, 0)
    for layer in ins.get("layers", []):
        per_kind[kind_of(layer.get("kernel", ""))] += layer["instructions"]
    row["softmax_kernels"] = sorted({layer.get("kernel", "") for layer in ins.get("layers", [])
                                     if kind_of(layer.get("kernel", "")) == "softmax"})
    row.update({f"ins_{k}": v for k, v in per_kind.items()})
    if m4:   # the same model built for Cortex-M4 (DSP, no MVE: CMSIS-NN's other code paths)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mcu_mlir.compile(model, example, target="cortex-m4", backend="cmsis-nn", emit="elf", output_dir=out + "-m4",
                             quantize=quantize, softmax=softmax)
        fw4 = run.run(out + "-m4", [x.numpy()], target="cortex-m4", count_instructions=True)
        row["m4_instructions"] = (fw4.instructions or {}).get("total")
        row["bit_exact_m4"] = all(np.array_equal(c, r.reshape(c.shape)) for c, r in zip(fw4.outputs_q, ref.outputs_q))
    return row


def markdown(rows: list[dict]) -> str:
    m4 = any("m4_instructions" in r for r in rows)
    head = ("| model | act | compile s | MACs | on CMSIS-NN | M55 instructions | norm | softmax | matmul | fc | conv "
            "| other | arena | flash | transposes (TOSA interior / C calls) | SQNR dB | bit-exact M55 |"
            + (" M4 instructions | bit-exact M4 |" if m4 else ""))
    columns = head.count("|") - 1
    lines = [head, "|" + "---|" * columns]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['quantize']} | {r['error']} |" + " |" * (columns - 3))
            continue
        total = r["instructions"] or 0

        def share(k):
            return f"{r['ins_' + k] / total:.0%}" if total else "-"
        lines.append(
            f"| {r['model']} | {r['quantize']} | {r['compile_s']:.1f} | {r['macs'] / 1e6:.2f} M "
            f"| {r['cmsis_mac_share']:.0%} | {total / 1e6:.2f} M | " + " | ".join(share(k) for k in KINDS) +
            f" | {r['arena'] / 1024:.1f} kB | {r['flash'] / 1024:.1f} kB | {r['transposes']} / {r['transpose_calls']} "
            f"| {r['sqnr_db']} "
            f"| {'yes' if r['bit_exact'] else '**no**'} |" +
            (f" {r['m4_instructions'] / 1e6:.2f} M | {'yes' if r['bit_exact_m4'] else '**no**'} |"
             if "m4_instructions" in r else (" - | - |" if m4 else "")))
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--quantize", default="int8,int16")
    p.add_argument("--markdown", default=None)
    p.add_argument("--json", default=None)
    p.add_argument("--m4", action="store_true", help="also build for Cortex-M4 and check that run too")
    p.add_argument("--softmax", choices=("table", "cmsis-nn"), default="table",
                   help="int8 softmax kernel (mcu-compile's --softmax): cmsis-nn calls arm_softmax_s8 itself")
    args = p.parse_args(argv)
    if not os.environ.get("CMSIS_NN_PATH"):
        print("attention_benchmark: set CMSIS_NN_PATH to a CMSIS-NN checkout", file=sys.stderr)
        return 1
    from mcu_mlir.diagnostics import UserError
    rows = []
    work = tempfile.mkdtemp(prefix="mcu-attention-bench-")
    for name in args.models.split(","):
        for quantize in args.quantize.split(","):
            try:
                row = bench(name, quantize, os.path.join(work, f"{name}-{quantize}"), args.m4, args.softmax)
            except UserError as e:
                row = {"model": name, "quantize": quantize, "error": str(e).splitlines()[0]}
            rows.append(row)
            print(json.dumps(row), flush=True)
    figures.save(rows, markdown(rows), args.markdown, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())

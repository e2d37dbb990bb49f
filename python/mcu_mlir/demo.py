"""The README's first command: a bundled model compiled to C, built for a Cortex-M, run under QEMU.

Prints the model's outputs as PyTorch computes them (float and PT2E int8), as the integer TOSA
reference model computes them, and as the firmware computes them, with the memory and instruction
figures.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings

import numpy as np

from .diagnostics import UserError
from .options import CompileOptions


def _row(name, values, ref=None):
    flat = np.asarray(values, dtype=np.float64).ravel()
    shown = " ".join(f"{v:8.4f}" for v in flat[:8]) + (" ..." if flat.size > 8 else "")
    extra = ""
    if ref is not None:
        extra = f"   max |diff| vs PT2E {np.max(np.abs(flat - np.asarray(ref, dtype=np.float64).ravel())):.4g}"
    print(f"  {name:<28} {shown}{extra}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="mcu-demo", description=__doc__.splitlines()[0])
    p.add_argument("--model", default=None, help="zoo model name (default: the zoo's default)")
    p.add_argument("--target", default=CompileOptions.target)
    p.add_argument("--backend", default="cmsis-nn",
                   help="cmsis-nn (default: CMSIS_NN_PATH, else the pinned commit fetched once; the portable "
                        "kernels when it cannot be fetched) or portable")
    p.add_argument("-o", "--output-dir", default=None)
    args = p.parse_args(argv)
    warnings.showwarning = lambda message, *rest, **kw: print(f"  warning: {message}", file=sys.stderr)
    try:
        return _demo(args)
    except UserError as e:
        print(e.format(), file=sys.stderr)
        return 1


def _demo(args) -> int:
    import torch

    from . import zoo
    from .driver import compile as compile_model

    name = args.model or zoo.default
    model, example = zoo.get(name)
    out = args.output_dir or tempfile.mkdtemp(prefix=f"mcu-demo-{name}-")
    print(f"model: {name}   target: {args.target}   output: {out}")

    result = compile_model(model, example, target=args.target, backend=args.backend, quantize="int8",
                           emit="elf", output_dir=out)
    r = result.report
    from .firmware.cmsis_nn import describe
    print(f"kernels: {result.options.backend}   CMSIS-NN: {describe(r['cmsis_nn'])}")
    inputs = [t.detach().numpy() for t in example]
    with torch.no_grad():
        eager = result.frontend.eager(inputs)
        pt2e = result.frontend.reference(inputs)

    from .reference import run_reference
    from .firmware.run import run as run_firmware
    tosa_q = run_reference(result.files["tosa"].read_text(), _quantize_inputs(inputs, result))
    fw = run_firmware(out, inputs, target=args.target, count_instructions=True)

    print("outputs (first values):")
    _row("PyTorch eager (float)", eager[0])
    _row("PT2E quantized model", pt2e[0])
    _row("TOSA reference model", _dequantize(tosa_q[0], result), pt2e[0])
    _row(f"firmware on {args.target}", fw.outputs_float[0], pt2e[0])
    exact = np.array_equal(np.asarray(fw.outputs_q[0]).ravel(), np.asarray(tosa_q[0]).ravel())
    print(f"firmware == reference model, bit for bit: {'yes' if exact else 'NO'}")
    print(f"arena {r.get('arena_bytes')} B (tensors live at once: {r.get('arena_lower_bound_bytes')} B; "
          f"with outputs overlapping their dying inputs: {r.get('arena_overlap_bound_bytes')} B), "
          f"weights {r.get('weights_bytes')} B, flash {r.get('flash_bytes')} B, "
          f"transposes {r.get('transposes')}, compile {r.get('compile_seconds')} s")
    if fw.instructions:
        print(f"instructions per inference on {args.target}: {fw.instructions.get('total')}")
    return 0 if exact else 1


def _quantize_inputs(inputs, result):
    q = result.frontend.inputs
    out = []
    for x, t in zip(inputs, q):
        info = np.iinfo(np.int8 if t.dtype == "int8" else np.int16)
        out.append(np.clip(np.round(x / t.scale) + t.zero_point, info.min, info.max).astype(info.dtype))
    return out


def _dequantize(q, result):
    """Output 0 as floats (part by part where its parts keep their own scales)."""
    t = result.frontend.outputs[0]
    if t.parts:
        return np.asarray(t.dequantize(np.asarray(q).reshape(t.shape)), np.float64)
    return (np.asarray(q, dtype=np.float64) - t.zero_point) * t.scale


if __name__ == "__main__":
    sys.exit(main())

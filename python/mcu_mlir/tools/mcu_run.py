"""mcu-run: runs a compiled model (mcu-compile's OUTDIR) on the host, under QEMU, or in the reference model.

    mcu-run OUTDIR --inputs IN.npz --outputs OUT.npz [--target host|cortex-m55|...] [--reference]
            [--count-instructions] [--steps N]

IN.npz holds float arrays input0, input1, ...; OUT.npz receives the dequantized output0, ... and
the raw integers as output0_q, ...

With --steps N (a model compiled with --state), IN.npz holds the inputs that are not state, each
with N consecutive chunks stacked first (N x shape); the model runs them one after the other with
its state carried, every step is checked against tosa_reference_model run the same way, and
OUT.npz gets the outputs that are not state, stacked the same way.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import __version__, cpu_paths
from ..diagnostics import UserError, quiet_third_party, repro_command, report_internal_error

from ..cores import TARGETS

cpu_paths.pin()     # before torch is imported: the same C on every machine


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mcu-run", allow_abbrev=False,
                                description="Run a model compiled by mcu-compile on the host, under QEMU, "
                                            "or in tosa_reference_model.")
    p.add_argument("outdir", help="mcu-compile's output directory (model.c, model.h, model.tosa.mlir)")
    p.add_argument("--inputs", required=True, help=".npz with float arrays input0, input1, ...")
    p.add_argument("--outputs", required=True, help=".npz to write output0, ... (float) and output0_q, ... (integers)")
    p.add_argument("--target", choices=TARGETS, default="host")
    p.add_argument("--reference", action="store_true",
                   help="run the integer TOSA (OUTDIR/model.tosa.mlir) in tosa_reference_model instead of the C")
    p.add_argument("--check", action="store_true",
                   help="run the C (on --target) and tosa_reference_model on the same inputs and compare them: "
                        "bit-exact or not, elements that differ and the largest difference per output (exit 1 if "
                        "any differs); --outputs gets the C's outputs")
    p.add_argument("--count-instructions", action="store_true",
                   help="print per-layer and total instruction counts (QEMU targets)")
    p.add_argument("--cmsis-nn-path", default=None,
                   help="CMSIS-NN checkout (default: $CMSIS_NN_PATH, else the pinned commit, fetched once)")
    p.add_argument("--opt", default="-O2", help="optimisation flags for the C (default -O2)")
    p.add_argument("--timeout", type=float, default=120, help="seconds before a run is abandoned")
    p.add_argument("--steps", type=int, default=None, metavar="N",
                   help="a streaming model: run N consecutive chunks with the state carried, each step checked "
                        "against the reference model")
    p.add_argument("--sanitize", action="store_true",
                   help="host: build the model, kernels, CMSIS-NN and harness with AddressSanitizer and "
                        "UndefinedBehaviorSanitizer; any report fails the run")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return p


def load_inputs(path: str) -> list:
    import numpy as np
    try:
        archive = np.load(path)
    except (OSError, ValueError) as err:
        raise UserError(f"cannot read --inputs {path}: {err}") from None
    names = sorted((n for n in archive.files if n.startswith("input") and n[5:].isdigit()), key=lambda n: int(n[5:]))
    if not names or [int(n[5:]) for n in names] != list(range(len(names))):
        raise UserError(f"{path} must hold arrays named input0, input1, ... (it has {', '.join(archive.files) or 'none'})")
    return [archive[n] for n in names]


def format_instructions(counts: dict) -> str:
    columns = ("cmsis-nn", "portable", "helpers", "other")
    lines = [f"{'layer':<32} {'instructions':>14}" + "".join(f" {c:>12}" for c in columns) + "  kernel (or busiest function)"]
    for layer in counts["layers"]:
        top = next(iter(layer["functions"]), "")
        label = f"{layer['index']}: {layer['name']}"
        lines.append(f"{label[:32]:<32} {layer['instructions']:>14,}"
                     + "".join(f" {layer[c]:>12,}" for c in columns) + f"  {layer.get('kernel', top)}")
    total = counts["total"]
    lines.append(f"{'total (one inference)':<32} {total:>14,}" + "".join(f" {counts[c]:>12,}" for c in columns))
    share = lambda n: f"{100.0 * n / total:.1f}%" if total else "-"
    lines.append(f"inside CMSIS-NN {share(counts['cmsis-nn'])}, portable kernels {share(counts['portable'])}, "
                 f"libc/libgcc helpers {share(counts['helpers'])}, model glue and runtime {share(counts['other'])}; "
                 f"16-bit {counts['insns16']:,}, 32-bit {counts['insns32']:,}, FP/vector {counts['fp_vector']:,}; "
                 f"before the first layer {counts['startup']:,}")
    return "\n".join(lines)


def run(args) -> int:
    import numpy as np

    from ..firmware import run as target_run

    outdir = Path(args.outdir)
    if not outdir.is_dir():
        raise UserError(f"{outdir} is not a directory (expected mcu-compile's output directory)")
    inputs = load_inputs(args.inputs)
    if args.steps is not None:
        return _run_steps(args, outdir, inputs)
    if args.check and args.reference:
        raise UserError("--check runs both the C and the reference model; it does not combine with --reference")
    if args.reference:
        if args.count_instructions:
            raise UserError("--count-instructions counts the C under QEMU; it does not combine with --reference")
        result = target_run.run_reference_outdir(outdir, inputs)
    else:
        result = target_run.run(outdir, inputs, target=args.target, count_instructions=args.count_instructions,
                                cmsis_nn_path=args.cmsis_nn_path, opt=args.opt, timeout=args.timeout,
                                sanitize=args.sanitize)
    arrays = {}
    for i, (y, q) in enumerate(zip(result.outputs_float, result.outputs_q)):
        arrays[f"output{i}"] = y
        arrays[f"output{i}_q"] = q
    np.savez(args.outputs, **arrays)
    where = "tosa_reference_model" if args.reference else args.target
    for i, y in enumerate(result.outputs_float):
        print(f"output{i}: shape {tuple(y.shape)} on {where}, first values {np.array2string(y.ravel()[:8], precision=4)}")
    if result.stack_bytes is not None:
        print(f"peak stack use: {result.stack_bytes:,} bytes")
    if result.instructions is not None:
        print(format_instructions(result.instructions))
        _keep_counts(outdir, result.instructions, args.target)
    if args.check:
        return _check(outdir, inputs, result, args.target)
    return 0


def compare_outputs(c_outputs: list, reference_outputs: list) -> list[tuple[int, int, int]]:
    """Per output: (elements that differ, elements, largest difference in integer steps)."""
    import numpy as np
    rows = []
    for c, r in zip(c_outputs, reference_outputs):
        c, r = np.asarray(c).astype(np.int64), np.asarray(r).astype(np.int64).reshape(np.shape(c))
        diff = np.abs(c - r)
        rows.append((int(np.count_nonzero(diff)), int(diff.size), int(diff.max()) if diff.size else 0))
    return rows


def _check(outdir: Path, inputs: list, result, target: str) -> int:
    """The C's integers against tosa_reference_model's on the same inputs, output by output."""
    from ..firmware import run as target_run
    reference = target_run.run_reference_outdir(outdir, inputs)
    rows = compare_outputs(result.outputs_q, reference.outputs_q)
    for i, (differ, size, largest) in enumerate(rows):
        print(f"output{i}: " + ("bit-exact" if not differ else
                                f"{differ} of {size} elements differ, largest difference {largest}")
              + f" ({target} against tosa_reference_model)")
    if any(differ for differ, _, _ in rows):
        print(f"mcu-run: error: the C on {target} differs from tosa_reference_model: a compiler bug", file=sys.stderr)
        return 1
    print(f"bit-exact: every output of the C on {target} equals tosa_reference_model's")
    return 0


def _keep_counts(outdir: Path, counts: dict, target: str) -> None:
    """OUTDIR/instructions.json (per layer and total), and report.html redrawn with them if there is one."""
    import json
    layers = [{"index": layer["index"], "name": layer["name"], "instructions": layer["instructions"]}
              for layer in counts["layers"]]
    from ..emission.kernel_share import instruction_share
    report_path = outdir / "report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    share = instruction_share(report, layers)
    (outdir / "instructions.json").write_text(json.dumps({"target": target, "total": counts["total"],
                                                          "share": share, "layers": layers}, indent=1) + "\n")
    if share:
        print(f"CMSIS-NN {share['cmsis_nn']:.1%}, portable one kernel per op {share['portable_one_kernel']:.1%}, "
              f"portable ops expanded into more than 3 calls {share['portable_expanded']:.1%}"
              + (f" ({', '.join(share['expanded_layers'][:4])}{' ...' if len(share['expanded_layers']) > 4 else ''})"
                 if share["expanded_layers"] else "") + " (instructions.json share)")
    if (outdir / "report.html").exists():
        from ..emission import report_html
        report_html.write(outdir)


def _run_steps(args, outdir: Path, inputs: list) -> int:
    import numpy as np

    from ..firmware import run as target_run
    if args.count_instructions or args.sanitize:
        raise UserError("--steps does not combine with --count-instructions or --sanitize")
    n = args.steps
    if n < 1:
        raise UserError(f"--steps {n}: at least one step")
    for k, x in enumerate(inputs):
        if x.ndim == 0 or x.shape[0] != n:
            raise UserError(f"--steps {n}: input{k} in {args.inputs} has shape {x.shape}; stack the {n} chunks first")
    steps = [[x[s] for x in inputs] for s in range(n)]
    reference = target_run.run_reference_steps(outdir, steps)
    results = reference if args.reference else target_run.run_steps(
        outdir, steps, target=args.target, cmsis_nn_path=args.cmsis_nn_path, opt=args.opt, timeout=args.timeout)
    arrays = {}
    for k in range(len(results[0].outputs_q)):
        arrays[f"output{k}"] = np.stack([r.outputs_float[k] for r in results])
        arrays[f"output{k}_q"] = np.stack([r.outputs_q[k] for r in results])
    np.savez(args.outputs, **arrays)
    if args.reference:
        print(f"{n} steps in tosa_reference_model, the state carried")
        return 0
    differ = [s for s, (c, r) in enumerate(zip(results, reference))
              if not all(np.array_equal(a, b.reshape(a.shape)) for a, b in zip(c.outputs_q, r.outputs_q))]
    if differ:
        print(f"mcu-run: error: the C on {args.target} differs from tosa_reference_model at step(s) "
              f"{', '.join(map(str, differ[:10]))} of {n}: a compiler bug", file=sys.stderr)
        return 2
    print(f"{n} steps on {args.target}, the state carried in the model: every step equals tosa_reference_model")
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as stop:      # --help; a bad flag or value is a user error: 1, not argparse's 2
        return 1 if stop.code else 0
    quiet_third_party("mcu-run")
    try:
        return run(args)
    except UserError as err:
        print(err.format(), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug: say so with the command that reproduces it
        report_internal_error(exc, repro_command(["mcu-run", *(argv if argv is not None else sys.argv[1:])]))
        return 2


if __name__ == "__main__":
    sys.exit(main())

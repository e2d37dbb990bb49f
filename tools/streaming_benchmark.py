#!/usr/bin/env python3
"""Streaming models on Cortex-M: instructions per chunk, arena, flash, real-time factor.

    python tools/streaming_benchmark.py [--models silero_vad_v5] [--steps 20] [--speech] [--markdown FILE]

For each model of tools/streaming_models.py: compiled with its --state pairs for Cortex-M55 and
Cortex-M4 (CMSIS-NN), run over N chunks under QEMU with the state carried (each step checked against
tosa_reference_model), instructions of one chunk per core, and the real-time factor at 100 MHz
taking one instruction per cycle (chunk duration: 512 samples at 16 kHz for the VAD). Figures, not
pass/fail.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import figures  # noqa: E402

CHUNK_SECONDS = {"silero_vad_v5": 512 / 16000}
CORES = ("cortex-m55", "cortex-m4")


def bench(name: str, steps: int, work: str) -> dict:
    import numpy as np
    import torch

    import mcu_mlir
    import streaming_models
    from mcu_mlir.firmware import run

    make, shapes, pairs = streaming_models.MODELS[name]
    state_inputs = {i for i, _ in pairs}
    rng = np.random.default_rng(0)
    chunks = [[(0.3 * rng.standard_normal(shape)).astype(np.float32) for i, shape in enumerate(shapes)
               if i not in state_inputs] for _ in range(steps)]
    row = {"model": name, "steps": steps}
    for core in CORES:
        out = os.path.join(work, f"{name}-{core}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = mcu_mlir.compile(make(), tuple(torch.zeros(s) for s in shapes), target=core, backend="cmsis-nn",
                                      emit="elf", output_dir=out, state=pairs)
        got = run.run_steps(out, chunks, target=core)
        want = run.run_reference_steps(out, chunks)
        row[f"{core}_bit_exact"] = all(np.array_equal(c.outputs_q[0], r.outputs_q[0].reshape(c.outputs_q[0].shape))
                                       for c, r in zip(got, want))
        one = [np.zeros(s, np.float32) for s in shapes]
        for k, i in enumerate(i for i in range(len(shapes)) if i not in state_inputs):
            one[i] = chunks[0][k]
        counted = run.run(out, one, target=core, count_instructions=True)
        row[f"{core}_instructions"] = counted.instructions["total"]
        row.update(arena=result.report["arena_bytes"], flash=result.report.get("flash_bytes"))
    seconds = CHUNK_SECONDS.get(name)
    if seconds:
        for core in CORES:
            row[f"{core}_rtf_100mhz"] = row[f"{core}_instructions"] / 100e6 / seconds
    return row


def speech(work: str, core: str = "cortex-m55") -> dict:
    """The VAD on a spoken signal (tools/speech_signal.py): trained for a few seconds on one mixture,
    compiled (int8) with calibration on it, run as firmware over another mixture with its state
    carried; its decisions (p > 0.5) against the float model's and against the labels."""
    import numpy as np
    import torch

    import mcu_mlir
    import speech_signal
    import streaming_models
    from mcu_mlir.firmware import run

    train, train_mask = speech_signal.mixture(seed=1)
    model = streaming_models.train_vad(train, train_mask)
    shapes = [(1, 512), (1, 64), (1, 128), (1, 128)]
    calibration = [(torch.from_numpy(c),) + tuple(torch.zeros(s) for s in shapes[1:])
                   for c in speech_signal.chunks(train)]
    out = os.path.join(work, f"vad-speech-{core}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(model, calibration[0], target=core, backend="cmsis-nn", emit="elf", output_dir=out,
                         calibration=calibration, state=[(1, 1), (2, 2), (3, 3)])
    signal, mask = speech_signal.mixture(seed=0)
    chunks = speech_signal.chunks(signal)
    got = run.run_steps(out, [[c] for c in chunks], target=core)
    firmware = np.array([float(r.outputs_float[0].reshape(-1)[0]) for r in got])
    state, floats = [torch.zeros(s) for s in shapes[1:]], []
    with torch.no_grad():
        for c in chunks:
            p, *state = model(torch.from_numpy(c), *state)
            floats.append(float(p))
    floats = np.array(floats)
    labels = np.array([m.mean() > 0.5 for m in speech_signal.chunks(mask.astype(np.float32))])
    return {"core": core, "chunks": len(chunks), "seconds": len(chunks) * 512 / 16000,
            "agreement": float(((firmware > 0.5) == (floats > 0.5)).mean()),
            "float_accuracy": float(((floats > 0.5) == labels).mean()),
            "firmware_accuracy": float(((firmware > 0.5) == labels).mean()),
            "max_probability_difference": float(np.abs(firmware - floats).max())}


def markdown(rows: list[dict]) -> str:
    lines = ["| model | steps | M55 instructions / chunk | M4 instructions / chunk | RTF M55 @100 MHz "
             "| RTF M4 @100 MHz | arena | flash | bit-exact M55 / M4 (every step) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        rtf = [f"{r[c + '_rtf_100mhz']:.3f}" if c + "_rtf_100mhz" in r else "-" for c in CORES]
        exact = " / ".join("yes" if r[f"{c}_bit_exact"] else "**no**" for c in CORES)
        lines.append(f"| {r['model']} | {r['steps']} | {r['cortex-m55_instructions']:,} | "
                     f"{r['cortex-m4_instructions']:,} | {rtf[0]} | {rtf[1]} | {r['arena'] / 1024:.1f} kB | "
                     f"{(r['flash'] or 0) / 1024:.1f} kB | {exact} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    import streaming_models
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(streaming_models.MODELS))
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--markdown", default=None)
    p.add_argument("--speech", action="store_true",
                   help="also the VAD on an espeak-ng signal: firmware decisions against float (needs espeak-ng, sox)")
    args = p.parse_args(argv)
    if not os.environ.get("CMSIS_NN_PATH"):
        print("streaming_benchmark: set CMSIS_NN_PATH to a CMSIS-NN checkout", file=sys.stderr)
        return 1
    work = tempfile.mkdtemp(prefix="mcu-streaming-bench-")
    rows = [bench(name, args.steps, work) for name in args.models.split(",")]
    table = markdown(rows)
    if args.speech:
        r = speech(work)
        table += (f"\nVAD on a spoken signal ({r['seconds']:.1f} s, {r['chunks']} chunks, {r['core']}): firmware "
                  f"decisions agree with float on {r['agreement']:.1%} of chunks (largest probability difference "
                  f"{r['max_probability_difference']:.3f}); against the labels float {r['float_accuracy']:.1%}, "
                  f"firmware {r['firmware_accuracy']:.1%}.\n")
    figures.save(rows, table, args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())

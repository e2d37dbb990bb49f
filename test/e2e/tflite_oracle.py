"""TFLite Micro's interpreter as the oracle of a compiled .tflite model: compile for the host, run
the C and the interpreter on the same integer inputs, compare bit for bit; the kernel checks."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import mcu_mlir
from mcu_mlir.firmware import build, run


def inputs(shape, count: int, seed: int = 1, dtype=np.int8) -> list[np.ndarray]:
    """`count` integer inputs: all the smallest value (-128 for int8), all the largest (127), the
    two extremes mixed, then uniform."""
    rng = np.random.default_rng(seed)
    lo, hi = int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
    fixed = [np.full(shape, lo, dtype), np.full(shape, hi, dtype), rng.choice(np.array([lo, hi], dtype), size=shape)]
    return (fixed + [rng.integers(lo, hi + 1, size=shape, dtype=dtype) for _ in range(count)])[:count]


def need_build(backend: str, target: str = "host"):
    pytest.importorskip("tflite_micro", reason="tflite-micro (TFLite Micro's interpreter, the oracle) is not "
                        "installed: tools/setup.sh installs it")
    tools = ("cmake", "cc") if target == "host" else ("cmake", "arm-none-eabi-gcc", "qemu-system-arm")
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: needed to build and run the generated C on {target}")
    if backend == "cmsis-nn" and not os.environ.get("CMSIS_NN_PATH"):
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")


def compare_with_tflm(model: bytes, outdir, backend: str, count: int, target: str = "host"):
    """Compiles `model` (written to outdir/model.tflite) for `target`, runs `count` inputs in the C
    (QEMU for a core) and in TFLite Micro; the report and, per input, the outputs that differ."""
    from tflite_micro.python.tflite_micro import runtime
    path = outdir / "model.tflite"
    path.write_bytes(model)
    # --softmax cmsis-nn: the CMSIS-NN build runs softmax on arm_softmax_s8 (the default looks the
    # exponentials up on a portable kernel, the same integers).
    result = mcu_mlir.compile(str(path), target=target, backend=backend, emit="c", output_dir=str(outdir / "out"),
                              softmax="cmsis-nn" if backend == "cmsis-nn" else "table")
    exe = build.build(outdir / "out", target=target)
    ip = runtime.Interpreter.from_bytes(model, arena_size=2_000_000)
    n_in = len(result.report["quantization"]["inputs"])
    n_out = len(result.report["quantization"]["outputs"])
    samples = [inputs(tuple(ip.get_input_details(i)["shape"]), count, seed=1 + i,
                      dtype=ip.get_input_details(i)["dtype"]) for i in range(n_in)]
    differing = []
    for k in range(count):
        xs = [s[k] for s in samples]
        for i, x in enumerate(xs):
            ip.set_input(x, i)
        ip.invoke()
        got = run.run_executable(exe, outdir / "out", xs, target=target).outputs_q
        for i in range(n_out):
            ref = ip.get_output(i)
            if not np.array_equal(got[i].reshape(ref.shape), ref):
                differing.append((k, i, int(np.abs(got[i].reshape(ref.shape).astype(int) - ref).max())))
    return result.report, differing


# (TOSA op in a layer, the CMSIS-NN kernel it must run on), first match wins; a softmax left as
# separate ops shows its gather / clz.
CMSIS_KERNELS = [("depthwise_conv2d", "arm_depthwise_conv"), ("conv2d", "arm_convolve"),
                 ("matmul", "arm_fully_connected"), ("avg_pool2d", "arm_avgpool_s8"), ("softmax", "arm_softmax_s8"),
                 ("gather", "arm_softmax_s8"), ("clz", "arm_softmax_s8"), ("add", "arm_elementwise_add_s8"),
                 ("max_pool2d", "arm_max_pool_s8"), ("mul", "arm_elementwise_mul_s8")]


def check_kernels(report: dict, backend: str, transposes: int = 0) -> None:
    """Every computing layer on its CMSIS-NN kernel or a generated one (or, portable, on a portable
    one); no transposes but the model's own TRANSPOSE ops."""
    assert report["transposes"] == transposes
    for op in report["ops"]:
        layer = [name.removeprefix("tosa.") for name in op["tosa_op"].split("+")]
        kernel = next((k for name, k in CMSIS_KERNELS if name in layer), None)
        if kernel is None:
            continue
        if backend == "cmsis-nn":      # or a kernel the compiler wrote for the layer where it costs less
            assert op["kernel"].startswith((kernel, "generated:")), op
        else:
            assert op["kernel"].startswith("portable:"), op

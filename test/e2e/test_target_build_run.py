"""Build and run: the fixture models of target_fixtures/ built with CMake for the host and each
Cortex-M, run under QEMU, outputs checked bit for bit against numpy implementations of the same
integer arithmetic; instruction counts; memory overflow reported as a user error; CMSIS-NN tier."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mcu_mlir.diagnostics import UserError
from mcu_mlir.firmware import build, qemu, run

FIXTURES = Path(__file__).parent / "target_fixtures"
QEMU_TARGETS = ["cortex-m55", "cortex-m4", "cortex-m3", "cortex-m0", "cortex-m7", "cortex-m33"]


def _need_cross_toolchain():
    missing = [t for t in ("cmake", "arm-none-eabi-gcc", "qemu-system-arm") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: the Cortex-M tier needs tools/setup.sh's packages")


def _need_host_toolchain():
    if shutil.which("cmake") is None or shutil.which("cc") is None:
        pytest.skip("cmake or cc not installed: the host build tier needs them")


def _cmsis_nn_path() -> str:
    path = os.environ.get("CMSIS_NN_PATH")
    if not path:
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")
    return path


# --- numpy versions of the fixtures' integer arithmetic (CMSIS-NN's double rounding) ------------

def doubling_high_mult(a, b):
    return (a.astype(np.int64) * b + (1 << 30)) >> 31


def divide_by_power_of_two(x, exponent):
    mask = (1 << exponent) - 1
    remainder = x & mask
    result = x >> exponent
    threshold = (mask >> 1) + (result < 0)
    return result + (remainder > threshold)


def requantize(value, multiplier, shift):
    left, right = max(shift, 0), max(-shift, 0)
    return divide_by_power_of_two(doubling_high_mult(value.astype(np.int64) << left, multiplier), right)


def elementwise_oracle(x0, x1):
    """target_fixtures/elementwise/model.c in numpy."""
    a, b = x0.astype(np.int64), x1.astype(np.int64)
    t = np.clip(requantize(a + 3, 1073741824, 0) + 5, -128, 127)
    y0 = np.maximum(t, b).astype(np.int8)
    y1 = ((a + 3) * (b - 5)).reshape(1, 2, 4, 8).sum(axis=-1).astype(np.int32)
    return [y0, y1]


def cmsis_add_oracle(x0, x1):
    """arm_elementwise_add_s8 (TFLite add with left_shift 20) then arm_relu_q7, as cmsis_add/model.c calls them."""
    a = requantize((x0.astype(np.int64) + 3) << 20, 1073741824, -1)
    b = requantize((x1.astype(np.int64) - 5) << 20, 1073741824, 0)
    y = np.clip(requantize(a + b, 1789569707, -19) - 10, -128, 127)
    return [np.maximum(y, 0).astype(np.int8)]


def cmsis_conv_oracle(x):
    """target_fixtures/cmsis_conv: 3x3 conv, padding 1 (padded positions add nothing), per-channel requantize."""
    o, ky, kx, c = np.meshgrid(np.arange(16), np.arange(3), np.arange(3), np.arange(16), indexing="ij")
    weights = (o * 131 + ky * 31 + kx * 17 + c * 7) % 255 - 127                     # OHWI
    channels = np.arange(16)
    bias, multiplier, shift = 1000 * channels - 7000, (1 << 30) + 10000000 * channels, -7 - channels % 3
    padded = np.pad(x[0].astype(np.int64) + 3, ((1, 1), (1, 1), (0, 0)))
    acc = np.zeros((16, 16, 16), np.int64)
    for dy in range(3):
        for dx in range(3):
            acc += np.einsum("hwc,oc->hwo", padded[dy:dy + 16, dx:dx + 16], weights[:, dy, dx, :])
    acc += bias
    out = np.stack([requantize(acc[..., k], int(multiplier[k]), int(shift[k])) for k in range(16)], axis=-1)
    return [np.clip(out - 5, -128, 127).astype(np.int8)[None]]


def random_inputs(seed, shape, count=2):
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, size=shape, dtype=np.int64).astype(np.int8) for _ in range(count)]


@pytest.fixture(scope="module")
def elementwise_dir(tmp_path_factory):
    """One copy of the fixture per test module: builds for each target are shared between tests."""
    out = tmp_path_factory.mktemp("elementwise") / "model"
    shutil.copytree(FIXTURES / "elementwise", out)
    return out


@pytest.fixture(scope="module")
def cmsis_conv_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("cmsis_conv") / "model"
    shutil.copytree(FIXTURES / "cmsis_conv", out)
    return out


@pytest.fixture(scope="module")
def cmsis_add_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("cmsis_add") / "model"
    shutil.copytree(FIXTURES / "cmsis_add", out)
    return out


def test_host_outputs_equal_numpy(elementwise_dir):
    _need_host_toolchain()
    for seed in range(3):
        inputs = random_inputs(seed, (1, 2, 4, 8))
        result = run.run(elementwise_dir, inputs, target="host")
        for got, want in zip(result.outputs_q, elementwise_oracle(*inputs)):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)


def test_sanitized_host_build_equals_numpy(elementwise_dir):
    _need_host_toolchain()
    inputs = random_inputs(7, (1, 2, 4, 8))
    result = run.run(elementwise_dir, inputs, target="host", sanitize=True)
    for got, want in zip(result.outputs_q, elementwise_oracle(*inputs)):
        np.testing.assert_array_equal(got, want)


def test_sanitizer_turns_an_out_of_bounds_read_into_an_error(tmp_path):
    """A read one element past an input (as a [1] bias read for 8 channels was) passes by luck in a
    plain build and fails with --sanitize."""
    _need_host_toolchain()
    out = tmp_path / "model"
    shutil.copytree(FIXTURES / "elementwise", out)
    source = (out / "model.c").read_text()
    (out / "model.c").write_text(source.replace("for (int i = 0; i < 64; i++) y0[i] = t[i] > x1[i] ? t[i] : x1[i];",
                                                "for (int i = 0; i < 64; i++) y0[i] = x1[i + 1];"))
    inputs = random_inputs(0, (1, 2, 4, 8))
    run.run(out, inputs, target="host")     # reads past the buffer unnoticed
    with pytest.raises(UserError, match="sanitizer found an error"):
        run.run(out, inputs, target="host", sanitize=True)


@pytest.mark.parametrize("target", QEMU_TARGETS)
def test_qemu_outputs_equal_numpy(elementwise_dir, target):
    _need_cross_toolchain()
    inputs = random_inputs(7, (1, 2, 4, 8))
    result = run.run(elementwise_dir, inputs, target=target)
    for got, want in zip(result.outputs_q, elementwise_oracle(*inputs)):
        np.testing.assert_array_equal(got, want)


def test_float_inputs_are_quantized_with_the_model_parameters(elementwise_dir):
    _need_host_toolchain()
    rng = np.random.default_rng(3)
    x0 = rng.normal(scale=3.0, size=(1, 2, 4, 8)).astype(np.float32)
    x1 = rng.normal(scale=5.0, size=(1, 2, 4, 8)).astype(np.float32)
    # The fixture's tables: input0 scale 0.05 zp -3, input1 scale 0.1 zp 5 (float32 scales).
    q0 = np.clip(np.round(x0.astype(np.float64) / np.float32(0.05)) - 3, -128, 127).astype(np.int8)
    q1 = np.clip(np.round(x1.astype(np.float64) / np.float32(0.1)) + 5, -128, 127).astype(np.int8)
    result = run.run(elementwise_dir, [x0, x1], target="host")
    want = elementwise_oracle(q0, q1)
    np.testing.assert_array_equal(result.outputs_q[0], want[0])
    np.testing.assert_array_equal(result.outputs_q[1], want[1])
    # Dequantized with output0's scale 0.1 / zero point 5 and output1's 0.005 / 0.
    np.testing.assert_allclose(result.outputs_float[0], (want[0].astype(np.float64) - 5) * np.float32(0.1), rtol=1e-6)
    np.testing.assert_allclose(result.outputs_float[1], want[1] * np.float64(np.float32(0.005)), rtol=1e-6)
    assert [i.name for i in result.inputs] == ["input0", "input1"]


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m4"])
def test_instruction_counts_are_exact_and_per_layer(elementwise_dir, target):
    _need_cross_toolchain()
    inputs = random_inputs(11, (1, 2, 4, 8))
    first = run.run(elementwise_dir, inputs, target=target, count_instructions=True).instructions
    second = run.run(elementwise_dir, inputs, target=target, count_instructions=True).instructions
    assert first == second
    assert [layer["name"] for layer in first["layers"]] == ["layer0", "layer1", "layer2"]
    assert all(layer["instructions"] > 0 for layer in first["layers"])
    assert first["total"] == sum(layer["instructions"] for layer in first["layers"])
    assert first["total"] == first["insns16"] + first["insns32"]
    # The fixture's loops live in mcu_model_run: no kernel library involved.
    assert first["cmsis-nn"] == first["portable"] == first["helpers"] == 0 and first["other"] == first["total"]
    assert next(iter(first["functions"])) == "mcu_model_run"
    # Layer 2 runs 64 multiply-accumulates: at least one instruction each.
    assert first["layers"][2]["instructions"] >= 64


def test_instruction_counts_follow_the_work(elementwise_dir, tmp_path):
    """Doubling a layer's loop count must add instructions to that layer only."""
    _need_cross_toolchain()
    bigger = tmp_path / "model"
    shutil.copytree(FIXTURES / "elementwise", bigger)
    source = (bigger / "model.c").read_text()
    assert "for (int i = 0; i < 64; i++) y0[i]" in source
    (bigger / "model.c").write_text(source.replace(
        "for (int i = 0; i < 64; i++) y0[i] = t[i] > x1[i] ? t[i] : x1[i];",
        "for (int pass = 0; pass < 2; pass++)\n    for (int i = 0; i < 64; i++) y0[i] = t[i] > x1[i] ? t[i] : x1[i];"))
    inputs = random_inputs(5, (1, 2, 4, 8))
    base = run.run(elementwise_dir, inputs, target="cortex-m3", count_instructions=True).instructions["layers"]
    more = run.run(bigger, inputs, target="cortex-m3", count_instructions=True).instructions["layers"]
    assert more[0]["instructions"] == base[0]["instructions"]
    assert more[2]["instructions"] == base[2]["instructions"]
    assert 1.8 * base[1]["instructions"] < more[1]["instructions"] < 2.2 * base[1]["instructions"]


@pytest.mark.parametrize("target,arena,region,available", [
    ("cortex-m4", 8 * 1024 * 1024, "RAM", 4 * 1024 * 1024),
    ("cortex-m55", 300 * 1024 * 1024, "DDR", 256 * 1024 * 1024),
])
def test_model_too_big_for_the_machine(tmp_path, target, arena, region, available):
    _need_cross_toolchain()
    out = tmp_path / "model"
    shutil.copytree(FIXTURES / "elementwise", out)
    header = (out / "model.h").read_text()
    (out / "model.h").write_text(header.replace("#define MCU_MODEL_ARENA_BYTES 64", f"#define MCU_MODEL_ARENA_BYTES {arena}"))
    with pytest.raises(UserError) as err:
        build.build(out, target=target)
    message = str(err.value)
    assert "does not fit the memory of" in message and qemu.MACHINES[target].qemu_name in message
    assert f"{region} (.mcu_arena) needs" in message or f"{region} needs" in message
    needed = int(message.split(" needs ")[1].split(" bytes")[0])
    assert needed >= arena and f"{available} available" in message


def test_arena_moves_to_bigger_memory_on_the_an547(tmp_path):
    """600 KiB does not fit the 512 KiB DTCM: the firmware links with the arena in SRAM and runs.
    The same build directory is reused: a new model.h re-runs the configure step."""
    _need_cross_toolchain()
    out = tmp_path / "model"
    shutil.copytree(FIXTURES / "elementwise", out)
    build.build(out, target="cortex-m55")
    assert "arena_region=DTCM" in (out / "build-cortex-m55" / "mcu_target.txt").read_text()
    header = (out / "model.h").read_text()
    (out / "model.h").write_text(header.replace("#define MCU_MODEL_ARENA_BYTES 64", "#define MCU_MODEL_ARENA_BYTES 614400"))
    inputs = random_inputs(2, (1, 2, 4, 8))
    result = run.run(out, inputs, target="cortex-m55")
    np.testing.assert_array_equal(result.outputs_q[0], elementwise_oracle(*inputs)[0])
    assert "arena_region=SRAM" in (out / "build-cortex-m55" / "mcu_target.txt").read_text()


def test_wrong_input_file_is_reported(elementwise_dir, tmp_path):
    _need_cross_toolchain()
    elf = build.build(elementwise_dir, target="cortex-m4")
    (tmp_path / "short.bin").write_bytes(b"\0" * 10)
    (tmp_path / "good.bin").write_bytes(b"\0" * 64)
    stdout, code = qemu.run_firmware(elf, "cortex-m4", 30, args=["short.bin", "good.bin"], cwd=tmp_path)
    assert code == 1 and "error: an input file has the wrong size" in stdout
    stdout, code = qemu.run_firmware(elf, "cortex-m4", 30, args=["missing.bin", "good.bin"], cwd=tmp_path)
    assert code == 1 and "error: cannot read an input file" in stdout


def test_embedded_inputs(tmp_path):
    """Inputs compiled into the firmware are used when it runs without input files."""
    _need_cross_toolchain()
    out = tmp_path / "model"
    shutil.copytree(FIXTURES / "elementwise", out)
    inputs = random_inputs(21, (1, 2, 4, 8))
    elf = build.build(out, target="cortex-m55", inputs=inputs)
    stdout, code = qemu.run_firmware(elf, "cortex-m55", 30)
    assert code == 0
    parsed = run.parse_harness_output(stdout)
    assert parsed.status == 0
    want = elementwise_oracle(*inputs)
    assert parsed.data[0] == want[0].tobytes() and parsed.data[1] == want[1].astype("<i4").tobytes()


def test_cmsis_nn_model_without_cmsis_nn_path(tmp_path, monkeypatch):
    """No checkout given and the pinned commit out of reach (offline): the C calls CMSIS-NN, so no fall back."""
    _need_host_toolchain()
    monkeypatch.delenv("CMSIS_NN_PATH", raising=False)
    monkeypatch.setenv("MCU_CMSIS_NN_GIT_URL", "file:///nonexistent/CMSIS-NN.git")
    monkeypatch.setenv("MCU_CMSIS_NN_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "model"
    shutil.copytree(FIXTURES / "cmsis_add", out)      # a fresh copy: no build directory to remember a path
    with pytest.raises(UserError, match="calls CMSIS-NN kernels and CMSIS-NN could not be fetched.*set CMSIS_NN_PATH"):
        build.build(out, target="host")


@pytest.mark.parametrize("target", ["host", "cortex-m55", "cortex-m4", "cortex-m3"])
def test_cmsis_nn_tier(cmsis_add_dir, target):
    """One CMSIS-NN call per layer; on each core a different path of the kernel (MVE, DSP, C)."""
    path = _cmsis_nn_path()
    if target == "host":
        _need_host_toolchain()
    else:
        _need_cross_toolchain()
    inputs = random_inputs(13, (1, 100))
    counting = target != "host"
    result = run.run(cmsis_add_dir, inputs, target=target, cmsis_nn_path=path, count_instructions=counting)
    np.testing.assert_array_equal(result.outputs_q[0], cmsis_add_oracle(*inputs)[0])
    if counting:
        counts = result.instructions
        assert next(iter(counts["layers"][0]["functions"])) == "arm_elementwise_add_s8"
        assert next(iter(counts["layers"][1]["functions"])) == "arm_relu_q7"
        assert counts["cmsis-nn"] > 0.9 * counts["total"]
        if target == "cortex-m55":   # the MVE path runs vector instructions
            assert counts["fp_vector"] > 0
        else:
            assert counts["fp_vector"] == 0


def test_mcu_run_cli(elementwise_dir, tmp_path):
    _need_cross_toolchain()
    inputs = random_inputs(17, (1, 2, 4, 8))
    np.savez(tmp_path / "in.npz", input0=inputs[0], input1=inputs[1])
    cmd = [sys.executable, "-m", "mcu_mlir.tools.mcu_run", str(elementwise_dir), "--inputs", str(tmp_path / "in.npz"),
           "--outputs", str(tmp_path / "out.npz"), "--target", "cortex-m55", "--count-instructions"]
    env = {**os.environ, "PYTHONPATH": str(Path(run.__file__).resolve().parents[2])}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "total (one inference)" in proc.stdout and "layer2" in proc.stdout
    saved = np.load(tmp_path / "out.npz")
    want = elementwise_oracle(*inputs)
    np.testing.assert_array_equal(saved["output0_q"], want[0])
    np.testing.assert_array_equal(saved["output1_q"], want[1])
    np.testing.assert_allclose(saved["output0"], (want[0].astype(np.float64) - 5) * np.float32(0.1), rtol=1e-6)

    bad = subprocess.run(cmd[:-3] + ["--target", "host", "--count-instructions"], capture_output=True, text=True, env=env)
    assert bad.returncode == 1 and "needs a Cortex-M target" in bad.stderr and "Traceback" not in bad.stderr



REFERENCE_TOSA = """
func.func @main(%arg0: tensor<1x8xi8>) -> tensor<1x8xi8> {
  %0 = tosa.clamp %arg0 {min_val = -10 : i8, max_val = 20 : i8} : (tensor<1x8xi8>) -> tensor<1x8xi8>
  return %0 : tensor<1x8xi8>
}
"""


def test_mcu_run_reference(tmp_path):
    """--reference quantizes with report.json's parameters and runs model.tosa.mlir in tosa_reference_model."""
    if shutil.which("tosa_reference_model") is None and not (Path(sys.executable).parent / "tosa_reference_model").exists():
        pytest.skip("tosa_reference_model not installed (pip install tosa-tools)")
    out = tmp_path / "model"
    out.mkdir()
    (out / "model.tosa.mlir").write_text(REFERENCE_TOSA)
    quant = {"inputs": [{"shape": [1, 8], "dtype": "int8", "scale": 0.25, "zero_point": 3}],
             "outputs": [{"shape": [1, 8], "dtype": "int8", "scale": 0.25, "zero_point": 3}]}
    (out / "report.json").write_text(__import__("json").dumps({"quantization": quant}))
    x = np.array([[-40.0, -3.3, -0.125, 0.125, 1.0, 4.375, 4.4, 60.0]], np.float32)
    np.savez(tmp_path / "in.npz", input0=x)
    env = {**os.environ, "PYTHONPATH": str(Path(run.__file__).resolve().parents[2]),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run([sys.executable, "-m", "mcu_mlir.tools.mcu_run", str(out), "--inputs", str(tmp_path / "in.npz"),
                           "--outputs", str(tmp_path / "out.npz"), "--reference"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    q = np.clip(np.round(x.astype(np.float64) / 0.25) + 3, -128, 127)   # -0.125/0.25 = -0.5 rounds to even: 0
    want = np.clip(q, -10, 20).astype(np.int8)
    saved = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(saved["output0_q"], want)
    np.testing.assert_array_equal(saved["output0"], ((want.astype(np.float64) - 3) * 0.25).astype(np.float32))


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_failed_assert_in_the_model_is_reported(tmp_path, target):
    """A failing assert (as in MCU_DEBUG_SCRATCH builds) stops the firmware with a message, not a hang."""
    if target == "host":
        _need_host_toolchain()
    else:
        _need_cross_toolchain()
    out = tmp_path / "model"
    shutil.copytree(FIXTURES / "elementwise", out)
    source = (out / "model.c").read_text()
    source = source.replace('#include "model.h"\n', '#include "model.h"\n\n#include <assert.h>\n', 1)
    source = source.replace("  mcu_layer_marker(0);\n", "  assert(x0[0] != 99);\n  mcu_layer_marker(0);\n", 1)
    (out / "model.c").write_text(source)
    inputs = random_inputs(1, (1, 2, 4, 8))
    run.run(out, inputs, target=target)      # passes while x0[0] != 99
    inputs[0][0, 0, 0, 0] = 99
    with pytest.raises(UserError, match=r"the model failed on .*x0\[0\] != 99"):
        run.run(out, inputs, target=target, timeout=30)


def test_model_compiled_for_another_kernel_path(cmsis_add_dir, tmp_path):
    out = tmp_path / "model"
    shutil.copytree(cmsis_add_dir, out, ignore=shutil.ignore_patterns("build-*"))
    (out / "report.json").write_text('{"target": "cortex-m55"}\n')   # what the compile records
    with pytest.raises(UserError, match="compiled for cortex-m55.*compile it again with --target cortex-m4"):
        build.build(out, target="cortex-m4", cmsis_nn_path=tmp_path)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m4"])
def test_fault_is_reported(tmp_path, target):
    """A jump into the never-executable system region faults: the handler reports it and QEMU exits."""
    _need_cross_toolchain()
    out = tmp_path / "model"
    shutil.copytree(FIXTURES / "elementwise", out)
    source = (out / "model.c").read_text().replace(
        "  mcu_layer_marker(0);\n", "  if (x0[0] == 42) ((void (*)(void))0xF0000001u)();\n  mcu_layer_marker(0);\n", 1)
    (out / "model.c").write_text(source)
    inputs = random_inputs(4, (1, 2, 4, 8))
    inputs[0][0, 0, 0, 0] = 42
    with pytest.raises(UserError, match=r"the firmware faulted under QEMU \(mcu: fault, CFSR=0x[0-9a-f]{8}"):
        run.run(out, inputs, target=target, timeout=30)


@pytest.mark.parametrize("target", ["host", "cortex-m55", "cortex-m4", "cortex-m0"])
def test_cmsis_nn_conv(cmsis_conv_dir, target):
    """A 3x3 convolution 1x16x16x16 -> 16 on each kernel path, bit for bit against numpy; the counts
    are of the order TARGET.md measured per call (M0 4.46M, M4 1.37M, M55 0.23M instructions)."""
    path = _cmsis_nn_path()
    if target == "host":
        _need_host_toolchain()
    else:
        _need_cross_toolchain()
    x = random_inputs(23, (1, 16, 16, 16), count=1)
    result = run.run(cmsis_conv_dir, x, target=target, cmsis_nn_path=path, count_instructions=target != "host")
    np.testing.assert_array_equal(result.outputs_q[0], cmsis_conv_oracle(x[0])[0])
    if target != "host":
        counts = result.instructions
        expected = {"cortex-m55": 0.23e6, "cortex-m4": 1.37e6, "cortex-m0": 4.46e6}[target]
        assert 0.5 * expected < counts["total"] < 2 * expected, counts["total"]
        # memcpy/memset (and __muldi3 on the M0) are called by the kernel; the glue is a few dozen instructions.
        assert counts["cmsis-nn"] + counts["helpers"] == counts["total"] - counts["other"]
        assert counts["other"] < 100 and counts["kernel_share_with_helpers"] > 0.9999
        assert counts["cmsis-nn"] > 0.9 * counts["total"]


def test_build_directory_remembers_its_cmsis_nn_checkout(cmsis_add_dir, monkeypatch):
    path = _cmsis_nn_path()
    _need_host_toolchain()
    first = build.build(cmsis_add_dir, target="host", cmsis_nn_path=path)
    monkeypatch.delenv("CMSIS_NN_PATH", raising=False)
    assert build.build(cmsis_add_dir, target="host") == first
    inputs = random_inputs(8, (1, 100))
    np.testing.assert_array_equal(run.run(cmsis_add_dir, inputs, target="host").outputs_q[0],
                                  cmsis_add_oracle(*inputs)[0])


def test_weights_too_big_for_flash(tmp_path):
    """5 MiB of constants do not fit the AN386's 4 MiB code memory: reported with both figures."""
    _need_cross_toolchain()
    out = tmp_path / "model"
    shutil.copytree(FIXTURES / "elementwise", out)
    source = (out / "model.c").read_text()
    source = source.replace("int mcu_model_run(", "const uint8_t big_weights[5 << 20] = {1};\n\nint mcu_model_run(", 1)
    source = source.replace("  mcu_layer_marker(-1);", "  y1[0] += big_weights[(uint8_t)x0[0]];\n  mcu_layer_marker(-1);", 1)
    (out / "model.c").write_text(source)
    with pytest.raises(UserError) as err:
        build.build(out, target="cortex-m4")
    message = str(err.value)
    assert "does not fit the memory of mps2-an386 (cortex-m4)" in message
    needed = int(message.split("FLASH (.text) needs ")[1].split(" bytes")[0])
    assert needed > 5 << 20 and f"{4 << 20} available" in message


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m4", "cortex-m7"])
def test_stack_overflow_faults(tmp_path, target):
    """A frame larger than the 16 KiB stack runs into the guard below it (the MPU on ARMv7-M, unmapped
    memory on the ARMv8-M machines) instead of writing to memory that does not exist."""
    _need_cross_toolchain()
    out = tmp_path / "model"
    shutil.copytree(FIXTURES / "elementwise", out)
    source = (out / "model.c").read_text().replace("  mcu_layer_marker(0);\n", (
        "  if (x0[0] == 7) { volatile uint8_t big[20000]; big[0] = 1; big[19999] = 2; y1[0] = big[0]; }\n"
        "  mcu_layer_marker(0);\n"), 1)
    (out / "model.c").write_text(source)
    inputs = random_inputs(6, (1, 2, 4, 8))
    inputs[0][0, 0, 0, 0] = 0
    result = run.run(out, inputs, target=target)
    assert 0 < result.stack_bytes < 16384        # painted-stack measure of the peak use
    inputs[0][0, 0, 0, 0] = 7
    with pytest.raises(UserError, match="the firmware faulted under QEMU"):
        run.run(out, inputs, target=target, timeout=30)


def test_plugin_that_does_not_load_is_reported(elementwise_dir, tmp_path, monkeypatch):
    _need_cross_toolchain()
    elf = build.build(elementwise_dir, target="cortex-m4")
    not_a_plugin = tmp_path / "not_a_plugin.so"
    not_a_plugin.write_text("this is not a shared library")
    monkeypatch.setattr(qemu, "plugin_library", lambda: not_a_plugin)
    with pytest.raises(UserError, match=r"QEMU did not load the instruction-counting plugin .*QEMU \d+\.\d+"):
        qemu.run_firmware(elf, "cortex-m4", 30, args=["--info"], count_into=tmp_path / "counts.txt")

"""mcu-compile's contract: stages, files, report keys, TOSA inputs, determinism and user errors."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODEL = '''
import torch
from torch import nn

class Small(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 6 * 6, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return self.fc(torch.flatten(y, 1))

def small():
    return Small().eval()

def training():
    return Small().train()

class KthValue(nn.Module):
    def forward(self, x):
        return torch.kthvalue(x, 2, dim=1).values

def unsupported():
    return KthValue().eval()

def broken():
    raise RuntimeError("factory failed")

class RuntimeMaskAttention(nn.Module):
    def forward(self, x):       # a mask comparing two activations (one compared with a constant is supported)
        return nn.functional.scaled_dot_product_attention(x, x, x, attn_mask=x[..., :1] > x[..., 1:2])

def runtime_mask():
    return RuntimeMaskAttention().eval()

class Chatty(Small):
    def forward(self, x):
        import warnings
        warnings.warn("a note from the model's own code")
        return super().forward(x)

def chatty():
    return Chatty().eval()

class Gated(Small):
    def forward(self, x):
        return torch.sigmoid(super().forward(x))

def gated():
    return Gated().eval()
'''


def mcu_compile(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mcu_mlir.tools.mcu_compile", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=600,
                          env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")})


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "small.py"
    path.write_text(MODEL)
    return path


@pytest.fixture(scope="module")
def compiled(model_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    proc = mcu_compile(f"{model_file}:small", "--input-shape", "1,2,6,6", "--target", "cortex-m4",
                       "--backend", "portable", "--emit", "c", "--calibration", "4", "-o", out)
    assert proc.returncode == 0, proc.stderr
    return out


def test_c_stage_writes_every_file_and_report_key(compiled):
    names = {p.name for p in compiled.iterdir()}
    assert {"tosa-import.mlir", "model.tosa.mlir", "cmsisnn.mlir", "model.c", "model.h", "report.json"} <= names
    report = json.loads((compiled / "report.json").read_text())
    for key in ("arena_bytes", "arena_lower_bound_bytes", "weights_bytes", "transposes", "compile_seconds", "ops"):
        assert key in report, key
    assert "flash_bytes" not in report  # the firmware stage was not reached: absent, not zero
    for op in report["ops"]:
        assert {"name", "tosa_op", "kernel", "weights_bytes", "arena_offset"} <= set(op)
    kernels = [op["kernel"] for op in report["ops"]]
    assert "portable:conv2d_s8" in kernels
    assert report["arena_overlap_bound_bytes"] <= report["arena_bytes"]
    assert report["transposes"] <= 1   # at most the NCHW input's


def test_same_input_gives_byte_identical_c(model_file, compiled, tmp_path):
    proc = mcu_compile(f"{model_file}:small", "--input-shape", "1,2,6,6", "--target", "cortex-m4",
                       "--backend", "portable", "--emit", "c", "--calibration", "4", "-o", tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name in ("model.c", "model.h", "model.tosa.mlir", "cmsisnn.mlir"):
        assert (tmp_path / name).read_bytes() == (compiled / name).read_bytes(), name


def test_tosa_file_compiles_the_same_way(compiled, tmp_path):
    tosa_file = tmp_path / "in.mlir"
    tosa_file.write_text((compiled / "model.tosa.mlir").read_text())
    out = tmp_path / "out"
    proc = mcu_compile(tosa_file, "--target", "cortex-m4", "--backend", "portable", "--emit", "c", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert (out / "model.c").read_text() == (compiled / "model.c").read_text()


def test_tosa_flatbuffer_input(compiled, tmp_path):
    from mcu_mlir.reference import run_reference
    flat = tmp_path / "m.tosa"
    subprocess.run(["tosa-opt", str(compiled / "model.tosa.mlir"), "--tosa-serialize",
                    f"--tosa-flatbuffer-filename={flat}", "-o", os.devnull], check=True,
                   env={**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]})
    out = tmp_path / "out"
    proc = mcu_compile(flat, "--target", "cortex-m4", "--backend", "portable", "--emit", "tosa", "-o", out)
    assert proc.returncode == 0, proc.stderr
    x = np.random.default_rng(0).integers(-128, 128, size=(1, 2, 6, 6), dtype=np.int8)
    before = run_reference((compiled / "model.tosa.mlir").read_text(), [x])
    after = run_reference((out / "model.tosa.mlir").read_text(), [x])
    np.testing.assert_array_equal(before[0], after[0])


@pytest.mark.parametrize("args, message", [
    (["{m}:small", "--input-shape", "1,2,a,6"], "--input-shape '1,2,a,6': expected comma-separated integers"),
    (["{m}:small"], "needs --input-shape"),
    # a shape the model was not written for: torch's fake tensors log a traceback of it
    (["{m}:small", "--input-shape", "1,2,5,5"], "torch.export failed: a and b must have same reduction dim"),
    (["{m}:nothing", "--input-shape", "1,2,6,6"], "nothing"),
    (["{m}:broken", "--input-shape", "1,2,6,6"], "factory failed"),
    (["{m}:training", "--input-shape", "1,2,6,6"], "eval"),
    (["{m}:unsupported", "--input-shape", "1,2,6,6"], "kthvalue"),
    (["{m}:runtime_mask", "--input-shape", "1,2,6,6"], "computed from activations in a way that is not supported"),
    (["{m}:small", "--input-shape", "1,2,6,6", "--quantize", "none", "--emit", "c"], "integer model"),
    (["missing.py:f", "--input-shape", "1"], "missing.py"),
    (["{bad}"], "error:"),
])
def test_user_errors_exit_1_without_traceback(model_file, tmp_path, args, message):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main(%a: tensor<2xi8>) -> tensor<2xi8> {\n  return %b : tensor<2xi8>\n}\n")
    args = [a.format(m=model_file, bad=bad) for a in args]
    proc = mcu_compile(*args, "-o", tmp_path / "out")
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("text, message", [
    ("", "no function with a body"),
    ("func.func private @helper(%a: tensor<1x4xi8>) -> tensor<1x4xi8>\n", "no function with a body"),
    ("func.func @main(%a: tensor<?x4xi8>) -> tensor<?x4xi8> {\n"
     "  %0 = tosa.abs %a : (tensor<?x4xi8>) -> tensor<?x4xi8>\n  return %0 : tensor<?x4xi8>\n}\n",
     "model.mlir:1:1: error: argument #0 has dynamic shape ?x4"),
])
def test_tosa_file_without_a_static_model_is_refused(tmp_path, text, message):
    """An empty file, a declaration only, or dynamic shapes: a user error naming the file, never
    a crash or C for a shape that does not exist."""
    src = tmp_path / "model.mlir"
    src.write_text(text)
    proc = mcu_compile(src, "--backend", "portable", "--emit", "c", "-o", tmp_path / "out")
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out" / "model.c").exists()


def test_malformed_tosa_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main(%a: tensor<2xi8>) -> tensor<2xi8> {\n  return %b : tensor<2xi8>\n}\n")
    proc = mcu_compile(bad, "-o", tmp_path / "out")
    assert proc.returncode == 1
    assert f"{bad}:2:" in proc.stderr


def test_nhwc_io_layout_reaches_the_header(model_file, compiled, tmp_path):
    proc = mcu_compile(f"{model_file}:small", "--input-shape", "1,2,6,6", "--target", "cortex-m4",
                       "--backend", "portable", "--io-layout", "nhwc", "--calibration", "4", "-o", tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["transposes"] == 0
    quant = report["quantization"]["inputs"][0]
    model_c = (tmp_path / "model.c").read_text()
    # The header describes what the caller passes: NHWC, with the frontend's quantization.
    assert '{"input0", 4, {1, 6, 6, 2}, 1, 0, ' in model_c
    assert f"{quant['scale']!r}f, {quant['zero_point']}," in model_c


@pytest.mark.parametrize("backend", ["cmsis-nn", "portable"])
def test_single_round_rescale_of_an_accumulator_compiles(tmp_path, backend):
    """TOSA allows SINGLE_ROUND on an int32 -> int8 rescale (the frontend always writes
    DOUBLE_ROUND): it compiles to the exact portable rescale, not refused, not fused."""
    src = tmp_path / "model.mlir"
    src.write_text(
        "func.func @main(%a: tensor<1x8xi32>) -> tensor<1x8xi8> {\n"
        '  %m = "tosa.const"() {values = dense<1500000000> : tensor<1xi32>} : () -> tensor<1xi32>\n'
        '  %s = "tosa.const"() {values = dense<38> : tensor<1xi8>} : () -> tensor<1xi8>\n'
        '  %iz = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>\n'
        '  %oz = "tosa.const"() {values = dense<3> : tensor<1xi8>} : () -> tensor<1xi8>\n'
        "  %0 = tosa.rescale %a, %m, %s, %iz, %oz {input_unsigned = false, output_unsigned = false, "
        "per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, "
        "tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>\n"
        "  return %0 : tensor<1x8xi8>\n}\n")
    proc = mcu_compile(src, "--backend", backend, "--emit", "c", "-o", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    kernel_ir = (tmp_path / "out" / "cmsisnn.mlir").read_text()
    assert '"portable.rescale"' in kernel_ir and "double_round = 0 : i32" in kernel_ir


I48_MODEL = """func.func @main(%a: tensor<1x3x3x2xi16>) -> tensor<1x3x3x3xi48> {
  %w = "tosa.const"() {values = dense<[[[[1, 2]]], [[[3, -4]]], [[[5, 6]]]]> : tensor<3x1x1x2xi8>} : () -> tensor<3x1x1x2xi8>
  %b = "tosa.const"() {values = dense<[7, -8, 9]> : tensor<3xi48>} : () -> tensor<3xi48>
  %z = "tosa.const"() {values = dense<0> : tensor<1xi16>} : () -> tensor<1xi16>
  %wz = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.conv2d %a, %w, %b, %z, %wz {acc_type = i48, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x2xi16>, tensor<3x1x1x2xi8>, tensor<3xi48>, tensor<1xi16>, tensor<1xi8>) -> tensor<1x3x3x3xi48>
  return %0 : tensor<1x3x3x3xi48>
}
"""


def test_int48_output_runs_on_the_host_and_the_reference_alike(tmp_path):
    """An int48 graph output: the C stores it in 64 bits, mcu-run reads 8-byte elements on the
    host and from tosa_reference_model, and the two agree."""
    import numpy as np
    src = tmp_path / "model.mlir"
    src.write_text(I48_MODEL)
    proc = mcu_compile(src, "--backend", "portable", "--target", "host", "--emit", "c", "-o", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    x = np.random.default_rng(0).integers(-30000, 30000, (1, 3, 3, 2)).astype(np.int16)
    np.savez(tmp_path / "in.npz", input0=x)
    got = {}
    for name, extra in (("host", ["--target", "host"]), ("reference", ["--reference"])):
        run = subprocess.run([sys.executable, "-m", "mcu_mlir.tools.mcu_run", str(tmp_path / "out"), "--inputs",
                              str(tmp_path / "in.npz"), "--outputs", str(tmp_path / f"{name}.npz"), *extra],
                             capture_output=True, text=True, timeout=600,
                             env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")})
        assert run.returncode == 0, run.stderr
        got[name] = np.load(tmp_path / f"{name}.npz")["output0_q"]
    assert got["host"].dtype == got["reference"].dtype == np.int64
    np.testing.assert_array_equal(got["host"], got["reference"])


def _save_program(model_file, factory, path):
    """torch.export.save of FACTORY() from the test model file, as a user would write a .pt2."""
    script = (f"import sys, torch; sys.path.insert(0, {str(model_file.parent)!r}); import small; "
              f"torch.export.save(torch.export.export(small.{factory}(), (torch.randn(1, 2, 6, 6),)), {str(path)!r})")
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True)


def test_saved_exported_program_compiles_like_its_module(model_file, tmp_path):
    """A .pt2 with real calibration data gives the C the module itself gives with the same data."""
    program = tmp_path / "small.pt2"
    _save_program(model_file, "small", program)
    calibration = tmp_path / "calibration.npz"
    np.savez(calibration, input0=np.random.default_rng(3).standard_normal((4, 1, 2, 6, 6)).astype(np.float32))
    common = ["--target", "cortex-m4", "--backend", "portable", "--calibration", calibration]
    from_program = mcu_compile(program, *common, "-o", tmp_path / "a")
    assert from_program.returncode == 0, from_program.stderr
    from_module = mcu_compile(f"{model_file}:small", "--input-shape", "1,2,6,6", *common, "-o", tmp_path / "b")
    assert from_module.returncode == 0, from_module.stderr
    assert (tmp_path / "a" / "model.c").read_text() == (tmp_path / "b" / "model.c").read_text()


def test_exported_program_in_training_mode_is_refused_with_its_layer(model_file, tmp_path):
    program = tmp_path / "training.pt2"
    _save_program(model_file, "training", program)
    proc = mcu_compile(program, "-o", tmp_path / "out")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "exported in training mode" in proc.stderr and "layer bn" in proc.stderr
    assert "small.py:" in proc.stderr


def test_unreadable_exported_program_is_a_user_error(tmp_path):
    program = tmp_path / "broken.pt2"
    program.write_bytes(b"not a zip archive")
    proc = mcu_compile(program, "-o", tmp_path / "out")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "W1" not in proc.stderr
    assert "not a torch.export program" in proc.stderr


def test_only_our_own_lines_unless_verbose(model_file, tmp_path):
    """Warnings from code that is not mcu-mlir's (here the model file's) and torch's logs are hidden;
    -v shows them. Our own actionable warning (no calibration data) is one line."""
    args = [f"{model_file}:chatty", "--input-shape", "1,2,6,6", "--backend", "portable"]
    quiet = mcu_compile(*args, "-o", tmp_path / "q")
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr.splitlines() == [line for line in quiet.stderr.splitlines() if line.startswith("mcu-compile: ")]
    assert "a note from the model's own code" not in quiet.stderr
    advice = [line for line in quiet.stderr.splitlines() if "no calibration data" in line]
    assert len(advice) == 1 and "--calibration FILE.npz|DIR" in advice[0] and "calibration=" not in advice[0]
    verbose = mcu_compile(*args, "-v", "-o", tmp_path / "v")
    assert verbose.returncode == 0, verbose.stderr
    assert "a note from the model's own code" in verbose.stderr


def test_layers_left_on_portable_kernels_are_one_line(model_file, tmp_path):
    """A CMSIS-NN build says which layers run on portable kernels, in one line; a build with none says nothing."""
    args = ["--input-shape", "1,2,6,6", "--backend", "cmsis-nn", "--calibration", "4"]
    gated = mcu_compile(f"{model_file}:gated", *args, "-o", tmp_path / "g")
    assert gated.returncode == 0, gated.stderr
    notes = [line for line in gated.stderr.splitlines() if "portable kernels" in line]
    assert len(notes) == 1 and "tosa.table -> portable:table_s8" in notes[0], gated.stderr
    plain = mcu_compile(f"{model_file}:small", *args, "-o", tmp_path / "s")
    assert plain.returncode == 0 and "portable kernels" not in plain.stderr, plain.stderr


def _mcu_run(*args):
    return subprocess.run([sys.executable, "-m", "mcu_mlir.tools.mcu_run", *map(str, args)], capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")})


def test_run_check_compares_the_c_with_the_reference_model(compiled, tmp_path):
    """`mcu-run --check`: bit-exact says so (exit 0); a C whose last layer requantizes one channel
    differently is caught, with the elements that differ and by how much (exit 1)."""
    import re
    import shutil
    np.savez(tmp_path / "in.npz", input0=np.random.default_rng(3).standard_normal((1, 2, 6, 6)).astype(np.float32))
    run = _mcu_run(compiled, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz", "--check")
    assert run.returncode == 0, run.stderr
    assert "output0: bit-exact (host against tosa_reference_model)" in run.stdout
    broken = tmp_path / "broken"
    shutil.copytree(compiled, broken, ignore=shutil.ignore_patterns("build-*"))
    c = (broken / "model.c").read_text()
    last = list(re.finditer(r"_multiplier\[\d+\] = \{(\d+)", c))[-1]
    c = c[:last.start(1)] + str(int(last.group(1)) // 2) + c[last.end(1):]
    (broken / "model.c").write_text(c)
    run = _mcu_run(broken, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz", "--check")
    assert run.returncode == 1, run.stdout + run.stderr
    differ = re.search(r"output0: (\d+) of 5 elements differ, largest difference (\d+)", run.stdout)
    assert differ and int(differ.group(1)) >= 1 and int(differ.group(2)) >= 1, run.stdout
    assert "differs from tosa_reference_model" in run.stderr

"""Runs a compiled model on the host or under QEMU and returns its outputs.

    result = run(outdir, [x0, x1], target="cortex-m55", count_instructions=True)
    result.outputs_q        # raw integers, as the C wrote them
    result.outputs_float    # dequantized with the model's output parameters
    result.instructions     # per layer and total (QEMU targets only), or None

Float inputs are quantized with the frontend's parameters (report.json's "quantization", in double
precision) or else those of the model's own tables (mcu_model_inputs[], read by running the harness
with --info), as the frontend does: round half to even of x / scale, plus the zero point, saturated.
"""

from __future__ import annotations

import dataclasses
import json
import re
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import progress
from ..diagnostics import UserError
from ..ir import types
from . import build as build_mod
from .. import cores
from . import project, qemu


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    elem_bytes: int
    is_float: bool
    scale: float
    zero_point: int
    size_bytes: int
    # An output whose slices along `axis` keep their own quantization (frontend/quantize/concat_parts.py):
    # (start, stop, scale, zero_point) each; scale and zero_point are then 0.
    parts: tuple = ()
    axis: int = 0

    @property
    def dtype(self) -> np.dtype:
        if self.is_float:
            return np.dtype(np.float32)
        return np.dtype({1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[self.elem_bytes])


@dataclass
class RunResult:
    outputs_q: list[np.ndarray]
    outputs_float: list[np.ndarray]
    instructions: dict | None = None
    stack_bytes: int | None = None     # peak stack use on a Cortex-M (painted stack), None on the host
    inputs: list[TensorInfo] = field(default_factory=list)
    outputs: list[TensorInfo] = field(default_factory=list)


@dataclass
class HarnessOutput:
    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    status: int | None
    data: list[bytes]
    stack_bytes: int | None = None


_PART_RE = re.compile(r"part (\d+) axis=(\d+) start=(\d+) stop=(\d+) scale=0x([0-9a-f]{8}) zero_point=(-?\d+)")
_INFO_RE = re.compile(r"(input|output) (\d+) (\S+) rank=(\d+) shape=([\d,]*) elem_bytes=(\d+) is_float=(\d) "
                      r"scale=0x([0-9a-f]{8}) zero_point=(-?\d+) bytes=(\d+)")


def parse_harness_output(text: str) -> HarnessOutput:
    """Parses what lib/target/harness.c prints (see its header comment)."""
    lines = text.splitlines()
    if "mcu-harness 1" not in lines:
        raise UserError("the model's program printed no harness header; its output was:\n" + text[-2000:])
    result = HarnessOutput([], [], None, [])
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _INFO_RE.fullmatch(line)
        if m:
            info = TensorInfo(m.group(3), tuple(int(d) for d in m.group(5).split(",") if d), int(m.group(6)),
                              m.group(7) == "1", struct.unpack("<f", bytes.fromhex(m.group(8))[::-1])[0],
                              int(m.group(9)), int(m.group(10)))
            (result.inputs if m.group(1) == "input" else result.outputs).append(info)
        elif _PART_RE.fullmatch(line):
            p = _PART_RE.fullmatch(line)
            k = int(p.group(1))
            if k < len(result.outputs):
                old = result.outputs[k]
                part = (int(p.group(3)), int(p.group(4)), struct.unpack("<f", bytes.fromhex(p.group(5))[::-1])[0],
                        int(p.group(6)))
                result.outputs[k] = dataclasses.replace(old, parts=old.parts + (part,), axis=int(p.group(2)))
        elif line.startswith("status "):
            result.status = int(line.split()[1])
        elif line.startswith("stack_bytes "):
            result.stack_bytes = int(line.split()[1])
        elif line.startswith("data "):
            count = int(line.split()[2])
            hex_text, have = [], 0   # a running length: large outputs have tens of thousands of lines
            while have < 2 * count:
                i += 1
                hex_text.append(lines[i].strip())
                have += len(hex_text[-1])
            result.data.append(bytes.fromhex("".join(hex_text)))
        elif line.startswith("error: "):
            raise UserError(f"the model's harness failed: {line[7:]}")
        i += 1
    return result


def quantize(x: np.ndarray, info: TensorInfo) -> np.ndarray:
    """Float -> the input's integer type, as PT2E's quantize_per_tensor (round half to even)."""
    x = np.asarray(x)
    if info.is_float:
        return x.astype(np.float32)
    if np.issubdtype(x.dtype, np.integer):
        return x.astype(info.dtype)          # already quantized
    limits = np.iinfo(info.dtype)
    q = np.round(x.astype(np.float64) / info.scale) + info.zero_point
    return np.clip(q, limits.min, limits.max).astype(info.dtype)


def dequantize(q: np.ndarray, info: TensorInfo) -> np.ndarray:
    if info.is_float:
        return q.astype(np.float32)
    if info.parts:       # each slice along the axis at its own parameters
        out = (q.astype(np.int64) * 0).astype(np.float32)
        index = [slice(None)] * q.ndim
        for start, stop, scale, zp in info.parts:
            index[info.axis] = slice(start, stop)
            out[tuple(index)] = (q[tuple(index)].astype(np.int64) - zp) * np.float64(scale)
        return out
    return ((q.astype(np.int64) - info.zero_point) * np.float64(info.scale)).astype(np.float32)


def _parts_as_held(r: "TensorInfo", shape: tuple) -> tuple[tuple, int]:
    """report.json's parts of an output and their axis in the tensor as the C holds it (`shape`):
    a result made channels-last has its channel axis last."""
    axis = r.axis
    if r.parts and r.shape and tuple(shape) != tuple(r.shape) and len(shape) == len(r.shape):
        perm = [0, *range(2, len(shape)), 1]
        if tuple(r.shape[p] for p in perm) == tuple(shape):
            axis = perm.index(axis)
    return r.parts, axis


SANITIZER_EXIT_CODE = 86   # lib/target/sanitizer_options.c


def _execute(executable: Path, target: str, args: list[str], cwd: Path, timeout: float,
             count_into: Path | None = None) -> tuple[str, int]:
    if cores.core(target).is_host:
        try:
            proc = subprocess.run([str(executable), *args], capture_output=True, text=True, cwd=cwd, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise UserError(f"{executable} did not finish within {timeout:g} s") from None
        return proc.stdout + (proc.stderr if proc.returncode not in (0, 1, 2) else ""), proc.returncode
    return qemu.run_firmware(executable, target, timeout, args=args, cwd=cwd, count_into=count_into)


def model_io(executable: Path, target: str, timeout: float = 60) -> tuple[list[TensorInfo], list[TensorInfo]]:
    """The model's input and output tables, from its harness (cached next to the executable)."""
    cache = executable.with_name("mcu_model_io.json")
    key = [executable.stat().st_mtime_ns, executable.stat().st_size]
    if cache.exists():
        cached = json.loads(cache.read_text())
        if cached["key"] == key:
            def info(t):
                return TensorInfo(**{**t, "shape": tuple(t["shape"]), "parts": tuple(map(tuple, t.get("parts", ())))})
            return [info(t) for t in cached["inputs"]], [info(t) for t in cached["outputs"]]
    text, code = _execute(executable, target, ["--info"], executable.parent, timeout)
    if code != 0:
        raise UserError(f"the model's program failed to describe its inputs (exit {code}):\n{text[-2000:]}")
    parsed = parse_harness_output(text)
    cache.write_text(json.dumps({"key": key, "inputs": [t.__dict__ for t in parsed.inputs],
                                 "outputs": [t.__dict__ for t in parsed.outputs]}))
    return parsed.inputs, parsed.outputs


_MARKER_RE = re.compile(r"^\s*[a-z0-9_]*_layer_marker\((\d+)\);", re.M)


def marked_layers(outdir: Path) -> list[dict]:
    """The layers model.c marks, in the order it runs them: its run function is straight-line code,
    so the k-th marker call executed is the k-th in the source. Names and kernels from report.json's
    ops (indexed by the marker's argument) when it has them."""
    found = project.find_model(outdir)
    source = outdir / f"{found[0] if found else 'model'}.c"
    indices = [int(i) for i in _MARKER_RE.findall(source.read_text())] if source.exists() else []
    ops = []
    report = outdir / "report.json"
    if report.exists():
        try:
            ops = json.loads(report.read_text()).get("ops") or []
        except ValueError:
            ops = []
    layers = []
    for index in indices:
        layer = {"index": index, "name": f"layer{index}"}
        if isinstance(ops, list) and index < len(ops) and isinstance(ops[index], dict):
            layer["name"] = str(ops[index].get("name", layer["name"]))
            if "kernel" in ops[index]:
                layer["kernel"] = str(ops[index]["kernel"])
        layers.append(layer)
    return layers


def _prefer_report_params(outdir: Path, input_infos: list[TensorInfo], output_infos: list[TensorInfo]):
    """The C tables hold float32 scales; report.json's are the frontend's exact ones. Use those when
    they describe the same tensors (same count and integer types)."""
    report_io = io_from_report(outdir)
    if report_io is None:
        return input_infos, output_infos
    merged = []
    for c_infos, report_infos in zip((input_infos, output_infos), report_io):
        if len(c_infos) != len(report_infos) or any(
                c.is_float != r.is_float or (not c.is_float and c.elem_bytes != r.elem_bytes)
                for c, r in zip(c_infos, report_infos)):
            return input_infos, output_infos
        merged.append([TensorInfo(c.name, c.shape, c.elem_bytes, c.is_float, r.scale, r.zero_point, c.size_bytes,
                                  *_parts_as_held(r, c.shape))
                       for c, r in zip(c_infos, report_infos)])
    return merged[0], merged[1]


def run(outdir, inputs: list[np.ndarray], *, target: str = "host", count_instructions: bool = False,
        cmsis_nn_path=None, opt: str = "-O2", timeout: float = 120, sanitize: bool = False) -> RunResult:
    """Builds (if needed) and runs OUTDIR's model once on `inputs` (float arrays, or integer arrays
    already in the model's input types)."""
    outdir = Path(outdir).resolve()
    if count_instructions and cores.core(target).is_host:
        raise UserError("counting instructions needs a Cortex-M target (it runs under QEMU), not 'host'")
    with progress.step(f"building for {target}"):
        executable = build_mod.build(outdir, target=target, cmsis_nn_path=cmsis_nn_path, opt=opt, sanitize=sanitize)
    return run_executable(executable, outdir, inputs, target=target, count_instructions=count_instructions,
                          timeout=timeout)


def run_executable(executable: Path, outdir, inputs: list[np.ndarray], *, target: str = "host",
                   count_instructions: bool = False, timeout: float = 120) -> RunResult:
    """Runs a built harness of OUTDIR's model once on `inputs` (see `run`)."""
    outdir = Path(outdir).resolve()
    input_infos, output_infos = model_io(executable, target, timeout)
    input_params, output_params = _prefer_report_params(outdir, input_infos, output_infos)
    if len(inputs) != len(input_infos):
        raise UserError(f"the model takes {len(input_infos)} input(s), {len(inputs)} given")
    with tempfile.TemporaryDirectory(prefix="mcu-run-") as tmp:
        tmp_path = Path(tmp)
        args = []
        for i, (array, info) in enumerate(zip(inputs, input_params)):
            array = np.asarray(array)
            if tuple(array.shape) != tuple(info.shape):   # same size in another layout is still wrong
                raise UserError(f"input {i} ({info.name}) has shape {tuple(array.shape)}, the model expects {info.shape}")
            q = quantize(array, info)
            (tmp_path / f"input{i}.bin").write_bytes(np.ascontiguousarray(q).tobytes())
            args.append(f"input{i}.bin")
        counts_file = tmp_path / "counts.txt" if count_instructions else None
        with progress.step("running on the host" if cores.core(target).is_host else f"running on {target} under QEMU"):
            text, code = _execute(executable, target, args, tmp_path, timeout, counts_file)
        if code == SANITIZER_EXIT_CODE:
            raise UserError(f"a sanitizer found an error in the C on {target}:\n{text[-4000:]}")
        if code != 0:
            errors = [line[7:] for line in text.splitlines() if line.startswith("error: ")]
            status = [line for line in text.splitlines() if line.startswith("status ")]
            detail = "; ".join(errors) or (f"mcu_model_run returned {status[0].split()[1]}" if status else text[-2000:])
            raise UserError(f"the model failed on {target} (exit {code}): {detail}")
        parsed = parse_harness_output(text)
        instructions = None
        if counts_file is not None:
            instructions = qemu.instruction_counts(counts_file, executable, executable.parent, marked_layers(outdir))
    outputs_q = [np.frombuffer(data, dtype=info.dtype).reshape(info.shape).copy()
                 for data, info in zip(parsed.data, output_infos)]
    outputs_float = [dequantize(q, info) for q, info in zip(outputs_q, output_params)]
    return RunResult(outputs_q, outputs_float, instructions, parsed.stack_bytes, input_infos, output_infos)


# --- the integer TOSA in tosa_reference_model (mcu-run --reference) -----------------------------

REFERENCE_MODULE = "model.tosa.mlir"
_ELEM_RE = re.compile(r"tensor<(?:[\d?]+x)*(\w+)>")
# Integer I/O types of the reference run: numpy storage and bytes (int48 is stored in 64 bits).
_INT_TYPES = {n: (types.STORAGE[n], types.BYTES[n]) for n in ("i8", "i16", "i32", "i48")}


_DTYPE_BYTES = {"int8": 1, "int16": 2, "int32": 4, "float32": 4}


def io_from_report(outdir: Path) -> tuple[list[TensorInfo], list[TensorInfo]] | None:
    """The I/O quantization the frontend recorded in report.json ("quantization": {"inputs": [{shape,
    dtype, scale, zero_point}], "outputs": [...]}), when it did."""
    report = outdir / "report.json"
    if not report.exists():
        return None
    try:
        quant = json.loads(report.read_text()).get("quantization") or {}
    except ValueError:
        return None
    groups = []
    for key in ("inputs", "outputs"):
        entries = quant.get(key)
        if not isinstance(entries, list) or not all(
                isinstance(e, dict) and {"scale", "zero_point", "dtype"} <= e.keys() and e["dtype"] in _DTYPE_BYTES
                for e in entries):
            return None
        groups.append([TensorInfo(str(e.get("name", f"{key[:-1]}{i}")), tuple(e.get("shape") or ()),
                                  _DTYPE_BYTES[e["dtype"]], e["dtype"] == "float32", float(e["scale"]),
                                  int(e["zero_point"]), 0,
                                  tuple((int(p["start"]), int(p["stop"]), float(p["scale"]), int(p["zero_point"]))
                                        for p in e.get("parts") or ()), int(e.get("axis", 0)))
                       for i, e in enumerate(entries)])
    return groups[0], groups[1]


def run_reference_outdir(outdir, inputs: list[np.ndarray]) -> RunResult:
    """Runs OUTDIR/model.tosa.mlir in tosa_reference_model. Integer inputs are quantized with the
    model's parameters (report.json's, else those of the compiled model's own tables)."""
    from .. import reference

    outdir = Path(outdir).resolve()
    module_path = outdir / REFERENCE_MODULE
    if not module_path.exists():
        raise UserError(f"{module_path} not found: compile with --emit tosa (or later) to run the reference model")
    text = module_path.read_text()
    signature = re.search(r"func\.func\s+(?:public\s+)?@[\w$.]+\((?P<args>.*?)\)\s*->\s*(?P<res>\(.*?\)|tensor<[^>]*>)",
                          text, re.S)
    if not signature:
        raise UserError(f"{module_path} has no entry function")
    arg_types = _ELEM_RE.findall(signature.group("args"))
    res_types = _ELEM_RE.findall(signature.group("res"))
    if len(inputs) != len(arg_types):
        raise UserError(f"the model takes {len(arg_types)} input(s), {len(inputs)} given")

    io = None
    needs_params = any(t in _INT_TYPES for t in arg_types + res_types)
    if needs_params:
        io = io_from_report(outdir)
        if io is None and project.find_model(outdir) is not None:
            io = model_io(build_mod.build(outdir, target="host"), "host")
        if io is None:
            raise UserError("the integer TOSA needs the model's quantization parameters: neither report.json nor "
                            "a compiled model.c in " + str(outdir) + " has them")
    ref_inputs = []
    for i, (x, elem) in enumerate(zip(inputs, arg_types)):
        x = np.asarray(x)
        if elem in _INT_TYPES:
            base = io[0][i]
            info = TensorInfo(base.name, base.shape, _INT_TYPES[elem][1], False, base.scale, base.zero_point, 0)
            x = quantize(x, info)
        ref_inputs.append(x)
    try:
        raw = reference.run_reference(str(module_path), ref_inputs)
    except reference.ReferenceError as err:
        raise UserError(str(err)) from None
    outputs_q, outputs_float, infos = [], [], []
    for i, (y, elem) in enumerate(zip(raw, res_types)):
        if elem in _INT_TYPES:
            base = io[1][i]
            info = TensorInfo(base.name, tuple(y.shape), _INT_TYPES[elem][1], False, base.scale, base.zero_point, y.nbytes,
                              *_parts_as_held(base, tuple(y.shape)))
        else:
            info = TensorInfo(f"output{i}", tuple(y.shape), 4, True, 1.0, 0, y.nbytes)
        y = y.astype(info.dtype)
        outputs_q.append(y)
        outputs_float.append(dequantize(y, info))
        infos.append(info)
    return RunResult(outputs_q, outputs_float, None, None, [], infos)


# --- streaming models: consecutive steps with the state carried (mcu-run --steps) -------------

def state_pairs(outdir) -> list[tuple[int, int]]:
    """The (input, output) pairs a streaming model carries (report.json's "state")."""
    report = Path(outdir) / "report.json"
    try:
        pairs = json.loads(report.read_text()).get("state") or []
    except (OSError, ValueError):
        pairs = []
    return [(int(i), int(j)) for i, j in pairs]


def _step_indices(pairs, n_in: int, n_out: int) -> tuple[list[int], list[int]]:
    state_in, state_out = {i for i, _ in pairs}, {j for _, j in pairs}
    return [i for i in range(n_in) if i not in state_in], [j for j in range(n_out) if j not in state_out]


def run_steps(outdir, steps: list[list[np.ndarray]], *, target: str = "host", cmsis_nn_path=None,
              opt: str = "-O2", timeout: float = 120) -> list[RunResult]:
    """Builds and runs OUTDIR's streaming model (compiled with --state) over consecutive steps:
    mcu_model_reset(), then one mcu_model_step() per entry of `steps` (that step's inputs, the
    model inputs that are not state, in order), the state kept inside the model. One RunResult per
    step, holding the step outputs."""
    outdir = Path(outdir).resolve()
    pairs = state_pairs(outdir)
    if not pairs:
        raise UserError(f"{outdir} holds no streaming model: compile it with --state IN:OUT")
    with progress.step(f"building for {target}"):
        executable = build_mod.build(outdir, target=target, cmsis_nn_path=cmsis_nn_path, opt=opt)
    input_infos, output_infos = model_io(executable, target, timeout)
    input_params, output_params = _prefer_report_params(outdir, input_infos, output_infos)
    step_in, step_out = _step_indices(pairs, len(input_infos), len(output_infos))
    with tempfile.TemporaryDirectory(prefix="mcu-run-") as tmp:
        tmp_path = Path(tmp)
        chunks = []
        for s, arrays in enumerate(steps):
            if len(arrays) != len(step_in):
                raise UserError(f"step {s}: the model takes {len(step_in)} input(s) per step "
                                f"(inputs {', '.join(map(str, step_in))}), {len(arrays)} given")
            for i, array in zip(step_in, arrays):
                array, info = np.asarray(array), input_params[i]
                if tuple(array.shape) != tuple(info.shape):
                    raise UserError(f"step {s}: input {i} has shape {tuple(array.shape)}, the model expects "
                                    f"{info.shape}")
                raw = np.ascontiguousarray(quantize(array, info)).tobytes()
                chunks.append(raw + bytes(-len(raw) % 16))      # harness.c: inputs padded to 16 bytes
        (tmp_path / "steps.bin").write_bytes(b"".join(chunks))
        args = ["--steps", str(len(steps)), "steps.bin"]
        with progress.step(f"running {len(steps)} steps" + ("" if cores.core(target).is_host else f" on {target} under QEMU")):
            text, code = _execute(executable, target, args, tmp_path, timeout * max(1, len(steps) // 10), None)
    if code == SANITIZER_EXIT_CODE:
        raise UserError(f"a sanitizer found an error in the C on {target}:\n{text[-4000:]}")
    parsed = parse_harness_output(text)
    if code != 0:
        done = len(parsed.data) // max(len(step_out), 1)
        raise UserError(f"the model failed on {target} at step {done} (exit {code}): "
                        f"mcu_model_step returned {parsed.status}")
    results = []
    for s in range(len(steps)):
        blocks = parsed.data[s * len(step_out):(s + 1) * len(step_out)]
        qs = [np.frombuffer(data, dtype=output_infos[j].dtype).reshape(output_infos[j].shape).copy()
              for data, j in zip(blocks, step_out)]
        results.append(RunResult(qs, [dequantize(q, output_params[j]) for q, j in zip(qs, step_out)], None, None,
                                 [input_infos[i] for i in step_in], [output_infos[j] for j in step_out]))
    return results


def run_reference_steps(outdir, steps: list[list[np.ndarray]]) -> list[RunResult]:
    """The same steps in tosa_reference_model: each state input starts at its quantized 0 and is
    then the previous step's state output, integers handed over as they are."""
    outdir = Path(outdir).resolve()
    pairs = state_pairs(outdir)
    io = io_from_report(outdir)
    if not pairs or io is None:
        raise UserError(f"{outdir} holds no streaming model: compile it with --state IN:OUT")
    ins, outs = io
    step_in, step_out = _step_indices(pairs, len(ins), len(outs))
    state = {i: np.full(ins[i].shape, ins[i].zero_point, dtype=ins[i].dtype) for i, _ in pairs}
    results = []
    for s, arrays in enumerate(steps):
        if len(arrays) != len(step_in):
            raise UserError(f"step {s}: the model takes {len(step_in)} input(s) per step, {len(arrays)} given")
        full = [None] * len(ins)
        for i, array in zip(step_in, arrays):
            full[i] = array
        for i, value in state.items():
            full[i] = value
        r = run_reference_outdir(outdir, full)
        state = {i: r.outputs_q[j].astype(ins[i].dtype).reshape(ins[i].shape) for i, j in pairs}
        results.append(RunResult([r.outputs_q[j] for j in step_out], [r.outputs_float[j] for j in step_out], None,
                                 None, [], [r.outputs[j] for j in step_out] if r.outputs else []))
    return results

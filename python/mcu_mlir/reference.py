"""The bit-exact oracle: runs a TOSA module in Arm's `tosa_reference_model`.

    outputs = run_reference(module_or_text, [np.ndarray, ...])

The module is serialized with `tosa-opt --tosa-serialize` in a temporary directory, run with the
reference model, and its outputs are read back as numpy arrays (one per result of the entry
function). Any failure raises `ReferenceError` with the command that reproduces it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from .ir.types import STORAGE

# MLIR element type -> numpy dtype, for the entry function's arguments and results.
_NUMPY_OF = {**STORAGE, "bf16": np.float32}


class ReferenceError(RuntimeError):
    """tosa-opt or tosa_reference_model failed; the message holds the command to reproduce."""


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        here = Path(sys.executable).parent / name   # the virtual environment's bin dir
        if here.exists():
            return str(here)
        raise ReferenceError(f"'{name}' not found on PATH (pip install tosa-tools)")
    return found


def _run(cmd: list[str], what: str, keep_dir: str, *, quiet_on_success: bool = False) -> None:
    """quiet_on_success: the tool exits 0 after some errors (tosa-opt --tosa-serialize writes an int4
    constant out of range truncated, and only says so), so a complaint in its output fails too."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    complained = quiet_on_success and re.search(r"\berror\b|exceeds", proc.stderr + proc.stdout, re.I)
    if proc.returncode != 0 or complained:
        text = (proc.stderr + proc.stdout).strip()
        raise ReferenceError(
            f"{what} failed (exit {proc.returncode}):\n{text[-4000:]}\n"
            f"reproduce (files kept in {keep_dir}):\n  {' '.join(shlex.quote(c) for c in cmd)}")


def _entry_signature(text: str) -> tuple[list[str], list[str]]:
    """Element types of the first public function's arguments and results, from printed MLIR."""
    m = re.search(r"func\.func\s+@[\w$.]+\((?P<args>.*?)\)\s*(?:->\s*(?P<res>\(.*?\)|tensor<[^>]*>))?"
                  r"\s*(?:attributes\s*\{.*?\}\s*)?\{", text, re.S)
    if not m:
        raise ReferenceError("no func.func in the module")
    elem = re.compile(r"tensor<(?:[\d?]+x)*(\w+)")
    args = elem.findall(m.group("args"))
    res = elem.findall(m.group("res") or "")
    return args, res


def _outputs_are_results(text: str) -> str:
    """The flatbuffer names outputs after the ops producing them: an output that is an input, or
    the same value twice, gets a tosa.identity of its own."""
    sig = re.search(r"func\.func\s+@[\w$.]+\((?P<args>.*?)\)\s*->", text, re.S)
    ret = re.search(r"^\s*(?:func\.)?return\s+(?P<vals>[^:]*?)\s*:", text, re.M)
    if not sig or not ret:
        return text
    args = set(re.findall(r"(%[\w$.]+)\s*:", sig.group("args")))
    vals = [v.strip() for v in ret.group("vals").split(",")]
    if not any(v in args for v in vals) and len(set(vals)) == len(vals):
        return text
    from ._mlir import func, ir, new_context, tosa
    from .ir.ops import create, isa
    with new_context() as ctx, ir.Location.unknown(ctx):
        module = ir.Module.parse(text)
        for op in module.body.operations:
            if not isa(op, func.FuncOp):
                continue
            block = op.regions[0].blocks[0]
            ret_op = list(block.operations)[-1]
            seen = set()
            with ir.InsertionPoint(ret_op):
                for i, v in enumerate(list(ret_op.operands)):
                    key = v.get_name()
                    if isinstance(v.owner, ir.Block) or key in seen:
                        ident = create(tosa.IdentityOp, results=[v.type], operands=[v])
                        ret_op.operands[i] = ident.result
                    seen.add(key)
            break
        return module.operation.get_asm()


def run_reference(module_or_text, inputs: list[np.ndarray], *, keep_dir: str | None = None,
                  timeout: float = 600) -> list[np.ndarray]:
    """Runs the TOSA module on `inputs` and returns its outputs.

    `module_or_text` is an `ir.Module`, MLIR text, or a path to a `.mlir` / `.tosa` file. Inputs are
    cast to the entry function's argument types (so a float array for an i8 input is an error,
    not a silent truncation). With `keep_dir` the files stay there for inspection.
    """
    path_in = None
    if isinstance(module_or_text, (str, os.PathLike)) and not str(module_or_text).lstrip().startswith(
            ("module", "func", "#", "//", "\"")) and Path(str(module_or_text)).exists():
        path_in = Path(module_or_text)
        text = path_in.read_text() if path_in.suffix != ".tosa" else None
    elif isinstance(module_or_text, str):
        text = module_or_text
    else:
        # Generic form keeps dense_resource blobs and every attribute exactly as the parser wants.
        text = module_or_text.operation.get_asm(enable_debug_info=False)

    work = keep_dir or tempfile.mkdtemp(prefix="mcu-ref-")
    os.makedirs(work, exist_ok=True)
    try:
        if path_in is not None and path_in.suffix == ".tosa":
            tosa_file, n_out, arg_types = str(path_in), None, None
        else:
            text = _outputs_are_results(text)
            arg_types, res_types = _entry_signature(text)
            n_out = len(res_types)
            mlir_file = os.path.join(work, "model.mlir")
            with open(mlir_file, "w") as f:
                f.write(text)
            tosa_file = os.path.join(work, "model.tosa")
            _run([_tool("tosa-opt"), mlir_file, "--tosa-serialize",
                  f"--tosa-flatbuffer-filename={tosa_file}", "-o", os.devnull],
                 "tosa-opt --tosa-serialize", work, quiet_on_success=True)
            if len(inputs) != len(arg_types):
                raise ReferenceError(f"the model takes {len(arg_types)} inputs, {len(inputs)} given")
        if n_out is None:
            raise ReferenceError("a .tosa file needs its .mlir beside it to know the outputs; pass the .mlir")
        in_names, in_files = [], []
        for i, x in enumerate(inputs):
            x = np.asarray(x)
            want = _NUMPY_OF.get(arg_types[i]) if arg_types else None
            if want is not None and x.dtype != want:
                if np.issubdtype(want, np.integer) and not np.issubdtype(x.dtype, np.integer):
                    raise ReferenceError(f"input {i} is {x.dtype} but the model takes {arg_types[i]}")
                x = x.astype(want)
            name = os.path.join(work, f"in{i}.npy")
            np.save(name, np.ascontiguousarray(x))
            in_names.append(f"TosaInput_{i}")
            in_files.append(name)
        out_names = [f"TosaOutput_{i}" for i in range(n_out)]
        out_files = [os.path.join(work, f"out{i}.npy") for i in range(n_out)]
        cmd = [_tool("tosa_reference_model"), f"--tosa_file={tosa_file}", "--tosa_level=NONE",
               f"--ifm_name={','.join(in_names)}", f"--ifm_file={','.join(in_files)}",
               f"--ofm_name={','.join(out_names)}", f"--ofm_file={','.join(out_files)}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        missing = [f for f in out_files if not os.path.exists(f)]
        if proc.returncode != 0 or missing:
            text_out = (proc.stderr + proc.stdout).strip()
            raise ReferenceError(
                f"tosa_reference_model failed (exit {proc.returncode}):\n{text_out[-4000:]}\n"
                f"reproduce (files kept in {work}):\n  {' '.join(shlex.quote(c) for c in cmd)}")
        return [np.load(f) for f in out_files]
    except ReferenceError:
        keep_dir = work   # keep the files the message points at
        raise
    finally:
        if keep_dir is None:
            shutil.rmtree(work, ignore_errors=True)

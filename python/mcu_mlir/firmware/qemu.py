"""QEMU machines for each Cortex-M target, running firmware, and exact instruction counts.

    stdout, exit_code = run_firmware(elf, "cortex-m55", timeout=60, args=["input0.bin"])

The firmware talks to the host through Arm semihosting (lib/target/platform_semihost.c): its
command line comes from `args`, its console is QEMU's stdout, and QEMU exits with main's return
value. With `count_into=PATH` our TCG plugin (tools/qemu-plugin/insn_count.c, compiled with the
host's C compiler on first use) writes exact per-block instruction counts, split into segments at
every call of `mcu_layer_marker`; `instruction_counts()` turns them into per-layer figures and the
share spent inside CMSIS-NN and portable kernels.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..diagnostics import UserError
from . import sources
from ..cores import CORES



def plugin_source() -> Path:
    """The instruction-counting QEMU plugin's C source."""
    return sources.root() / "tools" / "qemu-plugin" / "insn_count.c"


@dataclass(frozen=True)
class Machine:
    qemu_name: str      # -M value
    description: str


# Memory maps are in lib/target/*.ld.in; the machine of each core comes from cores.py
# (cortex-m0: ARMv6-M code on the AN385's Cortex-M3, same instruction counts).
MACHINES: dict[str, Machine] = {c.name: Machine(c.qemu_machine, c.machine_description)
                                for c in CORES.values() if c.qemu_machine}

FAULT_EXIT_CODE = 134  # mcu_target_fault()


class FirmwareTimeout(UserError):
    pass


def machine_for(target: str) -> Machine:
    try:
        return MACHINES[target]
    except KeyError:
        raise UserError(f"no QEMU machine for target '{target}' (known: {', '.join(sorted(MACHINES))})") from None


def qemu_binary() -> str:
    found = shutil.which("qemu-system-arm")
    if not found:
        raise UserError("qemu-system-arm not found: install qemu-system-arm (Debian: apt-get install qemu-system-arm)")
    return found


def qemu_version() -> str:
    proc = subprocess.run([qemu_binary(), "--version"], capture_output=True, text=True)
    m = re.search(r"version (\d+\.\d+(?:\.\d+)?)", proc.stdout)
    return m.group(1) if m else "unknown"


def qemu_command(elf: Path | str, target: str, args: list[str] = (), plugin: str | None = None) -> list[str]:
    """The qemu-system-arm command line that runs `elf` with semihosting arguments `args`."""
    for arg in args:
        if " " in arg or "," in arg:
            raise UserError(f"semihosting argument '{arg}' contains a space or comma")
    semihosting = "enable=on,target=native,chardev=sh0," + ",".join(f"arg={a}" for a in ["firmware", *args])
    cmd = [qemu_binary(), "-M", machine_for(target).qemu_name, "-nographic", "-monitor", "none",
           "-serial", "none", "-chardev", "stdio,id=sh0", "-semihosting-config", semihosting,
           "-kernel", str(elf)]
    if plugin:
        cmd += ["-plugin", plugin]
    return cmd


def run_firmware(elf: Path | str, target: str, timeout: float = 60, *, args: list[str] = (),
                 cwd: Path | str | None = None, count_into: Path | str | None = None) -> tuple[str, int]:
    """Runs the firmware under QEMU; returns (stdout, exit code). Semihosting file names in `args`
    are relative to `cwd`. With `count_into`, instruction counts are written to that file."""
    plugin = None
    if count_into is not None:
        marker = layer_marker_address(elf)
        plugin = f"{plugin_library()},out={Path(count_into).resolve()}"
        if marker is not None:
            plugin += f",marker={marker:#x}"
    cmd = qemu_command(elf, target, list(args), plugin)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        raise FirmwareTimeout(f"the firmware did not finish within {timeout:g} s under QEMU; reproduce with:\n  "
                              + " ".join(shlex.quote(c) for c in cmd)) from None
    if count_into is not None and not Path(count_into).exists():
        raise UserError("QEMU did not load the instruction-counting plugin (written for plugin API version 1, "
                        f"QEMU 7.2; this is QEMU {qemu_version()}):\n{proc.stderr.strip()[-2000:]}\nreproduce with:\n  "
                        + " ".join(shlex.quote(c) for c in cmd))
    if proc.returncode == FAULT_EXIT_CODE and "mcu: fault" in proc.stdout:
        raise UserError(f"the firmware faulted under QEMU ({proc.stdout.strip().splitlines()[-1]}); reproduce with:\n  "
                        + " ".join(shlex.quote(c) for c in cmd))
    output = proc.stdout
    if proc.returncode not in (0, 1, 2) and proc.stderr:   # QEMU itself failed: keep its message
        output += proc.stderr
    return output, proc.returncode


# --- the instruction-counting plugin ------------------------------------------------------------

def cache_dir() -> Path:
    base = os.environ.get("MCU_MLIR_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "mcu-mlir")
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path


def plugin_library() -> Path:
    """The compiled plugin, built on first use; the source's hash names it, so edits rebuild it."""
    source = plugin_source().read_bytes()
    library = cache_dir() / f"insn_count-{hashlib.sha256(source).hexdigest()[:16]}.so"
    if library.exists():
        return library
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        raise UserError("counting instructions needs a host C compiler (cc/gcc) to build the QEMU plugin")
    partial = library.with_suffix(f".{os.getpid()}.tmp")
    cmd = [compiler, "-shared", "-fPIC", "-O2", "-o", str(partial), str(plugin_source())]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise UserError(f"building the QEMU plugin failed:\n{proc.stderr}\n  " + " ".join(map(shlex.quote, cmd)))
    os.replace(partial, library)
    return library


def _nm(path: Path | str, *extra: str) -> str:
    tool = shutil.which("arm-none-eabi-nm") or shutil.which("nm")
    proc = subprocess.run([tool, *extra, str(path)], capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else ""


def layer_marker_address(elf: Path | str) -> int | None:
    """Where the model's layer marker is: `mcu_layer_marker`, or `<name>_layer_marker` of a named model."""
    address = symbol_address(elf, "mcu_layer_marker")
    if address is not None:
        return address
    for line in _nm(elf, "--defined-only").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].endswith("_layer_marker") and parts[1] in "tT":
            return int(parts[0], 16) & ~1
    return None


def symbol_address(elf: Path | str, name: str) -> int | None:
    for line in _nm(elf, "--defined-only").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16) & ~1
    return None


@dataclass
class _Function:
    start: int
    end: int
    name: str


def _functions(elf: Path | str) -> list[_Function]:
    functions = []
    for line in _nm(elf, "--defined-only", "-S", "-n").splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            start = int(parts[0], 16) & ~1
            functions.append(_Function(start, start + int(parts[1], 16), parts[3]))
    return functions


def _archive_functions(archive: Path) -> dict[str, str]:
    """Function name -> archive member (object file) that defines it."""
    result, member = {}, ""
    for line in _nm(archive, "--defined-only").splitlines():
        if line.endswith(":") and not line.startswith(" "):
            member = line[:-1]
            continue
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            result[parts[2]] = member
    return result


def kernel_categories(build_dir: Path | str) -> dict[str, str]:
    """Function name -> "cmsis-nn", "portable" or "other" (our glue: the model's run function, the
    runtime, the harness and startup), from the libraries and objects of a build directory. Functions
    it does not list come from the C library or libgcc (memcpy, 64-bit multiply, ...): "helpers"."""
    build_dir = Path(build_dir)
    categories: dict[str, str] = {}
    for archive in build_dir.glob("libmcu_model.a"):
        categories.update({name: "other" for name in _archive_functions(archive)})
    for obj in build_dir.glob("CMakeFiles/mcu_model_exe.dir/**/*.o"):
        categories.update({name: "other" for name in _archive_functions(obj)})
    archives = list(build_dir.rglob("libcmsis-nn.a"))
    cache = build_dir / "CMakeCache.txt"
    if cache.exists():   # a CMSIS-NN prebuilt outside the build directory (MCU_CMSIS_NN_LIBRARY)
        m = re.search(r"^MCU_CMSIS_NN_LIBRARY:FILEPATH=(.+)$", cache.read_text(), re.M)
        if m and Path(m.group(1)).exists():
            archives.append(Path(m.group(1)))
    for archive in archives:
        categories.update({name: "cmsis-nn" for name in _archive_functions(archive)})
    for archive in build_dir.glob("libmcu_runtime.a"):
        for name, member in _archive_functions(archive).items():
            # runtime.c is glue; the rest of the runtime library is lib/portable
            categories[name] = "other" if member.startswith("runtime.c") else "portable"
    return categories


_TB_RE = re.compile(r"tb (\d+) 0x([0-9a-f]+) (\d+) (\d+) (\d+) (\d+)")


def parse_counts(path: Path | str) -> tuple[dict[int, tuple[int, int, int, int, int]], list[dict[int, int]]]:
    """The plugin's file -> ({block: (vaddr, insns, insns16, insns32, fp_vector)}, [ {block: runs} per segment ])."""
    blocks: dict[int, tuple[int, int, int, int, int]] = {}
    segments: list[dict[int, int]] = []
    for line in Path(path).read_text().splitlines():
        if line.startswith("tb "):
            m = _TB_RE.fullmatch(line)
            blocks[int(m.group(1))] = (int(m.group(2), 16), *(int(m.group(i)) for i in range(3, 7)))
        elif line.startswith("segment "):
            segments.append({})
        elif line and line[0].isdigit():
            index, runs = line.split()
            segments[-1][int(index)] = int(runs)
    return blocks, segments


def instruction_counts(counts_file: Path | str, elf: Path | str, build_dir: Path | str,
                       marked: list[dict] | None = None) -> dict:
    """Per-layer and total instructions of one inference, split by where they were spent.
    `marked` describes the marked layers in the order they run ({index, name, kernel}).

    Segment 0 runs from reset to the first `mcu_layer_marker` call (startup, reading inputs); each
    call then starts the next layer, and the one with index -1 ends the inference. Instructions are
    attributed to the function containing their block's address: "cmsis-nn" / "portable" kernels,
    "helpers" (C library and libgcc routines, mostly called by kernels: memcpy, 64-bit multiply on
    the M0, ...) and "other" (the model's glue, the runtime, the harness). `kernel_share` counts
    kernels only; `kernel_share_with_helpers` adds the helpers."""
    blocks, segments = parse_counts(counts_file)
    functions = _functions(elf)
    starts = [f.start for f in functions]
    categories = kernel_categories(build_dir)

    def function_of(address: int) -> str:
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and address < max(functions[i].end, functions[i].start + 1):
            return functions[i].name
        return "?"

    block_function = {index: function_of(info[0]) for index, info in blocks.items()}

    def summarise(segment: dict[int, int]) -> dict:
        summary = {"instructions": 0, "cmsis-nn": 0, "portable": 0, "helpers": 0, "other": 0,
                   "insns16": 0, "insns32": 0, "fp_vector": 0}
        per_function: dict[str, int] = {}
        for index, runs in segment.items():
            _, insns, insns16, insns32, fp_vector = blocks[index]
            count = runs * insns
            summary["instructions"] += count
            summary["insns16"] += runs * insns16
            summary["insns32"] += runs * insns32
            summary["fp_vector"] += runs * fp_vector
            name = block_function[index]
            summary["other" if name == "?" else categories.get(name, "helpers")] += count
            per_function[name] = per_function.get(name, 0) + count
        summary["functions"] = dict(sorted(per_function.items(), key=lambda kv: (-kv[1], kv[0])))
        return summary

    if len(segments) < 2:
        raise UserError("no mcu_layer_marker call was seen: the model does not mark its layers")
    layer_segments = segments[1:-1]   # the last one follows mcu_layer_marker(-1)
    if marked is not None and len(marked) != len(layer_segments):
        marked = None                 # the description does not match what ran: do not guess
    layers = []
    for i, segment in enumerate(layer_segments):
        summary = summarise(segment)
        described = marked[i] if marked else {}
        summary["index"] = described.get("index", i)
        summary["name"] = described.get("name", f"layer{summary['index']}")
        if "kernel" in described:
            summary["kernel"] = described["kernel"]
        layers.append(summary)
    total = {key: sum(layer[key] for layer in layers)
             for key in ("instructions", "cmsis-nn", "portable", "helpers", "other", "insns16", "insns32", "fp_vector")}
    functions_total: dict[str, int] = {}
    for layer in layers:
        for name, count in layer["functions"].items():
            functions_total[name] = functions_total.get(name, 0) + count
    inside = total["cmsis-nn"] + total["portable"]
    return {
        "total": total["instructions"],
        **{key: total[key] for key in ("cmsis-nn", "portable", "helpers", "other", "insns16", "insns32", "fp_vector")},
        "kernel_share": inside / total["instructions"] if total["instructions"] else 0.0,
        "kernel_share_with_helpers":
            (inside + total["helpers"]) / total["instructions"] if total["instructions"] else 0.0,
        "layers": layers,
        "functions": dict(sorted(functions_total.items(), key=lambda kv: (-kv[1], kv[0]))),
        "startup": summarise(segments[0])["instructions"],
        "after_inference": summarise(segments[-1])["instructions"],
    }

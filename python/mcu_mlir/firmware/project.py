"""A generated model as a folder a firmware project builds: model, runtime, the kernels it calls.

    files = project_files(model_files, name="kws", uses_cmsis_nn=True)   # relative path -> text
    write_project(outdir, files)

The folder holds no path into the installed package: the runtime header, the portable kernel
sources the model calls (and what they call) are copied in, with a `CMakeLists.txt` to
`add_subdirectory()` (library target `<name>_model`), a Makefile fragment and a README.

With a name, every exported symbol, macro and file carries it: `mcu_` / `MCU_` become `kws_` /
`KWS_` in the model and in the copied sources alike, so two models (and their copies of the
kernels) link into one image. Without one the names are the default `mcu_*`, files `model.c/.h`.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..diagnostics import UserError
from . import cmsis_nn, sources

DEFAULT_PREFIX = "mcu"
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_CALL_RE = re.compile(r"\b(mcu_\w+)\s*\(")
_DEFINITION_RE = re.compile(r"^[a-z][\w \*]*\b(mcu_\w+)\s*\(", re.M)


def check_name(name: str) -> None:
    """A name is a lower-case C identifier; it becomes a prefix of symbols, macros and files."""
    if not _NAME_RE.match(name) or name.endswith("_") or "__" in name:
        raise UserError(f"--name {name!r}: expected a lower-case C identifier such as 'kws' or 'vad_v2' "
                        "(letters, digits and single underscores, starting with a letter)")


def model_stem(name: str | None) -> str:
    """File stem of the generated model: `model` by default, `<name>_model` with a name."""
    return f"{name}_model" if name else "model"


def find_model(outdir: Path | str) -> tuple[str, str] | None:
    """(file stem, symbol prefix) of the model generated into `outdir`, or None when there is none."""
    outdir = Path(outdir)
    if (outdir / "model.c").exists() and (outdir / "model.h").exists():
        return "model", DEFAULT_PREFIX
    found = sorted(p.name[:-len("_model.c")] for p in outdir.glob("*_model.c")
                   if (outdir / p.name.replace(".c", ".h")).exists())
    if len(found) > 1:
        raise UserError(f"{outdir} holds several models ({', '.join(f + '_model.c' for f in found)}): "
                        "give each its own output directory")
    return (model_stem(found[0]), found[0]) if found else None


def prefix_names(text: str, prefix: str) -> str:
    """Renames the runtime's and the model's names: `mcu_x` -> `<prefix>_x`, `MCU_X` -> `<PREFIX>_X`,
    and the includes that point at renamed files."""
    text = text.replace('#include "portable_internal.h"', f'#include "{prefix}_portable_internal.h"')
    if prefix == DEFAULT_PREFIX:
        return text
    text = re.sub(r"\bmcu_", f"{prefix}_", text)
    text = re.sub(r"\bMCU_", f"{prefix.upper()}_", text)
    text = text.replace('#include "mcu/', f'#include "{prefix}/')
    return text.replace('#include "model.h"', f'#include "{model_stem(prefix)}.h"')


def _kernel_sources() -> dict[str, str]:
    """lib/portable's C files: file name -> text."""
    return {p.name: p.read_text() for p in sorted((sources.root() / "lib" / "portable").glob("*.c"))}


def kernel_sources_called(model_c: str) -> list[str]:
    """The portable kernel files that define what `model_c` calls, and what those call in turn."""
    files = _kernel_sources()
    defined_in = {fn: name for name, text in files.items() for fn in _DEFINITION_RE.findall(text)}
    needed: list[str] = []
    pending = [model_c]
    while pending:
        text = pending.pop()
        for fn in _CALL_RE.findall(text):
            name = defined_in.get(fn)
            if name is not None and name not in needed:
                needed.append(name)
                pending.append(files[name])
    return sorted(needed)


def _template(name: str) -> str:
    return (sources.root() / "lib" / "project" / name).read_text()


def _fill(template: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        template = template.replace(f"@{key}@", value)
    return template


def _cmsis_nn_used(used: dict | None) -> str:
    """The README's line on the CMSIS-NN the compile built the model with (report.json's cmsis_nn)."""
    if not used or used["source"] == "off":
        return ""
    where = "CMSIS_NN_PATH" if used["source"] == "path" else f"fetched from {used.get('url')}"
    return f" mcu-mlir built this model with CMSIS-NN `{used.get('commit') or 'of unknown commit'}` ({where})."


def project_files(model_files: dict[str, str], name: str | None, uses_cmsis_nn: bool,
                  cmsis_nn_used: dict | None = None) -> dict[str, str]:
    """The folder's files (relative path -> text) for a model emitted as `model.c` / `model.h`;
    `cmsis_nn_used`: report.json's `cmsis_nn` when the compile built the model too."""
    prefix = name or DEFAULT_PREFIX
    stem = model_stem(name)
    root = sources.root()
    out = {f"{stem}.c": prefix_names(model_files["model.c"], prefix),
           f"{stem}.h": prefix_names(model_files["model.h"], prefix)}
    for header in ("runtime.h", "portable.h"):
        out[f"include/{prefix}/{header}"] = prefix_names((root / "include" / "mcu" / header).read_text(), prefix)
    kernels = _kernel_sources()
    called = kernel_sources_called(model_files["model.c"])
    out[f"src/{prefix}_runtime.c"] = prefix_names((root / "lib" / "runtime.c").read_text(), prefix)
    if called:
        internal = (root / "lib" / "portable" / "portable_internal.h").read_text()
        out[f"src/{prefix}_portable_internal.h"] = prefix_names(internal, prefix)
    for file in called:
        out[f"src/{prefix}_{file}"] = prefix_names(kernels[file], prefix)
    if uses_cmsis_nn:   # the fetch of the pinned commit, when the firmware's build names no CMSIS-NN
        out["cmake/mcu-cmsis-nn.cmake"] = cmsis_nn.module().read_text()
    source_files = [f"{stem}.c", *sorted(p for p in out if p.startswith("src/") and p.endswith(".c"))]
    pinned_commit, pinned_url = cmsis_nn.pins()
    values = {"PREFIX": prefix, "UPREFIX": prefix.upper(), "STEM": stem,
              "USES_CMSIS_NN": "ON" if uses_cmsis_nn else "OFF", "USES_CMSIS_NN_01": "1" if uses_cmsis_nn else "0",
              "CMAKE_SOURCES": "\n".join(f"  ${{CMAKE_CURRENT_LIST_DIR}}/{f}" for f in source_files),
              "MAKE_SOURCES": " \\\n".join(f"  $({prefix.upper()}_MODEL_DIR){f}" for f in source_files),
              "CMSIS_NN_COMMIT": pinned_commit, "CMSIS_NN_URL": pinned_url,
              "CMSIS_NN_USED": _cmsis_nn_used(cmsis_nn_used),
              "FILES": "\n".join(f"- `{f}`" for f in sorted(out))}
    out["CMakeLists.txt"] = _fill(_template("CMakeLists.txt.in"), values)
    out[f"{stem}.mk"] = _fill(_template("model.mk.in"), values)
    out["README.md"] = _fill(_template("README.md.in"), values)
    return out


def write_project(outdir: Path | str, files: dict[str, str]) -> list[Path]:
    """Writes the folder's files under `outdir` (unchanged files keep their timestamps)."""
    written = []
    for rel, text in sorted(files.items()):
        path = Path(outdir) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written.append(path)
    return written

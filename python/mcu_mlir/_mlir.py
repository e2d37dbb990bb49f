"""Where the MLIR Python bindings (torch-mlir's build of MLIR) come from.

This module checks torch-mlir's version once, and the project imports the bindings' core modules
(`ir`, `passmanager`, `tosa`, `func`, ...) from here, so that no second MLIR build is ever mixed
in. The few bindings modules used in one place (the dialect extension API of the kernel dialects,
the rewrite driver, the FX importer) are imported there, after this module.
"""

from importlib import metadata as _metadata

REQUIRED_TORCH_MLIR = "20261001"

try:
    _found = _metadata.version("torch-mlir")
except _metadata.PackageNotFoundError as exc:  # pragma: no cover - install problem
    raise ImportError(
        f"mcu-mlir needs torch-mlir=={REQUIRED_TORCH_MLIR}; it is not installed "
        "(run tools/setup.sh)") from exc
if _found != REQUIRED_TORCH_MLIR:  # pragma: no cover - install problem
    raise ImportError(
        f"mcu-mlir needs torch-mlir=={REQUIRED_TORCH_MLIR}, found {_found} (run tools/setup.sh)")

from torch_mlir import ir, passmanager, rewrite  # noqa: E402
from torch_mlir.dialects import arith, func, tensor, tosa  # noqa: E402

__all__ = ["ir", "passmanager", "rewrite", "arith", "func", "tensor", "tosa",
           "new_context"]

_context_hooks = []


def on_new_context(hook):
    """Registers `hook(ctx)` to run on every context `new_context` makes (dialect loading)."""
    if hook not in _context_hooks:
        _context_hooks.append(hook)
    return hook


def new_context() -> "ir.Context":
    """A context with the bindings' upstream dialects; the kernel dialects are loaded into it by
    whoever builds or reads their ops (`mcu_mlir.dialects.load`), and each hook registered with
    `on_new_context` runs on it."""
    ctx = ir.Context()
    for hook in _context_hooks:
        hook(ctx)
    return ctx

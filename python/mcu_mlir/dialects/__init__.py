"""mcu-mlir's own dialects, loaded into a context only when needed."""

from __future__ import annotations

import importlib

# dialect namespace -> "module:load function" (module relative to this package)
DIALECTS: dict[str, str] = {
    "cmsisnn": "cmsisnn:load",
    "portable": "portable:load",
}

# pass-name prefixes whose passes create ops of a dialect
PASSES_NEEDING: dict[str, tuple[str, ...]] = {
    "cmsisnn": ("mcu-convert-tosa-to-cmsisnn", "mcu-plan-memory", "mcu-prepare-for-emission", "mcu-emit-c"),
    "portable": ("mcu-convert-tosa-to-cmsisnn", "mcu-plan-memory", "mcu-prepare-for-emission", "mcu-emit-c"),
}


def load(ctx, namespace: str) -> None:
    module_name, _, fn = DIALECTS[namespace].partition(":")
    getattr(importlib.import_module(f"{__package__}.{module_name}"), fn)(ctx)


def load_all(ctx) -> None:
    """Loads every dialect of the project (what the kernel IR may hold)."""
    for ns in DIALECTS:
        load(ctx, ns)


def load_needed(ctx, text: str, pass_names: list[str]) -> None:
    for ns in DIALECTS:
        if f"{ns}." in text or any(n.startswith(PASSES_NEEDING.get(ns, ("\0",))) for n in pass_names):
            load(ctx, ns)

"""mcu-mlir's own dialects, loaded into a context only when needed."""

from __future__ import annotations

import importlib

# dialect namespace -> "module:load function" (module relative to this package)
DIALECTS: dict[str, str] = {
    "cmsisnn": "cmsisnn:load",
    "portable": "portable:load",
}


def load(ctx, namespace: str) -> None:
    module_name, _, fn = DIALECTS[namespace].partition(":")
    getattr(importlib.import_module(f"{__package__}.{module_name}"), fn)(ctx)


def load_all(ctx) -> None:
    """Loads every dialect of the project (what the kernel IR may hold)."""
    for ns in DIALECTS:
        load(ctx, ns)


def load_needed(ctx, text: str, declared) -> None:
    """Loads the dialects whose ops `text` holds and those the passes to run declare (`DIALECTS`)."""
    for ns in DIALECTS:
        if f"{ns}." in text or ns in declared:
            load(ctx, ns)

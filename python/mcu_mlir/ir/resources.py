"""The bytes of `dense_resource` constants.

The bindings give no access to a resource blob, so blobs are read from the module's printed
resource section (hex: 4 bytes of alignment, then the raw little-endian data).
"""

from __future__ import annotations

import re

_BLOB = re.compile(r'^\s*"?([^":\s]+)"?\s*:\s*"0x([0-9A-Fa-f]*)"', re.M)
_NAME = re.compile(r'dense_resource<"?([^">]+)"?>')
_cache: dict = {}


def read_blobs(module_op) -> dict[str, bytes]:
    """Every blob of the module by name (alignment prefix removed); prints the module once."""
    text = module_op.get_asm(binary=False, large_elements_limit=None)
    start = text.rfind("dialect_resources")
    if start < 0:
        return {}
    return {m.group(1): bytes.fromhex(m.group(2))[4:] for m in _BLOB.finditer(text[start:])}


def resource_blobs(module_op) -> dict[str, bytes]:
    """`read_blobs` of the last module asked for, kept until `clear_resource_cache`."""
    key = hash(module_op)
    if key not in _cache:
        _cache.clear()
        _cache[key] = read_blobs(module_op)
    return _cache[key]


def clear_resource_cache() -> None:
    """Forgets blobs read so far; called when a pass or the emitter starts on a module."""
    _cache.clear()


def resource_name(attr) -> str | None:
    """The blob name of a `dense_resource<...>` attribute, else None."""
    m = _NAME.match(str(attr))
    return m.group(1) if m else None

"""mcu-tosa-to-cmsisnn-pipeline: integer NHWC TOSA -> planned cmsisnn ready for mcu-emit-c."""

from __future__ import annotations

from ..options import CompileOptions
from .base import OptionError
from .options_parser import split_options

_DEFAULTS = {"target": CompileOptions.target, "backend": "cmsis-nn", "ram-bytes": "0", "overlap": "true", "prefer": "speed",
             "softmax": "table", "max-overhead": "15", "patch": "true"}


def tosa_to_cmsisnn_pipeline(options: str) -> str:
    """Converts to kernel calls, plans the arena and prepares emission (options: target=, backend=, ram-bytes=,
    overlap=, prefer=, softmax=table|cmsis-nn, max-overhead=, patch=; prefer=memory also runs the first layers of
    a CNN band by band, within max-overhead percent more instructions, unless patch=false)."""
    opts = dict(_DEFAULTS)
    for key, value in split_options(options):
        if key not in opts:
            raise OptionError(f"pipeline 'mcu-tosa-to-cmsisnn-pipeline' has no option '{key}' "
                              f"(options: {', '.join(sorted(opts))})")
        opts[key] = value
    if opts["softmax"] not in ("table", "cmsis-nn"):
        raise OptionError(f"pipeline 'mcu-tosa-to-cmsisnn-pipeline': softmax must be table or cmsis-nn, not "
                          f"'{opts['softmax']}'")
    disabled = " disabled-patterns=softmax-table" if opts["softmax"] == "cmsis-nn" else ""
    if opts["patch"] not in ("true", "false"):
        raise OptionError(f"pipeline 'mcu-tosa-to-cmsisnn-pipeline': patch must be true or false, not "
                          f"'{opts['patch']}'")
    patch = f"mcu-patch-early-stages{{max-overhead={opts['max-overhead']}}}," \
        if opts["prefer"] == "memory" and opts["patch"] == "true" else ""
    return (f"builtin.module(mcu-attach-target{{target={opts['target']}}},{patch}mcu-split-sliced-convs,"
            "mcu-chunk-transposes,"
            f"mcu-convert-tosa-to-cmsisnn{{backend={opts['backend']}{disabled}}},"
            f"mcu-plan-memory{{ram-bytes={opts['ram-bytes']} overlap={opts['overlap']} prefer={opts['prefer']}}},"
            "mcu-prepare-for-emission)")

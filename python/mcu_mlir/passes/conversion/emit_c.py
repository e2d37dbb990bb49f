"""mcu-emit-c: writes (or prints) model.c / model.h for a planned cmsisnn module."""

from __future__ import annotations

import dataclasses
import os
import sys

from ..._mlir import ir
from ..base import ModulePass


@dataclasses.dataclass(frozen=True)
class EmitC(ModulePass):
    """Emits model.c and model.h; the module itself is left unchanged.

    With `output-dir=DIR` the files are written there; with `print=true` they go to stdout (each
    after a `// ----- model.c` line) before the IR, so lit can FileCheck the C text.
    """

    NAME = "mcu-emit-c"
    DIALECTS = ("cmsisnn", "portable")
    output_dir: str = dataclasses.field(default="", metadata={"help": "directory to write model.c/.h into"})
    print: bool = dataclasses.field(default=False, metadata={"help": "print the C to stdout"})

    def run(self, module: ir.Operation) -> None:
        from ...emission.emit_c import EmissionError, emit_c
        try:
            files = emit_c(module)
        except EmissionError as e:
            self.emit_error(module, str(e))
            return
        if self.output_dir:
            os.makedirs(self.output_dir, exist_ok=True)
            for name, text in files.items():
                with open(os.path.join(self.output_dir, name), "w", encoding="utf-8") as f:
                    f.write(text)
        if self.print:
            for name in sorted(files):
                sys.stdout.write(f"// ----- {name}\n{files[name]}")
            sys.stdout.flush()

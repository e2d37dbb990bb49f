"""Every element type the project handles: its storage in C, in numpy and in the runtime.

One table for the frontend, the passes, the emitter and the runners (a gap between two tables
once made an int48 model output the wrong size at run time).
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class ElementType:
    name: str                 # MLIR spelling
    bytes: int                # bytes per element in memory (int48 is stored in 64 bits)
    storage: type             # numpy dtype of that storage
    ctype: str | None         # C type of that storage
    runtime: str | None       # the runtime's element-type enum (include/mcu/portable.h); ints only
    exact: bool = True        # numpy holds the type itself (not int48, not bf16)

    @property
    def is_float(self) -> bool:
        return self.name.startswith(("f", "bf"))

    @property
    def range(self) -> tuple[int, int] | None:
        """The integer range of a signed or unsigned integer type."""
        if self.is_float or self.name in ("i1", "index"):
            return None
        bits = int(self.name.lstrip("ui"))
        if self.name.startswith("ui"):
            return 0, (1 << bits) - 1
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


ELEMENT_TYPES: dict[str, ElementType] = {t.name: t for t in (
    ElementType("i1", 1, np.bool_, "uint8_t", "MCU_BOOL"),
    ElementType("i8", 1, np.int8, "int8_t", "MCU_I8"),
    ElementType("i16", 2, np.int16, "int16_t", "MCU_I16"),
    ElementType("i32", 4, np.int32, "int32_t", "MCU_I32"),
    ElementType("i48", 8, np.int64, "int64_t", "MCU_I64", exact=False),
    ElementType("i64", 8, np.int64, "int64_t", "MCU_I64"),
    ElementType("ui8", 1, np.uint8, "uint8_t", "MCU_U8"),
    ElementType("ui16", 2, np.uint16, "uint16_t", "MCU_U16"),
    ElementType("index", 8, np.int64, None, None),
    ElementType("f16", 2, np.float16, None, None),
    ElementType("bf16", 2, np.float32, None, None, exact=False),
    ElementType("f32", 4, np.float32, "float", None),
    ElementType("f64", 8, np.float64, "double", None),
)}

# Views of the table that code reads most.
BYTES = {n: t.bytes for n, t in ELEMENT_TYPES.items()}
RUNTIME = {n: t.runtime for n, t in ELEMENT_TYPES.items() if t.runtime}
CTYPE = {n: t.ctype for n, t in ELEMENT_TYPES.items() if t.ctype}
NUMPY = {n: t.storage for n, t in ELEMENT_TYPES.items() if t.exact}
STORAGE = {n: t.storage for n, t in ELEMENT_TYPES.items()}
RANGE = {n: t.range for n, t in ELEMENT_TYPES.items() if t.range and n in ("i8", "i16")}

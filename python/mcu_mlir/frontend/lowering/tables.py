"""The tables the FX graph walk (fx_to_tosa.py) dispatches on, collected from the op family modules.

`LOWER`: aten op -> function(lowering, node, inputs, scale, zero point, element type, clamp) run
when a quantize of the op's output is reached (output parameters known). `EAGER`: aten op ->
function(lowering, node, inputs) run at once on a dequantized input (ops that commute with
dequantisation). `CLAMPS`: clamp-like ops that fuse into the op before them. A family module
imports only `values` (and the writer), never the graph walk: no import cycle.
"""

from __future__ import annotations

from . import conv, elementwise, matmul, norm, pool, recurrent, selection, shape, softmax

FAMILIES = (conv, elementwise, pool, shape, matmul, softmax, norm, recurrent, selection)

LOWER: dict = {}
EAGER: dict = {}
for _family in FAMILIES:
    for _table, _own in ((LOWER, _family.LOWER), (EAGER, _family.EAGER)):
        _clash = set(_table) & set(_own)
        assert not _clash, f"{_family.__name__} lowers ops another family lowers: {_clash}"
        _table.update(_own)
CLAMPS = elementwise.CLAMPS

"""TOSA -> cmsisnn patterns, one module per op family.

Each module lists `PATTERNS`: (pattern name, root TOSA op, function(op, rewriter) -> bool[, phase]),
the phase (common.Phase) UNIT or OUTER for a pattern that absorbs several ops. A
function returns NO_MATCH (False) when it leaves the op alone and CONVERTED after rewriting it.
"""

FAMILIES = ("recurrent", "conv_s4", "prelu", "conv", "matmul", "pool", "softmax", "norm", "magnitude", "elementwise", "data_movement", "reduction")

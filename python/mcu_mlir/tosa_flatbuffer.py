"""What tosa-opt's flatbuffer reader does not check: each operator's operand and result counts.

The reader builds each op from the operands its MLIR form takes, so an operator with a surplus or a
missing input in the flatbuffer (an invalid program, a TOSA ERROR_IF) would arrive as a valid op.
Reading the flatbuffer's operators with tosa-tools' schema classes and comparing the counts with the
deserialized ops, in order, keeps such a program from being compiled.
"""

from __future__ import annotations

from pathlib import Path


def operator_arities(path: Path | str) -> list[tuple[int, int]] | None:
    """(inputs, outputs) of every operator of the flatbuffer's main block, in order; None when the
    schema classes are not installed or the file has no single main block."""
    try:
        from tosa import TosaGraph
    except ImportError:
        return None
    data = Path(path).read_bytes()
    graph = TosaGraph.TosaGraph.GetRootAsTosaGraph(data, 0)
    if graph.RegionsLength() < 1 or graph.Regions(0).BlocksLength() < 1:
        return None
    block = graph.Regions(0).Blocks(0)
    return [(block.Operators(i).InputsLength(), block.Operators(i).OutputsLength())
            for i in range(block.OperatorsLength())]


def arity_mismatches(path: Path | str, func) -> list[tuple[object, int, int]]:
    """(op, flatbuffer inputs, flatbuffer outputs) of each op of `func` whose operand or result count
    differs from its flatbuffer operator. Empty when the two do not align one to one."""
    arities = operator_arities(path)
    ops = [op for op in func.regions[0].blocks[0].operations if op.operation.name != "func.return"]
    if arities is None or len(arities) != len(ops):
        return []
    return [(op, n_in, n_out) for op, (n_in, n_out) in zip(ops, arities)
            if n_in != len(op.operands) or n_out != len(op.results)]

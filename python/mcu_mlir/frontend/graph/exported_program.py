"""A saved `torch.export` program (`.pt2`) as a model the frontend compiles.

    module, example_inputs = load_exported("model.pt2")

The program's graph is fixed when it is exported: training-mode BatchNorm or dropout in it would
compute batch statistics or drop values, so such a program is refused with the op's source line.
Its module is marked as evaluated (an exported module does not take `.eval()`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from ...diagnostics import UserError

# op -> index of its `training` argument
_TRAINING_ARGUMENT = {
    "aten.batch_norm.default": 5,
    "aten._native_batch_norm_legit.default": 5,
    "aten._native_batch_norm_legit_functional.default": 5,
    "aten.dropout.default": 2,
    "aten.dropout_.default": 2,
    "aten.feature_dropout.default": 2,
    "aten.native_dropout.default": 2,
}


def _where(node) -> str:
    """The layer (module path) and the model's own source line of a node, as far as the graph kept them."""
    from ..graph.nodes import node_location
    file, line, path = node_location(node)
    parts = ([f"layer {path or 'the top-level module'}"] if node.meta.get("nn_module_stack") else []) + \
        ([f"{file}:{line}"] if file else [])
    return f" ({', '.join(parts)})" if parts else ""


def _check_inference_graph(program) -> None:
    for node in program.graph.nodes:
        index = _TRAINING_ARGUMENT.get(str(node.target)) if node.op == "call_function" else None
        if index is None:
            continue
        training = node.args[index] if len(node.args) > index else node.kwargs.get("training", node.kwargs.get("train"))
        if training is True:
            raise UserError(f"the program was exported in training mode: {node.target} '{node.name}'"
                            f"{_where(node)} runs with training=True; export the model after model.eval()")


def module_of(program):
    """The program's module, ready for the frontend (which exports it again with its quantizer)."""
    _check_inference_graph(program)
    module = program.module()
    for sub in module.modules():
        sub.training = False
    return module


def load_exported(path: str | Path):
    """(module, example inputs) of a `.pt2` file written by `torch.export.save`."""
    import torch
    path = Path(path)
    if not path.exists():
        raise UserError(f"cannot read input file '{path}'")
    quiet = logging.getLogger("torch.export")
    level, quiet.level = quiet.level, logging.CRITICAL   # torch logs the failure's traceback itself
    try:
        program = torch.export.load(str(path))
    except Exception as exc:  # a truncated file, another format, a newer torch's program
        raise UserError(f"not a torch.export program this torch ({torch.__version__}) can load: "
                        f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    finally:
        quiet.setLevel(level)
    example = program.example_inputs
    args = tuple(example[0]) if example else ()
    if example and example[1]:
        raise UserError(f"the program takes keyword inputs ({', '.join(example[1])}); "
                        "export it with positional inputs")
    return module_of(program), args

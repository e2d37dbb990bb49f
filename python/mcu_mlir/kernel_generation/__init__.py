"""Kernels the compiler writes per layer, where they beat the CMSIS-NN call on the core.

A generated kernel is one module here plus its cost entry (costs.py). The module has:
- `NAME`, `OP`: its name and the cmsisnn op class it replaces;
- `plan(op, *constants)`: the layer's tables computed at compile time, or a string saying why it does
  not apply (the CMSIS-NN call then stays);
- `estimates(plan, core)`: (its instructions, the CMSIS-NN call's) from costs.py, None on cores it
  has no form for;
- `PREAMBLE` and `source(plan, name)`: the C shared by every layer using it and the layer's own.

mcu-choose-generated-kernels marks a chosen op with `mcu.generated_kernel`; the C emitter then writes
the kernel into model.c and calls it instead of the library. `--kernels cmsis-nn` keeps the library
everywhere; `--kernels generated` takes a kernel wherever it applies, whatever the core or the
estimates (tests: the portable C form on the host).
"""

from __future__ import annotations

import numpy as np

from ..ir import attributes as mcu_attrs
from ..options import KERNELS as MODES
from ..ir.constants import attr_array, module_of
from . import dw3x3_s8

KERNELS = {m.NAME: m for m in (dw3x3_s8,)}


def _constants(op) -> list[np.ndarray]:
    """The values of the op's constant operands (weights, bias), in operand order."""
    out = []
    for v in op.operation.operands:
        owner = v.owner
        if hasattr(owner, "name") and owner.name == "tosa.const":
            out.append(np.asarray(attr_array(owner.attributes["values"], v.type, module_of(owner))))
    return out


def _plan(kernel, op):
    return kernel.plan(op, *_constants(op))


def choose(op, core, mode: str):
    """(kernel name or None, note for the report): the cheapest generated kernel for `op`."""
    notes = []
    for kernel in KERNELS.values():
        if not isinstance(op, kernel.OP):
            continue
        p = _plan(kernel, op)
        if isinstance(p, str):
            notes.append(f"{kernel.NAME} does not apply: {p}")
            continue
        est = kernel.estimates(p, core)
        if mode == "generated":
            return kernel.NAME, None
        if est is None:
            continue
        generated, library = est
        if generated < library:
            return kernel.NAME, (f"generated {kernel.NAME}: ~{int(generated):,} instructions estimated, "
                                 f"{op.function_name()} ~{int(library):,}")
        notes.append(f"{kernel.NAME} ~{int(generated):,} instructions estimated, not below "
                     f"{op.function_name()}'s ~{int(library):,}")
    return None, "; ".join(notes) or None


def chosen(op) -> str | None:
    """The generated kernel an op calls, if any."""
    if mcu_attrs.GENERATED_KERNEL not in op.operation.attributes:
        return None
    return str(op.operation.attributes[mcu_attrs.GENERATED_KERNEL]).strip('"')


def emit_call(em, i, op) -> list[str]:
    """Writes the layer's kernel into the model's C (em.file_scope) and returns its call."""
    kernel = KERNELS[chosen(op)]
    p = _plan(kernel, op)
    if isinstance(p, str):
        raise ValueError(f"layer {i}: {kernel.NAME} was chosen but does not apply: {p}")
    name = f"mcu_{kernel.NAME}_layer{i}"
    em.file_scope(kernel.NAME, kernel.PREAMBLE)
    em.file_scope(name, kernel.source(p, name))
    return [f"{name}({em.ptr(op.operands[0], 'int8_t')}, {em.out(op, 'int8_t')});"]

"""C emission: a planned cmsisnn module -> model.c / model.h, and the per-op report.

    files = emit_c(module)          # {"model.c": ..., "model.h": ...}
    report = model_report(module)   # arena/lower bound/weights bytes and one entry per kernel call

The module must have run mcu-convert-tosa-to-cmsisnn, mcu-plan-memory and mcu-prepare-for-emission.
Output is deterministic: names come from op order, never from Python object identities.
"""

from __future__ import annotations


import numpy as np

from .._mlir import ir, tosa
from ..ir.values import elem as _elem, i32_array as _ints, nbytes as _nbytes, shape as _shape, tensor_type as _type
from ..dialects import cmsisnn
from ..dialects.kernel_op import KernelOp, LstmFields
from ..ir.constants import attr_array, module_of
from ..ir.locations import layer_name
from ..ir.resources import clear_resource_cache
from ..kernel_library import cmsis_padding
from .. import cores, kernel_generation
from .emit_cmsis import EMITTERS as cmsis_emitters
from .emit_portable import EMITTERS as portable_emitters
from ..ir import attributes as mcu_attrs, types


# Byte arrays longer than this are written as string literals: compilers parse them an order of
# magnitude faster and in a fifth of the memory of brace lists (a 26 MB model: minutes -> seconds).
BYTES_AS_STRING = 256


def _string_literal(data: bytes, per_line: int = 32) -> str:
    """`data` as adjacent C string literals of \\xNN escapes (exactly len(data) chars, no NUL)."""
    n = len(data)
    hexpairs = np.frombuffer(data.hex().encode(), dtype="S1").reshape(n, 2)
    escaped = np.empty((n, 4), dtype="S1")
    escaped[:, 0], escaped[:, 1], escaped[:, 2:] = b"\\", b"x", hexpairs
    text = escaped.tobytes().decode()
    width = 4 * per_line
    return "\n".join(f'  "{text[i:i + width]}"' for i in range(0, len(text), width))


class EmissionError(Exception):
    """The module is not ready for emission (a pass did not run)."""


def _core(module_op) -> cores.Core:
    """The module's target core (mcu-attach-target); an EmissionError when none is attached."""
    try:
        return cores.of(module_op)
    except (cores.TargetMissing, ValueError) as e:
        raise EmissionError(str(e)) from None


# -- reading the planned module ---------------------------------------------------------------

def _entry(module):
    op = module.operation if hasattr(module, "operation") else module
    funcs = [o for o in op.regions[0].blocks[0].operations if o.operation.name == "func.func"]
    if not funcs:
        raise EmissionError("the module has no function to emit")
    for f in funcs:
        if str(f.attributes["sym_name"]).strip('"') in ("main", "forward"):
            return op, f
    return op, funcs[0]


def _kernel_ops(fn):
    return [o for o in fn.regions[0].blocks[0].operations if isinstance(o, KernelOp)]


def _int(op, name, default=0):
    return int(ir.IntegerAttr(op.attributes[name]).value) if name in op.attributes else default


def _str(op, name):
    return str(op.attributes[name]).strip('"')


def _kernel_name(op) -> str:
    """What the call is, for comments and reports: `arm_*`, `portable:<kernel>` or `view`."""
    if mcu_attrs.VIEW in op.attributes or mcu_attrs.IN_PLACE in op.attributes:
        return "view"
    if isinstance(op, cmsisnn.ReshapeOp):
        return "portable:copy" if mcu_attrs.COPY in op.attributes else "view"
    if isinstance(op, tuple(cmsis_emitters)):
        return "generated:" + kernel_generation.chosen(op) if kernel_generation.chosen(op) else op.function_name()
    return "portable:" + op.kernel_name()


# op class -> function(emitter, layer index, op) -> C lines of the call
EMITTERS = {**cmsis_emitters, **portable_emitters}
_WINDOW_OPS = (cmsisnn.ConvOp, cmsisnn.DepthwiseConvOp, cmsisnn.ConvS4Op, cmsisnn.DepthwiseConvS4Op,
               cmsisnn.AvgPoolOp, cmsisnn.MaxPoolOp)


def missing_emitters(ops) -> list:
    """Kernel ops the C emitter has no function for (a verifier error names each)."""
    return [op for op in ops if type(op) not in EMITTERS and not isinstance(op, cmsisnn.ReshapeOp)]


def _layer_name(op) -> str:
    return layer_name(op.location)


def _source_op(op) -> str:
    return _str(op, mcu_attrs.SOURCE_OP) if mcu_attrs.SOURCE_OP in op.attributes else op.operation.name


def _const_producer(value):
    owner = value.owner
    if not isinstance(owner, tosa.ConstOp):
        return None
    return owner


# -- the emitter -------------------------------------------------------------------------------

class _Emitter:
    def __init__(self, module, inputs_quant=None, outputs_quant=None):
        clear_resource_cache()
        self.module_op, self.fn = _entry(module)
        self.block = self.fn.regions[0].blocks[0]
        self.ops = _kernel_ops(self.fn)
        for op in self.ops:
            if mcu_attrs.STORAGE not in op.attributes:
                raise EmissionError("run mcu-plan-memory before emitting C")
        self.backend = _str(self.module_op, mcu_attrs.BACKEND) if mcu_attrs.BACKEND in self.module_op.attributes else "portable"
        self.core = _core(self.module_op)
        self.arena = _int(self.module_op, mcu_attrs.ARENA_BYTES)
        self.lower = _int(self.module_op, mcu_attrs.ARENA_LOWER_BOUND_BYTES)
        self.inputs_quant, self.outputs_quant = inputs_quant, outputs_quant
        self.consts: dict = {}   # const op -> (name, ctype, array)
        self.const_order: list = []
        self.const_by_content: dict = {}
        self.structs: dict = {}   # (type, initialiser) -> name
        self.arrays: list[str] = []  # static parameter arrays
        self.generated: dict[str, str] = {}  # key -> file-scope C of generated kernels (kernel_generation)
        self.uses_cmsis = any(_kernel_name(op).startswith("arm_") for op in self.ops)
        self.ret = next(o for o in self.block.operations if o.operation.name == "func.return")
        from ..io_quant import read_state
        self.state = read_state(module)   # (input, output) pairs carried between mcu_model_step calls

    # buffers ----------------------------------------------------------------------------------
    def const_name(self, value, hint: str) -> str:
        op = _const_producer(value)
        key = op.operation
        for k, (name, _, _) in self.consts.items():
            if k == key:
                return name
        arr = attr_array(op.attributes["values"], _type(op.results[0]), module_of(op))
        return self._register_const(key, types.CTYPE[_elem(value)], arr, hint)

    def const_part_name(self, value, index: int, hint: str) -> str:
        """The array of `value[index]` (a constant's first-axis slice) as its own array: the
        gates of an LSTM step, shared with any other step whose gate is the same."""
        op = _const_producer(value)
        arr = attr_array(op.attributes["values"], _type(op.results[0]), module_of(op))
        return self._register_const((op.operation, index), types.CTYPE[_elem(value)], np.asarray(arr)[index], hint)

    def _register_const(self, key, ctype: str, arr, hint: str) -> str:
        # Equal arrays are one array in flash (kernels that take constants made per call, such as
        # every step of an LSTM, share them).
        content = (ctype, np.asarray(arr).tobytes())
        if content in self.const_by_content:
            name = self.const_by_content[content]
        else:
            name = f"mcu_const{len(self.const_order)}_{hint}"
            self.const_by_content[content] = name
            self.const_order.append(key)
        self.consts[key] = (name, ctype, arr)
        return name

    def buf(self, value, hint: str = "t") -> str:
        """A C expression (uint8_t pointer or const array) for where `value` lives."""
        owner = value.owner
        if isinstance(owner, ir.Block):
            return f"((const uint8_t *)inputs[{value.arg_number}])"
        if isinstance(owner, tosa.ConstOp):
            return self.const_name(value, hint)
        return self.storage(owner, ir.OpResult(value).result_number)

    def storage(self, op, result: int = 0) -> str:
        """Where result `result` of kernel op `op` lives."""
        kind = _str(op, mcu_attrs.STORAGE_1 if result else mcu_attrs.STORAGE)
        offset = _int(op, mcu_attrs.OFFSET_1 if result else mcu_attrs.OFFSET)
        if kind == "arena":
            return f"(arena + {offset})"
        what, _, index = kind.partition(":")
        at = f" + {offset}" if offset else ""  # views into a caller buffer
        if what == "input":
            return f"((uint8_t *)inputs[{index}]{at})"
        return f"((uint8_t *)outputs[{index}]{at})"

    def ptr(self, value, ctype: str, hint="t", const=True) -> str:
        b = self.buf(value, hint)
        if b.startswith("mcu_const"):
            return b
        return f"({'const ' if const else ''}{ctype} *){b}"

    def out(self, op, ctype: str, result: int = 0) -> str:
        return f"({ctype} *){self.storage(op, result)}"

    def shared_struct(self, ctype: str, hint: str, body: str) -> str:
        """A file-scope `static const` struct initialised with `body`; calls with equal ones share
        it (the steps of an LSTM layer). Returns its name."""
        key = (ctype, body)
        if key not in self.structs:
            self.structs[key] = f"mcu_{hint}{len(self.structs)}"
            self.arrays.append(f"static const {ctype} {self.structs[key]} = {{{body}}};")
        return self.structs[key]

    def array(self, name: str, ctype: str, values) -> str:
        body = ", ".join(str(int(v)) for v in values) or "0"
        self.arrays.append(f"static const {ctype} {name}[{max(len(values), 1)}] = {{{body}}};")
        return name

    def file_scope(self, key: str, text: str) -> None:
        """File-scope C (a generated kernel's tables and functions), once per key, in first-use order."""
        self.generated.setdefault(key, text)

    # calls --------------------------------------------------------------------------------------
    def emit_op(self, i: int, op) -> list[str]:
        if mcu_attrs.VIEW in op.attributes or mcu_attrs.IN_PLACE in op.attributes:
            return []  # a contiguous slice, or a concat whose inputs the planner placed in its result
        if isinstance(op, cmsisnn.ReshapeOp):
            if mcu_attrs.COPY not in op.attributes:
                return []  # a view: the planner gave it its input's storage
            return [f"status = mcu_copy({_nbytes(op.results[0])}, {self.buf(op.operands[0])}, {self.storage(op)});"]
        if kernel_generation.chosen(op):
            return kernel_generation.emit_call(self, i, op)   # a kernel written for this layer
        if isinstance(op, _WINDOW_OPS):
            # A pass that chose or changed this call's function must have kept its padding contract.
            problem = cmsis_padding.op_problem(op, self.core)
            if problem:
                raise EmissionError(f"layer {i} ({op.operation.name}) would be wrong on {self.core.name}: {problem}")
        return EMITTERS[type(op)](self, i, op)

    @staticmethod
    def struct(ctype: str, var: str, fields: dict) -> str:
        body = ", ".join(f".{k} = {v}" for k, v in fields.items())
        return f"static const {ctype} {var} = {{{body}}};"

    @staticmethod
    def shape_lit(dims) -> str:
        return f"{{{len(dims)}, {{{', '.join(str(d) for d in dims) or '0'}}}}}"

    # files ------------------------------------------------------------------------------------
    def io_infos(self):
        def info(name, value, quant):
            et = _elem(value)
            dims = _shape(value)
            scale, zp = (quant.scale, quant.zero_point) if quant is not None else (1.0, 0)
            shape = ", ".join(str(d) for d in dims) or "0"
            return (f"  {{\"{name}\", {len(dims)}, {{{shape}}}, {types.BYTES.get(et, 4)}, {int(et.startswith('f'))}, "
                    f"{float(scale)!r}f, {int(zp)}, {_nbytes(value) if not et.startswith('f') else int(np.prod(dims)) * 4}}}")
        def quant(table, k):
            return table[k] if table is not None and k < len(table) else None

        ins = [info(f"input{a.arg_number}", a, quant(self.inputs_quant, a.arg_number))
               for a in self.block.arguments]
        outs = [info(f"output{k}", v, quant(self.outputs_quant, k)) for k, v in enumerate(self.ret.operands)]
        return ins, outs

    def output_parts(self) -> list[str]:
        """mcu_model_output_parts[]'s rows: each slice of an output whose parts keep their own
        quantization (frontend/quantize/concat_parts.py), its axis as the C holds the output (a
        result made channels-last has its channel axis last)."""
        rows = []
        for k in range(len(self.ret.operands)):
            q = self.outputs_quant[k] if self.outputs_quant is not None and k < len(self.outputs_quant) else None
            if q is None or not getattr(q, "parts", ()):
                continue
            axis = q.axis
            if self.result_layout(k) == "nhwc":
                rank = len(_shape(self.ret.operands[k]))
                axis = [0, *range(2, rank), 1].index(axis)
            rows += [f"  {{{k}, {axis}, {start}, {stop}, {float(scale)!r}f, {int(zp)}}}"
                     for start, stop, scale, zp in q.parts]
        return rows

    def result_layout(self, k: int) -> str | None:
        if "res_attrs" not in self.fn.attributes:
            return None
        entries = ir.ArrayAttr(self.fn.attributes["res_attrs"])
        d = ir.DictAttr(entries[k]) if k < len(entries) else None
        return ir.StringAttr(d[mcu_attrs.LAYOUT]).value if d is not None and mcu_attrs.LAYOUT in d else None

    def emit(self) -> dict[str, str]:
        body = self.run_body()
        ins, outs = self.io_infos()
        c = self.model_c(ins, outs, body)
        if self.state:
            c += self.streaming_c()
        return {"model.c": "\n".join(c), "model.h": "\n".join(self.model_h(ins, outs))}

    def run_body(self) -> list[str]:
        """mcu_model_run's statements: each layer's kernel call, then the copies of the outputs not
        computed in place."""
        body = []
        for i, op in enumerate(self.ops):
            lines = self.emit_op(i, op)
            if not lines:
                continue
            body.append(f"  /* layer {i}: {_layer_name(op)} ({_source_op(op)} -> {_kernel_name(op)}) */")
            body.append("  mcu_layer_marker(%d);" % i)
            body.append("  {")
            body += ["    " + line for line in lines if line]
            body.append("    if (status != 0) return status;")
            body.append("  }")
        # Outputs that are graph inputs or constants are copied.
        for k, v in enumerate(self.ret.operands):
            owner = v.owner
            storage = mcu_attrs.STORAGE_1 if isinstance(v, ir.OpResult) and ir.OpResult(v).result_number \
                else mcu_attrs.STORAGE
            if isinstance(owner, (ir.Block, tosa.ConstOp)) or not _str(owner, storage).startswith(f"output:{k}"):
                body.append(f"  /* output {k} is not computed in place: copy it */")
                body.append(f"  status = mcu_copy({_nbytes(v)}, {self.buf(v, f'output{k}')}, outputs[{k}]);")
                body.append("  if (status != 0) return status;")
        return body

    def const_definitions(self) -> list[str]:
        """The constants' C definitions (flash), long byte arrays as string literals."""
        consts = []
        for key in self.const_order:
            name, ctype, arr = self.consts[key]
            flat = np.asarray(arr).reshape(-1).astype(np.int64)
            head = f"static const {ctype} {name}[{max(len(flat), 1)}] __attribute__((aligned(16))) ="
            if ctype in ("int8_t", "uint8_t") and len(flat) > BYTES_AS_STRING:
                consts.append(head + "\n" + _string_literal(flat.astype(np.int8).tobytes()) + ";")
                continue
            rows = [", ".join(str(int(x)) for x in flat[j:j + 16]) for j in range(0, len(flat), 16)]
            consts.append(head + " {\n  " + ",\n  ".join(rows or ["0"]) + "\n};")
        return consts

    def model_c(self, ins, outs, body) -> list[str]:
        """model.c's lines (without the streaming API): the tensor infos, constants, kernel
        parameters and mcu_model_run."""
        consts = self.const_definitions()
        c = [
            "/* Generated by mcu-mlir: do not edit. */",
            "#include <stddef.h>",
            "#include <stdint.h>",
            "",
            '#include "model.h"',
            '#include "mcu/runtime.h"',
            '#include "mcu/portable.h"',
        ]
        if self.uses_cmsis:
            c.append('#include "arm_nnfunctions.h"')
        c += ["",
              "#if defined(MCU_DEBUG_SCRATCH)",
              "#include <assert.h>",
              "/* The planned scratch must be at least what CMSIS-NN asks for on this core. */",
              "#define MCU_CHECK_SCRATCH(needed, planned) assert((needed) <= (planned))",
              "#else",
              "#define MCU_CHECK_SCRATCH(needed, planned) ((void)0)",
              "#endif",
              "",
              f"const mcu_tensor_info_t mcu_model_inputs[{max(len(ins), 1)}] = {{", ",\n".join(ins), "};",
              f"const mcu_tensor_info_t mcu_model_outputs[{max(len(outs), 1)}] = {{", ",\n".join(outs), "};",
              *self.parts_c(),
              "", "/* Weights, biases and tables (flash). */", *consts,
              "", "/* Kernel parameters. */", *self.arrays, "",
              *[text + "\n" for text in self.generated.values()],
              "int mcu_model_run(const void *const *inputs, void *const *outputs, uint8_t *arena) {",
              "  int status = 0;",
              "  (void)inputs;",
              "  (void)outputs;",
              "  (void)arena;",
              *body,
              "  mcu_layer_marker(-1);",
              "  return status;",
              "}", ""]
        return c

    def parts_c(self) -> list[str]:
        parts = self.output_parts()
        if not parts:
            return []
        return ["/* Outputs whose parts keep their own quantization: {output, axis, start, stop, scale, zero_point}. */",
                f"const mcu_tensor_part_t mcu_model_output_parts[{len(parts)}] = {{", ",\n".join(parts), "};"]

    def parts_h(self) -> list[str]:
        parts = self.output_parts()
        if not parts:
            return []
        return ["",
                "/* An output that is a concat of parts of very different ranges (boxes in pixels beside class",
                " * scores) keeps each part's own quantization: its mcu_model_outputs[] entry has scale 0, and each",
                " * slice [start, stop) along `axis` of it reads real = scale * (q - zero_point) with the",
                " * parameters of its row here. */",
                f"#define MCU_MODEL_NUM_OUTPUT_PARTS {len(parts)}",
                "extern const mcu_tensor_part_t mcu_model_output_parts[];"]

    def ids_h(self) -> list[str]:
        """What an int32 input (token ids) outside its table reads: the frontend clamps run-time ids
        before a lookup (TOSA's GATHER REQUIREs every index in range), and mcu_gather does the same."""
        if not any(_elem(a) == "i32" for a in self.block.arguments) or \
                not any(o.operation.name == "portable.gather" for o in self.block.operations):
            return []
        return ["/* int32 inputs are indices (token ids) or masks. An id outside a table looked up with it",
                " * reads the nearest row: below 0 the first, past the end the last (torch would raise). */"]

    def model_h(self, ins, outs) -> list[str]:
        """model.h's lines: the arena size, counts and target as macros, and the API's declarations."""
        h = [
            "/* Generated by mcu-mlir: do not edit. */",
            "#ifndef MCU_MODEL_H",
            "#define MCU_MODEL_H",
            "",
            "#include <stdint.h>",
            "",
            '#include "mcu/runtime.h"',
            "",
            f"#define MCU_MODEL_ARENA_BYTES {self.arena}",
            f"#define MCU_MODEL_ARENA_LOWER_BOUND_BYTES {self.lower}",
            f"#define MCU_MODEL_NUM_INPUTS {len(ins)}",
            f"#define MCU_MODEL_NUM_OUTPUTS {len(outs)}",
            f"#define MCU_MODEL_NUM_LAYERS {len(self.ops)}",
            f'#define MCU_MODEL_TARGET "{self.core.name}"',
        ]
        if self.uses_cmsis:
            h.append("#define MCU_MODEL_USES_CMSIS_NN 1")
        if self.state:
            h += [f"#define MCU_MODEL_NUM_STATES {len(self.state)}",
                  f"#define MCU_MODEL_NUM_STEP_INPUTS {len(ins) - len(self.state)}",
                  f"#define MCU_MODEL_NUM_STEP_OUTPUTS {len(outs) - len(self.state)}"]
        h += ["",
              "#ifdef __cplusplus",
              'extern "C" {',
              "#endif",
              "",
              "/* Shapes and quantization (real = scale * (q - zero_point)) of the graph inputs/outputs. */",
              "extern const mcu_tensor_info_t mcu_model_inputs[];",
              "extern const mcu_tensor_info_t mcu_model_outputs[];",
              *self.parts_h(),
              *self.ids_h(),
              "",
              "/* Runs the model: inputs/outputs are caller buffers, `arena` holds MCU_MODEL_ARENA_BYTES",
              " * (16-byte aligned). Returns 0, or the failing kernel's nonzero status. */",
              "int mcu_model_run(const void *const *inputs, void *const *outputs, uint8_t *arena);",
              *(self.streaming_h() if self.state else []),
              "",
              "#ifdef __cplusplus",
              "}",
              "#endif",
              "",
              "#endif /* MCU_MODEL_H */", ""]
        return h

    # streaming ----------------------------------------------------------------------------------
    def streaming_c(self) -> list[str]:
        """Static state storage and the step API: each state is two buffers in turn (the call reads one
        and writes the other, then they swap), so nothing is copied between calls."""
        pairs = self.state
        state_in = {i for i, _ in pairs}
        state_out = {j for _, j in pairs}
        step_in = [a.arg_number for a in self.block.arguments if a.arg_number not in state_in]
        step_out = [k for k in range(len(self.ret.operands)) if k not in state_out]
        lines = ["", "/* Streaming: the state in static storage, two buffers each (read one, write the other). */"]
        resets = []
        for k, (i, j) in enumerate(pairs):
            arg = self.block.arguments[i]
            et = _elem(arg)
            ctype = types.CTYPE[et]
            count = int(np.prod(_shape(arg), dtype=np.int64))
            quant = self.inputs_quant[i] if self.inputs_quant is not None and i < len(self.inputs_quant) else None
            zp = int(quant.zero_point) if quant is not None else 0
            lines.append(f"static {ctype} mcu_model_state{k}[2][{count}] __attribute__((aligned(16)));"
                         f"  /* input {i} <- output {j} */")
            resets.append(f"  for (int32_t i = 0; i < {count}; ++i) mcu_model_state{k}[0][i] = {zp};"
                          f"  /* real 0 */")
        lines += ["static int32_t mcu_model_phase;",
                  f"const int32_t mcu_model_step_input_index[{max(len(step_in), 1)}] = "
                  f"{{{', '.join(map(str, step_in)) or '0'}}};",
                  f"const int32_t mcu_model_step_output_index[{max(len(step_out), 1)}] = "
                  f"{{{', '.join(map(str, step_out)) or '0'}}};",
                  "",
                  "void mcu_model_reset(void) {", *resets, "  mcu_model_phase = 0;", "}",
                  "",
                  "int mcu_model_step(const void *const *inputs, void *const *outputs, uint8_t *arena) {",
                  f"  const void *all_inputs[{len(self.block.arguments)}];",
                  f"  void *all_outputs[{len(self.ret.operands)}];",
                  *[f"  all_inputs[{i}] = inputs[{n}];" for n, i in enumerate(step_in)],
                  *[f"  all_outputs[{j}] = outputs[{n}];" for n, j in enumerate(step_out)],
                  *[f"  all_inputs[{i}] = mcu_model_state{k}[mcu_model_phase];" for k, (i, _) in enumerate(pairs)],
                  *[f"  all_outputs[{j}] = mcu_model_state{k}[mcu_model_phase ^ 1];" for k, (_, j) in enumerate(pairs)],
                  "  const int status = mcu_model_run(all_inputs, all_outputs, arena);",
                  "  if (status == 0) mcu_model_phase ^= 1;",
                  "  return status;",
                  "}",
                  "",
                  "const void *mcu_model_state(int32_t index) {",
                  *[f"  if (index == {k}) return mcu_model_state{k}[mcu_model_phase];" for k in range(len(pairs))],
                  "  return 0;",
                  "}", ""]
        return lines


    def streaming_h(self) -> list[str]:
        pairs = ", ".join(f"input {i} <- output {j}" for i, j in self.state)
        return ["",
                f"/* Streaming ({pairs}): the state stays in the model's static storage between calls.",
                " *   mcu_model_reset();                      (state = real 0)",
                " *   const void *in[MCU_MODEL_NUM_STEP_INPUTS] = {chunk};     (the inputs that are not state)",
                " *   void *out[MCU_MODEL_NUM_STEP_OUTPUTS] = {result};        (the outputs that are not state)",
                " *   while (next_chunk(chunk)) if (mcu_model_step(in, out, arena) != 0) break;",
                " * mcu_model_step_input_index / _output_index: which model inputs / outputs those are, in order;",
                " * mcu_model_state(k): the current value of state k (after the last step). */",
                "extern const int32_t mcu_model_step_input_index[];",
                "extern const int32_t mcu_model_step_output_index[];",
                "void mcu_model_reset(void);",
                "int mcu_model_step(const void *const *inputs, void *const *outputs, uint8_t *arena);",
                "const void *mcu_model_state(int32_t index);"]


def emit_c(module, inputs_quant=None, outputs_quant=None) -> dict[str, str]:
    """model.c / model.h for a planned cmsisnn module. `inputs_quant` / `outputs_quant`: optional
    lists of objects with `.scale` / `.zero_point` for the header; by default the entry function's
    `mcu.scale` / `mcu.zero_point` argument and result attributes (see `mcu_mlir.io_quant`)."""
    if inputs_quant is None and outputs_quant is None:
        from ..io_quant import read
        inputs_quant, outputs_quant = read(module)
    return _Emitter(module, inputs_quant, outputs_quant).emit()


def _weights_bytes(op) -> int:
    total = 0
    for v in op.operands:
        owner = v.owner
        if isinstance(owner, tosa.ConstOp):
            total += _nbytes(v)
    if mcu_attrs.KERNEL_SUMS in op.attributes:
        total += 4 * len(_ints(op.attributes[mcu_attrs.KERNEL_SUMS]))
    return total


def _flash_arrays(op):
    """(element type, array) of each constant `op` reads, as the C holds them: an LSTM step's
    stacked gate weights and biases as one array per gate."""
    for k, v in enumerate(op.operands):
        owner = v.owner
        if not isinstance(owner, tosa.ConstOp):
            continue
        arr = np.asarray(attr_array(owner.attributes["values"], _type(owner.results[0]), module_of(owner)))
        parts = list(arr) if isinstance(op, LstmFields) and k >= 3 else [arr]
        for part in parts:
            yield _elem(v), np.ascontiguousarray(part)


def _is_view(op) -> bool:
    """A kernel op whose result is its input's storage (a contiguous slice, a reshape not copied)."""
    return mcu_attrs.VIEW in op.attributes or mcu_attrs.IN_PLACE in op.attributes or (isinstance(op, cmsisnn.ReshapeOp)
                                               and mcu_attrs.COPY not in op.attributes)


def _arena_buffers(ops) -> list[dict]:
    """Each tensor and scratch buffer the arena holds: its layer, the kernels it lives over
    (first to last, views' readers included) and where it sits; the memory report's timeline."""
    index = {r: i for i, op in enumerate(ops) for r in op.results}

    def last_use(value) -> int:
        last = index[value]
        for use in value.uses:
            owner = use.owner
            if owner.name == "func.return":
                last = len(ops)
            elif len(owner.results) and owner.results[0] in index:
                j = index[owner.results[0]]
                last = max(last, last_use(owner.results[0]) if _is_view(ops[j]) else j)
        return last
    out = []
    for i, op in enumerate(ops):
        if mcu_attrs.SCRATCH_BYTES in op.attributes:
            out.append({"layer": _layer_name(op), "kernel": _kernel_name(op), "start": i, "end": i,
                        "offset": _int(op, mcu_attrs.SCRATCH_OFFSET), "bytes": _int(op, mcu_attrs.SCRATCH_BYTES),
                        "scratch": True})
        if mcu_attrs.STORAGE_1 in op.attributes and _str(op, mcu_attrs.STORAGE_1) == "arena":
            out.append({"layer": _layer_name(op), "kernel": _kernel_name(op), "start": i,
                        "end": last_use(op.results[1]), "offset": _int(op, mcu_attrs.OFFSET_1),
                        "bytes": _nbytes(op.results[1]), "scratch": False})
        if _is_view(op) or mcu_attrs.STORAGE not in op.attributes or _str(op, mcu_attrs.STORAGE) != "arena":
            continue
        out.append({"layer": _layer_name(op), "kernel": _kernel_name(op), "start": i, "end": last_use(op.results[0]),
                    "offset": _int(op, mcu_attrs.OFFSET), "bytes": _nbytes(op.results[0]), "scratch": False,
                    "elem": _elem(op.results[0])})
    return out


def model_report(module) -> dict:
    """Arena, lower bound, weights and one entry per kernel call (in run order)."""
    module_op, fn = _entry(module)
    ops, weights, seen = [], 0, set()
    for op in _kernel_ops(fn):
        w = _weights_bytes(op)
        # The model total counts a constant shared by several calls once, and equal arrays once,
        # as the C holds them once (the emitter's const_name).
        for elem, arr in _flash_arrays(op):
            key = (elem, arr.shape, arr.tobytes())
            if key not in seen:
                seen.add(key)
                weights += arr.size * types.BYTES.get(elem, 4)
        if mcu_attrs.KERNEL_SUMS in op.attributes:
            weights += 4 * len(_ints(op.attributes[mcu_attrs.KERNEL_SUMS]))
        entry = {"name": _layer_name(op), "tosa_op": _source_op(op), "kernel": _kernel_name(op),
                 "weights_bytes": w, "macs": op.macs(),
                 "arena_offset": _int(op, mcu_attrs.OFFSET) if mcu_attrs.STORAGE in op.attributes and
                 _str(op, mcu_attrs.STORAGE) == "arena" else None}
        if mcu_attrs.FALLBACK in op.attributes:
            entry["fallback"] = _str(op, mcu_attrs.FALLBACK)
        if mcu_attrs.KERNEL_NOTE in op.attributes:
            entry["kernel_note"] = _str(op, mcu_attrs.KERNEL_NOTE)
        if mcu_attrs.SCRATCH_BYTES in op.attributes:
            entry["scratch_bytes"] = _int(op, mcu_attrs.SCRATCH_BYTES)
        ops.append(entry)
    return {"arena_bytes": _int(module_op, mcu_attrs.ARENA_BYTES),
            "buffers": _arena_buffers(_kernel_ops(fn)),
            "arena_lower_bound_bytes": _int(module_op, mcu_attrs.ARENA_LOWER_BOUND_BYTES),
            "arena_overlap_bound_bytes": _int(module_op, mcu_attrs.ARENA_OVERLAP_BOUND_BYTES, None),
            "weights_bytes": weights,
            "target": _core(module_op).name,
            "backend": _str(module_op, mcu_attrs.BACKEND) if mcu_attrs.BACKEND in module_op.attributes else None,
            "ops": ops}

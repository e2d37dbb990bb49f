"""C emission: a planned cmsisnn module -> model.c / model.h, and the per-op report.

    files = emit_c(module)          # {"model.c": ..., "model.h": ...}
    report = model_report(module)   # arena/lower bound/weights bytes and one entry per kernel call

The module must have run mcu-convert-tosa-to-cmsisnn, mcu-plan-memory and mcu-prepare-for-emission.
Output is deterministic: names come from op order, never from Python object identities.
"""

from __future__ import annotations

import re

import numpy as np

from .._mlir import ir
from ..passes.conversion.common import DTYPE_BYTES, attr_array, clear_resource_cache, module_of

_CTYPE = {"i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "ui8": "uint8_t", "ui16": "uint16_t",
          "i1": "uint8_t", "i48": "int64_t", "i64": "int64_t"}
_INFO_ELEM = {"i8": 1, "i16": 2, "i32": 4, "ui8": 1, "ui16": 2, "i1": 1, "i64": 8, "f32": 4}


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
    return [o for o in fn.regions[0].blocks[0].operations if o.operation.name.startswith("cmsisnn.")]


def _int(op, name, default=0):
    return int(ir.IntegerAttr(op.attributes[name]).value) if name in op.attributes else default


def _str(op, name):
    return str(op.attributes[name]).strip('"')


def _ints(attr):
    return [int(x) for x in ir.DenseI32ArrayAttr(attr)]


def _params(op) -> dict:
    """Attributes of a kernel op (or the `params` of cmsisnn.portable) as Python values."""
    attrs = op.attributes["params"] if op.operation.name == "cmsisnn.portable" else op.attributes
    out = {}
    if isinstance(attrs, ir.DictAttr):
        items = [(named.name, named.attr) for named in attrs]
    else:
        items = [(name, op.attributes[name]) for name in op.attributes]
    for name, attr in items:
        if isinstance(attr, ir.IntegerAttr):
            out[name] = int(attr.value)
        elif isinstance(attr, ir.DenseI32ArrayAttr):
            out[name] = [int(x) for x in attr]
        elif isinstance(attr, ir.StringAttr):
            out[name] = attr.value
    return out


def _kernel_name(op) -> str:
    if "mcu.view" in op.attributes:
        return "view"
    if op.operation.name == "cmsisnn.portable":
        return "portable:" + _str(op, "kernel")
    if op.operation.name == "cmsisnn.reshape":
        return "portable:copy" if "mcu.copy" in op.attributes else "view"
    kernel = _str(op, "kernel")
    return kernel if kernel.startswith("arm_") else "portable:" + kernel


def _layer_name(op) -> str:
    text = str(op.location)
    names = re.findall(r'loc\("([^"]+)"', text)
    names = [n for n in names if n != "-"]
    if names:
        name = names[0]
    else:
        m = re.search(r':(\d+):\d+', text)
        name = f"line {m.group(1)}" if m else text
    return name.replace("*/", "* /")


def _source_op(op) -> str:
    return _str(op, "mcu.source_op") if "mcu.source_op" in op.attributes else op.operation.name


def _const_producer(value):
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "tosa.const":
        return None
    return owner


def _type(value):
    return ir.RankedTensorType(value.type)


def _shape(value):
    return list(_type(value).shape)


def _elem(value):
    return str(_type(value).element_type)


def _nbytes(value):
    return int(np.prod(_shape(value), dtype=np.int64)) * DTYPE_BYTES.get(_elem(value), 4)


# -- the emitter -------------------------------------------------------------------------------

class _Emitter:
    def __init__(self, module, inputs_quant=None, outputs_quant=None):
        clear_resource_cache()
        self.module_op, self.fn = _entry(module)
        self.block = self.fn.regions[0].blocks[0]
        self.ops = _kernel_ops(self.fn)
        for op in self.ops:
            if "mcu.storage" not in op.attributes:
                raise EmissionError("run mcu-plan-memory before emitting C")
        self.backend = _str(self.module_op, "mcu.backend") if "mcu.backend" in self.module_op.attributes else "portable"
        self.target = _str(self.module_op, "mcu.target") if "mcu.target" in self.module_op.attributes else "host"
        self.arena = _int(self.module_op, "mcu.arena_bytes")
        self.lower = _int(self.module_op, "mcu.arena_lower_bound_bytes")
        self.inputs_quant, self.outputs_quant = inputs_quant, outputs_quant
        self.consts: dict = {}   # const op -> (name, ctype, array)
        self.const_order: list = []
        self.arrays: list[str] = []  # static parameter arrays
        self.uses_cmsis = any(_kernel_name(op).startswith("arm_") for op in self.ops)
        self.ret = next(o for o in self.block.operations if o.operation.name == "func.return")

    # buffers ----------------------------------------------------------------------------------
    def const_name(self, value, hint: str) -> str:
        op = _const_producer(value)
        key = op.operation
        for k, (name, _, _) in self.consts.items():
            if k == key:
                return name
        arr = attr_array(op.attributes["values"], _type(op.results[0]), module_of(op))
        name = f"mcu_const{len(self.const_order)}_{hint}"
        self.consts[key] = (name, _CTYPE[_elem(value)], arr)
        self.const_order.append(key)
        return name

    def buf(self, value, hint: str = "t") -> str:
        """A C expression (uint8_t pointer or const array) for where `value` lives."""
        owner = value.owner
        if isinstance(owner, ir.Block):
            return f"((const uint8_t *)inputs[{value.arg_number}])"
        if owner.operation.name == "tosa.const":
            return self.const_name(value, hint)
        return self.storage(owner)

    def storage(self, op) -> str:
        kind = _str(op, "mcu.storage")
        offset = _int(op, "mcu.offset")
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

    def out(self, op, ctype: str) -> str:
        return f"({ctype} *){self.storage(op)}"

    def array(self, name: str, ctype: str, values) -> str:
        body = ", ".join(str(int(v)) for v in values) or "0"
        self.arrays.append(f"static const {ctype} {name}[{max(len(values), 1)}] = {{{body}}};")
        return name

    # calls --------------------------------------------------------------------------------------
    def emit_op(self, i: int, op) -> list[str]:
        name = op.operation.name
        if "mcu.view" in op.attributes:
            return []  # a contiguous slice: the planner placed it inside its input
        if name == "cmsisnn.reshape":
            if "mcu.copy" not in op.attributes:
                return []  # a view: the planner gave it its input's storage
            return [f"status = mcu_copy({_nbytes(op.results[0])}, {self.buf(op.operands[0])}, {self.storage(op)});"]
        method = ("portable_" + _str(op, "kernel")) if name == "cmsisnn.portable" else ("cmsis_" + name.split(".")[1])
        if not hasattr(self, method):
            kernel = _str(op, "kernel") if "kernel" in op.attributes else name
            raise EmissionError(f"no C emission for '{name}' (kernel '{kernel}') at {op.location}")
        return getattr(self, method)(i, op, _params(op))

    @staticmethod
    def struct(ctype: str, var: str, fields: dict) -> str:
        body = ", ".join(f".{k} = {v}" for k, v in fields.items())
        return f"static const {ctype} {var} = {{{body}}};"

    def _conv_family(self, i, op, p, depthwise, s16=False):
        mult = self.array(f"layer{i}_multiplier", "int32_t", p["multiplier"])
        shift = self.array(f"layer{i}_shift", "int32_t", p["shift"])
        fields = {k: v for k, v in p.items() if k not in ("multiplier", "shift")}
        fields["multiplier"] = mult if p["multiplier"] else "NULL"
        fields["shift"] = shift if p["shift"] else "NULL"
        s = self.struct("mcu_conv_params_t", f"layer{i}_params", fields)
        in_t = "int16_t" if s16 else "int8_t"
        out_t = (in_t if p["multiplier"] else ("int64_t" if s16 else "int32_t"))
        fn = ("mcu_depthwise_conv2d" if depthwise else "mcu_conv2d") + ("_s16" if s16 else "_s8")
        return [s, f"status = {fn}(&layer{i}_params, {self.ptr(op.operands[0], in_t)}, "
                   f"{self.const_name(op.operands[1], f'layer{i}_filter')}, "
                   f"{self.const_name(op.operands[2], f'layer{i}_bias')}, {self.out(op, out_t)});"]

    def portable_conv2d_s8(self, i, op, p):
        return self._conv_family(i, op, p, False)

    def portable_depthwise_conv2d_s8(self, i, op, p):
        return self._conv_family(i, op, p, True)

    def portable_conv2d_s16(self, i, op, p):
        return self._conv_family(i, op, p, False, s16=True)

    def portable_depthwise_conv2d_s16(self, i, op, p):
        return self._conv_family(i, op, p, True, s16=True)

    def portable_transpose_conv2d_s8(self, i, op, p):
        s = self.struct("mcu_transpose_conv_params_t", f"layer{i}_params", p)
        return [s, f"status = mcu_transpose_conv2d_s8(&layer{i}_params, {self.ptr(op.operands[0], 'int8_t')}, "
                   f"{self.const_name(op.operands[1], f'layer{i}_filter')}, "
                   f"{self.const_name(op.operands[2], f'layer{i}_bias')}, {self.out(op, 'int32_t')});"]

    def portable_matmul(self, i, op, p):
        fields = {k: v for k, v in p.items() if k not in ("multiplier", "shift")}
        fields["multiplier"] = self.array(f"layer{i}_multiplier", "int32_t", p["multiplier"]) if p["multiplier"] else "NULL"
        fields["shift"] = self.array(f"layer{i}_shift", "int32_t", p["shift"]) if p["shift"] else "NULL"
        s = self.struct("mcu_matmul_params_t", f"layer{i}_params", fields)
        return [s, f"status = mcu_matmul(&layer{i}_params, {self.buf(op.operands[0], f'layer{i}_lhs')}, "
                   f"{self.buf(op.operands[1], f'layer{i}_rhs')}, {self.buf(op.operands[2], f'layer{i}_bias')}, "
                   f"{self.storage(op)});"]

    def _pool(self, i, op, p, fn):
        s = self.struct("mcu_pool_params_t", f"layer{i}_params", p)
        return [s, f"status = {fn}(&layer{i}_params, {self.buf(op.operands[0])}, {self.storage(op)});"]

    def portable_avg_pool2d(self, i, op, p):
        return self._pool(i, op, p, "mcu_avg_pool2d")

    def portable_max_pool2d(self, i, op, p):
        return self._pool(i, op, p, "mcu_max_pool2d")

    @staticmethod
    def shape_lit(dims) -> str:
        return f"{{{len(dims)}, {{{', '.join(str(d) for d in dims) or '0'}}}}}"

    def portable_binary(self, i, op, p):
        fields = dict(p)
        for k in ("in1", "in2", "out"):
            fields[k] = self.shape_lit(p[k])
        s = self.struct("mcu_binary_params_t", f"layer{i}_params", fields)
        return [s, f"status = mcu_binary(&layer{i}_params, {self.buf(op.operands[0])}, "
                   f"{self.buf(op.operands[1])}, {self.storage(op)});"]

    def portable_select(self, i, op, p):
        fields = {k: v for k, v in p.items() if k != "cond_shape"}
        for k in ("in1", "in2", "out"):
            fields[k] = self.shape_lit(p[k])
        s = self.struct("mcu_binary_params_t", f"layer{i}_params", fields)
        c = self.struct("mcu_shape_t", f"layer{i}_cond_shape",
                        {"rank": len(p["cond_shape"]), "dims": "{" + ", ".join(map(str, p["cond_shape"])) + "}"})
        return [s, c, f"status = mcu_select(&layer{i}_params, {self.buf(op.operands[0])}, &layer{i}_cond_shape, "
                      f"{self.buf(op.operands[1])}, {self.buf(op.operands[2])}, {self.storage(op)});"]

    def portable_unary(self, i, op, p):
        s = self.struct("mcu_unary_params_t", f"layer{i}_params", p)
        return [s, f"status = mcu_unary(&layer{i}_params, {self.buf(op.operands[0])}, {self.storage(op)});"]

    def portable_rescale(self, i, op, p):
        fields = {k: v for k, v in p.items() if k not in ("multiplier", "shift")}
        fields["multiplier"] = self.array(f"layer{i}_multiplier", "int32_t", p["multiplier"])
        fields["shift"] = self.array(f"layer{i}_shift", "int32_t", p["shift"])
        s = self.struct("mcu_rescale_params_t", f"layer{i}_params", fields)
        return [s, f"status = mcu_rescale(&layer{i}_params, {self.buf(op.operands[0])}, {self.storage(op)});"]

    def portable_clamp(self, i, op, p):
        return [f"status = mcu_clamp({p['type']}, {p['count']}, {p['min']}, {p['max']}, "
                f"{self.buf(op.operands[0])}, {self.storage(op)});"]

    def portable_cast(self, i, op, p):
        return [f"status = mcu_cast({p['in_type']}, {p['out_type']}, {p['count']}, "
                f"{self.buf(op.operands[0])}, {self.storage(op)});"]

    def portable_table_s8(self, i, op, p):
        return [f"status = mcu_table_s8({p['count']}, {self.const_name(op.operands[1], f'layer{i}_table')}, "
                f"{self.ptr(op.operands[0], 'int8_t')}, {self.out(op, 'int8_t')});"]

    def portable_log_softmax_s8(self, i, op, p):
        s = self.struct("mcu_log_softmax_params_t", f"layer{i}_params", p)
        return [s, f"status = mcu_log_softmax_s8(&layer{i}_params, "
                   f"{self.const_name(op.operands[1], f'layer{i}_exp_table')}, "
                   f"{self.const_name(op.operands[2], f'layer{i}_log_table')}, "
                   f"{self.buf(op.operands[0])}, {self.out(op, 'int8_t')});"]

    def portable_table_s16_rescale(self, i, op, p):
        rs = {k[len("rescale_"):]: v for k, v in p.items() if k.startswith("rescale_")}
        fields = {k: v for k, v in rs.items() if k not in ("multiplier", "shift")}
        fields["multiplier"] = self.array(f"layer{i}_multiplier", "int32_t", rs["multiplier"])
        fields["shift"] = self.array(f"layer{i}_shift", "int32_t", rs["shift"])
        s = self.struct("mcu_rescale_params_t", f"layer{i}_rescale", fields)
        return [s, f"status = mcu_table_s16_rescale({p['count']}, {self.const_name(op.operands[1], f'layer{i}_table')}, "
                   f"&layer{i}_rescale, {self.ptr(op.operands[0], 'int16_t')}, {self.out(op, 'int16_t')});"]

    def portable_table_s16(self, i, op, p):
        return [f"status = mcu_table_s16({p['count']}, {self.const_name(op.operands[1], f'layer{i}_table')}, "
                f"{self.ptr(op.operands[0], 'int16_t')}, {self.out(op, 'int32_t')});"]

    def _elementwise(self, i, op, p, kind, suffix="s8"):
        fields = dict(p)
        for k in ("in1", "in2", "out"):
            fields[k] = self.shape_lit(p[k])
        t = "int16_t" if suffix == "s16" else "int8_t"
        s = self.struct("mcu_elementwise_params_t", f"layer{i}_params", fields)
        return [s, f"status = mcu_elementwise_{kind}_{suffix}(&layer{i}_params, {self.ptr(op.operands[0], t)}, "
                   f"{self.ptr(op.operands[1], t)}, {self.out(op, t)});"]

    def portable_elementwise_add_s16(self, i, op, p):
        return self._elementwise(i, op, p, "add", "s16")

    def portable_elementwise_mul_s16(self, i, op, p):
        return self._elementwise(i, op, p, "mul", "s16")

    def portable_elementwise_add_s8(self, i, op, p):
        return self._elementwise(i, op, p, "add")

    def portable_elementwise_mul_s8(self, i, op, p):
        return self._elementwise(i, op, p, "mul")

    def _shape_struct(self, var, dims):
        return self.struct("mcu_shape_t", var, {"rank": len(dims), "dims": "{" + ", ".join(map(str, dims)) + "}"})

    def portable_transpose(self, i, op, p):
        perms = self.array(f"layer{i}_perms", "int32_t", p["perms"])
        return [self._shape_struct(f"layer{i}_in_shape", p["in_shape"]),
                f"status = mcu_transpose({p['elem_bytes']}, &layer{i}_in_shape, {perms}, "
                f"{self.buf(op.operands[0])}, {self.storage(op)});"]

    def portable_concat(self, i, op, p):
        lines = [self._shape_struct(f"layer{i}_out_shape", p["out_shape"])]
        offset = 0
        for k, v in enumerate(op.operands):
            dims = _shape(v)
            start = [0] * len(dims)
            start[p["axis"]] = offset
            offset += dims[p["axis"]]
            st = self.array(f"layer{i}_start{k}", "int32_t", start)
            lines.append(self._shape_struct(f"layer{i}_in{k}_shape", dims))
            lines.append(f"status = mcu_copy_into({p['elem_bytes']}, &layer{i}_in{k}_shape, &layer{i}_out_shape, "
                         f"{st}, {self.buf(v)}, {self.storage(op)});")
            lines.append("if (status != 0) return status;")
        return lines[:-1]

    def portable_pad(self, i, op, p):
        pads = self.array(f"layer{i}_padding", "int32_t", p["padding"])
        return [self._shape_struct(f"layer{i}_in_shape", p["in_shape"]),
                f"status = mcu_pad({p['type']}, &layer{i}_in_shape, {pads}, {p['pad_value']}, "
                f"{self.buf(op.operands[0])}, {self.storage(op)});"]

    def portable_slice(self, i, op, p):
        st = self.array(f"layer{i}_start", "int32_t", p["start"])
        return [self._shape_struct(f"layer{i}_in_shape", p["in_shape"]),
                self._shape_struct(f"layer{i}_out_shape", p["out_shape"]),
                f"status = mcu_slice({p['elem_bytes']}, &layer{i}_in_shape, &layer{i}_out_shape, {st}, "
                f"{self.buf(op.operands[0])}, {self.storage(op)});"]

    def portable_tile(self, i, op, p):
        return [self._shape_struct(f"layer{i}_in_shape", p["in_shape"]),
                self._shape_struct(f"layer{i}_out_shape", p["out_shape"]),
                f"status = mcu_tile({p['elem_bytes']}, &layer{i}_in_shape, &layer{i}_out_shape, "
                f"{self.buf(op.operands[0])}, {self.storage(op)});"]

    def portable_reverse(self, i, op, p):
        return [self._shape_struct(f"layer{i}_shape", p["shape"]),
                f"status = mcu_reverse({p['elem_bytes']}, &layer{i}_shape, {p['axis']}, "
                f"{self.buf(op.operands[0])}, {self.storage(op)});"]

    def portable_gather(self, i, op, p):
        return [f"status = mcu_gather({p['elem_bytes']}, {p['n']}, {p['k']}, {p['c']}, {p['w']}, "
                f"{self.buf(op.operands[0])}, {self.ptr(op.operands[1], 'int32_t')}, {self.storage(op)});"]

    def portable_resize(self, i, op, p):
        s = self.struct("mcu_resize_params_t", f"layer{i}_params", p)
        return [s, f"status = mcu_resize(&layer{i}_params, {self.buf(op.operands[0])}, {self.storage(op)});"]

    def portable_reduce(self, i, op, p):
        return [f"status = mcu_reduce({p['op']}, {p['type']}, {p['outer']}, {p['axis']}, {p['inner']}, "
                f"{self.buf(op.operands[0])}, {self.storage(op)});"]

    def portable_argmax(self, i, op, p):
        return [f"status = mcu_argmax({p['type']}, {p['outer']}, {p['axis']}, {p['inner']}, "
                f"{self.buf(op.operands[0])}, {self.out(op, 'int32_t')});"]

    # CMSIS-NN calls --------------------------------------------------------------------------------
    def ctx(self, i, op, buf_expr=None, size=0) -> str:
        if buf_expr is None and "mcu.scratch_offset" in op.attributes:
            buf_expr = f"arena + {_int(op, 'mcu.scratch_offset')}"
            size = _int(op, "mcu.scratch_bytes")
        return f"cmsis_nn_context layer{i}_ctx = {{.buf = {buf_expr or 'NULL'}, .size = {size}}};"

    @staticmethod
    def dims(var, d) -> str:
        return f"const cmsis_nn_dims {var} = {{.n = {d[0]}, .h = {d[1]}, .w = {d[2]}, .c = {d[3]}}};"

    def _quant_arrays(self, i, p, channels):
        mult, shift = p["multiplier"], p["shift"]
        if len(mult) == 1:
            mult, shift = mult * channels, shift * channels
        # CMSIS-NN takes non-const pointers; the arrays stay in flash.
        m = self.array(f"layer{i}_multiplier", "int32_t", mult)
        s = self.array(f"layer{i}_shift", "int32_t", shift)
        return f"const cmsis_nn_per_channel_quant_params layer{i}_quant = {{.multiplier = (int32_t *){m}, .shift = (int32_t *){s}}};"

    def _conv_common(self, i, op, p, extra=""):
        in_s, f_s, out_s = _shape(op.operands[0]), _shape(op.operands[1]), _shape(op.results[0])
        stride, pad, dil, act = p["stride"], p["padding"], p["dilation"], p["activation"]
        tiles = (f".stride = {{.w = {stride[1]}, .h = {stride[0]}}}, .padding = {{.w = {pad[1]}, .h = {pad[0]}}}, "
                 f".dilation = {{.w = {dil[1]}, .h = {dil[0]}}}, .activation = {{.min = {act[0]}, .max = {act[1]}}}")
        params = f".input_offset = {p['input_offset']}, .output_offset = {p['output_offset']}, {extra}{tiles}"
        return in_s, f_s, out_s, params

    def cmsis_conv(self, i, op, p):
        if p["kernel"].endswith("_s16"):
            return self.cmsis_conv_s16(i, op, p)
        in_s, f_s, out_s, params = self._conv_common(i, op, p)
        args = (f"&layer{i}_ctx, &layer{i}_params, &layer{i}_quant, &layer{i}_input_dims, "
                f"{self.ptr(op.operands[0], 'int8_t')}, &layer{i}_filter_dims, "
                f"{self.const_name(op.operands[1], f'layer{i}_filter')}, &layer{i}_bias_dims, "
                f"{self.const_name(op.operands[2], f'layer{i}_bias')}, ")
        kernel = p["kernel"]
        args += "NULL, " if kernel == "arm_convolve_s8" else ""
        args += f"&layer{i}_output_dims, {self.out(op, 'int8_t')}"
        return [self.ctx(i, op), f"const cmsis_nn_conv_params layer{i}_params = {{{params}}};",
                self._quant_arrays(i, p, out_s[3]), self.dims(f"layer{i}_input_dims", in_s),
                self.dims(f"layer{i}_filter_dims", f_s), self.dims(f"layer{i}_bias_dims", [1, 1, 1, out_s[3]]),
                self.dims(f"layer{i}_output_dims", out_s), self.check_scratch(i, op, "arm_convolve_wrapper_s8_get_buffer_size(&layer{i}_params, &layer{i}_input_dims, &layer{i}_filter_dims, &layer{i}_output_dims)" if kernel != "arm_convolve_s8" else "arm_convolve_s8_get_buffer_size(&layer{i}_input_dims, &layer{i}_filter_dims)"),
                f"status = {kernel}({args});"]

    def check_scratch(self, i, op, call: str) -> str:
        """In a debug build, checks the planned scratch against CMSIS-NN's own size function."""
        planned = _int(op, "mcu.scratch_bytes")
        call = call.replace("{i}", str(i))
        return f"MCU_CHECK_SCRATCH({call}, {planned});"

    def cmsis_conv_s16(self, i, op, p):
        in_s, f_s, out_s, params = self._conv_common(i, op, p)
        bias = self.const_name(op.operands[2], f"layer{i}_bias")
        return [self.ctx(i, op), f"const cmsis_nn_conv_params layer{i}_params = {{{params}}};",
                self._quant_arrays(i, p, out_s[3]), self.dims(f"layer{i}_input_dims", in_s),
                self.dims(f"layer{i}_filter_dims", f_s), self.dims(f"layer{i}_bias_dims", [1, 1, 1, out_s[3]]),
                self.dims(f"layer{i}_output_dims", out_s),
                f"const cmsis_nn_bias_data layer{i}_bias = {{.data = {bias}, .is_int32_bias = false}};",
                self.check_scratch(i, op, "arm_convolve_wrapper_s16_get_buffer_size(&layer{i}_params, &layer{i}_input_dims, &layer{i}_filter_dims, &layer{i}_output_dims)"),
                f"status = arm_convolve_wrapper_s16(&layer{i}_ctx, &layer{i}_params, &layer{i}_quant, "
                f"&layer{i}_input_dims, {self.ptr(op.operands[0], 'int16_t')}, &layer{i}_filter_dims, "
                f"{self.const_name(op.operands[1], f'layer{i}_filter')}, &layer{i}_bias_dims, &layer{i}_bias, "
                f"&layer{i}_output_dims, {self.out(op, 'int16_t')});"]

    def cmsis_depthwise_conv(self, i, op, p):
        s16 = p["kernel"].endswith("_s16")
        in_t = "int16_t" if s16 else "int8_t"
        in_s, f_s, out_s, params = self._conv_common(i, op, p, extra=f".ch_mult = {p['ch_mult']}, ")
        return [self.ctx(i, op), f"const cmsis_nn_dw_conv_params layer{i}_params = {{{params}}};",
                self._quant_arrays(i, p, out_s[3]), self.dims(f"layer{i}_input_dims", in_s),
                self.dims(f"layer{i}_filter_dims", f_s), self.dims(f"layer{i}_bias_dims", [1, 1, 1, out_s[3]]),
                self.dims(f"layer{i}_output_dims", out_s),
                # arm_depthwise_conv_s8 (the scratch-free kernel) has no size function: it needs none.
                "" if p["kernel"] == "arm_depthwise_conv_s8" else
                self.check_scratch(i, op, p["kernel"] + "_get_buffer_size(&layer{i}_params, &layer{i}_input_dims, &layer{i}_filter_dims, &layer{i}_output_dims)"),
                f"status = {p['kernel']}(&layer{i}_ctx, &layer{i}_params, &layer{i}_quant, "
                f"&layer{i}_input_dims, {self.ptr(op.operands[0], in_t)}, &layer{i}_filter_dims, "
                f"{self.const_name(op.operands[1], f'layer{i}_filter')}, &layer{i}_bias_dims, "
                f"{self.const_name(op.operands[2], f'layer{i}_bias')}, &layer{i}_output_dims, {self.out(op, in_t)});"]

    def cmsis_fully_connected(self, i, op, p):
        in_s, f_s = _shape(op.operands[0]), _shape(op.operands[1])
        out_c, depth = f_s[0], f_s[1]
        batches = int(np.prod(in_s, dtype=np.int64)) // depth
        act = p["activation"]
        lines = []
        sums = None
        if "mcu.kernel_sums" in op.attributes:
            sums = self.array(f"layer{i}_kernel_sums", "int32_t", _ints(op.attributes["mcu.kernel_sums"]))
        lines.append(self.ctx(i, op, f"(void *){sums}" if sums else None, 4 * out_c if sums else 0))
        lines.append(f"const cmsis_nn_fc_params layer{i}_params = {{.input_offset = {p['input_offset']}, "
                     f".filter_offset = {p['filter_offset']}, .output_offset = {p['output_offset']}, "
                     f".activation = {{.min = {act[0]}, .max = {act[1]}}}}};")
        per_channel = p["kernel"] == "arm_fully_connected_per_channel_s8"
        if per_channel:
            lines.append(self._quant_arrays(i, p, out_c))
        else:
            lines.append(f"const cmsis_nn_per_tensor_quant_params layer{i}_quant = {{.multiplier = {p['multiplier'][0]}, "
                         f".shift = {p['shift'][0]}}};")
        lines += [self.dims(f"layer{i}_input_dims", [batches, 1, 1, depth]),
                  self.dims(f"layer{i}_filter_dims", [depth, 1, 1, out_c]),
                  self.dims(f"layer{i}_bias_dims", [1, 1, 1, out_c]),
                  self.dims(f"layer{i}_output_dims", [batches, 1, 1, out_c]),
                  f"status = {p['kernel']}(&layer{i}_ctx, &layer{i}_params, &layer{i}_quant, &layer{i}_input_dims, "
                  f"{self.ptr(op.operands[0], 'int8_t')}, &layer{i}_filter_dims, "
                  f"{self.const_name(op.operands[1], f'layer{i}_filter')}, &layer{i}_bias_dims, "
                  f"{self.const_name(op.operands[2], f'layer{i}_bias')}, &layer{i}_output_dims, {self.out(op, 'int8_t')});"]
        return lines

    def _cmsis_pool(self, i, op, p, fn):
        in_s, out_s = _shape(op.operands[0]), _shape(op.results[0])
        st, pad, k, act = p["stride"], p["padding"], p["kernel_size"], p["activation"]
        lines = [self.ctx(i, op),
                 f"const cmsis_nn_pool_params layer{i}_params = {{.stride = {{.w = {st[1]}, .h = {st[0]}}}, "
                 f".padding = {{.w = {pad[1]}, .h = {pad[0]}}}, .activation = {{.min = {act[0]}, .max = {act[1]}}}}};",
                 self.dims(f"layer{i}_input_dims", in_s), self.dims(f"layer{i}_filter_dims", [1, k[0], k[1], 1]),
                 self.dims(f"layer{i}_output_dims", out_s)]
        t = "int16_t" if fn.endswith("_s16") else "int8_t"
        if fn.startswith("arm_avgpool"):
            lines.append(self.check_scratch(i, op, f"{fn}_get_buffer_size({out_s[2]}, {in_s[3]})"))
        lines.append(f"status = {fn}(&layer{i}_ctx, &layer{i}_params, &layer{i}_input_dims, "
                     f"{self.ptr(op.operands[0], t)}, &layer{i}_filter_dims, &layer{i}_output_dims, "
                     f"{self.out(op, t)});")
        return lines

    def cmsis_avg_pool(self, i, op, p):
        return self._cmsis_pool(i, op, p, p["kernel"])

    def cmsis_max_pool(self, i, op, p):
        return self._cmsis_pool(i, op, p, p["kernel"])

    def _elementwise_blocks(self, op, t):
        """(in1, in2, out, block, repeats): equal shapes are one call; an operand repeated over
        leading dimensions makes one call per block of the output (CMSIS-NN does not broadcast)."""
        n = int(np.prod(_shape(op.results[0]), dtype=np.int64))
        sizes = [int(np.prod(_shape(v), dtype=np.int64)) for v in op.operands]
        block = min(sizes)
        repeats = n // block

        def at(expr, size):
            return f"{expr} + r * {block}" if repeats > 1 and size == n else expr

        return (at(self.ptr(op.operands[0], t), sizes[0]), at(self.ptr(op.operands[1], t), sizes[1]),
                at(self.out(op, t), n), block, repeats)

    @staticmethod
    def _repeat(call: str, repeats: int) -> list[str]:
        if repeats == 1:
            return [call]
        return [f"for (int32_t r = 0; r < {repeats}; ++r) {{", f"  {call}",
                "  if (status != 0) return status;", "}"]

    def cmsis_add(self, i, op, p):
        a = p["activation"]
        t = "int16_t" if p["kernel"].endswith("_s16") else "int8_t"
        in1, in2, out, block, repeats = self._elementwise_blocks(op, t)
        return self._repeat(
            f"status = {p['kernel']}({in1}, {in2}, "
            f"{p['input1_offset']}, {p['input1_multiplier']}, {p['input1_shift']}, {p['input2_offset']}, "
            f"{p['input2_multiplier']}, {p['input2_shift']}, {p['left_shift']}, {out}, "
            f"{p['output_offset']}, {p['output_multiplier']}, {p['output_shift']}, {a[0]}, {a[1]}, {block});",
            repeats)

    def cmsis_transpose(self, i, op, p):
        perms = self.array(f"layer{i}_perms", "uint32_t", p["perms"])
        return [self.dims(f"layer{i}_input_dims", _shape(op.operands[0])),
                self.dims(f"layer{i}_output_dims", _shape(op.results[0])),
                f"const cmsis_nn_transpose_params layer{i}_params = {{.num_dims = 4, .permutations = {perms}}};",
                f"status = arm_transpose_s8({self.ptr(op.operands[0], 'int8_t')}, {self.out(op, 'int8_t')}, "
                f"&layer{i}_input_dims, &layer{i}_output_dims, &layer{i}_params);"]

    def cmsis_pad(self, i, op, p):
        pads = p["padding"]
        return [self.dims(f"layer{i}_input_dims", _shape(op.operands[0])),
                self.dims(f"layer{i}_pre_pad", pads[0::2]), self.dims(f"layer{i}_post_pad", pads[1::2]),
                f"status = arm_pad_s8({self.ptr(op.operands[0], 'int8_t')}, {self.out(op, 'int8_t')}, "
                f"{p['pad_value']}, &layer{i}_input_dims, &layer{i}_pre_pad, &layer{i}_post_pad);"]

    def cmsis_concat(self, i, op, p):
        axis = p["axis"]
        kernel = p["kernel"]
        out_s = _shape(op.results[0])
        lines, offset = [], 0
        for v in op.operands:
            n, h, w, c = _shape(v)
            # arm_concatenation_s8_*: (input, x=C, y=W, z=H, w=N, output, output size on the axis
            # (not for w), offset on the axis); it returns nothing.
            size_arg = "" if axis == 0 else f"{out_s[axis]}, "
            lines.append(f"{kernel}({self.ptr(v, 'int8_t')}, {c}, {w}, {h}, {n}, {self.out(op, 'int8_t')}, "
                         f"{size_arg}{offset});")
            offset += _shape(v)[axis]
        return lines

    def cmsis_mul(self, i, op, p):
        a = p["activation"]
        t = "int16_t" if p["kernel"].endswith("_s16") else "int8_t"
        in1, in2, out, block, repeats = self._elementwise_blocks(op, t)
        return self._repeat(
            f"status = {p['kernel']}({in1}, {in2}, {p['input1_offset']}, {p['input2_offset']}, {out}, "
            f"{p['output_offset']}, {p['output_multiplier']}, {p['output_shift']}, {a[0]}, {a[1]}, {block});",
            repeats)

    # files ------------------------------------------------------------------------------------
    def io_infos(self):
        def info(name, value, quant):
            et = _elem(value)
            dims = _shape(value)
            scale, zp = (quant.scale, quant.zero_point) if quant is not None else (1.0, 0)
            shape = ", ".join(str(d) for d in dims) or "0"
            return (f"  {{\"{name}\", {len(dims)}, {{{shape}}}, {_INFO_ELEM.get(et, 4)}, {int(et.startswith('f'))}, "
                    f"{float(scale)!r}f, {int(zp)}, {_nbytes(value) if not et.startswith('f') else int(np.prod(dims)) * 4}}}")
        def quant(table, k):
            return table[k] if table is not None and k < len(table) else None

        ins = [info(f"input{a.arg_number}", a, quant(self.inputs_quant, a.arg_number))
               for a in self.block.arguments]
        outs = [info(f"output{k}", v, quant(self.outputs_quant, k)) for k, v in enumerate(self.ret.operands)]
        return ins, outs

    def emit(self) -> dict[str, str]:
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
            if isinstance(owner, ir.Block) or owner.operation.name == "tosa.const" or \
                    not _str(owner, "mcu.storage").startswith(f"output:{k}"):
                body.append(f"  /* output {k} is not computed in place: copy it */")
                body.append(f"  status = mcu_copy({_nbytes(v)}, {self.buf(v, f'output{k}')}, outputs[{k}]);")
                body.append("  if (status != 0) return status;")
        ins, outs = self.io_infos()
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
              "", "/* Weights, biases and tables (flash). */", *consts,
              "", "/* Kernel parameters. */", *self.arrays, "",
              "int mcu_model_run(const void *const *inputs, void *const *outputs, uint8_t *arena) {",
              "  int status = 0;",
              "  (void)inputs;",
              "  (void)outputs;",
              "  (void)arena;",
              *body,
              "  mcu_layer_marker(-1);",
              "  return status;",
              "}", ""]
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
            f'#define MCU_MODEL_TARGET "{self.target}"',
        ]
        if self.uses_cmsis:
            h.append("#define MCU_MODEL_USES_CMSIS_NN 1")
        h += ["",
              "#ifdef __cplusplus",
              'extern "C" {',
              "#endif",
              "",
              "/* Shapes and quantization (real = scale * (q - zero_point)) of the graph inputs/outputs. */",
              "extern const mcu_tensor_info_t mcu_model_inputs[];",
              "extern const mcu_tensor_info_t mcu_model_outputs[];",
              "",
              "/* Runs the model: inputs/outputs are caller buffers, `arena` holds MCU_MODEL_ARENA_BYTES",
              " * (16-byte aligned). Returns 0, or the failing kernel's nonzero status. */",
              "int mcu_model_run(const void *const *inputs, void *const *outputs, uint8_t *arena);",
              "",
              "#ifdef __cplusplus",
              "}",
              "#endif",
              "",
              "#endif /* MCU_MODEL_H */", ""]
        return {"model.c": "\n".join(c), "model.h": "\n".join(h)}


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
        if not isinstance(owner, ir.Block) and owner.operation.name == "tosa.const":
            total += _nbytes(v)
    if "mcu.kernel_sums" in op.attributes:
        total += 4 * len(_ints(op.attributes["mcu.kernel_sums"]))
    return total


def model_report(module) -> dict:
    """Arena, lower bound, weights and one entry per kernel call (in run order)."""
    module_op, fn = _entry(module)
    ops, weights, seen = [], 0, set()
    for op in _kernel_ops(fn):
        w = _weights_bytes(op)
        # The model total counts a constant shared by several calls once, as the C holds it once.
        for v in op.operands:
            owner = v.owner
            if not isinstance(owner, ir.Block) and owner.operation.name == "tosa.const":
                key = hash(owner.operation)
                if key not in seen:
                    seen.add(key)
                    weights += _nbytes(v)
        if "mcu.kernel_sums" in op.attributes:
            weights += 4 * len(_ints(op.attributes["mcu.kernel_sums"]))
        ops.append({"name": _layer_name(op), "tosa_op": _source_op(op), "kernel": _kernel_name(op),
                    "weights_bytes": w,
                    "arena_offset": _int(op, "mcu.offset") if "mcu.storage" in op.attributes and
                    _str(op, "mcu.storage") == "arena" else None})
    return {"arena_bytes": _int(module_op, "mcu.arena_bytes"),
            "arena_lower_bound_bytes": _int(module_op, "mcu.arena_lower_bound_bytes"),
            "arena_overlap_bound_bytes": _int(module_op, "mcu.arena_overlap_bound_bytes", None),
            "weights_bytes": weights,
            "target": _str(module_op, "mcu.target") if "mcu.target" in module_op.attributes else None,
            "backend": _str(module_op, "mcu.backend") if "mcu.backend" in module_op.attributes else None,
            "ops": ops}

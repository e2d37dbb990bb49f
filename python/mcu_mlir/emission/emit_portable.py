"""C emission of the `portable` dialect: one function per op class, calling lib/portable.

Each function returns the C lines of one call; `em` is the module's emitter (buffers, constants,
parameter arrays). What the op's types fix (element types, shapes, counts) is read from them here.
"""

from __future__ import annotations

import numpy as np

from ..ir.values import elem as _elem, elem_bytes as _elem_bytes, numel as _count, shape as _shape
from ..dialects import portable
from ..ir.types import RUNTIME


def _dtype(value) -> str:
    """The runtime's element-type enum (include/mcu/portable.h)."""
    return RUNTIME[_elem(value)]


def _outer_axis_inner(dims, axis):
    return (int(np.prod(dims[:axis], dtype=np.int64)), dims[axis],
            int(np.prod(dims[axis + 1:], dtype=np.int64)))


def _params_struct(em, ctype: str, var: str, p: dict, tail=()) -> str:
    """A kernel's parameter struct: fields by name, then `tail` (the array pointers)."""
    order = sorted(k for k in p if k not in tail) + list(tail)
    return em.struct(ctype, var, {k: p[k] for k in order})


def _with_arrays(em, i, p, struct_ctype, var, *, null_if_empty=True):
    """`p` as a struct whose multiplier / shift fields point at static arrays (NULL for none
    where the kernel takes that)."""
    fields = {k: v for k, v in p.items() if k not in ("multiplier", "shift")}
    for k in ("multiplier", "shift"):
        fields[k] = em.array(f"layer{i}_{k}", "int32_t", p[k]) if p[k] or not null_if_empty else "NULL"
    return _params_struct(em, struct_ctype, var, fields, tail=("multiplier", "shift"))


# -- compute ------------------------------------------------------------------------------------

def conv2d(em, i, op):
    depthwise = isinstance(op, portable.DepthwiseConv2DOp)
    n, h, w, c = _shape(op.operands[0])
    f_s, out_s = _shape(op.operands[1]), _shape(op.results[0])
    stride, pad, dil, act = op.ints("stride"), op.ints("padding"), op.ints("dilation"), op.ints("activation")
    mult = op.ints("multiplier")
    p = {"n": n, "h": h, "w": w, "c": c, "out_h": out_s[1], "out_w": out_s[2], "out_c": out_s[3],
         "kernel_h": f_s[1], "kernel_w": f_s[2], "stride_h": stride[0], "stride_w": stride[1],
         "pad_top": pad[0], "pad_left": pad[1], "dilation_h": dil[0], "dilation_w": dil[1],
         "groups": 1 if depthwise else c // f_s[3], "ch_mult": out_s[3] // c if depthwise else 1,
         "input_offset": op.int("input_offset"), "output_offset": op.int("output_offset"),
         "act_min": act[0], "act_max": act[1], "per_channel": int(len(mult) > 1),
         "multiplier": mult, "shift": op.ints("shift")}
    if "weight_offset" in op.operation.attributes:   # asymmetric weights only: others keep their C
        p["weight_offset"] = op.int("weight_offset")
    s16 = op.type_suffix() == "s16"
    in_t = "int16_t" if s16 else "int8_t"
    out_t = in_t if mult else ("int64_t" if s16 else "int32_t")
    return [_with_arrays(em, i, p, "mcu_conv_params_t", f"layer{i}_params"),
            f"status = mcu_{op.kernel_name()}(&layer{i}_params, {em.ptr(op.operands[0], in_t)}, "
            f"{em.const_name(op.operands[1], f'layer{i}_filter')}, "
            f"{em.const_name(op.operands[2], f'layer{i}_bias')}, {em.out(op, out_t)});"]


def transpose_conv2d(em, i, op):
    n, h, w, c = _shape(op.operands[0])
    f_s, out_s = _shape(op.operands[1]), _shape(op.results[0])
    stride, out_pad = op.ints("stride"), op.ints("out_pad")
    p = {"n": n, "h": h, "w": w, "c": c, "out_h": out_s[1], "out_w": out_s[2], "out_c": out_s[3],
         "kernel_h": f_s[1], "kernel_w": f_s[2], "stride_h": stride[0], "stride_w": stride[1],
         "out_pad_top": out_pad[0], "out_pad_left": out_pad[1], "input_zp": op.int("input_zp"),
         "weight_zp": op.int("weight_zp")}
    return _raw_accumulator_call(em, i, op, "mcu_transpose_conv_params_t", p)


def _raw_accumulator_call(em, i, op, ctype: str, p: dict) -> list[str]:
    """A convolution kernel writing raw accumulators: int8 in -> int32 out, int16 in -> int64 out."""
    s16 = op.type_suffix() == "s16"
    return [_params_struct(em, ctype, f"layer{i}_params", p),
            f"status = mcu_{op.kernel_name()}(&layer{i}_params, {em.ptr(op.operands[0], 'int16_t' if s16 else 'int8_t')}, "
            f"{em.const_name(op.operands[1], f'layer{i}_filter')}, "
            f"{em.const_name(op.operands[2], f'layer{i}_bias')}, {em.out(op, 'int64_t' if s16 else 'int32_t')});"]


def conv3d(em, i, op):
    n, d, h, w, c = _shape(op.operands[0])
    f_s, out_s = _shape(op.operands[1]), _shape(op.results[0])
    stride, pad, dil = op.ints("stride"), op.ints("padding"), op.ints("dilation")
    p = {"n": n, "d": d, "h": h, "w": w, "c": c, "out_d": out_s[1], "out_h": out_s[2], "out_w": out_s[3],
         "out_c": out_s[4], "kernel_d": f_s[1], "kernel_h": f_s[2], "kernel_w": f_s[3],
         "stride_d": stride[0], "stride_h": stride[1], "stride_w": stride[2],
         "pad_front": pad[0], "pad_top": pad[2], "pad_left": pad[4],
         "dilation_d": dil[0], "dilation_h": dil[1], "dilation_w": dil[2],
         "input_zp": op.int("input_zp"), "weight_zp": op.int("weight_zp")}
    return _raw_accumulator_call(em, i, op, "mcu_conv3d_params_t", p)


def matmul(em, i, op):
    lhs, rhs = _shape(op.operands[0]), _shape(op.operands[1])
    if len(rhs) == 2:  # [N, K] shared by every row of every batch
        batch, m, k, n, transposed, rhs_batch = lhs[0] * lhs[1], 1, lhs[2], rhs[0], 1, 0
    else:
        batch, m, k, n, transposed = lhs[0], lhs[1], lhs[2], rhs[2], 0
        rhs_batch = int(rhs[0] == batch and batch > 1)
    act, mult = op.ints("activation"), op.ints("multiplier")
    p = {"batch": batch, "m": m, "k": k, "n": n, "rhs_transposed": transposed, "rhs_batch": rhs_batch,
         "lhs_offset": op.int("lhs_offset"), "rhs_offset": op.int("rhs_offset"),
         "output_offset": op.int("output_offset"), "act_min": act[0], "act_max": act[1],
         "per_channel": int(len(mult) > 1), "multiplier": mult, "shift": op.ints("shift"),
         "input_type": "MCU_I16" if _elem(op.operands[0]) == "i16" else "MCU_I8"}
    return [_with_arrays(em, i, p, "mcu_matmul_params_t", f"layer{i}_params"),
            f"status = mcu_matmul(&layer{i}_params, {em.buf(op.operands[0], f'layer{i}_lhs')}, "
            f"{em.buf(op.operands[1], f'layer{i}_rhs')}, {em.buf(op.operands[2], f'layer{i}_bias')}, "
            f"{em.storage(op)});"]


def pool2d(em, i, op):
    n, h, w, c = _shape(op.operands[0])
    out_s = _shape(op.results[0])
    k, stride, pad, act = op.ints("kernel_size"), op.ints("stride"), op.ints("padding"), op.ints("activation")
    p = {"n": n, "h": h, "w": w, "c": c, "out_h": out_s[1], "out_w": out_s[2], "kernel_h": k[0],
         "kernel_w": k[1], "stride_h": stride[0], "stride_w": stride[1], "pad_top": pad[0],
         "pad_left": pad[1], "pad_bottom": pad[2], "pad_right": pad[3], "input_zp": op.int("input_zp"),
         "output_zp": op.int("output_zp"), "act_min": act[0], "act_max": act[1],
         "type": _dtype(op.operands[0])}
    return [_params_struct(em, "mcu_pool_params_t", f"layer{i}_params", p),
            f"status = mcu_{op.kernel_name()}(&layer{i}_params, {em.buf(op.operands[0])}, {em.storage(op)});"]


def _broadcast_shapes(op, first: int = 0) -> dict:
    """in1 / in2 / out shapes and whether the kernel broadcasts: equal element counts are an
    elementwise loop (the operands may be views of other shapes)."""
    a, b, out = op.operands[first], op.operands[first + 1], op.results[0]
    if _count(a) == _count(b) == _count(out):
        dims = _shape(out)
        return {"broadcast": 0, "in1": dims, "in2": dims, "out": dims}
    return {"broadcast": 1, "in1": _shape(a), "in2": _shape(b), "out": _shape(out)}


def elementwise(em, i, op):
    add = isinstance(op, portable.ElementwiseAddOp)
    act = op.ints("activation")
    names = ["input1_offset", "input1_multiplier", "input1_shift", "input2_offset", "input2_multiplier",
             "input2_shift", "left_shift"] if add else ["input1_offset", "input2_offset"]
    p = {k: op.int(k) for k in names + ["output_offset", "output_multiplier", "output_shift"]}
    shapes = _broadcast_shapes(op)
    p.update({"count": _count(op.results[0]), "act_min": act[0], "act_max": act[1],
              "broadcast": shapes["broadcast"]})
    for k in ("in1", "in2", "out"):
        p[k] = em.shape_lit(shapes[k])
    if not add:
        p.update(left_shift=0, input1_multiplier=0, input1_shift=0, input2_multiplier=0, input2_shift=0)
    t = "int16_t" if op.type_suffix() == "s16" else "int8_t"
    return [_params_struct(em, "mcu_elementwise_params_t", f"layer{i}_params", p),
            f"status = mcu_{op.kernel_name()}(&layer{i}_params, {em.ptr(op.operands[0], t)}, "
            f"{em.ptr(op.operands[1], t)}, {em.out(op, t)});"]


def _binary_params(em, op, kind: str, first: int, shift: int) -> dict:
    a, out = op.operands[first], op.results[0]
    p = {"op": kind, "in_type": _dtype(a), "out_type": _dtype(out)}
    for k in ("in1", "in2", "out"):
        p[k] = em.shape_lit(_shape(op.operands[first]) if k == "in1" else
                            _shape(op.operands[first + 1]) if k == "in2" else _shape(out))
    p["shift"] = shift
    return p


def binary(em, i, op):
    p = _binary_params(em, op, "MCU_BIN_" + op.enum("kind").upper(), 0, op.int("shift"))
    return [_params_struct(em, "mcu_binary_params_t", f"layer{i}_params", p),
            f"status = mcu_binary(&layer{i}_params, {em.buf(op.operands[0])}, "
            f"{em.buf(op.operands[1])}, {em.storage(op)});"]


def select(em, i, op):
    p = _binary_params(em, op, "MCU_BIN_ADD", 1, 0)
    cond = _shape(op.operands[0])
    c = em.struct("mcu_shape_t", f"layer{i}_cond_shape",
                  {"rank": len(cond), "dims": "{" + ", ".join(map(str, cond)) + "}"})
    return [_params_struct(em, "mcu_binary_params_t", f"layer{i}_params", p), c,
            f"status = mcu_select(&layer{i}_params, {em.buf(op.operands[0])}, &layer{i}_cond_shape, "
            f"{em.buf(op.operands[1])}, {em.buf(op.operands[2])}, {em.storage(op)});"]


def unary(em, i, op):
    p = {"op": "MCU_UN_" + op.enum("kind").upper(), "type": _dtype(op.operands[0]),
         "count": _count(op.operands[0]), "input_zp": op.int("input_zp"), "output_zp": op.int("output_zp")}
    return [_params_struct(em, "mcu_unary_params_t", f"layer{i}_params", p),
            f"status = mcu_unary(&layer{i}_params, {em.buf(op.operands[0])}, {em.storage(op)});"]


_UNSIGNED = {"MCU_I8": "MCU_U8", "MCU_I16": "MCU_U16"}


def _rescale_struct(em, i, op, var: str, in_type: str, out_type: str) -> str:
    dims = _shape(op.operands[0])
    p = {"in_type": in_type, "out_type": out_type, "count": _count(op.operands[0]),
         "channels": dims[-1] if dims else 1, "input_zp": op.int("input_zp"),
         "output_zp": op.int("output_zp"), "scale32": op.int("scale32"),
         "double_round": op.int("double_round"), "per_channel": op.int("per_channel"),
         "multiplier": op.ints("multiplier"), "shift": op.ints("shift")}
    return _with_arrays(em, i, p, "mcu_rescale_params_t", var, null_if_empty=False)


def rescale(em, i, op):
    in_t, out_t = _dtype(op.operands[0]), _dtype(op.results[0])
    if op.int("input_unsigned"):
        in_t = _UNSIGNED.get(in_t, in_t)
    if op.int("output_unsigned"):
        out_t = _UNSIGNED.get(out_t, out_t)
    return [_rescale_struct(em, i, op, f"layer{i}_params", in_t, out_t),
            f"status = mcu_rescale(&layer{i}_params, {em.buf(op.operands[0])}, {em.storage(op)});"]


def clamp(em, i, op):
    return [f"status = mcu_clamp({_dtype(op.operands[0])}, {_count(op.operands[0])}, {op.int('min')}, "
            f"{op.int('max')}, {em.buf(op.operands[0])}, {em.storage(op)});"]


def cast(em, i, op):
    return [f"status = mcu_cast({_dtype(op.operands[0])}, {_dtype(op.results[0])}, {_count(op.operands[0])}, "
            f"{em.buf(op.operands[0])}, {em.storage(op)});"]


def table(em, i, op):
    in_t, out_t = {"table_s8": ("int8_t", "int8_t"), "table_s8_s16": ("int8_t", "int16_t")}.get(
        op.kernel_name(), ("int16_t", "int32_t"))
    return [f"status = mcu_{op.kernel_name()}({_count(op.operands[0])}, "
            f"{em.const_name(op.operands[1], f'layer{i}_table')}, "
            f"{em.ptr(op.operands[0], in_t)}, {em.out(op, out_t)});"]


def table_rescale(em, i, op):
    # The table's int32 results are rescaled as they are looked up.
    s = _rescale_struct(em, i, op, f"layer{i}_rescale", "MCU_I32", _dtype(op.results[0]))
    return [s, f"status = mcu_table_s16_rescale({_count(op.operands[0])}, "
               f"{em.const_name(op.operands[1], f'layer{i}_table')}, "
               f"&layer{i}_rescale, {em.ptr(op.operands[0], 'int16_t')}, {em.out(op, 'int16_t')});"]


def log_softmax(em, i, op):
    p = {"outer": op.int("outer"), "axis": op.int("axis_size"), "inner": op.int("inner"),
         "table_size": _shape(op.operands[1])[1]}
    p.update({k: op.int(k) for k in ("diff_mul", "diff_shift", "norm_bits", "norm_mask", "exp_bits",
                                      "exp_mul", "exp_shift", "bias", "base", "out_shift", "multiplier",
                                      "shift", "output_zp", "double_round")})
    p["input_s8"] = int(_elem(op.operands[0]) == "i8")
    return [_params_struct(em, "mcu_log_softmax_params_t", f"layer{i}_params", p),
            f"status = mcu_log_softmax_s8(&layer{i}_params, "
            f"{em.const_name(op.operands[1], f'layer{i}_exp_table')}, "
            f"{em.const_name(op.operands[2], f'layer{i}_log_table')}, "
            f"{em.buf(op.operands[0])}, {em.out(op, 'int8_t')});"]


def softmax(em, i, op):
    return [f"status = mcu_softmax_s8({op.int('num_rows')}, {op.int('row_size')}, "
            f"{em.const_name(op.operands[1], f'layer{i}_exp_table')}, "
            f"{em.const_name(op.operands[2], f'layer{i}_sum_table')}, "
            f"{em.ptr(op.operands[0], 'int8_t')}, {em.out(op, 'int8_t')});"]


def softmax_s16(em, i, op):
    return [f"status = mcu_softmax_s16({op.int('num_rows')}, {op.int('row_size')}, "
            f"{em.const_name(op.operands[1], f'layer{i}_exp_table')}, "
            f"{em.ptr(op.operands[0], 'int16_t')}, {em.out(op, 'int16_t')});"]


def softmax_s16_lut(em, i, op):
    return [f"status = mcu_softmax_s16_lut({op.int('num_rows')}, {op.int('row_size')}, {op.int('mult')}, "
            f"{op.int('shift')}, {em.const_name(op.operands[1], f'layer{i}_exp_lut')}, "
            f"{em.const_name(op.operands[2], f'layer{i}_one_by_one_lut')}, "
            f"{em.ptr(op.operands[0], 'int16_t')}, {em.out(op, 'int16_t')});"]


def hypot(em, i, op):
    return [f"status = mcu_hypot({_count(op.operands[0])}, {_dtype(op.operands[0])}, {em.buf(op.operands[0])}, "
            f"{em.buf(op.operands[1])}, {op.int('a_zp')}, {op.int('b_zp')}, "
            f"{em.const_name(op.operands[2], f'layer{i}_sqrt_table')}, {op.int('multiplier')}, {op.int('shift')}, "
            f"{op.int('headroom')}, {_dtype(op.results[0])}, {op.int('output_zp')}, {em.out(op, 'void')});"]


def norm(em, i, op):
    p = {k: op.int(k) for k in ("batch", "spatial", "groups", "group_size", "centre", "count", "input_zp", "s0",
                                "s1", "eps", "double_round", "output_multiplier", "output_shift",
                                "output_double_round", "output_zp", "act_min", "act_max")}
    p["input_type"] = _dtype(op.operands[0])
    p["output_type"] = _dtype(op.results[0])
    return [_params_struct(em, "mcu_norm_params_t", f"layer{i}_params", p),
            f"status = mcu_norm(&layer{i}_params, {em.const_name(op.operands[1], f'layer{i}_rsqrt_table')}, "
            f"{em.const_name(op.operands[2], f'layer{i}_channel_params')}, "
            f"{em.buf(op.operands[0])}, {em.storage(op)});"]


def prelu(em, i, op):
    p = {k: op.int(k) for k in ("channels", "slope_input_offset", "slope_weight_offset", "slope_output_zp",
                                "slope_double_round", "slope_act_min", "slope_act_max", "output_multiplier",
                                "output_shift", "output_input_zp", "output_zp", "output_double_round", "act_min",
                                "act_max")}
    return [_params_struct(em, "mcu_prelu_params_t", f"layer{i}_params", p),
            f"status = mcu_prelu(&layer{i}_params, {_count(op.operands[0])}, "
            f"{em.const_name(op.operands[1], f'layer{i}_tables')}, "
            f"{em.const_name(op.operands[2], f'layer{i}_channel_params')}, "
            f"{em.ptr(op.operands[0], 'int8_t')}, {em.out(op, 'int8_t')});"]


def lstm(em, i, op):
    """mcu_lstm_step_s8 with one static parameter struct per distinct step (a layer's steps share
    it) and one array per gate."""
    (rows, inputs), hidden = _shape(op.operands[0]), _shape(op.operands[1])[1]

    def per_gate(operand: int, part: str) -> str:
        names = [em.const_part_name(op.operands[operand], k, f"{gate}_gate_{part}")
                 for k, gate in enumerate(("input", "forget", "cell", "output"))]
        return "{" + ", ".join(names) + "}"

    def ints(name: str) -> str:
        return "{" + ", ".join(str(v) for v in op.ints(name)) + "}"
    f2c, i2c = op.ints("forget_to_cell"), op.ints("input_to_cell")
    fields = {"rows": rows, "input_size": inputs, "hidden_size": hidden,
              "input_weights": per_gate(3, "input_weights"), "hidden_weights": per_gate(4, "hidden_weights"),
              "input_bias": per_gate(5, "input_bias"), "hidden_bias": per_gate(6, "hidden_bias"),
              "input_multiplier": ints("input_multipliers"), "input_shift": ints("input_shifts"),
              "hidden_multiplier": ints("hidden_multipliers"), "hidden_shift": ints("hidden_shifts"),
              "forget_to_cell_multiplier": f2c[0], "forget_to_cell_shift": f2c[1],
              "input_to_cell_multiplier": i2c[0], "input_to_cell_shift": i2c[1],
              "cell_clip": op.int("cell_clip"), "cell_scale_power": op.int("cell_scale_power"),
              "output_multiplier": op.int("output_multiplier"), "output_shift": op.int("output_shift"),
              "output_offset": op.int("output_offset")}
    params = em.shared_struct("mcu_lstm_params_t", "lstm_params", ", ".join(f".{k} = {v}" for k, v in fields.items()))
    return [f"status = mcu_lstm_step_s8(&{params}, {em.ptr(op.operands[0], 'int8_t')}, "
            f"{em.ptr(op.operands[1], 'int8_t')}, {em.ptr(op.operands[2], 'int16_t')}, {em.out(op, 'int8_t')}, "
            f"{em.out(op, 'int16_t', 1)});"]


# -- data movement --------------------------------------------------------------------------------

def _shape_struct(em, var, dims):
    return em.struct("mcu_shape_t", var, {"rank": len(dims), "dims": "{" + ", ".join(map(str, dims)) + "}"})


def _move(em, i, op, fn: str, args: str, out_shape: bool = False):
    """A data-movement call: element size, input shape (and output shape), `args`, buffers."""
    a = op.operands[0]
    lines = [_shape_struct(em, f"layer{i}_in_shape", _shape(a))]
    if out_shape:
        lines.append(_shape_struct(em, f"layer{i}_out_shape", _shape(op.results[0])))
    return lines + [f"status = {fn}({_elem_bytes(a)}, &layer{i}_in_shape, {args}{em.buf(a)}, {em.storage(op)});"]


def transpose(em, i, op):
    perms = em.array(f"layer{i}_perms", "int32_t", op.ints("perms"))
    return _move(em, i, op, "mcu_transpose", f"{perms}, ")


def concat(em, i, op):
    axis = op.int("axis")
    lines = [_shape_struct(em, f"layer{i}_out_shape", _shape(op.results[0]))]
    offset = 0
    for k, v in enumerate(op.operands):
        dims = _shape(v)
        start = [0] * len(dims)
        start[axis] = offset
        offset += dims[axis]
        st = em.array(f"layer{i}_start{k}", "int32_t", start)
        lines.append(_shape_struct(em, f"layer{i}_in{k}_shape", dims))
        lines.append(f"status = mcu_copy_into({_elem_bytes(op.results[0])}, &layer{i}_in{k}_shape, "
                     f"&layer{i}_out_shape, {st}, {em.buf(v)}, {em.storage(op)});")
        lines.append("if (status != 0) return status;")
    return lines[:-1]


def concat_transposed(em, i, op):
    lines = []
    for k, (v, (offset, dims)) in enumerate(zip(op.operands, op.layouts())):
        sizes = em.array(f"layer{i}_sizes{k}", "int32_t", [d for d, _ in dims])
        strides = em.array(f"layer{i}_strides{k}", "int32_t", [s for _, s in dims])
        lines.append(f"status = mcu_copy_strided({_elem_bytes(op.results[0])}, {len(dims)}, {sizes}, {strides}, "
                     f"{offset}, {em.buf(v)}, {em.storage(op)});")
        lines.append("if (status != 0) return status;")
    return lines[:-1]


def pad(em, i, op):
    a = op.operands[0]
    pads = em.array(f"layer{i}_padding", "int32_t", op.ints("padding"))
    return [_shape_struct(em, f"layer{i}_in_shape", _shape(a)),
            f"status = mcu_pad({_dtype(a)}, &layer{i}_in_shape, {pads}, {op.int('pad_value')}, "
            f"{em.buf(a)}, {em.storage(op)});"]


def slice_(em, i, op):
    st = em.array(f"layer{i}_start", "int32_t", op.ints("start"))
    return _move(em, i, op, "mcu_slice", f"&layer{i}_out_shape, {st}, ", out_shape=True)


def tile(em, i, op):
    return _move(em, i, op, "mcu_tile", f"&layer{i}_out_shape, ", out_shape=True)


def reverse(em, i, op):
    a = op.operands[0]
    return [_shape_struct(em, f"layer{i}_shape", _shape(a)),
            f"status = mcu_reverse({_elem_bytes(a)}, &layer{i}_shape, {op.int('axis')}, "
            f"{em.buf(a)}, {em.storage(op)});"]


def gather(em, i, op):
    values, indices = op.operands[0], op.operands[1]
    n, k, c = _shape(values)
    return [f"status = mcu_gather({_elem_bytes(values)}, {n}, {k}, {c}, {_shape(indices)[1]}, "
            f"{em.buf(values)}, {em.ptr(indices, 'int32_t')}, {em.storage(op)});"]


def scatter(em, i, op):
    values_in, indices, inp = op.operands[0], op.operands[1], op.operands[2]
    n, k, c = _shape(values_in)
    return [f"status = mcu_scatter({_elem_bytes(values_in)}, {n}, {k}, {c}, {_shape(indices)[1]}, "
            f"{em.buf(values_in)}, {em.ptr(indices, 'int32_t')}, {em.buf(inp)}, {em.storage(op)});"]


def resize(em, i, op):
    a, out = op.operands[0], op.results[0]
    n, h, w, c = _shape(a)
    scale, offset, border = op.ints("scale"), op.ints("offset"), op.ints("border")
    p = {"n": n, "h": h, "w": w, "c": c, "out_h": _shape(out)[1], "out_w": _shape(out)[2],
         "scale_y_n": scale[0], "scale_y_d": scale[1], "scale_x_n": scale[2], "scale_x_d": scale[3],
         "offset_y": offset[0], "offset_x": offset[1], "border_y": border[0], "border_x": border[1],
         "bilinear": int(op.enum("mode") == "bilinear"), "in_type": _dtype(a), "out_type": _dtype(out)}
    return [_params_struct(em, "mcu_resize_params_t", f"layer{i}_params", p),
            f"status = mcu_resize(&layer{i}_params, {em.buf(a)}, {em.storage(op)});"]


def reduce(em, i, op):
    a = op.operands[0]
    outer, size, inner = _outer_axis_inner(_shape(a), op.int("axis"))
    return [f"status = mcu_reduce(MCU_REDUCE_{op.enum('kind').upper()}, {_dtype(a)}, {outer}, {size}, "
            f"{inner}, {em.buf(a)}, {em.storage(op)});"]


def argmax(em, i, op):
    a = op.operands[0]
    outer, size, inner = _outer_axis_inner(_shape(a), op.int("axis"))
    return [f"status = mcu_argmax({_dtype(a)}, {outer}, {size}, {inner}, "
            f"{em.buf(a)}, {em.out(op, 'int32_t')});"]


EMITTERS = {
    portable.Conv2DOp: conv2d, portable.DepthwiseConv2DOp: conv2d,
    portable.TransposeConv2DOp: transpose_conv2d, portable.Conv3DOp: conv3d, portable.MatmulOp: matmul,
    portable.AvgPool2DOp: pool2d, portable.MaxPool2DOp: pool2d,
    portable.ElementwiseAddOp: elementwise, portable.ElementwiseMulOp: elementwise,
    portable.BinaryOp: binary, portable.SelectOp: select, portable.UnaryOp: unary,
    portable.RescaleOp: rescale, portable.ClampOp: clamp, portable.CastOp: cast,
    portable.TableOp: table, portable.TableRescaleOp: table_rescale, portable.LogSoftmaxOp: log_softmax, portable.NormOp: norm, portable.PReluOp: prelu, portable.HypotOp: hypot, portable.SoftmaxOp: softmax, portable.Softmax16Op: softmax_s16, portable.Softmax16LutOp: softmax_s16_lut,
    portable.TransposeOp: transpose, portable.ConcatOp: concat,
    portable.ConcatTransposedOp: concat_transposed, portable.PadOp: pad,
    portable.SliceOp: slice_, portable.TileOp: tile, portable.ReverseOp: reverse,
    portable.GatherOp: gather, portable.ScatterOp: scatter, portable.ResizeOp: resize, portable.ReduceOp: reduce,
    portable.ArgmaxOp: argmax, portable.LstmOp: lstm,
}

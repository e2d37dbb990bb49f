"""C emission of the `cmsisnn` dialect: one function per op class, calling CMSIS-NN.

Each function returns the C lines of one call; `em` is the module's emitter. The `arm_*`
function follows from the op (`function_name`); the dims structs from its operand types.
"""

from __future__ import annotations

import numpy as np

from ..ir.values import shape as _shape
from ..dialects import cmsisnn
from ..ir import attributes as mcu_attrs


def _ctx(em, i, op, buf_expr=None, size=0) -> str:
    if buf_expr is None and mcu_attrs.SCRATCH_OFFSET in op.attributes:
        buf_expr = f"arena + {op.int(mcu_attrs.SCRATCH_OFFSET)}"
        size = op.int(mcu_attrs.SCRATCH_BYTES)
    return f"cmsis_nn_context layer{i}_ctx = {{.buf = {buf_expr or 'NULL'}, .size = {size}}};"


def _dims(var, d) -> str:
    return f"const cmsis_nn_dims {var} = {{.n = {d[0]}, .h = {d[1]}, .w = {d[2]}, .c = {d[3]}}};"


def _quant_arrays(em, i, op, channels):
    mult, shift = op.ints("multiplier"), op.ints("shift")
    if len(mult) == 1:
        mult, shift = mult * channels, shift * channels
    # CMSIS-NN takes non-const pointers; the arrays stay in flash.
    m = em.array(f"layer{i}_multiplier", "int32_t", mult)
    s = em.array(f"layer{i}_shift", "int32_t", shift)
    return f"const cmsis_nn_per_channel_quant_params layer{i}_quant = {{.multiplier = (int32_t *){m}, .shift = (int32_t *){s}}};"


def _check_scratch(op, i, call: str) -> str:
    """In a debug build, checks the planned scratch against CMSIS-NN's own size function."""
    planned = op.int(mcu_attrs.SCRATCH_BYTES) if mcu_attrs.SCRATCH_BYTES in op.attributes else 0
    return f"MCU_CHECK_SCRATCH({call.replace('{i}', str(i))}, {planned});"


def _conv_params(op, extra=""):
    stride, pad, dil, act = op.ints("stride"), op.ints("padding"), op.ints("dilation"), op.ints("activation")
    tiles = (f".stride = {{.w = {stride[1]}, .h = {stride[0]}}}, .padding = {{.w = {pad[1]}, .h = {pad[0]}}}, "
             f".dilation = {{.w = {dil[1]}, .h = {dil[0]}}}, .activation = {{.min = {act[0]}, .max = {act[1]}}}")
    return f".input_offset = {op.int('input_offset')}, .output_offset = {op.int('output_offset')}, {extra}{tiles}"


def _conv_head(em, i, op, params_type: str, extra="", filter_dims=None):
    in_s, out_s = _shape(op.operands[0]), _shape(op.results[0])
    f_s = filter_dims or _shape(op.operands[1])
    return [_ctx(em, i, op), f"const {params_type} layer{i}_params = {{{_conv_params(op, extra)}}};",
            _quant_arrays(em, i, op, out_s[3]), _dims(f"layer{i}_input_dims", in_s),
            _dims(f"layer{i}_filter_dims", f_s), _dims(f"layer{i}_bias_dims", [1, 1, 1, out_s[3]]),
            _dims(f"layer{i}_output_dims", out_s)]


def _weighted_call(em, i, op, fn: str, ctype: str, bias: str | None = None, before_output: str = "") -> str:
    """The call of a CMSIS-NN conv / fully connected: context, params, quant, then each tensor after its dims."""
    # Constants are numbered in the order they are named: input, filter, then bias.
    inp = em.ptr(op.operands[0], ctype)
    filt = em.const_name(op.operands[1], f"layer{i}_filter")
    bias = bias or em.const_name(op.operands[2], f"layer{i}_bias")
    return (f"status = {fn}(&layer{i}_ctx, &layer{i}_params, &layer{i}_quant, &layer{i}_input_dims, "
            f"{inp}, &layer{i}_filter_dims, {filt}, &layer{i}_bias_dims, {bias}, "
            f"{before_output}&layer{i}_output_dims, {em.out(op, ctype)});")


_SIZES = "(&layer{i}_params, &layer{i}_input_dims, &layer{i}_filter_dims, &layer{i}_output_dims)"


def conv(em, i, op):
    fn = op.function_name()
    if fn == "arm_convolve_wrapper_s16":
        return _conv_s16(em, i, op)
    # arm_convolve_s8 takes upscale dims (none: NULL) before the output's.
    call = _weighted_call(em, i, op, fn, "int8_t", before_output="NULL, " if fn == "arm_convolve_s8" else "")
    size = ("arm_convolve_s8_get_buffer_size(&layer{i}_input_dims, &layer{i}_filter_dims)"
            if fn == "arm_convolve_s8" else "arm_convolve_wrapper_s8_get_buffer_size" + _SIZES)
    return _conv_head(em, i, op, "cmsis_nn_conv_params") + [_check_scratch(op, i, size), call]


def _conv_s16(em, i, op):
    bias = em.const_name(op.operands[2], f"layer{i}_bias")
    return _conv_head(em, i, op, "cmsis_nn_conv_params") + [
        f"const cmsis_nn_bias_data layer{i}_bias = {{.data = {bias}, .is_int32_bias = false}};",
        _check_scratch(op, i, "arm_convolve_wrapper_s16_get_buffer_size" + _SIZES),
        _weighted_call(em, i, op, "arm_convolve_wrapper_s16", "int16_t", bias=f"&layer{i}_bias")]


def depthwise_conv(em, i, op):
    fn = op.function_name()
    in_t = "int16_t" if op.type_suffix() == "s16" else "int8_t"
    head = _conv_head(em, i, op, "cmsis_nn_dw_conv_params", extra=f".ch_mult = {op.int('ch_mult')}, ")
    return head + [
        # arm_depthwise_conv_s8 (the scratch-free kernel) has no size function: it needs none.
        "" if fn == "arm_depthwise_conv_s8" else _check_scratch(op, i, fn + "_get_buffer_size" + _SIZES),
        _weighted_call(em, i, op, fn, in_t)]


def transpose_conv(em, i, op):
    """arm_transpose_conv_s8: the scratch holds its rolling accumulator rows; its output context is
    unused. No scratch check: arm_transpose_conv_s8_get_buffer_size answers for the wrapper, which
    for stride <= 2 and many input channels takes another path with another buffer."""
    in_s, f_s, out_s = _shape(op.operands[0]), _shape(op.operands[1]), _shape(op.results[0])
    stride, pad, act = op.ints("stride"), op.ints("padding"), op.ints("activation")
    params = (f".input_offset = {op.int('input_offset')}, .output_offset = {op.int('output_offset')}, "
              f".stride = {{.w = {stride[1]}, .h = {stride[0]}}}, .padding = {{.w = {pad[1]}, .h = {pad[0]}}}, "
              f".padding_offsets = {{.w = 0, .h = 0}}, .dilation = {{.w = 1, .h = 1}}, "
              f".activation = {{.min = {act[0]}, .max = {act[1]}}}")
    call = _weighted_call(em, i, op, op.function_name(), "int8_t")
    return [_ctx(em, i, op), f"cmsis_nn_context layer{i}_output_ctx = {{.buf = NULL, .size = 0}};",
            f"const cmsis_nn_transpose_conv_params layer{i}_params = {{{params}}};",
            _quant_arrays(em, i, op, out_s[3]), _dims(f"layer{i}_input_dims", in_s),
            _dims(f"layer{i}_filter_dims", f_s), _dims(f"layer{i}_bias_dims", [1, 1, 1, out_s[3]]),
            _dims(f"layer{i}_output_dims", out_s),
            call.replace(f"(&layer{i}_ctx, ", f"(&layer{i}_ctx, &layer{i}_output_ctx, ", 1)]


def conv_s4(em, i, op):
    fn = op.function_name()
    size = ("arm_convolve_s4_get_buffer_size(&layer{i}_input_dims, &layer{i}_filter_dims)"
            if fn == "arm_convolve_s4" else "arm_convolve_wrapper_s4_get_buffer_size" + _SIZES)
    return _conv_head(em, i, op, "cmsis_nn_conv_params", filter_dims=op.filter_shape()) + [
        _check_scratch(op, i, size), _weighted_call(em, i, op, fn, "int8_t")]


def depthwise_conv_s4(em, i, op):
    fn = op.function_name()
    head = _conv_head(em, i, op, "cmsis_nn_dw_conv_params", extra=f".ch_mult = {op.int('ch_mult')}, ",
                      filter_dims=op.filter_shape())
    return head + [
        # arm_depthwise_conv_s4 (the scratch-free kernel) has no size function: it needs none.
        "" if fn == "arm_depthwise_conv_s4" else _check_scratch(op, i, fn + "_get_buffer_size" + _SIZES),
        _weighted_call(em, i, op, fn, "int8_t")]


def fully_connected(em, i, op):
    in_s, f_s = _shape(op.operands[0]), _shape(op.operands[1])
    out_c, depth = f_s[0], f_s[1]
    batches = int(np.prod(in_s, dtype=np.int64)) // depth
    act = op.ints("activation")
    sums = None
    if mcu_attrs.KERNEL_SUMS in op.attributes:
        sums = em.array(f"layer{i}_kernel_sums", "int32_t", op.ints(mcu_attrs.KERNEL_SUMS))
    lines = [_ctx(em, i, op, f"(void *){sums}" if sums else None, 4 * out_c if sums else 0),
             f"const cmsis_nn_fc_params layer{i}_params = {{.input_offset = {op.int('input_offset')}, "
             f".filter_offset = {op.int('filter_offset')}, .output_offset = {op.int('output_offset')}, "
             f".activation = {{.min = {act[0]}, .max = {act[1]}}}}};"]
    fn = op.function_name()
    if fn == "arm_fully_connected_per_channel_s8":
        lines.append(_quant_arrays(em, i, op, out_c))
    else:
        lines.append(f"const cmsis_nn_per_tensor_quant_params layer{i}_quant = "
                     f"{{.multiplier = {op.ints('multiplier')[0]}, .shift = {op.ints('shift')[0]}}};")
    return lines + [
        _dims(f"layer{i}_input_dims", [batches, 1, 1, depth]),
        _dims(f"layer{i}_filter_dims", [depth, 1, 1, out_c]),
        _dims(f"layer{i}_bias_dims", [1, 1, 1, out_c]),
        _dims(f"layer{i}_output_dims", [batches, 1, 1, out_c]),
        _weighted_call(em, i, op, fn, "int8_t")]


def fully_connected_s4(em, i, op):
    depth, out_c = op.depth_and_outputs()
    batches = int(np.prod(_shape(op.operands[0]), dtype=np.int64)) // depth
    act = op.ints("activation")
    return [_ctx(em, i, op),
            f"const cmsis_nn_fc_params layer{i}_params = {{.input_offset = {op.int('input_offset')}, "
            f".filter_offset = 0, .output_offset = {op.int('output_offset')}, "
            f".activation = {{.min = {act[0]}, .max = {act[1]}}}}};",
            f"const cmsis_nn_per_tensor_quant_params layer{i}_quant = "
            f"{{.multiplier = {op.int('multiplier')}, .shift = {op.int('shift')}}};",
            _dims(f"layer{i}_input_dims", [batches, 1, 1, depth]),
            _dims(f"layer{i}_filter_dims", [depth, 1, 1, out_c]),
            _dims(f"layer{i}_bias_dims", [1, 1, 1, out_c]),
            _dims(f"layer{i}_output_dims", [batches, 1, 1, out_c]),
            _weighted_call(em, i, op, op.function_name(), "int8_t")]


def batch_matmul(em, i, op):
    (b, m, k), (_, n, _) = _shape(op.operands[0]), _shape(op.operands[1])
    act = op.ints("activation")
    t = "int16_t" if op.type_suffix() == "s16" else "int8_t"
    return [_ctx(em, i, op),
            f"const cmsis_nn_bmm_params layer{i}_params = {{.adj_x = false, .adj_y = false, .fc_params = "
            f"{{.input_offset = {op.int('lhs_offset')}, .filter_offset = {op.int('rhs_offset')}, "
            f".output_offset = {op.int('output_offset')}, .activation = {{.min = {act[0]}, .max = {act[1]}}}}}}};",
            f"const cmsis_nn_per_tensor_quant_params layer{i}_quant = "
            f"{{.multiplier = {op.int('multiplier')}, .shift = {op.int('shift')}}};",
            _dims(f"layer{i}_lhs_dims", [1, b, m, k]), _dims(f"layer{i}_rhs_dims", [1, b, n, k]),
            _dims(f"layer{i}_output_dims", [1, b, m, n]),
            f"status = {op.function_name()}(&layer{i}_ctx, &layer{i}_params, &layer{i}_quant, &layer{i}_lhs_dims, "
            f"{em.ptr(op.operands[0], t)}, &layer{i}_rhs_dims, {em.ptr(op.operands[1], t)}, "
            f"&layer{i}_output_dims, {em.out(op, t)});"]


def softmax(em, i, op):
    # arm_softmax_s8 returns nothing.
    return [f"arm_softmax_s8({em.ptr(op.operands[0], 'int8_t')}, {op.int('num_rows')}, {op.int('row_size')}, "
            f"{op.int('mult')}, {op.int('shift')}, {op.int('diff_min')}, {em.out(op, 'int8_t')});"]


def softmax_s16(em, i, op):
    exp = em.const_name(op.operands[1], f"layer{i}_exp_lut")
    obo = em.const_name(op.operands[2], f"layer{i}_one_by_one_lut")
    return [f"const cmsis_nn_softmax_lut_s16 layer{i}_lut = {{.exp_lut = {exp}, .one_by_one_lut = {obo}}};",
            f"status = arm_softmax_s16({em.ptr(op.operands[0], 'int16_t')}, {op.int('num_rows')}, "
            f"{op.int('row_size')}, {op.int('mult')}, {op.int('shift')}, &layer{i}_lut, {em.out(op, 'int16_t')});"]


def pool(em, i, op):
    fn = op.function_name()
    in_s, out_s = _shape(op.operands[0]), _shape(op.results[0])
    st, pad, k, act = op.ints("stride"), op.ints("padding"), op.ints("kernel_size"), op.ints("activation")
    lines = [_ctx(em, i, op),
             f"const cmsis_nn_pool_params layer{i}_params = {{.stride = {{.w = {st[1]}, .h = {st[0]}}}, "
             f".padding = {{.w = {pad[1]}, .h = {pad[0]}}}, .activation = {{.min = {act[0]}, .max = {act[1]}}}}};",
             _dims(f"layer{i}_input_dims", in_s), _dims(f"layer{i}_filter_dims", [1, k[0], k[1], 1]),
             _dims(f"layer{i}_output_dims", out_s)]
    t = "int16_t" if op.type_suffix() == "s16" else "int8_t"
    if isinstance(op, cmsisnn.AvgPoolOp):
        lines.append(_check_scratch(op, i, f"{fn}_get_buffer_size({out_s[2]}, {in_s[3]})"))
    lines.append(f"status = {fn}(&layer{i}_ctx, &layer{i}_params, &layer{i}_input_dims, "
                 f"{em.ptr(op.operands[0], t)}, &layer{i}_filter_dims, &layer{i}_output_dims, "
                 f"{em.out(op, t)});")
    return lines


def _elementwise_blocks(em, op, t):
    """(in1, in2, out, block, repeats): equal shapes are one call; an operand repeated over
    leading dimensions makes one call per block of the output (CMSIS-NN does not broadcast)."""
    n = int(np.prod(_shape(op.results[0]), dtype=np.int64))
    sizes = [int(np.prod(_shape(v), dtype=np.int64)) for v in op.operands]
    block = min(sizes)
    repeats = n // block

    def at(expr, size):
        return f"{expr} + r * {block}" if repeats > 1 and size == n else expr

    return (at(em.ptr(op.operands[0], t), sizes[0]), at(em.ptr(op.operands[1], t), sizes[1]),
            at(em.out(op, t), n), block, repeats)


def _repeat(call: str, repeats: int) -> list[str]:
    if repeats == 1:
        return [call]
    return [f"for (int32_t r = 0; r < {repeats}; ++r) {{", f"  {call}",
            "  if (status != 0) return status;", "}"]


def add(em, i, op):
    a = op.ints("activation")
    t = "int16_t" if op.type_suffix() == "s16" else "int8_t"
    in1, in2, out, block, repeats = _elementwise_blocks(em, op, t)
    args = ", ".join(str(op.int(k)) for k in ("input1_offset", "input1_multiplier", "input1_shift",
                                              "input2_offset", "input2_multiplier", "input2_shift",
                                              "left_shift"))
    outs = ", ".join(str(op.int(k)) for k in ("output_offset", "output_multiplier", "output_shift"))
    return _repeat(f"status = {op.function_name()}({in1}, {in2}, {args}, {out}, {outs}, {a[0]}, {a[1]}, {block});",
                   repeats)


def mul(em, i, op):
    a = op.ints("activation")
    t = "int16_t" if op.type_suffix() == "s16" else "int8_t"
    in1, in2, out, block, repeats = _elementwise_blocks(em, op, t)
    outs = ", ".join(str(op.int(k)) for k in ("output_offset", "output_multiplier", "output_shift"))
    return _repeat(f"status = {op.function_name()}({in1}, {in2}, {op.int('input1_offset')}, "
                   f"{op.int('input2_offset')}, {out}, {outs}, {a[0]}, {a[1]}, {block});", repeats)


def transpose(em, i, op):
    perms = em.array(f"layer{i}_perms", "uint32_t", op.ints("perms"))
    return [_dims(f"layer{i}_input_dims", _shape(op.operands[0])),
            _dims(f"layer{i}_output_dims", _shape(op.results[0])),
            f"const cmsis_nn_transpose_params layer{i}_params = {{.num_dims = 4, .permutations = {perms}}};",
            f"status = arm_transpose_s8({em.ptr(op.operands[0], 'int8_t')}, {em.out(op, 'int8_t')}, "
            f"&layer{i}_input_dims, &layer{i}_output_dims, &layer{i}_params);"]


def pad(em, i, op):
    pads = op.ints("padding")
    return [_dims(f"layer{i}_input_dims", _shape(op.operands[0])),
            _dims(f"layer{i}_pre_pad", pads[0::2]), _dims(f"layer{i}_post_pad", pads[1::2]),
            f"status = arm_pad_s8({em.ptr(op.operands[0], 'int8_t')}, {em.out(op, 'int8_t')}, "
            f"{op.int('pad_value')}, &layer{i}_input_dims, &layer{i}_pre_pad, &layer{i}_post_pad);"]


def concat(em, i, op):
    axis, fn = op.int("axis"), op.function_name()
    out_s = _shape(op.results[0])
    lines, offset = [], 0
    for v in op.operands:
        n, h, w, c = _shape(v)
        # arm_concatenation_s8_*: (input, x=C, y=W, z=H, w=N, output, output size on the axis
        # (not for w), offset on the axis); it returns nothing.
        size_arg = "" if axis == 0 else f"{out_s[axis]}, "
        lines.append(f"{fn}({em.ptr(v, 'int8_t')}, {c}, {w}, {h}, {n}, {em.out(op, 'int8_t')}, "
                     f"{size_arg}{offset});")
        offset += _shape(v)[axis]
    return lines


def lstm(em, i, op):
    """arm_lstm_unidirectional_s8 over one time step (time major, batch = rows): the cell state
    is updated in place, so the next state's buffer starts as a copy of this one."""
    (rows, inputs), hidden = _shape(op.operands[0]), _shape(op.operands[1])[1]
    mx, sx = op.ints("input_multipliers"), op.ints("input_shifts")
    mh, sh = op.ints("hidden_multipliers"), op.ints("hidden_shifts")
    order = ("input", "forget", "cell", "output")   # the operands' gate order

    def gate(name: str) -> str:
        k = order.index(name)
        # One array per gate: a layer's steps share them (and a first step's stand-in forget gate
        # is its input gate).
        w_x, w_h, b_x, b_h = (em.const_part_name(op.operands[3 + j], k, f"{name}_gate_{part}")
                              for j, part in enumerate(("input_weights", "hidden_weights", "input_bias",
                                                        "hidden_bias")))
        return (f".{name}_gate = {{.input_multiplier = {mx[k]}, .input_shift = {sx[k]}, "
                f".input_weights = {w_x}, .input_effective_bias = {b_x}, "
                f".hidden_multiplier = {mh[k]}, .hidden_shift = {sh[k]}, "
                f".hidden_weights = {w_h}, .hidden_effective_bias = {b_h}, "
                f".bias = NULL, .activation_type = {'ARM_TANH' if name == 'cell' else 'ARM_SIGMOID'}}}")
    f2c, i2c = op.ints("forget_to_cell"), op.ints("input_to_cell")
    scratch = f"(arena + {op.int(mcu_attrs.SCRATCH_OFFSET)})"
    gate_bytes = 2 * rows * hidden
    cell_in, cell_out = em.buf(op.operands[2]), em.storage(op, 1)
    params = em.shared_struct(
        "cmsis_nn_lstm_params", "lstm_params",
        f".time_major = 1, .batch_size = {rows}, .time_steps = 1, "
        f".input_size = {inputs}, .hidden_size = {hidden}, .input_offset = {op.int('input_offset')}, "
        f".forget_to_cell_multiplier = {f2c[0]}, .forget_to_cell_shift = {f2c[1]}, "
        f".input_to_cell_multiplier = {i2c[0]}, .input_to_cell_shift = {i2c[1]}, "
        f".cell_clip = {op.int('cell_clip')}, .cell_scale_power = {op.int('cell_scale_power')}, "
        f".output_multiplier = {op.int('output_multiplier')}, .output_shift = {op.int('output_shift')}, "
        f".output_offset = {op.int('output_offset')}, "
        f"{gate('forget')}, {gate('input')}, {gate('cell')}, {gate('output')}")
    return [
        f"status = mcu_copy({2 * rows * hidden}, {cell_in}, {cell_out});",
        "if (status != 0) return status;",
        f"status = mcu_copy({rows * hidden}, {em.buf(op.operands[1])}, {scratch} + {2 * gate_bytes});",
        "if (status != 0) return status;",
        f"cmsis_nn_lstm_context layer{i}_buffers = {{.temp1 = {scratch}, .temp2 = {scratch} + {gate_bytes}, "
        f".cell_state = {cell_out}, .hidden_state = {scratch} + {2 * gate_bytes}}};",
        f"status = arm_lstm_unidirectional_s8({em.ptr(op.operands[0], 'int8_t')}, {em.out(op, 'int8_t')}, "
        f"&{params}, &layer{i}_buffers);"]


EMITTERS = {
    cmsisnn.ConvOp: conv, cmsisnn.DepthwiseConvOp: depthwise_conv,
    cmsisnn.ConvS4Op: conv_s4, cmsisnn.DepthwiseConvS4Op: depthwise_conv_s4,
    cmsisnn.FullyConnectedOp: fully_connected, cmsisnn.FullyConnectedS4Op: fully_connected_s4,
    cmsisnn.BatchMatmulOp: batch_matmul,
    cmsisnn.SoftmaxOp: softmax, cmsisnn.Softmax16Op: softmax_s16, cmsisnn.AvgPoolOp: pool, cmsisnn.MaxPoolOp: pool,
    cmsisnn.AddOp: add, cmsisnn.MulOp: mul, cmsisnn.TransposeOp: transpose, cmsisnn.PadOp: pad,
    cmsisnn.ConcatOp: concat, cmsisnn.LstmOp: lstm, cmsisnn.TransposeConvOp: transpose_conv,
}

"""Convolutions: conv2d / depthwise_conv2d (+ rescale + clamp as one kernel call), transpose_conv2d,
conv3d (raw accumulators; the rescale after them is its own kernel). int4 weights that no s4
kernel takes (conv_s4.py) are unpacked to int8 here for the portable kernels: the same integers."""

from __future__ import annotations

import numpy as np

from ..base import PassError
from ...ir.ops import create
from ..._mlir import ir, tosa
from ...dialects import cmsisnn, portable
from ...ir import attributes as mcu_attrs
from ...kernel_library import cmsis_padding
from .common import (UNIT, CONVERTED, NO_MATCH, const_array, const_ints, const_scalar, elem, follow_requant_tail,
                     fused_location, i64_array, make_const, make_op, op_name, per_channel_params, producer,
                     only_user, shape, tensor_type, users)


def _operands(op):
    what = op.operation.name
    inp, weight, bias, izp_v, wzp_v = op.operands
    if (elem(inp), elem(weight)) not in (("i8", "i8"), ("i16", "i8"), ("i8", "i4")):
        raise PassError(op, f"'{what}' on {elem(inp)} x {elem(weight)} has no kernel "
                            "(int8 or int16 activations with int8 weights, or int8 activations with int4 weights)")
    w = const_array(weight)
    if w is None:
        raise PassError(op, f"'{what}' needs constant weights")
    izp, wzp = const_scalar(izp_v), const_scalar(wzp_v)
    if izp is None or wzp is None:
        raise PassError(op, f"'{what}' needs constant zero points")
    if const_array(bias) is None:
        raise PassError(op, f"'{what}' needs a constant bias")
    return inp, weight, bias, izp, wzp


def accumulator_bound(weight, bias, izp: int, depthwise: bool) -> int:
    """The largest |accumulator| an int8 conv can reach: per output channel its bias plus the sum
    of its |weights| times the largest |input - zero point| (255 at most); padding adds zeros."""
    w = np.abs(np.asarray(const_array(weight), np.int64))
    b = np.abs(np.asarray(const_array(bias), np.int64)).reshape(-1)
    per_channel = w.sum(axis=(0, 1)).reshape(-1) if depthwise else w.reshape(w.shape[0], -1).sum(axis=1)
    reach = max(127 - izp, izp + 128)
    return int((per_channel * reach + np.broadcast_to(b, per_channel.shape)).max())


def s16_sums_overflow(weight, depthwise: bool) -> bool:
    """Whether an int16 conv's sum of input x weight products can leave int32: CMSIS-NN's s16
    kernels sum them in int32 (adding the int64 bias after), the reference in int64."""
    w = np.abs(np.asarray(const_array(weight), np.int64))
    per_channel = w.sum(axis=(0, 1)).reshape(-1) if depthwise else w.reshape(w.shape[0], -1).sum(axis=1)
    return int(per_channel.max()) * (1 << 15) >= 1 << 31


def _bias_per_channel(op, bias, channels: int):
    """The bias with one value per output channel: TOSA lets a [1] bias stand for all of them, the
    kernels read `channels` values."""
    values = np.asarray(const_array(bias)).reshape(-1)
    if values.size == channels:
        return bias
    if values.size != 1:
        raise PassError(op, f"'{op_name(op)}' has {values.size} bias values for {channels} output channels")
    ty = tensor_type(bias)
    full = ir.RankedTensorType.get([channels], ty.element_type)
    attr = ir.DenseElementsAttr.get_splat(full, ir.IntegerAttr.get(ty.element_type, int(values[0])))
    return create(tosa.ConstOp, results=[full], attributes={"values": attr}, loc=op.location,
                  ip=ir.InsertionPoint(op)).results[0]


def _window(op):
    pad = i64_array(op, "pad")  # top, bottom, left, right
    return pad, i64_array(op, "stride"), i64_array(op, "dilation")


def _cmsis_algorithm(rw, w, depthwise: bool, s16: bool, ch_mult: int):
    """(algorithm, note) of the first CMSIS-NN call, the wrapper then the generic kernel, whose
    function computes this window's padding as TOSA does (cmsis_padding); the note says why the
    wrapper was passed over. (None, why) when no call does."""
    notes = []
    for algorithm in ("wrapper",) if s16 else ("wrapper", "generic"):
        if s16:
            fn = "arm_depthwise_conv_s16" if depthwise else "arm_convolve_s16"
        elif depthwise:
            fn = cmsis_padding.depthwise_s8_function(rw.core, algorithm, w, ch_mult)
        else:
            fn = cmsis_padding.conv_s8_function(rw.core, algorithm, w)
        why = cmsis_padding.problem(fn, rw.core, w)
        if why is None:
            return algorithm, (f"{'; '.join(notes)}: {fn} instead" if notes else None)
        notes.append(why)
    return None, "; ".join(notes)


def _trailing_slice_source(op, rw, inp, w_shape, out_shape, pad, stride, dilation):
    """Reads past a chain of slices that only drop trailing rows / columns the conv never reads.

    A slice at offset 0 that keeps N and C only trims H / W. When the conv's last window ends
    inside the sliced extent (it never reads the bottom / right padding), reading the unsliced
    tensor with the same output dims computes the same values: every kernel here loops over the
    output and takes the input's dims only for its row pitch. Returns (source, slices) or None.
    """
    if elem(inp) != "i8":
        return None
    in_shape = shape(inp)
    last_h = (out_shape[1] - 1) * stride[0] - pad[0] + (w_shape[1] - 1) * dilation[0]
    last_w = (out_shape[2] - 1) * stride[1] - pad[2] + (w_shape[2] - 1) * dilation[1]
    if last_h >= in_shape[1] or last_w >= in_shape[2]:
        return None  # the conv reads padding below / right of the slice
    slices, source = [], inp
    while True:
        sl = producer(source)
        if sl is None or not isinstance(sl, tosa.SliceOp) or len(users(source)) != 1:
            break
        src = sl.operands[0]
        start, src_shape, cut = const_ints(sl.operands[1]), shape(src), shape(sl.results[0])
        if start is None or any(start) or len(src_shape) != 4 or \
                src_shape[0] != cut[0] or src_shape[3] != cut[3]:
            break
        slices.append(sl)
        source = src
    if not slices:
        return None
    if rw.use_cmsis:
        src_shape = shape(source)
        # The wrapper's 1x1 unit-stride path treats the input as one (H*W) x C matrix, and the
        # 1xN path derives its padding from the input width: both need the exact input dims.
        is_1x1 = pad[0] == 0 and pad[2] == 0 and w_shape[1] == 1 and w_shape[2] == 1 and \
            dilation == [1, 1] and src_shape[3] == w_shape[3]
        is_1xn = src_shape[1] == 1 and dilation[1] == 1 and w_shape[1] == 1 and \
            (stride[1] * src_shape[3]) % 4 == 0 and src_shape[3] == w_shape[3]
        if (is_1x1 and stride == [1, 1]) or (is_1xn and not is_1x1):
            return None
    return source, slices


def convert_conv2d(op, rw):
    return _convert(op, rw, depthwise=False)


def convert_depthwise_conv2d(op, rw):
    return _convert(op, rw, depthwise=True)


def _convert(op, rw, depthwise: bool):
    inp, weight, bias, izp, wzp = _operands(op)
    pad, stride, dilation = _window(op)
    in_shape, w_shape, out_shape = shape(inp), shape(weight), shape(op.results[0])
    bias = _bias_per_channel(op, bias, out_shape[3])
    int4 = elem(weight) == "i4"
    if int4:  # no s4 kernel took it: int8 weights holding the same values (exact)
        weight = make_const(np.asarray(const_array(weight), np.int8), op, op.location)
    read_past = None if depthwise or int4 else _trailing_slice_source(
        op, rw, inp, w_shape, out_shape, pad, stride, dilation)
    absorbed = []
    if read_past is not None:
        inp, absorbed = read_past
        in_shape = shape(inp)
    s16 = elem(inp) == "i16"
    tail = follow_requant_tail(op, "i16" if s16 else "i8")
    if s16 and tail is not None and (tail[0].s16_params() is None or izp != 0 or tail[0].output_zp != 0):
        tail = None
    out_c = out_shape[3]
    if depthwise:
        k_h, k_w, c, m = w_shape
        filt = np.asarray(const_array(weight)).reshape(1, k_h, k_w, c * m)
        weight = make_const(filt, op, op.location)  # HWCM bytes viewed as 1 x H x W x (C*M)
    else:
        k_h, k_w = w_shape[1], w_shape[2]
    if tail is not None and not s16 and not tail[0].requantize_exact(
            max_abs_input=accumulator_bound(op.operands[1], bias, izp, depthwise)):
        tail = None  # keep the exact TOSA rescale as its own kernel
    ops = absorbed[::-1] + [op]
    if tail is not None:
        rs, last, act = tail
        ops += [rs.op] + ([last] if last is not rs.op else [])
        mult, shift = per_channel_params(rs, out_c)
        if s16:
            mult, shift = rs.s16_params()
        out_offset = rs.output_zp
        result_type = last.results[0].type
    else:
        last, act, mult, shift, out_offset = op, [-(2 ** 31), 2 ** 31 - 1], [], [], 0
        result_type = op.results[0].type
    loc = fused_location(ops)
    source = "+".join(o.operation.name for o in ops)
    attrs = {"input_offset": -izp, "output_offset": out_offset, "stride": stride,
             "padding": [pad[0], pad[2], pad[1], pad[3]], "dilation": dilation,
             "multiplier": mult, "shift": shift, "activation": act}
    fallback = None
    if wzp != 0:   # asymmetric weights: CMSIS-NN has no weight zero point, the portable kernels do
        fallback = f"weight zero point {wzp}: CMSIS-NN takes symmetric weights only"
    elif tail is None:
        fallback = ("no requantization after it that CMSIS-NN computes bit-exactly (an int32 result, "
                    "or a rescale arm_nn_requantize would round differently)")
    elif s16 and s16_sums_overflow(op.operands[1], depthwise):
        fallback = "its sums of input x weight can pass int32, where CMSIS-NN's s16 kernels sum in int32"
    note = None
    if rw.use_cmsis and fallback is None:
        # CMSIS-NN takes the top / left padding; the bottom / right is only implied by the output
        # size, which some of its paths ignore (cmsis_padding): call one that computes it.
        w = cmsis_padding.window(in_shape, out_shape, (k_h, k_w), stride, dilation,
                                 attrs["padding"], 1 if depthwise else w_shape[3])
        algorithm, note = _cmsis_algorithm(rw, w, depthwise, s16, w_shape[3] if depthwise else 1)
        if algorithm is None:
            fallback, note = note, None
    if rw.use_cmsis and fallback is None:
        attrs["algorithm"] = algorithm
        if depthwise:
            cls, attrs["ch_mult"] = cmsisnn.DepthwiseConvOp, w_shape[3]
        else:
            cls = cmsisnn.ConvOp
    else:
        cls = portable.DepthwiseConv2DOp if depthwise else portable.Conv2DOp
    new = make_op(cls, [inp, weight, bias], result_type, attrs, before=op, loc=loc, source_op=source)
    if wzp != 0:
        new.attributes["weight_offset"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), -wzp)
    if rw.use_cmsis and fallback is not None:
        new.attributes[mcu_attrs.FALLBACK] = ir.StringAttr.get(fallback)
    if int4 and rw.use_cmsis and fallback is None:
        why = cmsis_padding.s4_refusal(rw.core, w, depthwise, w_shape[3] if depthwise else 1)
        note = "; ".join(filter(None, [f"int4 weights unpacked to int8 ({why})", note]))
    if note is not None:
        new.attributes[mcu_attrs.KERNEL_NOTE] = ir.StringAttr.get(note)
    rw.replace(ops, last, new)
    return CONVERTED


def _channel_slice(value):
    """(source, first channel) when `value` is a slice keeping N, H, W and a run of channels."""
    sl = producer(value)
    if sl is None or not isinstance(sl, tosa.SliceOp) or len(users(value)) != 1:
        return None
    src, start = sl.operands[0], const_ints(sl.operands[1])
    src_shape, cut = shape(src), shape(value)
    if start is None or len(src_shape) != 4 or any(start[:3]) or src_shape[:3] != cut[:3]:
        return None
    return src, start[3]


def _channel_cut(value):
    """(base, first channel, ops) when `value` (N x H x W x c) holds channels [c0, c0 + c) of
    `base` viewed as N x H x W x C: a slice, possibly between reshapes (a conv1d's channel split
    after the layout passes). Checked on element indices, so any reshape / slice combination that
    amounts to a channel cut qualifies. `ops` are the slice and the reshape after it."""
    out_shape, ops, v = shape(value), [], value
    if len(out_shape) != 4:
        return None
    inner = producer(v)
    if inner is not None and isinstance(inner, tosa.ReshapeOp) and len(users(v)) == 1:
        ops.append(inner)
        v = inner.operands[0]
    sl = producer(v)
    if sl is None or not isinstance(sl, tosa.SliceOp) or len(users(v)) != 1:
        return None
    ops.insert(0, sl)
    src = sl.operands[0]
    outer = producer(src)
    base = outer.operands[0] if outer is not None and isinstance(outer, tosa.ReshapeOp) else src
    start, size = const_ints(sl.operands[1]), const_ints(sl.operands[2])
    n_hw = out_shape[0] * out_shape[1] * out_shape[2]
    total = int(np.prod(shape(base), dtype=np.int64))
    if start is None or size is None or total % n_hw:
        return None
    index = np.arange(total, dtype=np.int64).reshape(shape(src))
    cut = index[tuple(slice(a, a + n) for a, n in zip(start, size))].reshape(out_shape)
    channels = total // n_hw
    c0 = int(cut.flat[0]) if cut.size else 0
    if c0 + out_shape[3] > channels:
        return None
    whole = index.reshape(out_shape[:3] + [channels])
    if not np.array_equal(cut, whole[..., c0:c0 + out_shape[3]]):
        return None
    return base, c0, ops


def _group_candidates(base):
    """Convs that may read a channel cut of `base`: base -> [reshape] -> slice -> [reshape] -> conv2d."""
    heads = [base]
    for u in users(base):
        if isinstance(u, tosa.ReshapeOp):
            heads.append(u.results[0])
    for head in heads:
        for u in users(head):
            if isinstance(u, ir.Block) or not isinstance(u, tosa.SliceOp):
                continue
            v = u.results[0]
            reshape = only_user(v, tosa.ReshapeOp)
            if reshape is not None:
                v = reshape.results[0]
            conv = only_user(v, tosa.Conv2DOp)
            if conv is not None:
                yield conv


def _group_member(conv, base, width: int):
    """(first channel, conv, requant tail, cut ops) when `conv` reads `width` channels of `base`."""
    if shape(conv.operands[0])[3] != width:
        return None
    cut = _channel_cut(conv.operands[0])
    if cut is None or cut[0] != base:
        return None
    tail = follow_requant_tail(conv, "i8")
    # A shift below 31 is exact while the accumulator times 2**(31 - shift) fits in 32 bits: the
    # bound from the group's own weights and bias (RegNetX's 2x2 stages have shifts of 30).
    if elem(conv.operands[0]) != "i8" or elem(conv.operands[1]) != "i8" or const_array(conv.operands[1]) is None \
            or const_array(conv.operands[2]) is None or const_scalar(conv.operands[3]) is None:
        return None
    izp = const_scalar(conv.operands[3])
    if tail is None or not tail[0].requantize_exact(
            max_abs_input=accumulator_bound(conv.operands[1], conv.operands[2], izp, False)):
        return None
    return cut[1], conv, tail, cut[2]


def _group_users(groups):
    """(the concat, [(group, channel slice)]): every user of a group's result is the in-order
    concat along C or a channel slice; None when another user keeps the convs apart."""
    outs = [last.results[0] for _, _, (_, last, _) in groups]
    concat, slices = None, []
    for g, value in enumerate(outs):
        for user in users(value):
            if isinstance(user, ir.Block):
                return None
            if isinstance(user, tosa.ConcatOp) and int(ir.IntegerAttr(user.attributes["axis"]).value) == 3 \
                    and list(user.operands) == outs:
                concat = user
            elif isinstance(user, tosa.SliceOp) and _channel_slice(user.results[0]) is not None \
                    and shape(user.results[0])[3] <= shape(value)[3]:
                slices.append((g, user))
            else:
                return None
    return concat, slices


def _nhwc_view(source, in_shape, first, loc):
    """`source` read as N x H x W x C (a view): the cuts were taken of a reshape of it."""
    shape_v = create(
        tosa.ConstShapeOp, results=[ir.Type.parse("!tosa.shape<4>")], loc=loc,
        ip=ir.InsertionPoint(first), attributes={"values": ir.DenseElementsAttr.get(
            np.asarray(in_shape, dtype=np.int64),
            type=ir.RankedTensorType.get([4], ir.IndexType.get()))}).results[0]
    return create(
        tosa.ReshapeOp, results=[ir.RankedTensorType.get(in_shape, tensor_type(source).element_type)],
        operands=[source, shape_v], loc=loc, ip=ir.InsertionPoint(first)).results[0]


def _slices_of_grouped(rw, grouped, slices, group_channels):
    """The channel slices of group results as slices of the grouped result (a following grouped
    conv can in turn take it whole)."""
    for g, sl in slices:
        start = const_ints(sl.operands[1])
        start[3] += g * group_channels
        shape_ty = sl.operands[1].type
        start_v = create(
            tosa.ConstShapeOp, results=[shape_ty], loc=sl.location, ip=ir.InsertionPoint(sl),
            attributes={"values": ir.DenseElementsAttr.get(
                np.asarray(start, dtype=np.int64), type=ir.RankedTensorType.get(
                    [4], ir.IndexType.get()))}).results[0]
        moved = create(tosa.SliceOp, results=[sl.results[0].type], operands=[grouped, start_v, sl.operands[2]],
                       loc=sl.location, ip=ir.InsertionPoint(sl))
        sl.results[0].replace_all_uses_with(moved.results[0])
        rw.erase(sl)


def convert_grouped_conv2d(op, rw):
    """Channel slices of one tensor, each into a conv2d + rescale [+ clamp] of the same shape and
    window, are one grouped convolution (arm_convolve_s8 takes groups = input_dims.c /
    filter_dims.c; the portable conv2d takes `groups`).

    The per-group results may be concatenated along C (that concat becomes the grouped result) or
    read through channel slices (those become slices of the grouped result, which a following
    grouped conv can in turn take whole); any other user keeps the convs apart.
    """
    if elem(op.operands[0]) != "i8" or elem(op.operands[1]) != "i8":
        return NO_MATCH   # arm_convolve_s4 has no groups: int4 groups stay separate convs
    cut = _channel_cut(op.operands[0])
    if cut is None:
        return NO_MATCH
    source, w_shape, window = cut[0], shape(op.operands[1]), _window(op)
    conv_in = shape(op.operands[0])
    width = w_shape[3]
    total = int(np.prod(shape(source), dtype=np.int64))
    in_shape = conv_in[:3] + [total // (conv_in[0] * conv_in[1] * conv_in[2])]
    if width == 0 or in_shape[3] % width or in_shape[3] // width < 2:
        return NO_MATCH
    members = {}
    for conv in _group_candidates(source):
        member = _group_member(conv, source, width)
        if member is not None and member[0] % width == 0 and member[0] not in members:
            members[member[0]] = (member[3],) + member[1:3]
    n_groups = in_shape[3] // width
    if sorted(members) != [g * width for g in range(n_groups)]:
        return NO_MATCH
    groups = [members[g * width] for g in range(n_groups)]
    izp, wzp = _operands(op)[3:5]
    if wzp != 0:
        return NO_MATCH
    ref_tail = groups[0][2]
    for _, conv, (rs, _, act) in groups:
        if (_window(conv) != window or shape(conv.operands[1]) != w_shape
                or _operands(conv)[3:5] != (izp, 0)
                or rs.output_zp != ref_tail[0].output_zp or act != ref_tail[2]):
            return NO_MATCH
    found = _group_users(groups)
    if found is None:
        return NO_MATCH
    concat, slices = found

    out_c = w_shape[0] * n_groups
    out_shape = shape(op.results[0])[:3] + [out_c]
    pad, stride, dilation = window
    mult, shift = [], []
    for _, _, (rs, _, _) in groups:
        m, s = per_channel_params(rs, w_shape[0])
        mult += m if len(m) == w_shape[0] else m * w_shape[0]
        shift += s if len(s) == w_shape[0] else s * w_shape[0]
    act, out_offset = ref_tail[2], ref_tail[0].output_zp
    first = min((conv for _, conv, _ in groups), key=_block_position)
    loc = fused_location([conv for _, conv, _ in groups])
    cut_ops = [o for cut_ops, _, _ in groups for o in cut_ops]
    outer = producer(cut_ops[0].operands[0])
    if shape(source) != in_shape:
        source = _nhwc_view(source, in_shape, first, loc)
    weight = make_const(np.concatenate([np.asarray(const_array(c.operands[1])) for _, c, _ in groups])
                        .astype(np.int8), first, loc)
    bias = make_const(np.concatenate([np.broadcast_to(np.asarray(const_array(c.operands[2])).reshape(-1),
                                                      (shape(c.results[0])[3],))
                                      for _, c, _ in groups]).astype(np.int32), first, loc)
    result_type = ir.RankedTensorType.get(out_shape, ir.IntegerType.get_signless(8))
    source_op = f"({n_groups} x tosa.slice+tosa.conv2d+tosa.rescale)"
    attrs = {"input_offset": -izp, "output_offset": out_offset, "stride": stride,
             "padding": [pad[0], pad[2], pad[1], pad[3]], "dilation": dilation,
             "multiplier": mult, "shift": shift, "activation": act}
    if rw.use_cmsis:
        cls, attrs["algorithm"] = cmsisnn.ConvOp, "generic"
    else:
        cls = portable.Conv2DOp
    new = make_op(cls, [source, weight, bias], result_type, attrs, before=first, loc=loc,
                  source_op=source_op)
    _slices_of_grouped(rw, new.results[0], slices, w_shape[0])
    dead = cut_ops + [o for _, conv, (rs, last, _) in groups
                      for o in (conv, rs.op) + ((last,) if last.operation != rs.op.operation else ())]
    if outer is not None and isinstance(outer, tosa.ReshapeOp) and all(
            any(u.operation == c.operation for c in cut_ops) for u in users(outer.results[0])):
        dead.append(outer)  # the reshape only the cuts read
    if concat is not None:
        rw.replace(dead + [concat], concat, new)
    else:
        rw.erase(*dead)
    return CONVERTED


def _block_position(op) -> int:
    for i, other in enumerate(op.operation.block.operations):
        if other.operation == op.operation:
            return i
    return -1


def _raw_accumulator_operands(op):
    """Operands of a convolution computed to raw accumulators by a portable kernel: int8 or int16
    activations, int8 weights, constant weights, bias and zero points (any zero points)."""
    what = op.operation.name
    inp, weight, bias, izp_v, wzp_v = op.operands
    if elem(inp) not in ("i8", "i16") or elem(weight) != "i8":
        raise PassError(op, f"'{what}' on {elem(inp)} x {elem(weight)} has no kernel "
                            "(int8 or int16 activations, int8 weights)")
    if const_array(weight) is None or const_array(bias) is None:
        raise PassError(op, f"'{what}' needs constant weights and bias")
    izp, wzp = const_scalar(izp_v), const_scalar(wzp_v)
    if izp is None or wzp is None:
        raise PassError(op, f"'{what}' needs constant zero points")
    return inp, weight, bias, izp, wzp


def _rolling_buffer_fits(in_shape, w_shape, out_shape, out_pad, stride) -> bool:
    """Whether arm_transpose_conv_s8 writes exactly the output: it flushes in * stride - pad
    rows as the input rows finish (never more than the output has), then the rows the last
    input row's kernel still reaches, up to the output's end; its rows are (W - 1) * stride +
    max(KW, stride) columns wide, read from column pad on."""
    (_, ih, iw, _), (_, kh, kw, _), (_, oh, ow, _) = in_shape, w_shape, out_shape
    (sh, sw), pad_h, pad_w = stride, -out_pad[0], -out_pad[2]
    return pad_h >= 0 and pad_w >= 0 and ih * sh - pad_h <= oh <= ih * sh + max(kh - sh, 0) - pad_h \
        and pad_w + ow <= (iw - 1) * sw + max(kw, sw)


def _cmsis_transpose_conv(op, rw, inp, weight, bias, izp: int, wzp: int, out_pad, stride) -> bool:
    """transpose_conv2d + its requantisation as arm_transpose_conv_s8, where that computes the same
    integers (int8, symmetric weights, a rescale arm_nn_requantize rounds the same, an output its
    rolling buffer fills exactly)."""
    if elem(inp) != "i8" or wzp != 0:
        return False
    tail = follow_requant_tail(op, "i8")
    if tail is None or not tail[0].requantize_exact(max_abs_input=accumulator_bound(weight, bias, izp, False)):
        return False
    if not _rolling_buffer_fits(shape(inp), shape(weight), shape(op.results[0]), out_pad, stride):
        return False
    rs, last, act = tail
    ops = [op, rs.op] + ([last] if last is not rs.op else [])
    mult, shift = per_channel_params(rs, shape(weight)[0])
    attrs = {"input_offset": -izp, "output_offset": rs.output_zp, "stride": list(stride),
             "padding": [-out_pad[0], -out_pad[2]], "multiplier": mult, "shift": shift, "activation": act}
    new = make_op(cmsisnn.TransposeConvOp, [inp, weight, bias], last.results[0].type, attrs, before=op,
                  loc=fused_location(ops), source_op="+".join(o.operation.name for o in ops))
    rw.replace(ops, last, new)
    return True


def convert_transpose_conv2d(op, rw):
    inp, weight, bias, izp, wzp = _raw_accumulator_operands(op)
    out_pad, stride = i64_array(op, "out_pad"), i64_array(op, "stride")
    params = {"stride": stride, "out_pad": [out_pad[0], out_pad[2]], "input_zp": izp, "weight_zp": wzp}
    bias = _bias_per_channel(op, bias, shape(op.results[0])[3])
    if rw.use_cmsis and _cmsis_transpose_conv(op, rw, inp, weight, bias, izp, wzp, out_pad, stride):
        return CONVERTED
    new = make_op(portable.TransposeConv2DOp, [inp, weight, bias], op.results[0].type, params,
                  before=op, loc=op.location, source_op=op.operation.name)
    rw.replace([op], op, new)
    return CONVERTED


def convert_conv3d(op, rw):
    inp, weight, bias, izp, wzp = _raw_accumulator_operands(op)
    params = {"stride": i64_array(op, "stride"), "padding": i64_array(op, "pad"),
              "dilation": i64_array(op, "dilation"), "input_zp": izp, "weight_zp": wzp}
    bias = _bias_per_channel(op, bias, shape(op.results[0])[4])
    new = make_op(portable.Conv3DOp, [inp, weight, bias], op.results[0].type, params,
                  before=op, loc=op.location, source_op=op.operation.name)
    rw.replace([op], op, new)
    return CONVERTED


PATTERNS = [
    ("grouped-conv2d", tosa.Conv2DOp, convert_grouped_conv2d, UNIT),
    ("conv2d", tosa.Conv2DOp, convert_conv2d, UNIT),
    ("depthwise-conv2d", tosa.DepthwiseConv2DOp, convert_depthwise_conv2d, UNIT),
    ("transpose-conv2d", tosa.TransposeConv2DOp, convert_transpose_conv2d, UNIT),
    ("conv3d", tosa.Conv3DOp, convert_conv3d),
]


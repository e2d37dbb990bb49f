"""mcu-patch-early-stages: the first, high-resolution layers of a CNN run band of rows by band of rows."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..._mlir import func, ir, tosa
from ..base import ModulePass
from ..conversion.common import const_ints, i64_array
from ...ir import roles
from ...ir.ops import create, isa, op_class
from ...ir.values import elem, nbytes, numel, shape, users
from ...ir import attributes as mcu_attrs
from ...ir.locations import layer_name

ROW = 1  # NHWC: the row axis of every tensor inside a patched stage

# Ops whose output row i reads row i of each activation operand: the integer elementwise ops but
# the bit-counting and logical ones and identity (which a stage does not take).
_ROWWISE = roles.INTEGER_ELEMENTWISE - {tosa.BitwiseNotOp, tosa.ClzOp, tosa.LogicalNotOp, tosa.LogicalAndOp,
                                        tosa.LogicalOrOp, tosa.LogicalXorOp, tosa.IdentityOp}
# Kernels that compute their int32 accumulator internally: a rescale right after them is fused.
_ACCUMULATING = roles.WINDOWED | {tosa.MatMulOp, tosa.TransposeConv2DOp}


def _const(value) -> bool:
    return isa(value.owner, *roles.CONSTANT)


def _is_code(op) -> bool:
    """An op that becomes a kernel call (not a constant, not the return)."""
    return not isa(op, *roles.CONSTANT, func.ReturnOp)


def _bytes_per_row(value) -> int:
    return nbytes(value) // shape(value)[ROW]


@dataclasses.dataclass
class _Node:
    """One op of a patchable stage: how its output rows read its activation operands' rows."""
    op: object
    acts: list            # operand indices that are activations (not constants)
    in_axis: int          # the row axis of those operands (a transpose reads rows of another axis)
    window: tuple | None  # (kernel rows, stride, dilation, top pad) for window ops and pads

    @property
    def result(self):
        return self.op.results[0]

    def need(self, lo: int, hi: int) -> tuple[int, int]:
        """Input rows [lo', hi') that output rows [lo, hi) read, padding rows included."""
        if self.window is None:
            return lo, hi
        k, s, d, top = self.window
        return lo * s - top, (hi - 1) * s - top + (k - 1) * d + 1

    def cost(self, rows: int) -> float:
        """Estimated instructions for `rows` output rows (see `instructions`)."""
        return instructions(self.op, numel(self.result) // shape(self.result)[ROW] * rows)


# Instructions of CMSIS-NN's kernels on Cortex-M55 per call and per output element (per 16-element
# chunk of a conv's dot product), fitted to QEMU counts of 500 calls in five public CNNs, run layer by
# layer and in bands (median error 6 % for convs, 9 % for depthwise convs; multiply-accumulates alone
# are off by 70 %: a conv over few input channels costs many instructions per MAC, and a depthwise
# call costs ~3,500 instructions before its first output). The band plan's budget is counted in them.
_PER_ELEMENT = {tosa.AddOp: (100, 13.75), tosa.SubOp: (100, 13.75), tosa.MulOp: (300, 7.0),
                tosa.TransposeOp: (174, 4.08), tosa.TableOp: (300, 2.0), tosa.SliceOp: (300, 2.0),
                tosa.PadOp: (300, 2.0), tosa.ConcatOp: (300, 1.0)}
_CALL, _OTHER = 300.0, 4.0  # any other kernel
# Band plans measured under QEMU cost up to 1.2x the extra instructions estimated for them (each
# layer's error adds up over the bands): the budget holds the estimate times this.
_MARGIN = 1.25


def _chunks(n: int) -> int:
    return -(-n // 16)


def instructions(op, out_elements: int) -> float:
    """Estimated instructions of `op` computing `out_elements` output elements."""
    cls = op_class(op)
    if cls is tosa.Conv2DOp:
        w = shape(op.operands[1])
        return 434 + out_elements * (15.2 + 2.78 * _chunks(w[1] * w[2] * w[3]))
    if cls is tosa.DepthwiseConv2DOp:
        w = shape(op.operands[1])
        return 3475 + out_elements * (2.0 + 19.2 * _chunks(w[0] * w[1]))
    if cls in (tosa.AvgPool2dOp, tosa.MaxPool2dOp):
        k = i64_array(op, "kernel")
        return _CALL + out_elements * (2.0 + k[0] * k[1])
    if cls is tosa.MatMulOp:
        return _CALL + out_elements * shape(op.operands[0])[-1] * 0.6
    if cls in (tosa.RescaleOp, tosa.ClampOp) and not _const(op.operands[0]) and \
            (elem(op.operands[0]) in ("i32", "i48") or isa(op.operands[0].owner, tosa.RescaleOp)
             if not isinstance(op.operands[0].owner, ir.Block) else False):
        return 0.0  # the requantization (and clamp) inside the kernel before it
    call, per = _PER_ELEMENT.get(cls, (_CALL, _OTHER))
    return call + out_elements * per


def _node(op) -> _Node | None:
    """The op as a patchable node, or None when its output rows do not depend on input rows alone."""
    cls = op_class(op)
    if len(op.results) != 1 or len(shape(op.results[0])) != 4 or shape(op.results[0])[0] != 1:
        return None
    out = shape(op.results[0])
    acts = [i for i, v in enumerate(op.operands) if not _const(v)]
    if not acts:
        return None
    if cls in roles.WINDOWED:
        if cls in (tosa.Conv2DOp, tosa.DepthwiseConv2DOp):
            w = shape(op.operands[1])
            k, d = (w[1] if cls is tosa.Conv2DOp else w[0]), i64_array(op, "dilation")[0]
        else:
            k, d = i64_array(op, "kernel")[0], 1
        if acts != [0]:
            return None
        return _Node(op, acts, ROW, (k, i64_array(op, "stride")[0], d, i64_array(op, "pad")[0]))
    if cls is tosa.PadOp:
        pad = const_ints(op.operands[1])
        if pad is None or acts != [0]:
            return None
        return _Node(op, acts, ROW, (1, 1, 1, int(pad[2 * ROW])))
    if cls is tosa.TransposeOp:
        perms = [int(p) for p in ir.DenseI32ArrayAttr(op.attributes["perms"])]
        if perms[0] != 0:
            return None
        return _Node(op, acts, perms[ROW], None)
    if cls in _ROWWISE:
        # Constants broadcast over rows; activations have the output's rows.
        for i, v in enumerate(op.operands):
            dims = shape(v)
            if i in acts and (len(dims) != 4 or dims[ROW] != out[ROW]):
                return None
            if i not in acts and len(dims) == 4 and dims[ROW] != 1:
                return None
        return _Node(op, acts, ROW, None)
    return None


@dataclasses.dataclass
class _Stage:
    """The first `len(nodes)` ops of a function: patchable, read only graph inputs and each other,
    and seen by later ops through one tensor, `out`."""
    nodes: list
    out: object
    inputs: dict          # graph input -> its row axis


def _stages(block) -> list[_Stage]:
    """Every patchable prefix of the block whose ops are read from after it through one tensor."""
    ops = [op for op in block.operations if not isa(op, *roles.CONSTANT)]
    stages, nodes, inputs, inside = [], [], {}, set()
    for op in ops:
        node = _node(op)
        if node is None:
            break
        ok = True
        for i in node.acts:
            v = op.operands[i]
            if isinstance(v.owner, ir.Block):
                if inputs.setdefault(v, node.in_axis) != node.in_axis:
                    ok = False
            elif v not in inside or node.in_axis != ROW:
                ok = False  # from outside the stage, or a transpose that moves rows inside it
        if not ok:
            break
        nodes.append(node)
        inside.add(node.result)
        # Values of the prefix read by ops after it (the return included).
        member = {n.op for n in nodes}
        crossing = [n.result for n in nodes if any(isinstance(u, ir.Block) or u not in member
                                                   for u in users(n.result))]
        if len(crossing) == 1 and crossing[0] == node.result and elem(node.result) in ("i8", "i16") \
                and not any(isa(u, func.ReturnOp) for u in users(node.result)):
            stages.append(_Stage(list(nodes), node.result, dict(inputs)))
    return stages


def _bands(rows: int, n: int) -> list[tuple[int, int]]:
    """n bands of rows: the first rows % n one row taller (at most two band shapes)."""
    base, extra = divmod(rows, n)
    out, lo = [], 0
    for b in range(n):
        hi = lo + base + (1 if b < extra else 0)
        out.append((lo, hi))
        lo = hi
    return out


def _row_ranges(stage: _Stage, band: tuple[int, int]) -> tuple[dict, dict] | None:
    """(value -> rows computed, (node index, operand index) -> rows read, clipped) for one band of
    the stage's output, or None when some op would read no row at all."""
    rows = {stage.out: band}
    reads = {}
    for k in range(len(stage.nodes) - 1, -1, -1):
        node = stage.nodes[k]
        lo, hi = rows[node.result]
        for i in node.acts:
            v = node.op.operands[i]
            axis = node.in_axis if isinstance(v.owner, ir.Block) else ROW
            a, b = node.need(lo, hi)
            a, b = max(a, 0), min(b, shape(v)[axis])
            if a >= b:
                return None
            reads[(k, i)] = (a, b)
            old = rows.get(v)
            rows[v] = (a, b) if old is None else (min(old[0], a), max(old[1], b))
    return rows, reads


@dataclasses.dataclass
class _Plan:
    stage: _Stage
    bands: list
    ranges: list          # per band: (rows, reads)
    peak: int             # estimated most bytes live at once
    cost: float           # estimated instructions of the patched stage


def _step_list(block, stage: _Stage | None, plan_ranges=None) -> list[dict]:
    """The function as abstract steps (what each kernel writes and reads), patched or not, for the
    live-set estimate: an accumulator that a rescale consumes is fused into its kernel, and an
    elementwise op writes over a dying input of its size, as the planner does."""
    ops = [op for op in block.operations if _is_code(op)]
    ret = [op for op in block.operations if isa(op, func.ReturnOp)]
    returned = set(ret[0].operands) if ret else set()
    steps = []
    reads_of = {}  # key -> the keys a read of it means (fused accumulators read their kernel's inputs)

    def key_reads(key):
        return reads_of.get(key, [key])

    def add(out_key, op, size, in_keys, rowwise):
        in_keys = [k for key in in_keys for k in key_reads(key)]
        cls = op_class(op)
        if cls in _ACCUMULATING and elem(op.results[0]) in ("i32", "i48") and \
                all(isa(u, tosa.RescaleOp) for u in users(op.results[0]) if not isinstance(u, ir.Block)):
            reads_of[out_key] = in_keys
            return
        steps.append({"out": out_key, "size": size, "reads": in_keys,
                      "in_place": in_keys[0] if rowwise and cls in _ROWWISE and in_keys else None})

    stage_ops = {n.op for n in stage.nodes} if stage else set()
    if stage is not None:
        t_size = nbytes(stage.out)
        copied = set()
        for b, (rows, reads) in enumerate(plan_ranges):
            for k, node in enumerate(stage.nodes):
                lo, hi = rows[node.result]
                in_keys = []
                for i in node.acts:
                    v = node.op.operands[i]
                    if isinstance(v.owner, ir.Block):
                        if node.in_axis != ROW:  # rows of another axis: a copied slice, once per band
                            copy = ("slice", b, v)
                            if copy not in copied:
                                lo_v, hi_v = rows[v]
                                copied.add(copy)
                                steps.append({"out": copy, "reads": [], "in_place": None,
                                              "size": nbytes(v) // shape(v)[node.in_axis] * (hi_v - lo_v)})
                            in_keys.append(copy)
                        continue
                    in_keys.append((v, b))
                if node.result == stage.out:
                    steps.append({"out": ("T",), "size": t_size,
                                  "reads": [x for key in in_keys for x in key_reads(key)], "in_place": None})
                else:
                    add((node.result, b), node.op, _bytes_per_row(node.result) * (hi - lo), in_keys, True)
    for op in ops:
        if op in stage_ops:
            continue
        in_keys = []
        for v in op.operands:
            if _const(v) or isinstance(v.owner, ir.Block):
                continue
            in_keys.append(("T",) if stage is not None and v == stage.out else v)
        size = 0 if op.results and op.results[0] in returned else sum(nbytes(r) for r in op.results)
        same = bool(op.operands) and not _const(op.operands[0]) and op.results and \
            list(shape(op.operands[0])) == list(shape(op.results[0]))
        add(op.results[0] if op.results else None, op, size, in_keys, same)
    return steps


def live_bound(steps: list[dict]) -> int:
    """Most bytes live at once over the steps (a buffer lives from its first write to its last read)."""
    last = {}
    for i, s in enumerate(steps):
        for k in s["reads"]:
            last[k] = i
    buffer_of, first, end, size = {}, {}, {}, {}
    for i, s in enumerate(steps):
        src = s["in_place"]
        if src is not None and last.get(src) == i and src in buffer_of and size[buffer_of[src]] == s["size"] \
                and sum(1 for k in s["reads"] if k == src) == 1:
            buf = buffer_of[src]
        else:
            buf = buffer_of.get(s["out"], s["out"])
            size[buf] = max(size.get(buf, 0), s["size"])
            first.setdefault(buf, i)
        buffer_of[s["out"]] = buf
        end[buf] = max(end.get(buf, i), i)
    for k, i in last.items():
        if k in buffer_of:
            end[buffer_of[k]] = max(end[buffer_of[k]], i)
    delta = [0] * (len(steps) + 1)
    for buf, f in first.items():
        delta[f] += size[buf]
        delta[end[buf] + 1] -= size[buf]
    peak = live = 0
    for d in delta:
        live += d
        peak = max(peak, live)
    return peak


def total_cost(block) -> float:
    """Estimated instructions of the whole function, the overhead's denominator."""
    cost = 0.0
    for op in block.operations:
        if not _is_code(op) or not op.results \
                or not isinstance(op.results[0].type, ir.RankedTensorType):
            continue
        cost += instructions(op, numel(op.results[0]))
    return max(cost, 1.0)


def choose(block, max_overhead: float, bands: int = 0) -> tuple[int, _Plan | None]:
    """(the unpatched estimate, the plan with the lowest estimated peak whose extra instructions stay
    within max_overhead percent of the model's; None when no plan lowers the peak, unless `bands`
    forces it, whatever the overhead)."""
    base = live_bound(_step_list(block, None))
    total = total_cost(block)
    best = None
    for stage in _stages(block):
        rows = shape(stage.out)[ROW]
        stage_cost = sum(n.cost(shape(n.result)[ROW]) for n in stage.nodes)
        # For each tallest band, the fewest bands that give it (more would only add calls and halos).
        counts = [bands] if bands else sorted({-(-rows // h) for h in range(1, rows)} - {1})
        for n in counts:
            if n > rows:
                continue
            split = _bands(rows, n)
            ranges = [_row_ranges(stage, band) for band in split]
            if any(r is None for r in ranges):
                continue
            cost = sum(node.cost(r[0][node.result][1] - r[0][node.result][0])
                       for r in ranges for node in stage.nodes)
            for v, axis in stage.inputs.items():
                if axis != ROW:  # each band of an input read along another axis is a copied slice
                    per_row = numel(v) // shape(v)[axis]
                    call, per = _PER_ELEMENT[tosa.SliceOp]
                    cost += sum(call + per * per_row * (r[0][v][1] - r[0][v][0]) for r in ranges)
            if not bands and (cost - stage_cost) * _MARGIN * 100.0 > max_overhead * total:
                continue
            peak = live_bound(_step_list(block, stage, ranges))
            if best is None or (peak, cost) < (best.peak, best.cost):
                best = _Plan(stage, split, ranges, peak, cost)
    if best is not None and best.peak >= base and not bands:
        best = None
    return base, best


def _shape_const(dims, before) -> ir.Value:
    attr = ir.DenseElementsAttr.get(np.asarray(dims, dtype=np.int64),
                                    type=ir.RankedTensorType.get([len(dims)], ir.IndexType.get()))
    return create(tosa.ConstShapeOp, results=[ir.Type.parse(f"!tosa.shape<{len(dims)}>")],
                  attributes={"values": attr}, ip=ir.InsertionPoint(before)).results[0]


def _with_rows(value_type, axis: int, rows: int) -> ir.RankedTensorType:
    t = ir.RankedTensorType(value_type)
    dims = list(t.shape)
    dims[axis] = rows
    return ir.RankedTensorType.get(dims, t.element_type)


def _slice_rows(value, axis: int, start: int, rows: int, before, loc) -> ir.Value:
    """value[..., start:start + rows (on `axis`), ...] (the value itself when that is all of it)."""
    if start == 0 and rows == shape(value)[axis]:
        return value
    begin = [0] * len(shape(value))
    begin[axis] = start
    size = list(shape(value))
    size[axis] = rows
    return create(tosa.SliceOp, results=[_with_rows(value.type, axis, rows)],
                  operands=[value, _shape_const(begin, before), _shape_const(size, before)],
                  loc=loc, ip=ir.InsertionPoint(before)).results[0]


def rewrite(plan: _Plan) -> None:
    """Writes the plan: per band, each op of the stage on its rows (inputs sliced, padding only at
    the image's edges), the bands' outputs concatenated into the stage's output tensor."""
    stage = plan.stage
    n = len(plan.bands)
    last = stage.nodes[-1].op
    anchor = _next_op(last.operation.block, last)
    outs = []
    for b, (rows, reads) in enumerate(plan.ranges):
        band_value = {}
        for v, axis in stage.inputs.items():
            if v in rows:
                lo, hi = rows[v]
                band_value[v] = _slice_rows(v, axis, lo, hi - lo, anchor,
                                            band_location(stage.nodes[0].op.location, b, n))
        for k, node in enumerate(stage.nodes):
            op = node.op
            lo, hi = rows[node.result]
            operands = list(op.operands)
            attrs = {name: op.attributes[name] for name in op.attributes}
            for i in node.acts:
                v = op.operands[i]
                axis = node.in_axis if isinstance(v.owner, ir.Block) else ROW
                a, bb = reads[(k, i)]
                vlo = rows[v][0]
                operands[i] = _slice_rows(band_value[v], axis, a - vlo, bb - a, anchor,
                                          band_location(op.location, b, n))
            if node.window is not None:
                need_lo, need_hi = node.need(lo, hi)
                a, bb = reads[(k, node.acts[0])]
                top, bottom = a - need_lo, need_hi - bb
                if isa(op, tosa.PadOp):
                    pad = const_ints(op.operands[1])
                    pad[2 * ROW], pad[2 * ROW + 1] = top, bottom
                    operands[1] = _shape_const(pad, anchor)
                else:
                    pad = i64_array(op, "pad")
                    attrs["pad"] = ir.DenseI64ArrayAttr.get([top, bottom, pad[2], pad[3]])
            new = create(op_class(op), results=[_with_rows(node.result.type, ROW, hi - lo)],
                         operands=operands, attributes=attrs, loc=band_location(op.location, b, n),
                         ip=ir.InsertionPoint(anchor))
            band_value[node.result] = new.results[0]
        outs.append(band_value[stage.out])
    concat = create(tosa.ConcatOp, results=[stage.out.type], operands=outs,
                    attributes={"axis": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), ROW)},
                    loc=last.location, ip=ir.InsertionPoint(anchor))
    stage.out.replace_all_uses_with(concat.results[0])
    for node in reversed(stage.nodes):
        node.op.operation.erase()


BAND_SUFFIX = " (band {} of {})"


def band_location(loc, band: int, bands: int) -> ir.Location:
    """The layer's location, named for the band: reports, C comments and errors say which band."""
    return ir.Location.name(layer_name(loc) + BAND_SUFFIX.format(band + 1, bands), childLoc=loc,
                            context=loc.context)


def _next_op(block, op):
    found = False
    for o in block.operations:
        if found:
            return o
        if o == op:
            found = True
    raise AssertionError("op not in its block")


@dataclasses.dataclass(frozen=True)
class PatchEarlyStages(ModulePass):
    """Runs the first layers of a CNN band of rows by band of rows, to lower peak RAM.

    The high-resolution layers at the start of a CNN hold its largest tensors. A stage made of the
    function's first ops (convs, depthwise convs, pools, pads, transposes of the input and
    elementwise ops; read by the rest through one tensor) is computed for one band of its output's
    rows at a time: each op on the rows that band needs (halo rows recomputed), its input a slice
    (a view when contiguous), padding only where the band meets the image's edge, each band's
    output written into its rows of the stage's output (a tosa.concat the planner places in
    place). Every output element is computed by the same arithmetic on the same inputs, so the
    result is the unpatched one. The stage's end and the number of bands are chosen by the lowest
    estimate of the bytes live at once, among plans whose extra instructions (estimated for CMSIS-NN on
    Cortex-M55: recomputed rows, more calls, copied input bands) stay within max-overhead
    percent of the model's; a function no plan helps is left as it is. Records
    `mcu.patched_bands` and `mcu.patched_ops` on the function.
    """

    NAME = "mcu-patch-early-stages"
    max_overhead: float = dataclasses.field(default=15.0, metadata={
        "help": "most extra instructions (estimated: recomputed halo rows, more calls), in percent of the "
                "model's"})
    bands: int = dataclasses.field(default=0, metadata={
        "help": "number of bands (0: chosen with the stage's end; N: N bands even where that does not "
                "lower the estimate, whatever the overhead)"})

    def run(self, module: ir.Operation) -> None:
        for fn in self.functions(module):
            block = fn.regions[0].blocks[0]
            _, plan = choose(block, self.max_overhead, self.bands)
            if plan is None:
                continue
            n_ops = len(plan.stage.nodes)
            rewrite(plan)
            i64 = ir.IntegerType.get_signless(64)
            fn.attributes[mcu_attrs.PATCHED_BANDS] = ir.IntegerAttr.get(i64, len(plan.bands))
            fn.attributes[mcu_attrs.PATCHED_OPS] = ir.IntegerAttr.get(i64, n_ops)

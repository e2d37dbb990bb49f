"""mcu-plan-memory: one static arena for every intermediate tensor and CMSIS-NN scratch buffer."""

from __future__ import annotations

import dataclasses

from ...diagnostics import ArenaOverLimit
from ..._mlir import ir
from ...dialects import cmsisnn, portable
from ...dialects.kernel_op import KernelOp, enum_attr
from . import memory_overlap
from ..base import ModulePass
from ...ir.types import BYTES as DTYPE_BYTES
from ...ir.values import nbytes as value_bytes
from ...cores import Core
from ...ir import attributes as mcu_attrs
from ...ir.locations import layer_name

ALIGN = 16  # MVE loads and int32 data want aligned buffers; 16 covers both


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def kernel_ops(block) -> list:
    return [op for op in block.operations if isinstance(op, KernelOp)]


def _contiguous_slice_offset(op) -> int | None:
    """Byte offset of a portable slice whose output is one contiguous run of its input, else None.

    That holds when every dimension after the first cut one is taken whole and every dimension
    before it has size 1 in the output (e.g. N=1, H sliced, W and C whole; or gates of a 1x1xK row).
    """
    if not isinstance(op, portable.SliceOp):
        return None
    start = op.ints("start")
    in_shape = list(ir.RankedTensorType(op.operands[0].type).shape)
    out_shape = list(ir.RankedTensorType(op.results[0].type).shape)
    cut = next((d for d in range(len(in_shape)) if out_shape[d] != in_shape[d]), None)
    if cut is None:
        return 0
    if any(out_shape[d] != 1 for d in range(cut)) or out_shape[cut + 1:] != in_shape[cut + 1:]:
        return None
    strides, acc = [], 1
    for d in reversed(in_shape):
        strides.insert(0, acc)
        acc *= d
    return sum(s * st for s, st in zip(start, strides)) * DTYPE_BYTES[op.elem(0)]


def _concat_slots(ops, returned) -> dict:
    """input value -> (concat result, byte offset) for every concat whose inputs can be written in
    their places in its result: one contiguous run each (every axis before the concat's is 1), each
    input a kernel's only result (not a view), read by the concat alone, the result no graph output."""
    slots = {}
    for op in ops:
        if not isinstance(op, (cmsisnn.ConcatOp, portable.ConcatOp)) or op.results[0] in returned:
            continue
        out_shape = list(ir.RankedTensorType(op.results[0].type).shape)
        axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
        if any(d != 1 for d in out_shape[:axis]):
            continue
        inputs, offset, slot = list(op.operands), 0, {}
        for v in inputs:
            owner = v.owner
            if isinstance(owner, ir.Block) or not isinstance(owner, KernelOp) or len(owner.results) != 1 \
                    or isinstance(owner, cmsisnn.ReshapeOp) or _contiguous_slice_offset(owner) is not None \
                    or len(list(v.uses)) != 1 or v in slot or v in slots:
                break
            slot[v] = (op.results[0], offset)
            offset += value_bytes(v)
        else:
            slots.update(slot)
    return slots


@dataclasses.dataclass
class _Buffer:
    size: int
    start: int
    end: int
    offset: int = -1


RANDOM_ORDERS = 64  # extra seeded orders tried on top of the sorted ones (deterministic)


def place(buffers: list[_Buffer], lower_bound: int = 0) -> int:
    """Best-fit placement, trying several orders; returns the arena size and sets offsets.

    The overlap-aware placer with no overlapping pairs: one placer for both plans.
    """
    return memory_overlap.place(buffers, {}, lower_bound, RANDOM_ORDERS)


def _peak(ops, buffers, scratch, arena) -> tuple | None:
    """(the kernel op whose run uses the arena's top byte, the bytes live while it runs)."""
    best = None
    for i, op in enumerate(ops):
        live = [b for b in buffers if b.start <= i <= b.end] + ([scratch[i]] if i in scratch else [])
        if not live:
            continue
        top = max(b.offset + _align(b.size) for b in live)
        size = sum(b.size for b in live)
        if best is None or (top, size) > best[0]:
            best = ((top, size), op, size)
    return (best[1], best[2]) if best is not None else None


@dataclasses.dataclass(frozen=True)
class PlanMemory(ModulePass):
    """Plans one static arena for the intermediate tensors and scratch buffers.

    Lifetimes come from the kernel order; buffers are placed best-fit (several orders tried, the
    smallest kept). Reshapes, and slices that are one contiguous run of their input, are views
    (at an offset); elementwise kernels write in place when their input dies there; a concat
    along its outermost axis (bands of rows) gets its inputs written into their places in its
    result; CMSIS-NN scratch buffers are sized for the module's core (`mcu.target`) and share
    the arena. With overlap (the default) a conv / depthwise output may start just far enough
    before its dying input that no output pixel overwrites input a later pixel still reads (per
    kernel and core path, from its access order; unknown kernels keep their buffers apart).
    With prefer=memory, a kernel whose scratch buffer holds the arena's top bytes is swapped for
    its scratch-free variant when that shrinks the arena (not in a function that
    mcu-patch-early-stages ran in bands: those variants are several times slower), and a kernel
    whose access order forbids the overlap takes a slower variant that allows it (on the DSP path a
    1x1 conv row by row, arm_convolve_1x1_s8, instead of the wrapper's arm_convolve_1x1_s8_fast). Graph inputs
    and outputs stay in the caller's buffers. Records `mcu.arena_bytes`,
    `mcu.arena_lower_bound_bytes` (the most bytes live at once) and
    `mcu.arena_overlap_bound_bytes` (the same, pairs overlapped as allowed) on the module; each kernel op
    gets `mcu.storage` ("arena" / "input:N" / "output:N"), `mcu.offset`, and scratch attributes; a
    kernel's second result (an LSTM step's cell state) its own buffer, `mcu.storage_1` / `mcu.offset_1`.
    """

    NAME = "mcu-plan-memory"
    DIALECTS = ("cmsisnn", "portable")
    ram_bytes: int = dataclasses.field(default=0, metadata={
        "help": "fail when the arena exceeds this many bytes (0: no limit)"})
    overlap: bool = dataclasses.field(default=True, metadata={
        "help": "let a conv / depthwise output overwrite the part of its dying input that no later "
                "output pixel reads (per-kernel access order; records mcu.arena_overlap_bound_bytes)"})
    prefer: str = dataclasses.field(default="speed", metadata={
        "choices": ("speed", "memory"),
        "help": "speed: keep the fastest kernels; memory: where a kernel's scratch buffer raises the "
                "arena, call its scratch-free variant instead (e.g. arm_depthwise_conv_s8), and where "
                "a kernel's order forbids overlapping its input, its row-by-row variant"})

    def run(self, module: ir.Operation) -> None:
        core = self.core(module)
        arena = lower = overlap_lower = 0
        peak = None
        for fn in self.functions(module):
            a, lb, olb, fn_peak = self._plan_function(fn, core)
            if a >= arena:
                peak = fn_peak
            arena, lower, overlap_lower = max(arena, a), max(lower, lb), max(overlap_lower, olb)
        i64 = ir.IntegerType.get_signless(64)
        module.attributes[mcu_attrs.ARENA_BYTES] = ir.IntegerAttr.get(i64, arena)
        module.attributes[mcu_attrs.ARENA_LOWER_BOUND_BYTES] = ir.IntegerAttr.get(i64, lower)
        module.attributes[mcu_attrs.ARENA_OVERLAP_BOUND_BYTES] = ir.IntegerAttr.get(i64, overlap_lower)
        if self.ram_bytes and arena > self.ram_bytes:
            where = module
            message = (f"the model needs a {arena}-byte arena, {arena - self.ram_bytes} bytes over the RAM limit "
                       f"(ram-bytes={self.ram_bytes}; at least {lower} bytes are live at once)")
            if peak is not None:
                op, live = peak
                where = op
                message += (f"; the peak is at layer '{layer_name(op.location)}' ({op.operation.name}): its inputs, "
                            f"output and scratch and the tensors kept for later layers take {live} bytes there")
            self.emit_error(where, message, kind=ArenaOverLimit)

    def _plan_function(self, fn, core: Core) -> tuple[int, int, int]:
        block = fn.regions[0].blocks[0]
        ops = kernel_ops(block)
        index = {r: i for i, op in enumerate(ops) for r in op.results}
        ret = next(op for op in block.operations if op.operation.name == "func.return")
        returned = {}
        for i, v in enumerate(ret.operands):
            returned.setdefault(v, i)

        group_of, groups, view_offset = self._storage_groups(block, ops, index, returned)
        buffers, by_group = _arena_buffers(groups, index, len(ops))
        n_ops = len(ops)

        def plan() -> tuple[int, int, int, dict]:
            """Places the tensors and the scratch buffers the current kernels need."""
            scratch = {}
            for i, op in enumerate(ops):
                size = op.scratch_bytes(core)
                if size:
                    scratch[i] = _Buffer(size, i, i)
            every = buffers + list(scratch.values())
            lower = max((sum(b.size for b in every if b.start <= t <= b.end)
                         for t in range(n_ops + 1)), default=0)
            pairs = memory_overlap.find_pairs(ops, index, group_of, by_group, view_offset, core,
                                              slower_variants=self.prefer == "memory") if self.overlap else {}
            overlap_lower = memory_overlap.overlap_bound(every, pairs, n_ops + 1)
            if pairs:
                arena = memory_overlap.place(every, pairs, overlap_lower, RANDOM_ORDERS)
                memory_overlap.check_placement(every, pairs)
            else:
                arena = place(every, lower)
            return arena, lower, overlap_lower, scratch

        arena, lower, overlap_lower, scratch = plan()
        # The scratch-free variants cost several times the instructions of the layers they replace
        # (arm_depthwise_conv_s8: 9-12x on Cortex-M55): not on top of a function already run in bands,
        # which spent its instruction budget there.
        patched = mcu_attrs.PATCHED_BANDS in fn.attributes
        if self.prefer == "memory" and not patched and \
                self._use_scratch_free_kernels(ops, buffers, scratch, arena, plan):
            arena, lower, overlap_lower, scratch = plan()

        _write_placement(ops, group_of, view_offset, by_group, scratch)
        return arena, lower, overlap_lower, _peak(ops, buffers, scratch, arena)

    def _storage_groups(self, block, ops, index, returned):
        """(value -> group, the groups, value -> byte offset in its group's buffer): the values that
        share one buffer (views, in-place results, concat parts written in their place)."""
        # A reshape shares its input's group (a view) unless that would make
        # one buffer both a graph input and output, or two outputs.
        group_of: dict = {}
        groups: list[dict] = []

        def new_group(v):
            g = {"values": [v], "input": None, "output": None}
            groups.append(g)
            group_of[v] = g
            return g

        for arg in block.arguments:
            new_group(arg)["input"] = arg.arg_number
        view_offset: dict = {}  # value -> byte offset inside its group's buffer
        slots = _concat_slots(ops, returned)
        for op in ops:
            for extra in list(op.results)[1:]:
                # A kernel's other results (an LSTM step's cell state): buffers of their own.
                new_group(extra)["output"] = returned.get(extra)
            v = op.results[0]
            if v in slots:
                # Written straight into its place in a concat's result (created with its first input).
                result, offset = slots[v]
                g = group_of.get(result) or new_group(result)
                g["values"].append(v)
                group_of[v] = g
                view_offset[v] = offset
                continue
            if v in group_of:
                op.attributes[mcu_attrs.IN_PLACE] = ir.UnitAttr.get()  # that concat: nothing left to do
                continue
            out_index = returned.get(v)
            src = op.operands[0] if len(op.operands) else None
            g = group_of.get(src) if src is not None else None
            is_reshape = isinstance(op, cmsisnn.ReshapeOp)
            slice_offset = _contiguous_slice_offset(op)
            if g is not None and slice_offset is not None and out_index is None:
                # A slice that is one contiguous run of its input: a view at an offset.
                g["values"].append(v)
                group_of[v] = g
                view_offset[v] = view_offset.get(src, 0) + slice_offset
                op.attributes[mcu_attrs.VIEW] = ir.UnitAttr.get()
                continue
            can_alias = g is not None and (is_reshape or self._in_place(op, src, g, ops, index))
            if can_alias and view_offset.get(src, 0) and (out_index is not None or not is_reshape):
                can_alias = False  # a group's output or in-place result starts at its base
            if can_alias and out_index is not None and (g["input"] is not None or g["output"] is not None):
                can_alias = False
            if can_alias and out_index is not None and value_bytes(g["values"][0]) > value_bytes(v):
                # The caller's output buffer holds v only, not the larger tensor v was sliced from
                # (an add of a conv's two halves in place: the conv would write past the output).
                can_alias = False
            if can_alias and out_index is None and g["output"] is not None and not is_reshape:
                can_alias = False
            if can_alias:
                g["values"].append(v)
                group_of[v] = g
                view_offset[v] = view_offset.get(src, 0)
                if out_index is not None:
                    g["output"] = out_index
            else:
                ng = new_group(v)
                ng["output"] = out_index
                if is_reshape:
                    op.attributes[mcu_attrs.COPY] = ir.UnitAttr.get()
        return group_of, groups, view_offset

    @staticmethod
    def _use_scratch_free_kernels(ops, buffers, scratch, arena, plan) -> bool:
        """Greedily swaps kernels for their scratch-free variants while that shrinks the arena;
        only scratch buffers live when the arena's top byte is in use can matter."""
        def at_peak(i):
            live = [b for b in buffers if b.start <= i <= b.end] + [scratch[i]]
            return max(b.offset + _align(b.size) for b in live) == arena

        changed = False
        candidates = [i for i in scratch if ops[i].scratch_free_algorithm() is not None]
        for i in sorted(candidates, key=lambda i: (-scratch[i].size, i)):
            op = ops[i]
            if not at_peak(i):
                continue
            kept = op.attributes["algorithm"]
            op.attributes["algorithm"] = enum_attr(cmsisnn.ConvAlgorithm, op.scratch_free_algorithm())
            trial, _, _, trial_scratch = plan()
            if trial < arena:
                arena, scratch, changed = trial, trial_scratch, True
            else:
                op.attributes["algorithm"] = kept
                scratch = plan()[3]  # offsets back to the kept kernels' plan
        return changed

    @staticmethod
    def _in_place(op, src, g, ops, index) -> bool:
        if not op.writes_in_place():
            return False
        if g["input"] is not None:
            return False
        if value_bytes(src) != value_bytes(op.results[0]):
            return False
        if ir.RankedTensorType(src.type).element_type != ir.RankedTensorType(op.results[0].type).element_type \
                and DTYPE_BYTES.get(str(ir.RankedTensorType(src.type).element_type)) != \
                DTYPE_BYTES.get(str(ir.RankedTensorType(op.results[0].type).element_type)):
            return False
        here = index[op.results[0]]
        # The input (every view of it) must die here and not be read by another operand slot later.
        for v in g["values"]:
            for use in v.uses:
                owner = use.owner
                if owner.operation.name == "func.return":
                    return False
                if owner.results and owner.results[0] in index and index[owner.results[0]] > here:
                    return False
        return True


def _arena_buffers(groups, index, n_ops):
    """(the arena's buffers, group id -> its buffer): each group's lifetime over kernel positions;
    graph inputs and outputs live outside the arena."""
    buffers, by_group = [], {}
    for g in groups:
        if g["input"] is not None or g["output"] is not None:
            continue
        defs = [index[v] for v in g["values"] if v in index]
        last = max(defs)
        for v in g["values"]:
            for use in v.uses:
                owner = use.owner
                if owner.operation.name == "func.return":
                    last = n_ops
                elif owner.results and owner.results[0] in index:
                    last = max(last, index[owner.results[0]])
        b = _Buffer(max(value_bytes(g["values"][0]), 1), min(defs), last)
        buffers.append(b)
        by_group[id(g)] = b
    return buffers, by_group


def _write_placement(ops, group_of, view_offset, by_group, scratch):
    """Each kernel's result storage and offset, and its scratch, as attributes for the emitter."""
    i64 = ir.IntegerType.get_signless(64)

    def where(v) -> tuple[str, int]:
        g = group_of[v]
        extra = view_offset.get(v, 0)
        if g["input"] is not None:
            return f"input:{g['input']}", extra
        if g["output"] is not None:
            return f"output:{g['output']}", extra
        return "arena", by_group[id(g)].offset + extra

    for i, op in enumerate(ops):
        for k, (storage_attr, offset_attr) in enumerate(((mcu_attrs.STORAGE, mcu_attrs.OFFSET),
                                                         (mcu_attrs.STORAGE_1, mcu_attrs.OFFSET_1))):
            if k < len(op.results):
                storage, offset = where(op.results[k])
                op.attributes[storage_attr] = ir.StringAttr.get(storage)
                op.attributes[offset_attr] = ir.IntegerAttr.get(i64, offset)
        if i in scratch:
            op.attributes[mcu_attrs.SCRATCH_OFFSET] = ir.IntegerAttr.get(i64, scratch[i].offset)
            op.attributes[mcu_attrs.SCRATCH_BYTES] = ir.IntegerAttr.get(i64, scratch[i].size)

"""Graph outputs that are a concat of parts of very different ranges keep every part resolved.

PT2E gives a concat one set of quantization parameters for its inputs and output (the integers
are concatenated as they are). Where the parts' ranges differ widely, the small part gets a few
steps of the large part's scale: YOLO's Detect head returns cat((boxes in pixels, sigmoid class
scores), 1), boxes reach hundreds of pixels (an int8 step of ~2) and every score in [0, 1] rounds
to one or two values, while the SQNR of the whole output, dominated by the boxes, reads 45 dB.

Such an output concat keeps each part at its own scale and zero point: the concat is left out of
the quantization, each part stays as its producer quantized it, and the integers are concatenated
as they are (the same kernel call, no requantization: nothing costs more at run time). The output
is then one tensor whose slices along the concat's dim each have their own parameters, carried to
the C API: report.json's `quantization.outputs[k].parts`, the IR's `mcu.parts` result attribute
(io_quant.py), `mcu_model_output_parts[]` in model.c (model.h declares it only when there is
one; that output's entry in mcu_model_outputs[] has scale 0), and mcu-run dequantizes part by part.
A part then has an int8 tensor's own 256 steps however small it is beside the others: the
untrained ultralytics prior's scores (~1e-5..1e-4 beside boxes of hundreds of pixels) included,
which one shared scale, even in int16, cannot resolve. Splitting the graph output at the concat
would change the number of outputs the user sees, and one int16 scale (what this module did
before) still gives a part 128x smaller than the largest fewer than 256 steps.

An output whose concat is followed by other ops (a reshape, a permute: the parts would not stay
slices along one dim) or is a stack keeps the int16 route: the concat in int16, each int8 part
requantized into it by a lookup (a part up to 128x smaller than the largest as resolved as in
int8, smaller ones losing bits). Interior concats (read by another layer) keep shared parameters:
their reader would take them back to one scale.

layer_sqnr.py measures each part of such a concat on its own (`parts`), and the mixed-precision
choice and the report take the worst part, so a collapsed part cannot hide behind the average.
"""

from __future__ import annotations

import warnings

import torch
from torch.fx import GraphModule, Node

from .observed_ranges import observed_ranges, span
from .quantizer import CONCATS, PASS_THROUGH

# A part whose range is under 1 / RATIO of the concat's gets fewer than 256 / RATIO int8 steps:
# 32 (5 bits) at 8, where an int8 tensor of its own would have 256.
RATIO = 8.0


def _float_tensor(n) -> bool:
    val = n.meta.get("val") if isinstance(n, Node) else None
    return isinstance(val, torch.Tensor) and val.dtype.is_floating_point


def concat_dim(node: Node) -> int:
    """The dim a cat joins on (a stack's new dim), non-negative."""
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    rank = node.meta["val"].dim()
    return dim + rank if dim < 0 else dim


def parts(node: Node) -> list[tuple[Node, int, int]]:
    """The parts of concat `node` as (producer, start, stop) along its dim: an operand that is itself
    a concat on the same dim read by this one only is opened (cat(cat(boxes, scores), masks))."""
    dim = concat_dim(node)
    stacked = node.target is torch.ops.aten.stack.default
    out, at = [], 0
    for t in node.args[0]:
        if not _float_tensor(t):
            continue
        size = 1 if stacked else t.meta["val"].shape[dim]
        if not stacked and t.op == "call_function" and t.target in CONCATS and len(t.users) == 1 \
                and t.target is not torch.ops.aten.stack.default and concat_dim(t) == dim:
            out += [(p, at + lo, at + hi) for p, lo, hi in parts(t)]
        else:
            out.append((t, at, at + size))
        at += size
    return out


def inner_concats(node: Node) -> list[Node]:
    """`node` and the concats parts() opens inside it."""
    found = [node]
    for t in node.args[0]:
        if isinstance(t, Node) and t.op == "call_function" and t.target in CONCATS and len(t.users) == 1 \
                and t.target is not torch.ops.aten.stack.default and node.target is not torch.ops.aten.stack.default \
                and concat_dim(t) == concat_dim(node):
            found += inner_concats(t)
    return found


def behind_output(out: Node) -> tuple[Node | None, list[Node]]:
    """(the concat a graph output is, through pass-through ops, or None; those ops)."""
    chain, node = [], out
    while isinstance(node, Node) and node.op == "call_function" and node.target in PASS_THROUGH \
            and len(node.users) == 1:
        chain.append(node)
        node = node.args[0]
    if isinstance(node, Node) and node.op == "call_function" and node.target in CONCATS and _float_tensor(node):
        return node, chain
    return None, chain


def output_concats(gm: GraphModule) -> list[tuple[Node, list[Node]]]:
    """(concat, pass-through ops after it) for each graph output that is a concat of two parts or more."""
    found = []
    for n in gm.graph.nodes:
        if n.op != "output":
            continue
        for out in n.all_input_nodes:
            cat, chain = behind_output(out)
            if cat is not None and len(parts(cat)) > 1 and all(c.users for c in chain):
                found.append((cat, chain))
    return found


def part_ranges(gm: GraphModule, samples, cats) -> dict:
    """producer node -> (min, max) on `samples`, for every part of the concats `cats`."""
    return observed_ranges(gm, samples, {p for cat in cats for p, _, _ in parts(cat)})


def wide(spans: list[float]) -> bool:
    """Parts of these int8 spans lose resolution in one shared range: the smallest non-zero under 1 / RATIO of all."""
    live = [s for s in spans if s > 0.0]
    return len(live) > 1 and min(live) * RATIO < max(live)


def _own_scales_possible(cat: Node, chain: list[Node]) -> bool:
    """The output is the concat itself (cat / concat, not stack) and every part an op's output, so
    each part has its producer's own quantization to keep."""
    return not chain and all(c.target is not torch.ops.aten.stack.default for c in inner_concats(cat)) and \
        all(p.op == "call_function" for p, _, _ in parts(cat))


def wide_output_concats(gm: GraphModule, samples) -> tuple[frozenset[str], frozenset[str]]:
    """(names of the output concats whose parts keep their own scales, with the concats opened
    inside them; names of the ops to keep in int16 instead: a concat with pass-through ops after
    it, its inner concats and those ops), for the output concats whose parts' ranges on `samples`
    differ by more than RATIO."""
    found = output_concats(gm)
    if not found:
        return frozenset(), frozenset()
    ranges = part_ranges(gm, samples, [cat for cat, _ in found])
    own, int16 = set(), set()
    for cat, chain in found:
        if wide([span(*ranges[p]) for p, _, _ in parts(cat) if p in ranges]):
            if _own_scales_possible(cat, chain):
                own |= {n.name for n in inner_concats(cat)}
            else:
                int16 |= {n.name for n in inner_concats(cat) + chain}
    int16 |= _wide_concats_inside_parts(gm, samples, [cat for cat, _ in found])
    return frozenset(own), frozenset(int16)


def _concat_behind(part: Node) -> tuple[Node | None, list[Node]]:
    """(the concat a part of an output concat is, through pass-through ops read once, or None; those ops)."""
    chain, node = [], part
    while node.op == "call_function" and node.target in PASS_THROUGH and len(node.users) == 1 \
            and isinstance(node.args[0], Node):
        chain.append(node)
        node = node.args[0]
    if node.op == "call_function" and node.target in CONCATS and _float_tensor(node) and len(node.users) == 1:
        return node, chain
    return None, chain


def _wide_concats_inside_parts(gm: GraphModule, samples, cats) -> set[str]:
    """Names of the ops to keep in int16: a part of an output concat that is itself a concat of wide
    parts seen through a reshape (a pose head's keypoints: cat((x, y in pixels, sigmoid visibility), 2)
    viewed as one channel per coordinate), where one int8 scale gave the visibilities 24 dB."""
    inside = []
    for cat in cats:
        for p, _, _ in parts(cat):
            inner, chain = _concat_behind(p)
            if inner is not None and len(parts(inner)) > 1:
                inside.append((inner, chain))
    if not inside:
        return set()
    ranges = part_ranges(gm, samples, [inner for inner, _ in inside])
    names = set()
    for inner, chain in inside:
        if wide([span(*ranges[q]) for q, _, _ in parts(inner) if q in ranges]):
            names |= {n.name for n in inner_concats(inner) + chain}
    return names


# A part this far below its output, and under COLLAPSED_DB, is named in a warning.
COLLAPSED_DB = 20.0
BELOW_DB = 10.0


def warn_collapsed_parts(rows: list[dict]) -> None:
    """Warns of each output part that measures under COLLAPSED_DB while its output measures BELOW_DB
    more: its range is too small beside the others' for the one scale the output has."""
    for row in rows:
        if row["kind"] != "output" or row["sqnr_db"] is None:
            continue
        for p in row.get("parts", []):
            if p["sqnr_db"] is not None and p["sqnr_db"] < COLLAPSED_DB and p["sqnr_db"] + BELOW_DB < row["sqnr_db"]:
                warnings.warn(f"output {row['name']} ({row['node']}): its part [{p['index'][0]}:{p['index'][1]}] "
                              f"({p['name']}, {p['node']}) measures {p['sqnr_db']:.1f} dB against the float model, "
                              f"the whole output {row['sqnr_db']:.1f} dB: the part's range is too small beside the "
                              "others' for the output's one scale (layer_sqnr.md)", stacklevel=3)

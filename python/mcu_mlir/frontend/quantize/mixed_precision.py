"""Mixed precision: the layers where int8 loses the most kept in int16 (a16w8, CMSIS-NN's s16 kernels).

`--int16-layers auto` quantizes in int8, reads the per-layer SQNR (frontend/quantize/layer_sqnr.py), moves
the layers with the largest drops to int16 and quantizes again, until the output's SQNR against
the float model reaches the target or every layer is int16; an output that is a concat of parts
counts as its worst part (frontend/quantize/concat_parts.py). A layer is an op together with the
clamp fused into it (conv + relu): both change precision at once. `--int16-layers a,b` names the
layers (module paths or graph node names) instead.
"""

from __future__ import annotations

import math
import warnings

from ... import progress
from ...diagnostics import UserError

# Share of the layers moved to int16 per round (at least one), and rounds at most.
STEP_SHARE = 0.1
MAX_ROUNDS = 12
# How far above the target the estimate must be: it is PT2E's float simulation on 16 held-out
# inputs, and on other inputs the C measured up to ~1 dB lower (8 of 84 public models stopped
# at 34.0-34.9 dB for a 35 dB target).
MARGIN_DB = 1.0


def with_fused(gm, names: set) -> frozenset:
    """`names` plus, for each, the op it fuses with: a clamp's producer, a producer's clamp."""
    from .quantizer import TAILS, WEIGHTED
    nodes = {n.name: n for n in gm.graph.nodes}
    out = set(names)
    for name in names:
        node = nodes.get(name)
        if node is None:
            continue
        if node.target in TAILS and node.args and hasattr(node.args[0], "name"):
            out.add(node.args[0].name)
        users = list(node.users)
        if node.target in WEIGHTED and len(users) == 1 and users[0].target in TAILS:
            out.add(users[0].name)
    return frozenset(out)


def same_kind(gm, name: str) -> frozenset:
    """Every op with the target of op `name` (with what each fuses with): an op kind without an int16
    lowering is excluded from int16 at once, not one op per attempt."""
    target = next(n.target for n in gm.graph.nodes if n.name == name)
    return with_fused(gm, {n.name for n in gm.graph.nodes if n.op == "call_function" and n.target == target})


def nodes_of_layers(gm, layers, flag: str = "--int16-layers") -> frozenset:
    """Graph node names of the layers given by module path (a prefix: 'features.3' takes its
    submodules) or by node name; a name that matches nothing is an error."""
    from ..graph.nodes import node_location
    wanted = [w.strip() for w in (layers.split(",") if isinstance(layers, str) else layers) if w.strip()]
    picked, unmatched = set(), []
    ops = [(n.name, node_location(n)[2]) for n in gm.graph.nodes if n.op == "call_function"]
    for w in wanted:
        hits = [name for name, path in ops if w in (name, path) or path.startswith(w + ".")]
        if not hits:
            unmatched.append(w)
        picked.update(hits)
    if unmatched:
        raise UserError(f"{flag}: no layer named {', '.join(repr(u) for u in unmatched)} "
                        "(module paths such as 'features.3', or the op names layer_sqnr.md lists)")
    return with_fused(gm, picked)


def int8_only(gm) -> frozenset:
    """The LSTM steps and their h / c outputs: CMSIS-NN's LSTM is an int8 kernel (int8 x and h, an
    int16 cell state at a power-of-two scale), so no step changes precision. Their drops stay in
    layer_sqnr.md; auto moves the layers around them instead (an int16 x is requantized to int8)."""
    import operator

    from ..graph.lstm_cell import LSTM_CELL
    steps = {n for n in gm.graph.nodes if n.op == "call_function" and n.target is LSTM_CELL}
    outs = {u for n in steps for u in n.users if u.target is operator.getitem}
    return frozenset(n.name for n in steps | outs)


def output_sqnr(rows: list[dict]) -> float:
    """The worst output's SQNR, an output of parts (a concat) counting as its worst part."""
    from .layer_sqnr import worst_db
    outs = [worst_db(r) for r in rows if r["kind"] == "output"]
    if not outs:
        return math.inf
    return min(math.inf if v is None else v for v in outs)


def choose_int16_layers(gm, samples, quantize_graph, target_db: float, excluded=frozenset(), all_int8=None,
                        base=frozenset()):
    """(converted graph, per-layer SQNR rows with a "dtype" each, the int16 op names) once the output
    (its worst part, for a concat of parts) reaches `target_db` (with MARGIN_DB to spare), or with
    every layer in int16 if it never does; ops in `excluded` stay int8, ops in `base` start in int16.
    all_int8: (converted, rows) of the model with only `base` in int16, when already quantized."""
    int16 = frozenset(base)
    converted, rows = all_int8 or quantize_graph(gm, samples, "int8", int16)
    layers = [r for r in rows if r["kind"] != "input"]
    step = max(1, math.ceil(STEP_SHARE * len(layers)))
    for _ in range(MAX_ROUNDS):
        if output_sqnr(rows) >= target_db + MARGIN_DB:
            break
        ranked = sorted((r for r in rows if r["kind"] != "input" and r["node"] not in int16
                         and r["node"] not in excluded),
                        key=lambda r: -math.inf if r["drop_db"] is None else r["drop_db"], reverse=True)
        if not ranked:
            break
        int16 = (int16 | with_fused(gm, {r["node"] for r in ranked[:step]})) - excluded
        with progress.step(f"mixed precision: {len(int16)} ops in int16"):
            converted, rows = quantize_graph(gm, samples, "int8", int16)
    for r in rows:
        r["dtype"] = "int16" if r["node"] in int16 else "int8"
    reached = output_sqnr(rows)
    if reached < target_db:
        warnings.warn(f"--int16-layers auto: the output reaches {reached:.1f} dB against the float model, not "
                      f"{target_db:g} dB, with {sum(r['dtype'] == 'int16' for r in rows if r['kind'] != 'input')} of "
                      f"{len(layers)} layers in int16: the int8 weights (CMSIS-NN's s16 kernels take int8 weights) "
                      "limit it; layer_sqnr.md shows where", stacklevel=2)
    return converted, rows, int16

"""Per-layer SQNR of the quantized model against the float one: which layers lose the most.

Both graphs come from the same export, so an op keeps its node name through PT2E: the float
graph gives each op's float value, the converted graph the value the next layer reads (the op's
output quantized and dequantized). SQNR per layer is measured on a few inputs (frontend.sqnr_samples:
fresh random ones with random calibration, held-out samples of real data); `drop_db`
is how much the layer lowers it from the worst of its quantized inputs, the share of the error
that layer adds (a table, a softmax, a tight requantization show up there).

An output that is a concat (through pass-through ops) is also measured part by part (`parts`: the
rows of each operand along the concat's dim), and so is an interior concat whose parts' ranges
differ by more than concat_parts.RATIO: one SQNR of boxes in pixels beside scores in [0, 1] is
the boxes' alone, and reads 45 dB while every score is 0. `worst_db` is the least of a row's own
SQNR and its parts'; the report and the mixed-precision choice read that.
"""

from __future__ import annotations

import math

import numpy as np

# Inputs the measurement runs on. A classifier's 10 outputs on 4 inputs gave figures 2-3 dB from
# those on other inputs; on 16 they stay within about 1 dB (the figure auto stops at).
SAMPLES = 16


def _is_quantize(node) -> bool:
    from ..graph.nodes import qd
    return node.op == "call_function" and node.target == qd.quantize_per_tensor.default


def _is_dequantize(node) -> bool:
    from ..graph.nodes import qd
    return node.op == "call_function" and node.target == qd.dequantize_per_tensor.default


def _requantized(dqs: list) -> list:
    """The dequantizes that read `dqs` again after one more quantize: where a mixed-precision model
    changes dtype (int8 -> int16 or back) PT2E chains q -> dq -> q -> dq, and the reader on the
    other side sees the value through the last one. It counts as carrying the producer's SQNR, so
    what the conversion loses is the reader's drop (the reader's dtype decides it)."""
    found, stack = [], list(dqs)
    while stack:
        for q in stack.pop().users:
            if _is_quantize(q):
                more = [u for u in q.users if _is_dequantize(u)]
                found += more
                stack += more
    return found


def _values(gm, sample, wanted: set) -> dict:
    """node name -> its value on `sample` for the nodes named in `wanted` (tensors only)."""
    import torch

    values: dict = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            out = super().run_node(n)
            if n.name in wanted and isinstance(out, torch.Tensor):
                values[n.name] = out.detach().double().numpy().copy()
            return out

    with torch.no_grad():
        Recorder(gm).run(*sample)
    return values


def _db(signal: float, noise: float) -> float:
    return math.inf if noise == 0.0 else 10.0 * math.log10(max(signal, 1e-30) / noise)


def sqnr_db(reference: np.ndarray, test: np.ndarray) -> float:
    return _db(float(np.sum(reference ** 2)), float(np.sum((reference - test) ** 2)))


def _in_model_units(value: np.ndarray, factors) -> np.ndarray:
    """A value of a range-equalized layer (frontend/quantize/range_equalization.py) as the model computes it."""
    if factors is None:
        return value
    scale, axis = factors
    shape = [1] * value.ndim
    shape[axis] = -1
    return value * scale.reshape(shape)


def layer_sqnr(float_gm, converted, samples, factors=None) -> list[dict]:
    """One row per quantized value, in graph order: {"name", "node", "kind" (input / layer / output),
    "sqnr_db", "drop_db"}. factors: node name -> (per-channel factors, axis) of the layers whose
    channels range equalization scaled; their values are compared in the model's own units."""
    factors = factors or {}
    from ..graph.nodes import node_location

    samples = list(samples)[:SAMPLES]
    float_nodes = {n.name: n for n in float_gm.graph.nodes if n.op in ("call_function", "placeholder")}
    outputs = {a.name for n in float_gm.graph.nodes if n.op == "output" for a in n.all_input_nodes}
    carrier, readers = _carriers(converted, outputs)
    names = [name for name in carrier if name in float_nodes]
    if not names or not samples:
        return []
    # Concats measured part by part: row name -> (concat name, its dim, [(part name, start, stop)]).
    parted = _parted(float_nodes, outputs, set(names))
    # Signal and noise energy per op, summed over the samples one sample at a time (a model's
    # every value on every sample would not fit in memory); per part also the part's float range.
    energy = {name: [0.0, 0.0] for name in names}
    part_energy = {(row, p): [0.0, 0.0, np.inf, -np.inf] for row, (_, _, ps) in parted.items() for p in ps}
    for sample in samples:
        ref = _values(float_gm, sample, set(names))
        test = _values(converted, sample, {carrier[n].name for n in names})
        for name in list(energy):
            a, b = ref.get(name), test.get(carrier[name].name)
            if a is None or b is None or a.shape != b.shape:
                del energy[name]
                continue
            a, b = _in_model_units(a, factors.get(name)), _in_model_units(b, factors.get(name))
            energy[name][0] += float(np.sum(a ** 2))
            energy[name][1] += float(np.sum((a - b) ** 2))
        for row, (cat, dim, ps) in parted.items():
            a, b = ref.get(cat), test.get(carrier[cat].name)
            if a is None or b is None or a.shape != b.shape:
                continue
            for p in ps:
                pa, pb = (np.take(v, range(p[1], p[2]), axis=dim) for v in (a, b))
                e = part_energy[(row, p)]
                e[0] += float(np.sum(pa ** 2))
                e[1] += float(np.sum((pa - pb) ** 2))
                e[2], e[3] = min(e[2], float(pa.min())), max(e[3], float(pa.max()))
    by_dq = {}
    rows = []
    for name in names:
        if name not in energy:
            continue
        db = _db(*energy[name])
        by_dq.update({dq.name: db for dq in readers[name]})
        op = float_nodes[name]
        _, _, path = node_location(op)
        row = {"name": path or name, "node": name, "sqnr_db": db, "_op": name,
               "kind": "input" if op.op == "placeholder" else "output" if name in outputs else "layer"}
        if name in parted:
            from .concat_parts import wide
            from .observed_ranges import span
            ps = parted[name][2]
            spans = [span(*part_energy[(name, p)][2:]) for p in ps]
            if row["kind"] == "output" or wide(spans):
                # a part may be a constant (a folded parameter, a get_attr): named by its node
                row["parts"] = [{"name": (p[0] in float_nodes and node_location(float_nodes[p[0]])[2]) or p[0],
                                 "node": p[0],
                                 "index": [p[1], p[2]], "sqnr_db": _db(*part_energy[(name, p)][:2])} for p in ps]
        rows.append(row)
    # drop: from the worst quantized input of the op (in the converted graph) to its output.
    conv_nodes = {n.name: n for n in converted.graph.nodes}
    def quantized_inputs(op) -> list:
        """The dequantized activations an op reads, through the float ops fused before it (conv -> relu)."""
        found, stack, seen = [], list(op.all_input_nodes), set()
        while stack:
            a = stack.pop()
            if a.name in seen:
                continue
            seen.add(a.name)
            if a.name in by_dq:
                found.append(by_dq[a.name])
            elif a.op == "call_function" and not _is_dequantize(a) and not _is_quantize(a):
                stack.extend(a.all_input_nodes)
        return found

    for row in rows:
        op = conv_nodes[row.pop("_op")]
        ins = quantized_inputs(op)
        row["drop_db"] = (min(ins) - row["sqnr_db"]) if ins and math.isfinite(min(ins)) else None
        if carrier.get(op.name) is op and row["drop_db"] is not None:
            row["drop_db"] = 0.0        # parts at their own scales, concatenated: nothing lost
    for row in rows:
        if "parts" in row:
            row["worst_db"] = min([row["sqnr_db"]] + [p["sqnr_db"] for p in row["parts"]])
        for r in [row] + row.get("parts", []):
            for key in ("sqnr_db", "drop_db", "worst_db"):
                if r.get(key) is not None:
                    r[key] = round(r[key], 2) if math.isfinite(r[key]) else None
    return rows


def _carriers(converted, outputs: set) -> tuple[dict, dict]:
    """(op node name -> the node that carries its quantized value in `converted`, op node name ->
    every dequantize that carries it)."""
    from .quantizer import CONCATS
    # PT2E gives each reader its own dequantize: every one carries the value (readers).
    carrier, readers = {}, {}
    for q in converted.graph.nodes:
        if _is_quantize(q) and isinstance(q.args[0], type(q)) and q.args[0].op in ("call_function", "placeholder"):
            op = q.args[0]
            dqs = [u for u in q.users if _is_dequantize(u)]
            if dqs and not _is_dequantize(op):
                carrier[op.name], readers[op.name] = dqs[0], dqs + _requantized(dqs)
    # An output concat whose parts keep their own scales (concat_parts.py) is not quantized as one
    # tensor: its value in the converted graph, the parts dequantized each at its own parameters
    # and concatenated, is what the C's output means.
    for n in converted.graph.nodes:
        if n.name in outputs and n.name not in carrier and n.op == "call_function" and n.target in CONCATS:
            carrier[n.name], readers[n.name] = n, []
    return carrier, readers


def _parted(float_nodes: dict, outputs: set, measured: set) -> dict:
    """row name -> (concat name, dim, [(part name, start, stop)]) for the outputs that are a concat
    through pass-through ops, and for every other concat of two parts or more."""
    from .concat_parts import behind_output, concat_dim, parts
    from .quantizer import CONCATS
    found = {}
    for name, node in float_nodes.items():
        cat = None
        if name in outputs:
            cat, _ = behind_output(node)
        elif node.op == "call_function" and node.target in CONCATS:
            cat = node
        if cat is None or cat.name not in measured or name not in measured:
            continue
        ps = parts(cat)
        if len(ps) > 1:
            found[name] = (cat.name, concat_dim(cat), [(p.name, lo, hi) for p, lo, hi in ps])
    return found


def worst_db(row: dict):
    """A row's SQNR or, where it has parts, the least of its own and its parts' (None: exact)."""
    return row.get("worst_db", row["sqnr_db"])


def worst(rows: list[dict], count: int = 5) -> list[dict]:
    """The layers that lose the most: the largest drops from their inputs."""
    return sorted((r for r in rows if r["drop_db"] is not None), key=lambda r: r["drop_db"], reverse=True)[:count]


def table(rows: list[dict]) -> str:
    """The rows as a Markdown table, the layers that lose the most named first."""
    lines = ["# Per-layer SQNR against the float model", "",
             f"Measured on up to {SAMPLES} inputs the model was not calibrated on (fresh random ones with random "
             "calibration; with real data its last quarter, held out of the calibration, or its first samples "
             "when under 8 are given: report.json's quantization.sqnr_measured_on). drop: dB lost from the "
             "worst quantized input. An output that is a concat is also measured part by part.", ""]
    top = worst(rows)
    if top:
        lines += ["Layers that lose the most: " + ", ".join(f"{r['name']} ({r['node']}, {r['drop_db']:+.1f} dB)"
                                                         for r in top), ""]
    lines += ["| # | layer | op | kind | SQNR dB | drop dB |", "|---|---|---|---|---|---|"]
    for i, r in enumerate(rows):
        db = "exact" if r["sqnr_db"] is None else f"{r['sqnr_db']:.1f}"
        drop = "" if r["drop_db"] is None else f"{r['drop_db']:+.1f}"
        lines.append(f"| {i} | {r['name']} | {r['node']} | {r['kind']} | {db} | {drop} |")
        for p in r.get("parts", []):
            db = "exact" if p["sqnr_db"] is None else f"{p['sqnr_db']:.1f}"
            lines.append(f"| | part [{p['index'][0]}:{p['index'][1]}] {p['name']} | {p['node']} | part | {db} | |")
    return "\n".join(lines) + "\n"

"""Which layers get int4 weights: every one (`--weights int4`), the named ones (`--int4-layers a,b`)
or `--int4-layers auto`.

auto measures what int4 weights cost each layer on its own: in the int8 model (PT2E's converted
graph) the layer's weights are replaced by their int4 rounding (int4_weights.py: clipped scales,
the bias corrected for int4 rounding), and the output's added noise energy is measured against the
float model on the SQNR samples (layer_sqnr.py's). Noise of independent roundings adds, so the
output SQNR of a set of int4 layers is predicted as signal / (int8 noise + the layers' added
noises). Layers are taken largest weights first, each one only while the prediction stays
MARGIN_DB above `--target-sqnr`, until the weights fit `--flash-limit` (when given). The set is
then quantized for real (calibration, bias correction) and measured; roundings are not quite
independent, so the layers' noise is rescaled by measured / predicted and the choice made again
(MAX_ROUNDS at most), the largest set whose measured output clears the target kept.
"""

from __future__ import annotations

import math
import warnings

from ... import progress
from ...diagnostics import UserError
from .mixed_precision import MARGIN_DB, output_sqnr

# Rounds of choosing, quantizing and measuring at most.
MAX_ROUNDS = 4


def int4_requested(options) -> bool:
    return options.weights == "int4" or bool(options.int4_layers)


def int4_by_hand(gm, options, int16) -> frozenset:
    """The layers whose weights the options put in int4 (every capable one for --weights int4, the
    named ones for --int4-layers a,b); int16 layers keep int8 weights (no a16w4 kernel)."""
    from .int4_weights import int4_capable
    from .mixed_precision import nodes_of_layers
    capable = set(int4_capable(gm))
    if options.weights == "int4":
        return frozenset(capable - set(int16))
    if not options.int4_layers or options.int4_layers == "auto":
        return frozenset()
    named = nodes_of_layers(gm, options.int4_layers, flag="--int4-layers")
    picked = named & capable
    if not picked:
        raise UserError(f"--int4-layers {options.int4_layers!r} names no convolution or linear layer (the layers "
                        "that take int4 weights; transposed convolutions stay int8)")
    both = sorted(picked & set(int16))
    if both:
        raise UserError(f"--int4-layers and --int16-layers both name {', '.join(both)}: int4 weights take int8 "
                        "activations (CMSIS-NN has no int16 x int4 kernel)")
    return frozenset(picked)


def choose_int4(float_gm, by_hand, measure_on, options, corrected4, quantize_graph, samples, int16, baseline):
    """(converted graph, SQNR rows, int4 report): `baseline` (the model quantized with the int4
    layers given by hand, if any) as it is, or for `--int4-layers auto` the model with the layers
    auto chose."""
    converted, rows = baseline
    if options.int4_layers == "auto":
        return _auto(float_gm, measure_on, options, corrected4, quantize_graph, samples, int16, baseline)
    if not by_hand:
        return converted, rows, {}
    mode = "all" if options.weights == "int4" else "named"
    chosen = frozenset(by_hand) - frozenset(int16)
    return converted, rows, _report(float_gm, mode, chosen, rows, {}, {}, options)


def _auto(float_gm, measure_on, options, corrected4, quantize_graph, samples, int16, baseline):
    from .int4_weights import int4_capable
    from .int4_sensitivity import added_noise
    converted8, rows8 = baseline
    capable = {n: c for n, c in int4_capable(float_gm).items() if n not in int16}
    with progress.step(f"int4 weights: measuring {len(capable)} layers"):
        signal, noise8, added = added_noise(float_gm, converted8, corrected4, capable, measure_on)
    costs = {n: _predict(signal, noise8, added, [n]) for n in added}
    base_db = _predict(signal, noise8, added, [])
    costs = {n: round(base_db - v, 2) if math.isfinite(base_db - v) else 0.0 for n, v in costs.items()}
    result, reasons = _search(float_gm, capable, (signal, noise8, added), options, quantize_graph, samples, int16)
    if result is None:
        reasons = {n: r if r.startswith("kept int8") else "kept int8: the output measured below the target with it"
                   for n, r in reasons.items()}
        result = (converted8, rows8, [], reasons)
    converted, rows, chosen, reasons = result
    report = _report(float_gm, "auto", frozenset(chosen), rows, costs, reasons, options)
    _warn_unmet(report, options)
    return converted, rows, report


def _search(float_gm, capable, noise, options, quantize_graph, samples, int16):
    """((converted, rows, chosen layers, reasons) of the largest int4 set whose measured output
    clears the target, or None if none does; the last choice's reasons). Each round chooses with
    the noise model, quantizes the set and measures it; the layers' added noise is then rescaled
    by measured / predicted (roundings are not quite independent) and the choice made again while
    that changes it."""
    signal, noise8, added = noise
    threshold = options.target_sqnr_db + MARGIN_DB
    best, scale, tried, reasons = None, 1.0, set(), {}
    for _ in range(MAX_ROUNDS):
        chosen, reasons = _greedy(float_gm, capable, noise, threshold, options.flash_limit, scale)
        if not chosen or tuple(chosen) in tried:
            break
        tried.add(tuple(chosen))
        with progress.step(f"int4 weights: {len(chosen)} layers"):
            converted, rows = quantize_graph(float_gm, samples, "int8", int16, int4_nodes=frozenset(chosen))
        reached = output_sqnr(rows)
        ok = reached >= threshold
        if ok and (best is None or _saved(capable, chosen) > _saved(capable, best[2])):
            best = (converted, rows, chosen, reasons)
        o = min(range(len(signal)), key=lambda k: _predict(signal, noise8, added, chosen, scale, [k]))
        predicted = sum(added[n][o] for n in chosen)
        measured = signal[o] / 10 ** (reached / 10) - noise8[o] if math.isfinite(reached) else 0.0
        if predicted <= 0:
            break
        new_scale = max(measured, 0.0) / predicted
        if ok and new_scale >= scale:
            break         # the prediction held or was optimistic: no more layers fit
        scale = new_scale if ok else max(new_scale, scale * 1.25)
    return best, reasons


def _saved(capable, chosen) -> int:
    from .int4_weights import weight_bytes
    return sum(capable[n] - weight_bytes(capable[n], True) for n in chosen)


def _predict(signal, noise8, added, layers, scale=1.0, outputs=None) -> float:
    """The output SQNR (worst output) with `layers` in int4, from the measured noise energies (the
    layers' added noise times `scale`)."""
    worst = math.inf
    for o in range(len(signal)) if outputs is None else outputs:
        noise = noise8[o] + scale * sum(added[n][o] for n in layers)
        worst = min(worst, math.inf if noise <= 0 else 10 * math.log10(max(signal[o], 1e-30) / noise))
    return worst


def _greedy(float_gm, capable, noise, threshold, flash_limit, scale):
    """(the layers taken, largest weights first, while the prediction stays at `threshold` or
    above and the weights do not yet fit `flash_limit`; a reason per layer)."""
    from .int4_weights import weight_bytes
    signal, noise8, added = noise
    total = _weights_estimate(float_gm)
    chosen, reasons = [], {}
    for name in sorted(capable, key=lambda n: (-capable[n], n)):
        if name not in added:
            reasons[name] = "kept int8: its int4 cost could not be measured"
            continue
        if flash_limit and total <= flash_limit:
            reasons[name] = "kept int8: the weights fit the flash limit"
            continue
        predicted = _predict(signal, noise8, added, chosen + [name], scale)
        if predicted >= threshold:
            chosen.append(name)
            total -= capable[name] - weight_bytes(capable[name], True)
            reasons[name] = "int4"
        else:
            reasons[name] = f"kept int8: the output would measure {predicted:.1f} dB"
    return chosen, reasons


def _weights_estimate(float_gm) -> int:
    """The model's weight bytes in int8, estimated before lowering: each conv / linear weight one
    byte an element, its bias four (report.json's weights_bytes is the exact figure)."""
    import torch

    from ..graph.nodes import fetch_attr
    from .quantizer import WEIGHTED
    total = 0
    for node in float_gm.graph.nodes:
        if node.op != "call_function" or node.target not in WEIGHTED:
            continue
        for k, arg in enumerate(node.args[1:3]):
            if getattr(arg, "op", None) == "get_attr":
                t = fetch_attr(float_gm, arg.target)
                if isinstance(t, torch.Tensor):
                    total += t.numel() * (1 if k == 0 else 4)
    return total


def _report(float_gm, mode, chosen, rows, costs, reasons, options) -> dict:
    """report.json's quantization.int4: each capable layer's weights, bytes and (auto) cost."""
    from ..graph.nodes import node_location
    from .int4_weights import int4_capable, weight_bytes
    from .mixed_precision import with_fused
    nodes = {n.name: n for n in float_gm.graph.nodes}
    layers = []
    for name, count in int4_capable(float_gm).items():
        four = name in chosen
        entry = {"name": node_location(nodes[name])[2] or name, "node": name,
                 "weights": "int4" if four else "int8", "weight_count": count,
                 "weight_bytes": weight_bytes(count, four), "int8_weight_bytes": count}
        if name in costs:
            entry["cost_db"] = costs[name]
        if name in reasons:
            entry["reason"] = reasons[name]
        layers.append(entry)
    fused = {n: with_fused(float_gm, {n}) for n in chosen}
    for r in rows:
        if any(r["node"] in f for f in fused.values()):
            r["weights"] = "int4"
    out = {"mode": mode, "layers": layers, "int4_layers": sum(e["weights"] == "int4" for e in layers),
           "weight_bytes": sum(e["weight_bytes"] for e in layers),
           "int8_weight_bytes": sum(e["int8_weight_bytes"] for e in layers),
           "output_sqnr_db": _rounded(output_sqnr(rows))}
    if mode == "auto":
        out.update(target_sqnr_db=options.target_sqnr_db, flash_limit_bytes=options.flash_limit,
                   weights_estimate_bytes=_weights_estimate(float_gm)
                   - sum(e["int8_weight_bytes"] - e["weight_bytes"] for e in layers))
    return out


def _rounded(value):
    return round(value, 2) if value is not None and math.isfinite(value) else None


def _warn_unmet(report, options) -> None:
    if options.flash_limit and report["weights_estimate_bytes"] > options.flash_limit:
        warnings.warn(f"--int4-layers auto: with {report['int4_layers']} of {len(report['layers'])} layers in int4 "
                      f"the weights take about {report['weights_estimate_bytes']} bytes, over the flash limit "
                      f"({options.flash_limit}): more int4 layers would take the output below "
                      f"{options.target_sqnr_db:g} dB (layer_sqnr.md lists what each costs)", stacklevel=3)


def table(report: dict) -> str:
    """layer_sqnr.md's section on int4 weights: each layer's weights, bytes and measured cost."""
    if not report:
        return ""
    saved = report["int8_weight_bytes"] - report["weight_bytes"]
    lines = ["", "## Weights: int4 or int8", "",
             f"{report['int4_layers']} of {len(report['layers'])} conv / linear layers in int4 ({report['mode']}): "
             f"{report['weight_bytes']} weight bytes against {report['int8_weight_bytes']} in int8 "
             f"({saved} saved); output {_db(report['output_sqnr_db'])}."]
    if report["mode"] == "auto":
        lines += ["", f"auto: target {report['target_sqnr_db']:g} dB (+{MARGIN_DB:g} dB margin), flash limit "
                      f"{report['flash_limit_bytes'] or 'none'}; cost: the output's SQNR lost with that layer alone "
                      "in int4."]
    lines += ["", "| layer | op | weights | bytes | int8 bytes | cost dB | why |", "|---|---|---|---|---|---|---|"]
    for e in sorted(report["layers"], key=lambda e: -e["int8_weight_bytes"]):
        cost = "" if e.get("cost_db") is None else f"{e['cost_db']:.2f}"
        lines.append(f"| {e['name']} | {e['node']} | {e['weights']} | {e['weight_bytes']} | {e['int8_weight_bytes']} "
                     f"| {cost} | {e.get('reason', '')} |")
    return "\n".join(lines) + "\n"


def _db(value) -> str:
    return "exact" if value is None else f"{value:.1f} dB"


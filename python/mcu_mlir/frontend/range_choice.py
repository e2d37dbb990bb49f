"""Which int8 activation ranges a model gets: the calibrated min / max, or the histogram's.

Min / max keeps every calibrated value in range; the histogram (torchao's HistogramObserver)
picks the range with the least squared error per tensor, clipping a rare tail so the bulk gets
finer steps. Neither wins everywhere: measured on public model code, the histogram gained 1-4 dB
on attention and MLP models (ResMLP, GCViT, Mixer) and lost 1-2 dB elsewhere (FastViT,
MobileViT), and on a re-parameterised model one ReLU's search chose an almost empty range (0 dB).
The error of one tensor is not the output's, so `auto` quantizes both ways and keeps the
histogram's where the output measures clearly closer to the float model (frontend/layer_sqnr.py,
on held-out inputs): by MARGIN_DB or more. Below that the figures are within what other inputs
move them by, and on 84 public models the smaller gains were as often losses on other inputs.
"""

from __future__ import annotations

from .mixed_precision import output_sqnr

MARGIN_DB = 1.0


def choose_ranges(gm, samples, quantize_graph, int16=frozenset()):
    """(ranges, (converted graph, per-layer rows), {ranges: output SQNR dB}): the histogram's where
    its output measures MARGIN_DB or more above min / max's. `quantize_graph(gm, samples, "int8", int16,
    ranges=...)`."""
    results, figures = {}, {}
    for ranges in ("minmax", "histogram"):
        results[ranges] = quantize_graph(gm, samples, "int8", int16, ranges=ranges)
        figures[ranges] = output_sqnr(results[ranges][1])
    best = "histogram" if figures["histogram"] >= figures["minmax"] + MARGIN_DB else "minmax"
    return best, results[best], figures

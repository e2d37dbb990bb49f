"""Which int8 activation ranges a model gets: the calibrated min / max or the histogram's, each
with or without range equalization (frontend/quantize/range_equalization.py).

Min / max keeps every calibrated value in range; the histogram (torchao's HistogramObserver)
picks the range with the least squared error per tensor, clipping a rare tail so the bulk gets
finer steps. Neither wins everywhere: measured on public model code, the histogram gained 1-4 dB
on attention and MLP models (ResMLP, GCViT, Mixer) and lost 1-2 dB elsewhere (FastViT,
MobileViT), and on a re-parameterised model one ReLU's search chose an almost empty range (0 dB).
Equalizing the channel ranges gained 1-7 dB on MobileNet-style models (DS-CNN 38.6 -> 46.0,
SemNASNet 24.2 -> 26.6) and lost a little on ResNet-18 (33.3 -> 33.1). The error of one tensor is not the output's, so `auto`
quantizes each way and keeps another than min / max only where the output measures clearly closer
to the float model (frontend/quantize/layer_sqnr.py, on held-out inputs): by MARGIN_DB or more. Below that
the figures are within what other inputs move them by, and on 84 public models the smaller gains
were as often losses on other inputs.
"""

from __future__ import annotations

from .mixed_precision import output_sqnr

MARGIN_DB = 1.0


def choose(candidates, quantize) -> tuple[str, tuple, dict]:
    """(label, (converted graph, per-layer rows), {label: output SQNR dB}) of the candidate kept:
    `quantize(label)` for each label of `candidates` in order, the first the baseline; another is
    kept where its output measures highest and MARGIN_DB or more above the baseline's."""
    baseline, best, kept, figures = None, None, None, {}
    for label in candidates:
        result = quantize(label)
        figures[label] = output_sqnr(result[1])
        if baseline is None:
            baseline, best, kept = label, label, result
        elif figures[label] > figures[best] and figures[label] >= figures[baseline] + MARGIN_DB:
            best, kept = label, result
    return best, kept, figures

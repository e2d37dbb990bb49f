"""Float ranges of chosen graph values on calibration samples, for the frontend's choices made
before quantization (shrinking_means.py, concat_parts.py)."""

from __future__ import annotations

import torch
from torch.fx import GraphModule, Interpreter


def span(lo: float, hi: float) -> float:
    """The width of an int8 range calibrated on [lo, hi] (it always holds zero)."""
    return max(hi, 0.0) - min(lo, 0.0)


class _Ranges(Interpreter):
    def __init__(self, gm, nodes):
        super().__init__(gm)
        self.nodes, self.ranges = set(nodes), {}

    def run_node(self, n):
        out = super().run_node(n)
        if n in self.nodes and isinstance(out, torch.Tensor):
            lo, hi = float(out.min()), float(out.max())
            old = self.ranges.get(n, (lo, hi))
            self.ranges[n] = (min(lo, old[0]), max(hi, old[1]))
        return out


def observed_ranges(gm: GraphModule, samples, nodes) -> dict:
    """node -> (min, max) of its value over `samples`, for the tensor-valued nodes among `nodes`."""
    nodes = set(nodes)
    if not nodes:
        return {}
    probe = _Ranges(gm, nodes)
    with torch.no_grad():
        for s in samples:
            probe.run(*s)
    return probe.ranges

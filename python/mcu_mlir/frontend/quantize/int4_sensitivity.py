"""What int4 weights cost each layer alone: the output noise they add to the int8 model.

In PT2E's converted int8 graph a layer reads its weights through a dequantize of int8 constants;
the probe points the layer at its int4-rounded weights instead (int4_weights.py's scales, as the
quantizer will choose them) and at its bias corrected for int4 rounding, runs the graph on the
SQNR samples and measures each output's noise energy against the float model. The activation
ranges stay the int8 model's: a layer's own rounding, not a recalibration, is what is measured.
"""

from __future__ import annotations

import copy

import numpy as np


def _outputs(gm, sample) -> list:
    import torch
    import torch.utils._pytree as pytree
    with torch.no_grad():
        return [o.detach().double().numpy() for o in pytree.tree_leaves(gm(*sample))
                if isinstance(o, torch.Tensor) and o.dtype.is_floating_point]


def _noise(reference: list, gm, samples) -> list:
    """Each output's noise energy (squared difference from `reference`), summed over `samples`."""
    noise = [0.0] * len(reference[0])
    for ref, sample in zip(reference, samples):
        for o, (a, b) in enumerate(zip(ref, _outputs(gm, sample))):
            noise[o] += float(np.sum((a - b) ** 2)) if a.shape == b.shape else float(np.sum(a ** 2))
    return noise


def added_noise(float_gm, converted, corrected4, layers, samples):
    """(signal energy per output, the int8 model's noise per output, {layer: the noise each output
    gains with that layer's weights in int4}) on `samples`; a layer the probe cannot reach is left out."""
    from ..graph.attention_masks import keep_masks_in_simulation
    from ..graph.nodes import fetch_attr
    from .bias_correction import _rounded
    from .int4_weights import int4_weight_spec
    sim = copy.deepcopy(keep_masks_in_simulation(converted))
    reference = [_outputs(float_gm, s) for s in samples]
    signal = [sum(float(np.sum(ref[o] ** 2)) for ref in reference) for o in range(len(reference[0]))]
    noise8 = _noise(reference, sim, samples)
    floats = {n.name: n for n in float_gm.graph.nodes}
    fours = {n.name: n for n in corrected4.graph.nodes} if corrected4 is not None else {}
    added = {}
    for node in list(sim.graph.nodes):
        if node.name not in layers or node.name not in floats:
            continue
        source = floats[node.name]
        w = source.args[1]
        weight = fetch_attr(float_gm, w.target).detach()
        probe = {1: _rounded(weight, int4_weight_spec(source))}
        bias = _bias(fours.get(node.name))
        if bias is not None and _bias(node) is not None:
            probe[2] = fetch_attr(corrected4, bias.target).detach().clone()
        with _probed(sim, node, probe):
            noise = _noise(reference, sim, samples)
        added[node.name] = [max(n - n8, 0.0) for n, n8 in zip(noise, noise8)]
    return signal, noise8, added


def _bias(node):
    if node is None:
        return None
    bias = node.args[2] if len(node.args) > 2 else node.kwargs.get("bias")
    return bias if hasattr(bias, "op") else None


class _probed:
    """`node` of graph module `gm` reading the given tensors as its operands (index -> tensor)
    within the block; its own operands again after."""

    def __init__(self, gm, node, tensors: dict):
        self.gm, self.node, self.tensors = gm, node, tensors

    def __enter__(self):
        self.args = self.node.args
        args, added = list(self.node.args), []
        for index, tensor in self.tensors.items():
            name = f"_int4_probe_{index}"
            self.gm.register_buffer(name, tensor)
            with self.gm.graph.inserting_before(self.node):
                attr = self.gm.graph.get_attr(name)
            args[index] = attr
            added.append(attr)
        self.node.args = tuple(args)
        self.added = added
        self.gm.recompile()

    def __exit__(self, *exc):
        self.node.args = self.args
        for attr in self.added:
            self.gm.graph.erase_node(attr)
            delattr(self.gm, attr.target)
        self.gm.recompile()
        return False

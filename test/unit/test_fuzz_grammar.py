"""The fuzzer's grammar (tools/fuzz/grammar.py): every generated model, and every model the minimiser
makes of it (layers dropped, a smaller input), is a valid nn.Module whose output has the shape the
grammar predicts; the same seed gives the same source; the CI subset's seeds exercise the forms of
the bugs found before (issue 35's bottom / right padding, the one-step LSTM)."""

from __future__ import annotations

import os
import random
import sys

import pytest

torch = pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "fuzz"))
import grammar  # noqa: E402


def _run(model: dict):
    namespace: dict = {}
    exec(compile(grammar.render(model)[0], f"model_{model['seed']}.py", "exec"), namespace)
    with torch.no_grad():
        return namespace["model"]()(*namespace["inputs"]())


@pytest.mark.parametrize("start", [0, 1000])
def test_generated_models_run_with_the_predicted_shape(start):
    for seed in range(start, start + 100):
        model = grammar.generate(seed)
        assert grammar.render(model)[1], f"seed {seed}: no layer took the input"
        y = _run(model)
        assert tuple(y.shape) == grammar.output_shape(model), (seed, grammar.render(model)[0])


def test_smaller_models_stay_valid():
    rng = random.Random(0)
    for seed in range(100):
        model = grammar.generate(seed)
        layers = [layer for layer in model["layers"] if rng.random() < 0.6]
        kind, *dims = model["input"]
        smaller = dict(model, layers=layers, input=[kind] + [max(1, d // rng.choice([1, 2, 3])) for d in dims])
        if grammar.render(smaller)[1]:
            y = _run(smaller)
            assert tuple(y.shape) == grammar.output_shape(smaller), (seed, grammar.render(smaller)[0])


def test_same_seed_same_model():
    assert grammar.render(grammar.generate(7)) == grammar.render(grammar.generate(7))
    assert grammar.render(grammar.generate(7))[0] != grammar.render(grammar.generate(8))[0]


def test_subset_covers_the_regressions():
    seeds = grammar.covering_seeds()
    found = set().union(*(grammar.forms(grammar.generate(s)) for s in seeds))
    assert set(grammar.REGRESSION_FORMS) <= found
    for form in ("conv-depthwise", "conv-grouped", "conv-dilated", "maxpool-ceil", "avgpool-ceil", "attention",
                 "gru", "interp-bilinear", "residual-cat", "input-tokens", "amax",
                 # issue 35's lifted refusals, and the norms / PReLU the grammar took on after them
                 "conv-same-even", "conv1d-same-even", "convt-grouped", "convt-depthwise", "convt-dilated",
                 "interp-nearest-size", "interp-nearest-fraction", "interp-bilinear-size", "interp-bilinear-fraction",
                 "adaptive-avg", "adaptive-max", "prelu", "prelu-channel", "groupnorm", "instancenorm"):
        assert form in found, form

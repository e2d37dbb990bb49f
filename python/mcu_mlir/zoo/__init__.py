"""The model zoo: small, well-known embedded models with random weights (fixed seeds).

    MODELS[name] = (factory, example_input_shapes)
    model, inputs = get(name)          # model in eval mode, example inputs (seeded normal)

Each factory is also usable as `mcu-compile python/mcu_mlir/zoo/<file>.py:<factory>`.
"""

from __future__ import annotations

from . import mlperf_tiny, mobilenet, silero_vad, wav2letter, yolo

MODELS: dict = {}
for _module in (wav2letter, silero_vad, mobilenet, mlperf_tiny, yolo):
    for _name, _shapes in _module.INPUTS.items():
        MODELS[_name] = (getattr(_module, _name), [tuple(s) for s in _shapes])

# The README demo: small and fast to compile.
default = "ds_cnn"

# Too big for the unit tests (benchmarks only).
LARGE = ("mobilenet_v2_100", "wav2letter")


def example_inputs(name: str, seed: int = 0) -> tuple:
    import torch
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(s, generator=g) for s in MODELS[name][1])


def get(name: str):
    """(model.eval(), example inputs) of a zoo model."""
    if name not in MODELS:
        raise KeyError(f"no zoo model '{name}' (have: {', '.join(sorted(MODELS))})")
    factory, _ = MODELS[name]
    return factory().eval(), example_inputs(name)


__all__ = ["MODELS", "default", "get", "example_inputs", "LARGE"]

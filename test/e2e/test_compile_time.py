"""Compile-time structure (no timed assertions: the machine is shared, so only the work is checked).

- a compile exports the model once and runs no eager reference model;
- `torch-imports` holds all of torch's first-use imports, so `compile_seconds` does not hide any;
- calibration flushes subnormals without changing a single quantization parameter.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import torch

from mcu_mlir import frontend
from mcu_mlir.driver import compile as compile_model


def _tiny_cnn():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 3)).eval()


def test_compile_exports_once_and_runs_no_eager_model(tmp_path, monkeypatch):
    model = _tiny_cnn()
    exports, eager_calls = [], []
    real_export = torch.export.export

    def counting_export(*args, **kwargs):
        exports.append(1)
        return real_export(*args, **kwargs)

    monkeypatch.setattr(torch.export, "export", counting_export)
    handle = model.register_forward_pre_hook(lambda *_: eager_calls.append(1))
    try:
        result = compile_model(model, (torch.randn(1, 1, 6, 6),), backend="portable", emit="c",
                               calibration=4, output_dir=str(tmp_path))
    finally:
        handle.remove()
    assert len(exports) == 1
    # Export traces the module once (non-strict export calls forward with fake tensors);
    # nothing else may run the float model.
    assert len(eager_calls) <= 1
    assert (tmp_path / "model.c").exists() and result.report["compile_seconds"] >= 0
    assert "torch-imports" in result.report["timings"]


def test_preload_covers_every_torch_import_of_a_compile(tmp_path):
    # A fresh process: after preload_torch(), compiling imports no further torch/torchao module,
    # so the separately reported torch-imports figure hides nothing inside compile_seconds.
    script = textwrap.dedent(f"""
        import json, sys, warnings
        warnings.simplefilter("ignore")
        import torch
        from mcu_mlir import frontend, zoo
        from mcu_mlir.driver import compile as compile_model
        model, inputs = zoo.get("ds_cnn")
        first = frontend.preload_torch()
        again = frontend.preload_torch()
        loaded = set(sys.modules)
        compile_model(model, inputs, backend="portable", emit="c", calibration=2,
                      output_dir={str(tmp_path)!r})
        late = sorted(m for m in set(sys.modules) - loaded if m.split(".")[0] in ("torch", "torchao"))
        print(json.dumps({{"late": late, "first": first, "again": again}}))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["late"] == [], f"torch modules imported during the compile: {got['late']}"
    assert got["again"] < got["first"]


def test_flush_denormals_is_scoped():
    tiny = torch.tensor([1e-40])
    assert (tiny * 1.0).item() != 0.0
    with frontend.flush_denormals() as supported:
        if not supported:
            pytest.skip("this CPU cannot flush subnormals")
        assert (tiny * 1.0).item() == 0.0
    assert (tiny * 1.0).item() != 0.0


class _Decaying(torch.nn.Module):
    """Activations that become subnormal (x 1e-20 twice), then a normal-range path beside them."""

    def __init__(self):
        super().__init__()
        self.small = torch.nn.Linear(8, 8)
        self.big = torch.nn.Linear(8, 8)
        with torch.no_grad():
            self.small.weight.mul_(1e-20)
            self.small.bias.mul_(1e-39)      # subnormal bias too

    def forward(self, x):
        tiny = self.small(x * 1e-20)          # ~1e-40: subnormal
        return self.big(x) + tiny, torch.relu(tiny)


def _observed_qparams(model, example, flush: bool) -> list:
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    from mcu_mlir.frontend.quantize.quantizer import CmsisNNQuantizer
    gm = frontend.fold_batch_norm(frontend.export(model, example).module())
    prepared = prepare_pt2e(gm, CmsisNNQuantizer("int8"))
    samples = frontend.calibration_samples(4, example)
    with torch.no_grad():
        if flush:
            with frontend.flush_denormals():
                for s in samples:
                    prepared(*s)
        else:
            for s in samples:
                prepared(*s)
    qparams, extremes = [], []
    for name, mod in sorted(prepared.named_modules()):
        if hasattr(mod, "calculate_qparams") and hasattr(mod, "min_val"):
            scale, zp = mod.calculate_qparams()
            qparams.append((name, scale.numpy().tobytes(), zp.numpy().tobytes()))
            extremes.append(float(mod.max_val.abs().max()))
    return qparams, extremes


def test_flushing_subnormals_keeps_every_quantization_parameter():
    model, example = _Decaying().eval(), (torch.randn(1, 8),)
    with torch.no_grad():
        assert 0 < model.small(example[0] * 1e-20).abs().max().item() < 1e-37   # really subnormal
    plain, plain_extremes = _observed_qparams(model, example, flush=False)
    flushed, flushed_extremes = _observed_qparams(model, example, flush=True)
    # The case at hand: an observer saw only subnormals, which the flushed run sees as zeros.
    assert any(0 < e < 1e-37 for e in plain_extremes) and 0.0 in flushed_extremes
    assert len(plain) >= 4
    assert plain == flushed


class _SeqNet(torch.nn.Module):
    """Conv -> BatchNorm in a Sequential; `use` says how else the model touches the pair."""

    def __init__(self, use: str = "sequential"):
        super().__init__()
        torch.manual_seed(1)
        bn = torch.nn.BatchNorm2d(3)
        with torch.no_grad():   # BN statistics far from identity, so a wrong fold shows
            bn.running_mean.uniform_(-1, 1)
            bn.running_var.uniform_(0.2, 3)
            bn.weight.uniform_(0.5, 2)
            bn.bias.uniform_(-1, 1)
        self.seq = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3, padding=1), bn, torch.nn.ReLU())
        self.use = use

    def forward(self, x):
        y = self.seq(x)
        if self.use == "conv-alone":
            return y + self.seq[0](x)
        if self.use == "bn-alone":
            return y + self.seq[1](y)
        if self.use == "twice":
            return self.seq(y[:, :2])
        return y


@pytest.mark.parametrize("use,holds", [("sequential", True), ("twice", True),
                                       ("conv-alone", False), ("bn-alone", False)])
def test_sequential_fold_is_checked_after_export(use, holds):
    from mcu_mlir.frontend.graph.decompose import fold_sequential_batch_norms, sequential_folds_hold
    model = _SeqNet(use).eval()
    folded, folds = fold_sequential_batch_norms(model)
    assert list(folds) == ["seq.0"]
    assert isinstance(model.seq[1], torch.nn.BatchNorm2d)     # the user's model is untouched
    ep = frontend.export(folded, (torch.randn(1, 2, 5, 5),))
    assert sequential_folds_hold(ep.graph, folds) is holds


@pytest.mark.parametrize("use", ["sequential", "conv-alone"])
def test_folding_before_export_gives_the_same_tosa(use, monkeypatch):
    # Oracle: the same import with the BatchNorms left to the exported graph's folding.
    from mcu_mlir.frontend.graph import decompose
    example = (torch.randn(1, 2, 5, 5),)
    fast = frontend.import_model(_SeqNet(use).eval(), example, calibration=3)
    monkeypatch.setattr(decompose, "fold_sequential_batch_norms", lambda m: (m, {}))
    plain = frontend.import_model(_SeqNet(use).eval(), example, calibration=3)
    text = str(fast.module.operation.get_asm(enable_debug_info=True))
    assert text == str(plain.module.operation.get_asm(enable_debug_info=True))
    assert [o.scale for o in fast.outputs] == [o.scale for o in plain.outputs]

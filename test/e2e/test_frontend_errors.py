"""The frontend's user errors: they name the op, its PyTorch source line and the module path."""

from __future__ import annotations

import os
import textwrap
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from mcu_mlir.diagnostics import UserError  # noqa: E402
from mcu_mlir.frontend import calibration_samples, import_model, load_factory  # noqa: E402

HERE = os.path.basename(__file__)


class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return torch.prod(self.conv(x), 1)         # no integer lowering


class WithBody(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = Body()

    def forward(self, x):
        return self.body(x) + 1


class KthValue(nn.Module):
    def forward(self, x):
        return torch.kthvalue(x.flatten(1), 3).values


def _import(model, *inputs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return import_model(model, inputs, **kw)


def test_unsupported_op_names_op_line_and_module():
    with pytest.raises(UserError) as info:
        _import(WithBody().eval(), torch.randn(1, 3, 8, 8), calibration=2)
    msg = str(info.value)
    assert "aten.prod" in msg
    assert f"{HERE}:" in msg and "module 'body'" in msg
    line = int(msg.split(f"{HERE}:")[1].split()[0])
    assert "torch.prod" in open(__file__).read().splitlines()[line - 1]


class DivisorOverride(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(2, divisor_override=3)

    def forward(self, x):
        return self.pool(x)


def test_unsupported_variant_of_a_supported_op_is_named():
    with pytest.raises(UserError, match="divisor_override"):
        _import(DivisorOverride().eval(), torch.randn(1, 3, 8, 8), calibration=2)


def test_multi_output_op_is_named_not_getitem():
    with pytest.raises(UserError, match="aten.kthvalue"):
        _import(KthValue().eval(), torch.randn(1, 3, 4, 4), calibration=2)


class Blocks(nn.Module):
    def forward(self, x):
        torch._assert(x.shape[-1] % 4 == 0, "")        # timm's way: sizes it was not written for, no message
        return x * 2


def test_export_failure_names_the_model_line():
    with pytest.raises(UserError) as info:
        _import(Blocks().eval(), torch.randn(1, 3, 6, 6))
    msg = str(info.value)
    assert "torch.export failed: AssertionError" in msg
    line = int(msg.split(f"{HERE}:")[1].split(",")[0])
    assert "torch._assert" in open(__file__).read().splitlines()[line - 1]
    assert 'in `torch._assert(x.shape[-1] % 4 == 0, "")' in msg


class ValueBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3)

    def forward(self, x):
        y = self.conv(x)
        if y.sum() > 0:                                 # a branch on a value: no static graph
            return y * 2
        return y


def test_export_failure_is_one_sentence_at_the_model_line(capfd):
    """torch's data-dependent error: the reason and the model's line first, what to do next, and
    none of torch's graph dump (printed to stderr) or debugging advice (-v shows them)."""
    with pytest.raises(UserError) as info:
        _import(ValueBranch().eval(), torch.randn(1, 2, 6, 6))
    lines = str(info.value).splitlines()
    assert lines[0].startswith("torch.export failed: Could not guard on data-dependent expression"), lines
    line = int(lines[0].split(f"{HERE}:")[1].split(",")[0])
    assert "if y.sum() > 0" in open(__file__).read().splitlines()[line - 1]
    assert lines[0].endswith(", in `if y.sum() > 0:                                 # a branch on a value: no static graph`)")
    assert "torch.where" in lines[1] and lines[-1] == "(-v shows torch's whole message)" and len(lines) == 3
    assert "def forward" not in capfd.readouterr().err


def test_export_failure_shows_torchs_graph_dump_only_when_verbose(monkeypatch):
    from mcu_mlir import diagnostics
    monkeypatch.setattr(diagnostics, "verbose", True)
    with pytest.raises(UserError) as info:
        _import(ValueBranch().eval(), torch.randn(1, 2, 6, 6))
    lines = str(info.value).splitlines()
    assert lines[0].startswith("torch.export failed: Could not guard on data-dependent expression"), lines
    assert len(lines) > 3 and "(-v shows torch's whole message)" not in lines


def test_export_failure_inside_a_model_library_names_the_library_line(tmp_path, monkeypatch):
    """A model whose library code is what export cannot follow (asteroid's models stop inside
    asteroid): the innermost line outside torch, in the library's file, with its code."""
    library = tmp_path / "separation_lib.py"
    library.write_text(textwrap.dedent("""\
        import torch

        def pad_to_chunks(x, chunk):
            rest = int(x.abs().sum().item()) % chunk      # a size computed from the signal
            return torch.nn.functional.pad(x, (0, rest))
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    import separation_lib

    class Separator(nn.Module):
        def forward(self, x):
            return separation_lib.pad_to_chunks(x, 4) * 2

    with pytest.raises(UserError) as info:
        _import(Separator().eval(), torch.randn(1, 10))
    first = str(info.value).splitlines()[0]
    assert first.startswith("torch.export failed: "), first
    assert f"(at {library}:4, in `rest = int(x.abs().sum().item()) % chunk" in first, first


def test_training_mode_is_refused():
    with pytest.raises(UserError, match=r"training mode.*model.eval\(\)"):
        _import(WithBody(), torch.randn(1, 3, 8, 8))


@pytest.mark.parametrize("dtype", [torch.float64, torch.int8])
def test_unsupported_input_dtype(dtype):
    with pytest.raises(UserError, match=f"dtype {dtype}"):
        _import(WithBody().eval(), torch.ones(1, 3, 8, 8, dtype=dtype))


def test_integer_input_into_a_conv_says_what_integer_inputs_are():
    with pytest.raises(UserError, match=r"input 0 is torch.int32: integer inputs are indices"):
        _import(WithBody().eval(), torch.ones(1, 3, 8, 8, dtype=torch.int32))


def test_data_dependent_shape_is_refused():
    class Masked(nn.Module):
        def forward(self, x):
            return x[x > 0].sum().reshape(1)
    with pytest.raises(UserError):
        _import(Masked().eval(), torch.randn(1, 3, 4, 4), calibration=2)


def test_bad_quantize_option():
    with pytest.raises(UserError, match="int8, int16 or none"):
        _import(WithBody().eval(), torch.randn(1, 3, 8, 8), quantize="int4")


def test_load_factory(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(textwrap.dedent("""
        import torch
        def make():
            return torch.nn.Linear(4, 2).eval()
        def broken():
            raise RuntimeError("boom")
        def not_a_module():
            return 3
    """))
    assert isinstance(load_factory(f"{f}:make"), torch.nn.Linear)
    for spec, pattern in [(f"{f}:missing", "has no 'missing'"), (f"{f}:broken", "RuntimeError: boom"),
                          (f"{f}:not_a_module", "not a torch.nn.Module"),
                          (f"{tmp_path}/nope.py:make", "no such file"), ("justaname", "FILE.py:FACTORY")]:
        with pytest.raises(UserError, match=pattern):
            load_factory(spec)


def test_zoo_factories_load_by_path():
    from mcu_mlir import zoo
    path = os.path.join(os.path.dirname(zoo.__file__), "mlperf_tiny.py")
    model = load_factory(f"{path}:ds_cnn")
    assert not model.training


def test_calibration_sources(tmp_path):
    example = (torch.randn(1, 3, 4, 4),)
    with pytest.warns(UserWarning, match="random"):
        assert len(calibration_samples(None, example)) > 1
    assert len(calibration_samples(5, example)) == 5
    data = np.random.default_rng(0).normal(size=(7, 1, 3, 4, 4)).astype(np.float32)
    np.savez(tmp_path / "cal.npz", input0=data)
    samples = calibration_samples(str(tmp_path / "cal.npz"), example)
    assert len(samples) == 7 and torch.equal(samples[3][0], torch.from_numpy(data[3]))
    assert len(calibration_samples([x for x in data], example)) == 7
    np.savez(tmp_path / "bad.npz", input0=np.zeros((2, 5)))
    with pytest.raises(UserError, match="shape"):
        calibration_samples(str(tmp_path / "bad.npz"), example)


def test_calibration_data_changes_the_scales():
    model = nn.Sequential(nn.Linear(4, 4)).eval()
    x = torch.randn(1, 4)
    small = _import(model, x, calibration=[(x * 0.1,)])
    large = _import(model, x, calibration=[(x * 10,)])
    assert large.inputs[0].scale > 50 * small.inputs[0].scale

"""mcu-opt behaviour that lit cannot provoke: internal errors and stdin repro files."""

import dataclasses

import pytest

from mcu_mlir.passes import base, registry
from mcu_mlir.tools import mcu_opt

SRC = "func.func @f(%a: tensor<2xi8>) -> tensor<2xi8> {\n  return %a : tensor<2xi8>\n}\n"


@dataclasses.dataclass(frozen=True)
class _Crashing(base.ModulePass):
    """Fails the way a compiler bug does."""

    NAME = "mcu-test-crash"

    def run(self, module):
        raise RuntimeError("boom")


def _use_pass(monkeypatch, cls):
    """Registers `cls` under its NAME for the test's duration."""
    monkeypatch.setitem(registry.PASSES, cls.NAME, "unused:Unused")
    monkeypatch.setattr(registry, "get_pass", lambda name: cls if name == cls.NAME else
                        registry._load(registry.PASSES, name))


@pytest.fixture
def crashing_pass(monkeypatch):
    _use_pass(monkeypatch, _Crashing)


@dataclasses.dataclass(frozen=True)
class _Breaking(base.ModulePass):
    """Leaves IR that does not verify (a use before its definition), the way a pass's bug can."""

    NAME = "mcu-test-break"

    def run(self, module):
        from mcu_mlir._mlir import ir
        func = module.regions[0].blocks[0].operations[0]
        block = func.regions[0].blocks[0]
        ret = block.operations[len(block.operations) - 1]
        arg = block.arguments[0]
        with ir.InsertionPoint(ret):
            neg = ir.Operation.create("tosa.negate", results=[arg.type], operands=[arg, _zp(), _zp()])
            ret.operands[0] = neg.results[0]
        ret.move_before(neg)


def _zp():
    from mcu_mlir._mlir import ir
    i8 = ir.IntegerType.get_signless(8)
    t = ir.RankedTensorType.get([1], i8)
    return ir.Operation.create("tosa.const", results=[t], attributes={
        "values": ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(i8, 0))}).results[0]


@pytest.fixture
def breaking_pass(monkeypatch):
    _use_pass(monkeypatch, _Breaking)


def test_invalid_ir_after_a_pass_is_an_internal_error(tmp_path, capsys, breaking_pass):
    """Not the input's fault: the driver names the pass and prints a repro (torchvision's Swin V2 once
    met such a bug as a bare verifier message)."""
    src = tmp_path / "in.mlir"
    src.write_text(SRC)
    rc = mcu_opt.main([str(src), "--mcu-test-break"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "internal compiler error: RuntimeError: pass 'mcu-test-break' left IR that does not verify" in err
    assert f"mcu-opt {src} --mcu-test-break" in err


def test_internal_error_prints_repro_for_a_file(tmp_path, capsys, crashing_pass):
    src = tmp_path / "in.mlir"
    src.write_text(SRC)
    rc = mcu_opt.main([str(src), "--mcu-test-crash"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "internal compiler error: RuntimeError: boom" in err
    assert f"mcu-opt {src} --mcu-test-crash" in err


def test_internal_error_on_stdin_saves_the_input(monkeypatch, capsys, crashing_pass):
    import io
    monkeypatch.setattr("sys.stdin", io.StringIO(SRC))
    rc = mcu_opt.main(["-", "--mcu-test-crash"])
    err = capsys.readouterr().err
    assert rc == 2
    saved = err.split("Reproduce it with:")[1].split()[1]
    assert open(saved).read() == SRC


def test_user_error_has_no_traceback(tmp_path, capsys):
    src = tmp_path / "bad.mlir"
    src.write_text("func.func @f(%a: tensor<2xi8>) -> tensor<2xi8> {\n  return %b : tensor<2xi8>\n}\n")
    assert mcu_opt.main([str(src)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{src}:2:")
    assert "Traceback" not in err

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


@pytest.fixture
def crashing_pass(monkeypatch):
    monkeypatch.setitem(registry.PASSES, _Crashing.NAME, "unused:Unused")
    monkeypatch.setattr(registry, "get_pass", lambda name: _Crashing if name == _Crashing.NAME else
                        registry._load(registry.PASSES, name))


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

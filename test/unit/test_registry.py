"""The pass registry: every name loads, matches its pass, and the generated docs are current."""

import dataclasses
import os
import subprocess
import sys

import pytest

from mcu_mlir.passes import base, registry

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("name", sorted(registry.PASSES))
def test_registered_name_matches_pass(name):
    cls = registry.get_pass(name)
    assert issubclass(cls, base.ModulePass)
    assert cls.NAME == name
    assert name.startswith("mcu-")
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
    assert cls.summary(), f"{name} has no docstring"
    cls()  # every option has a default


@pytest.mark.parametrize("name", sorted(registry.PASSES))
def test_options_round_trip(name):
    cls = registry.get_pass(name)
    default = cls()
    assert cls.from_options(default.option_text()) == default


@pytest.mark.parametrize("name", sorted(registry.PIPELINES))
def test_pipeline_expands(name):
    from mcu_mlir.pipeline import parse_pipeline, pipeline_text, steps_of
    cls = registry.get_pipeline(name)
    default = cls()
    assert cls.from_options(default.option_text()) == default
    steps = steps_of(default.passes())
    assert steps, f"pipeline {name} is empty"
    assert [s.name for s in parse_pipeline(pipeline_text(default.passes()))] == [s.name for s in steps]


def test_pass_docs_are_current():
    rc = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_pass_docs.py"), "--check"],
                        capture_output=True, text=True)
    assert rc.returncode == 0, rc.stderr


def test_unknown_option_is_a_user_error():
    cls = registry.get_pass("mcu-verify-static-shapes")
    with pytest.raises(base.OptionError, match="has no option 'nope'"):
        cls.from_options("nope=1")


def test_docs_check_names_a_pass_without_a_lit_test(monkeypatch):
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import gen_pass_docs
    assert gen_pass_docs.untested() == []
    monkeypatch.setitem(registry.PASSES, "mcu-never-tested", "verify_static_shapes:VerifyStaticShapes")
    assert gen_pass_docs.untested() == ["mcu-never-tested"]

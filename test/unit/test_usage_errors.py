"""A bad flag or flag value is a user error like any other: exit code 1 with argparse's message
naming the flag (argparse itself exits 2), while --help and --version still exit 0."""

import pytest

from mcu_mlir.tools import mcu_compile, mcu_opt, mcu_run


@pytest.mark.parametrize("main, argv, flag", [
    (mcu_compile.main, ["m.py:f", "-o", "out", "--target", "cortex-m99"], "--target"),
    (mcu_compile.main, ["m.py:f", "-o", "out", "--weights", "int2"], "--weights"),
    (mcu_compile.main, ["m.py:f", "-o", "out", "--max-overhead", "-3"], "--max-overhead"),
    (mcu_run.main, ["out", "--target", "cortex-m99"], "--target"),
    (mcu_opt.main, ["x.mlir", "-o"], "-o"),
])
def test_a_bad_flag_value_exits_1(main, argv, flag, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert f"argument {flag}" in err and "Traceback" not in err, err


@pytest.mark.parametrize("main", [mcu_compile.main, mcu_opt.main, mcu_run.main])
def test_help_exits_0(main, capsys):
    assert main(["--help"]) == 0
    assert "usage:" in capsys.readouterr().out

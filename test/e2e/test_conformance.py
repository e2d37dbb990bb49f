"""A fast subset of the TOSA conformance tests (tools/tosa_conformance.py runs them all).

Tests written by tosa_verif_build_tests, not by this project: each positive test either compiles to
C whose outputs equal tosa_reference_model's bit for bit (built with AddressSanitizer and
UndefinedBehaviorSanitizer, so an out-of-bounds read fails instead of passing by luck; a sample also
as Cortex-M55 and Cortex-M4 firmware under QEMU), or is
refused at compile time with an error naming the op. Each ERROR_IF test is rejected.
"""

import shutil

import pytest

pytest.importorskip("torch")

from mcu_mlir import conformance  # noqa: E402
from mcu_mlir.diagnostics import UserError  # noqa: E402

OPS = ["add", "mul", "sub", "rescale", "conv2d", "depthwise_conv2d", "transpose_conv2d", "avg_pool2d",
       "max_pool2d", "matmul", "clamp", "table", "pad", "concat", "transpose", "reduce_sum", "resize",
       "gather", "scatter", "select", "argmax", "cast", "tile", "reverse", "slice", "conv3d",
       "arithmetic_right_shift"]
PER_OP = 2
# ERROR_IF tests the flatbuffer reader hides: tosa-opt drops a surplus operand or result while
# deserializing, so the program that reaches the compiler is valid.
HIDDEN_BY_DESERIALIZATION = ("WrongInputList", "WrongOutputList")


def _need_tools():
    if shutil.which("cc") is None:
        pytest.skip("cc not installed: the tests build the generated C for the host")
    for tool in ("tosa_verif_build_tests", "tosa_reference_model", "tosa-opt"):
        try:
            conformance._tool(tool)
        except UserError as err:
            pytest.skip(str(err))


@pytest.fixture(scope="module")
def positive(tmp_path_factory):
    _need_tools()
    return conformance.first_per_op(conformance.generate(tmp_path_factory.mktemp("tosa-tests"), ops=OPS), PER_OP)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("tosa-runs")


def test_subset_covers_every_chosen_op(positive):
    assert {conformance.op_of(t) for t in positive} >= set(OPS) - {"arithmetic_right_shift"}


def test_positive_tests_are_exact_or_refused_by_name(positive, work):
    outcomes = [conformance.run_test(t, work, sanitize=True) for t in positive]
    bad = [o for o in outcomes if o.status not in ("exact", "refused", "skipped")]
    assert not bad, "\n".join(f"{o.status}: {o.test}: {o.detail}" for o in bad)
    for o in outcomes:
        if o.status == "refused":
            assert "error:" in o.detail and f"tosa.{o.op}" in o.detail, o.detail
    exact_ops = {o.op for o in outcomes if o.status == "exact"}
    assert exact_ops >= {conformance.op_of(t) for t in positive}
    assert sum(o.status == "exact" for o in outcomes) >= 0.9 * len(outcomes)


def test_error_if_tests_are_rejected(tmp_path):
    _need_tools()
    tests = conformance.generate(tmp_path / "tests", ops=["add", "rescale", "pad", "transpose", "conv2d"],
                                 negative=True)
    tests = [t for t in tests if not any(k in t.name for k in HIDDEN_BY_DESERIALIZATION)]
    assert len(tests) >= 10
    outcomes = [conformance.run_negative_test(t, tmp_path / "runs") for t in tests]
    accepted = [o for o in outcomes if o.status != "rejected"]
    assert not accepted, "\n".join(f"{o.status}: {o.test}: {o.detail}" for o in accepted)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m4"])
def test_sample_on_cortex_m_under_qemu(positive, work, target):
    """One test per op of a sample, as firmware for the core (its own CMake build) under QEMU."""
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm", "cmake"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed: needed to run the sample under QEMU")
    sample = ["add", "conv2d", "depthwise_conv2d", "rescale", "table", "matmul", "avg_pool2d", "transpose_conv2d"]
    tests = [t for t in conformance.first_per_op(positive, 1) if conformance.op_of(t) in sample]
    assert len(tests) == len(sample)
    outcomes = [conformance.run_test(t, work / target, target=target) for t in tests]
    bad = [o for o in outcomes if o.status != "exact"]
    assert not bad, "\n".join(f"{o.status}: {o.test}: {o.detail}" for o in bad)

"""Every conversion pattern has a lit test: its root TOSA op appears in a Conversion test's input,
and the fused units and portable kernels it creates appear in their CHECK lines."""

from pathlib import Path

from mcu_mlir.dialects import cmsisnn, portable
from mcu_mlir.passes.conversion.convert_tosa_to_cmsisnn import patterns

CONVERSION = Path(__file__).resolve().parents[1] / "Conversion"


def _texts():
    code, checks = [], []
    for path in sorted(CONVERSION.glob("*.mlir")):
        for line in path.read_text().splitlines():
            (checks if line.lstrip().startswith("//") else code).append(line)
    # A test that generates its input (%PYTHON %s | mcu-opt ...): its CHECK comments count.
    for path in sorted(CONVERSION.glob("*.py")):
        checks += [line for line in path.read_text().splitlines() if line.lstrip().startswith("#")]
    return "\n".join(code), "\n".join(checks)


def test_every_pattern_root_is_converted_in_a_lit_test():
    code, _ = _texts()
    missing = sorted({p.name for p in patterns() if f"{p.root.OPERATION_NAME} " not in code
                      and f'"{p.root.OPERATION_NAME}"' not in code})
    assert not missing, f"patterns whose TOSA op no Conversion lit test converts: {missing}"


def test_every_kernel_op_is_checked_in_a_lit_test():
    _, checks = _texts()
    ops = [op for op in cmsisnn.CmsisNN.operations + portable.Portable.operations]
    missing = sorted(op.OPERATION_NAME for op in ops if f'"{op.OPERATION_NAME}"' not in checks)
    assert not missing, f"kernel ops no Conversion lit test CHECKs: {missing}"

"""The `mcu.*` attributes: declared in one module, checked by its verifier."""

import re
from pathlib import Path

from mcu_mlir._mlir import ir
from mcu_mlir.ir import attributes

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "mcu_mlir"


def test_code_names_attributes_only_through_the_declarations():
    spelled = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "attributes.py" and path.parent.name == "ir":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"[\"']mcu\.[a-z_]+[\"']", line):
                spelled.append(f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}")
    assert not spelled, "use the constants of mcu_mlir/ir/attributes.py:\n" + "\n".join(spelled)


def test_verifier_reports_undeclared_and_ill_kinded_attributes():
    with ir.Context():
        module = ir.Module.parse(
            'module attributes {mcu.target = "cortex-m4", mcu.arena_bytes = "big", mcu.dead} {\n'
            '  func.func @f(%a: tensor<1xi8> {mcu.scale = 0.5 : f64, mcu.zero_point = 3 : i64}) -> tensor<1xi8> {\n'
            '    return %a : tensor<1xi8>\n  }\n}')
        problems = sorted(message for _, message in attributes.verify(module.operation))
    assert problems == ["'mcu.arena_bytes' must be integer, got \"big\" (builtin.module)",
                        "'mcu.dead' is not a declared mcu attribute (builtin.module)"]

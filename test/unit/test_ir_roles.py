"""ir/roles: each role a set of TOSA op classes, consistent with the others; ir/values' readers."""

from __future__ import annotations

from mcu_mlir._mlir import ir, new_context, tosa
from mcu_mlir.ir import roles, values
from mcu_mlir.ir.ops import isa, op_class

ROLES = {name: getattr(roles, name) for name in dir(roles) if name.isupper()}


def test_every_role_is_a_set_of_tosa_op_classes():
    assert ROLES
    for name, role in ROLES.items():
        assert isinstance(role, frozenset) and role, name
        for cls in role:
            assert issubclass(cls, ir.OpView) and cls.OPERATION_NAME.startswith("tosa."), (name, cls)


def test_roles_agree_with_each_other():
    assert roles.FLOAT_ONLY <= roles.ELEMENTWISE
    assert not roles.INTEGER_ELEMENTWISE & roles.FLOAT_ONLY
    assert not roles.ELEMENTWISE & roles.LAYOUT_SENSITIVE
    assert roles.ACCUMULATING <= roles.LAYOUT_SENSITIVE
    assert roles.WINDOWED <= roles.LAYOUT_SENSITIVE
    assert roles.REDUCTION <= roles.AXIS_ATTRIBUTE


TEXT = """
func.func @f(%x: tensor<1x3x4xi8>) -> tensor<3x4xi8> {
  %s = tosa.const_shape {values = dense<[3, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %r = tosa.reshape %x, %s : (tensor<1x3x4xi8>, !tosa.shape<2>) -> tensor<3x4xi8>
  return %r : tensor<3x4xi8>
}
"""


def test_values_and_op_classes_of_parsed_ir():
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(TEXT)
        fn = module.body.operations[0]
        arg = fn.regions[0].blocks[0].arguments[0]
        reshape = values.users(arg)[0]
        assert isa(reshape, tosa.ReshapeOp) and op_class(reshape) is tosa.ReshapeOp
        assert op_class(reshape.operation) is tosa.ReshapeOp and op_class(arg.owner) is None
        assert values.producer(arg) is None and isa(values.producer(reshape.operands[1]), *roles.CONSTANT)
        out = reshape.results[0]
        assert values.shape(arg) == [1, 3, 4] and values.elem(arg) == "i8"
        assert values.numel(out) == 12 and values.nbytes(out) == 12 and values.rank(out) == 2
        assert values.static_shape(reshape.operands[1]) is None and values.element_name(out) == "i8"

"""The kernel dialects and the C emitter's table agree: every op has one emit function."""

from mcu_mlir.dialects import cmsisnn, portable
from mcu_mlir.emission.emit_c import EMITTERS


def _ops(dialect):
    return [op for op in dialect.operations if op is not cmsisnn.ReshapeOp]


def test_every_kernel_op_has_an_emitter():
    missing = [op.OPERATION_NAME for op in _ops(cmsisnn.CmsisNN) + _ops(portable.Portable) if op not in EMITTERS]
    assert not missing, f"kernel ops with no C emitter: {missing}"


def test_the_emitter_knows_no_other_ops():
    known = set(_ops(cmsisnn.CmsisNN) + _ops(portable.Portable))
    assert set(EMITTERS) <= known


def test_every_portable_op_names_its_c_kernel():
    assert all(op.KERNEL for op in _ops(portable.Portable))


def test_every_kernel_op_states_its_scratch_and_macs():
    # The base class raises for both: a kernel op that does not say is a bug found here, not a
    # silent 0 in the arena or the report.
    from mcu_mlir.dialects.kernel_op import KernelOp
    every = list(cmsisnn.CmsisNN.operations) + list(portable.Portable.operations)
    silent = [op.OPERATION_NAME for op in every
              if op.scratch_bytes is KernelOp.scratch_bytes or op.macs is KernelOp.macs]
    assert not silent, f"kernel ops that do not state their scratch size or MACs: {silent}"

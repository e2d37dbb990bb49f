"""report.json's `interior_transposes`: data-moving transposes other than the layout conversions of
model inputs and outputs (through reshapes and slices)."""

from __future__ import annotations

from mcu_mlir import _mlir
from mcu_mlir._mlir import ir
from mcu_mlir.dialects import load_all
from mcu_mlir.pipeline import run_pipeline
from mcu_mlir.passes.analysis.transposes import count_data_moving_transposes, count_transpose_kernels

TEXT = """
func.func @main(%arg0: tensor<1x3x8x8xi8>) -> tensor<1x192xi8> {
  %s4 = tosa.const_shape {values = dense<[1, 3, 7, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %z4 = tosa.const_shape {values = dense<0> : tensor<4xindex>} : () -> !tosa.shape<4>
  %cut = tosa.slice %arg0, %z4, %s4 : (tensor<1x3x8x8xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x3x7x8xi8>
  %in = tosa.transpose %cut {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x3x7x8xi8>) -> tensor<1x7x8x3xi8>
  %mid = tosa.transpose %in {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x7x8x3xi8>) -> tensor<1x8x7x3xi8>
  %pad = tosa.const_shape {values = dense<[0, 0, 0, 0, 0, 1, 0, 0]> : tensor<8xindex>} : () -> !tosa.shape<8>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %p = tosa.pad %mid, %pad, %zp : (tensor<1x8x7x3xi8>, !tosa.shape<8>, tensor<1xi8>) -> tensor<1x8x8x3xi8>
  %out = tosa.transpose %p {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x8x8x3xi8>) -> tensor<1x3x8x8xi8>
  %s2 = tosa.const_shape {values = dense<[1, 192]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %flat = tosa.reshape %out, %s2 : (tensor<1x3x8x8xi8>, !tosa.shape<2>) -> tensor<1x192xi8>
  return %flat : tensor<1x192xi8>
}
"""


def test_interior_leaves_out_the_boundary_conversions():
    module = ir.Module.parse(TEXT, ir.Context())
    assert count_data_moving_transposes(module) == 3
    assert count_data_moving_transposes(module, interior_only=True) == 1


def test_kernel_count_leaves_out_the_boundary_conversions_through_kernel_views():
    """After conversion the boundary's views are a portable.slice and a cmsisnn.reshape."""
    ctx = _mlir.new_context()
    load_all(ctx)
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(TEXT)
        run_pipeline(module, "mcu-attach-target,mcu-convert-tosa-to-cmsisnn")
        kernels = [op.operation.name for op in module.body.operations[0].regions[0].blocks[0].operations]
        assert {"portable.slice", "cmsisnn.reshape"} <= set(kernels)
        assert count_transpose_kernels(module) == 3
        assert count_transpose_kernels(module, interior_only=True) == 1

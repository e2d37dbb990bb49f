// RUN: mcu-opt %s --split-input-file --mcu-fold-transposes --verify-diagnostics

func.func @dynamic_transpose(%arg0: tensor<1x?x4x2xf32>) -> tensor<1x4x2x?xf32> {
  // expected-error @below {{'tosa.transpose' on tensor<1x?x4x2xf32>: layout folding needs static shapes}}
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x?x4x2xf32>) -> tensor<1x4x2x?xf32>
  return %0 : tensor<1x4x2x?xf32>
}

// -----

func.func @dynamic_reshape(%arg0: tensor<?x8xf32>) -> tensor<?x2x4xf32> {
  %s = tosa.const_shape {values = dense<[-1, 2, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  // expected-error @below {{'tosa.reshape' on tensor<?x8xf32>: layout folding needs static shapes}}
  %0 = tosa.reshape %arg0, %s : (tensor<?x8xf32>, !tosa.shape<3>) -> tensor<?x2x4xf32>
  return %0 : tensor<?x2x4xf32>
}

// RUN: mcu-opt %s --split-input-file --verify-diagnostics --mcu-verify-tosa-spec
// RUN: not mcu-opt %s --split-input-file --mcu-verify-tosa-spec 2>&1 | FileCheck %s

// A RESIZE that changes the batch (a TOSA ERROR_IF that neither the op verifier nor tosa-validate
// checks) is refused: the kernel would read batches that do not exist.
func.func @resize$batch(%arg0: tensor<1x1x31x32xi8>) -> tensor<5x4x271x32xi8> {
  %0 = tosa.const_shape {values = dense<[16, 1, 9, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %1 = tosa.const_shape {values = dense<0> : tensor<2xindex>} : () -> !tosa.shape<2>
  %2 = tosa.const_shape {values = dense<[3, 0]> : tensor<2xindex>} : () -> !tosa.shape<2>
  // expected-error @below {{'tosa.resize' changes the batch dimension (1 -> 5); the specification requires it unchanged}}
  %3 = tosa.resize %arg0, %0, %1, %2 {mode = NEAREST_NEIGHBOR} : (tensor<1x1x31x32xi8>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<5x4x271x32xi8>
  return %3 : tensor<5x4x271x32xi8>
}
// CHECK: changes the batch dimension (1 -> 5)

// -----

func.func @resize$channels(%arg0: tensor<1x4x4x8xi8>) -> tensor<1x8x8x4xi8> {
  %0 = tosa.const_shape {values = dense<[2, 1, 2, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %1 = tosa.const_shape {values = dense<0> : tensor<2xindex>} : () -> !tosa.shape<2>
  %2 = tosa.const_shape {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
  // expected-error @below {{'tosa.resize' changes the channel dimension (8 -> 4)}}
  %3 = tosa.resize %arg0, %0, %1, %2 {mode = NEAREST_NEIGHBOR} : (tensor<1x4x4x8xi8>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x8x8x4xi8>
  return %3 : tensor<1x8x8x4xi8>
}
// CHECK: changes the channel dimension (8 -> 4)

// -----

// A valid RESIZE passes unchanged.
// CHECK-LABEL: func.func @resize$valid
// CHECK: tosa.resize
func.func @resize$valid(%arg0: tensor<1x4x4x8xi8>) -> tensor<1x8x8x8xi8> {
  %0 = tosa.const_shape {values = dense<[2, 1, 2, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %1 = tosa.const_shape {values = dense<0> : tensor<2xindex>} : () -> !tosa.shape<2>
  %2 = tosa.const_shape {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
  %3 = tosa.resize %arg0, %0, %1, %2 {mode = NEAREST_NEIGHBOR} : (tensor<1x4x4x8xi8>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x8x8x8xi8>
  return %3 : tensor<1x8x8x8xi8>
}

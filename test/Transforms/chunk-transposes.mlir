// RUN: mcu-opt %s --split-input-file --mcu-chunk-transposes | FileCheck %s

// ShuffleNet's channel shuffle then chunk(2): one transpose that writes the halves one after the
// other ([2, H*W, C/4, 2]), each half a slice of the outer dim (contiguous: a view).
// CHECK-LABEL: func.func @shuffle_then_chunk
// CHECK: %[[T:.*]] = tosa.transpose %{{.*}} {perms = array<i32: 2, 0, 3, 1>} : (tensor<9x2x2x3xi8>) -> tensor<2x9x3x2xi8>
// CHECK: %[[C:.*]] = tosa.reshape %[[T]], %{{.*}} : (tensor<2x9x3x2xi8>, !tosa.shape<5>) -> tensor<2x1x3x3x6xi8>
// CHECK: tosa.slice %[[C]], {{.*}} -> tensor<1x1x3x3x6xi8>
// CHECK: tosa.slice %[[C]], {{.*}} -> tensor<1x1x3x3x6xi8>
// CHECK-NOT: tosa.transpose
func.func @shuffle_then_chunk(%arg0: tensor<1x3x3x12xi8>) -> (tensor<1x3x3x6xi8>, tensor<1x3x3x6xi8>) {
  %s5 = tosa.const_shape {values = dense<[1, 3, 3, 2, 6]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %s4 = tosa.const_shape {values = dense<[1, 3, 3, 12]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %arg0, %s5 : (tensor<1x3x3x12xi8>, !tosa.shape<5>) -> tensor<1x3x3x2x6xi8>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 1, 2, 4, 3>} : (tensor<1x3x3x2x6xi8>) -> tensor<1x3x3x6x2xi8>
  %2 = tosa.reshape %1, %s4 : (tensor<1x3x3x6x2xi8>, !tosa.shape<4>) -> tensor<1x3x3x12xi8>
  %lo = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %hi = tosa.const_shape {values = dense<[0, 0, 0, 6]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 3, 3, 6]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %a = tosa.slice %2, %lo, %size : (tensor<1x3x3x12xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x3x3x6xi8>
  %b = tosa.slice %2, %hi, %size : (tensor<1x3x3x12xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x3x3x6xi8>
  return %a, %b : tensor<1x3x3x6xi8>, tensor<1x3x3x6xi8>
}

// -----

// Slices of unequal parts are not chunks: left alone.
// CHECK-LABEL: func.func @unequal_parts
// CHECK: tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>}
// CHECK-COUNT-2: tosa.slice
func.func @unequal_parts(%arg0: tensor<4x2x6xi8>) -> (tensor<4x2x2xi8>, tensor<4x4x2xi8>) {
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 1>} : (tensor<4x2x6xi8>) -> tensor<4x6x2xi8>
  %lo = tosa.const_shape {values = dense<[0, 0, 0]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %hi = tosa.const_shape {values = dense<[0, 2, 0]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s2 = tosa.const_shape {values = dense<[4, 2, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4 = tosa.const_shape {values = dense<[4, 4, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %a = tosa.slice %0, %lo, %s2 : (tensor<4x6x2xi8>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<4x2x2xi8>
  %b = tosa.slice %0, %hi, %s4 : (tensor<4x6x2xi8>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<4x4x2xi8>
  return %a, %b : tensor<4x2x2xi8>, tensor<4x4x2xi8>
}

// -----

// Chunks of a tensor no transpose produced would need a transpose to become contiguous: left alone.
// CHECK-LABEL: func.func @no_transpose
// CHECK-NOT: tosa.transpose
// CHECK-COUNT-2: tosa.slice %arg0
func.func @no_transpose(%arg0: tensor<1x3x3x4xi8>) -> (tensor<1x3x3x2xi8>, tensor<1x3x3x2xi8>) {
  %lo = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %hi = tosa.const_shape {values = dense<[0, 0, 0, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 3, 3, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %a = tosa.slice %arg0, %lo, %size : (tensor<1x3x3x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x3x3x2xi8>
  %b = tosa.slice %arg0, %hi, %size : (tensor<1x3x3x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x3x3x2xi8>
  return %a, %b : tensor<1x3x3x2xi8>, tensor<1x3x3x2xi8>
}

// -----

// The first chunk is read before the second chunk is sliced (Swin V2's window attention): the new
// transpose goes where the chain was, before every reader.
// CHECK-LABEL: func.func @chunk_read_before_next_slice
// CHECK: tosa.transpose %{{.*}} {perms = array<i32: 2, 0, 3, 1>}
// CHECK: %[[C:.*]] = tosa.reshape
// CHECK: tosa.slice %[[C]]
// CHECK: tosa.slice %[[C]]
// CHECK: %[[A:.*]] = tosa.reshape
// CHECK-NEXT: tosa.abs %[[A]]
// CHECK-NOT: tosa.transpose
func.func @chunk_read_before_next_slice(%arg0: tensor<1x3x3x12xi8>) -> (tensor<1x3x3x6xi8>, tensor<1x3x3x6xi8>) {
  %s5 = tosa.const_shape {values = dense<[1, 3, 3, 2, 6]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %s4 = tosa.const_shape {values = dense<[1, 3, 3, 12]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %arg0, %s5 : (tensor<1x3x3x12xi8>, !tosa.shape<5>) -> tensor<1x3x3x2x6xi8>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 1, 2, 4, 3>} : (tensor<1x3x3x2x6xi8>) -> tensor<1x3x3x6x2xi8>
  %2 = tosa.reshape %1, %s4 : (tensor<1x3x3x6x2xi8>, !tosa.shape<4>) -> tensor<1x3x3x12xi8>
  %lo = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 3, 3, 6]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %a = tosa.slice %2, %lo, %size : (tensor<1x3x3x12xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x3x3x6xi8>
  %abs = tosa.abs %a : (tensor<1x3x3x6xi8>) -> tensor<1x3x3x6xi8>
  %hi = tosa.const_shape {values = dense<[0, 0, 0, 6]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %b = tosa.slice %2, %hi, %size : (tensor<1x3x3x12xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x3x3x6xi8>
  return %abs, %b : tensor<1x3x3x6xi8>, tensor<1x3x3x6xi8>
}

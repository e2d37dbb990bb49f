// RUN: mcu-opt %s --split-input-file --verify-diagnostics --mcu-attach-target --mcu-convert-tosa-to-cmsisnn

func.func @float$no_kernel(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'tosa.sigmoid' has no CMSIS-NN or portable kernel}}
  %0 = tosa.sigmoid %arg0 : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @add$float(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'tosa.add' on f32 has no kernel (integer types only)}}
  %0 = tosa.add %arg0, %arg0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @conv$int16_weights(%arg0: tensor<1x4x4x2xi16>, %w: tensor<2x1x1x2xi16>) -> tensor<1x4x4x2xi48> {
  %b = "tosa.const"() {values = dense<0> : tensor<2xi48>} : () -> tensor<2xi48>
  %zi = "tosa.const"() {values = dense<0> : tensor<1xi16>} : () -> tensor<1xi16>
  // expected-error @below {{'tosa.conv2d' on i16 x i16 has no kernel (int8 or int16 activations with int8 weights, or int8 activations with int4 weights)}}
  %0 = tosa.conv2d %arg0, %w, %b, %zi, %zi {acc_type = i48, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi16>, tensor<2x1x1x2xi16>, tensor<2xi48>, tensor<1xi16>, tensor<1xi16>) -> tensor<1x4x4x2xi48>
  return %0 : tensor<1x4x4x2xi48>
}

// -----

func.func @conv$weights_not_constant(%arg0: tensor<1x4x4x2xi8>, %w: tensor<2x1x1x2xi8>) -> tensor<1x4x4x2xi32> {
  %b = "tosa.const"() {values = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %z = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  // expected-error @below {{'tosa.conv2d' needs constant weights}}
  %0 = tosa.conv2d %arg0, %w, %b, %z, %z {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  return %0 : tensor<1x4x4x2xi32>
}

// -----

func.func @depthwise$zero_point_not_constant(%arg0: tensor<1x4x4x2xi8>, %z: tensor<1xi8>) -> tensor<1x4x4x2xi32> {
  %w = "tosa.const"() {values = dense<1> : tensor<1x1x2x1xi8>} : () -> tensor<1x1x2x1xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %wz = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  // expected-error @below {{'tosa.depthwise_conv2d' needs constant zero points}}
  %0 = tosa.depthwise_conv2d %arg0, %w, %b, %z, %wz {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<1x1x2x1xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  return %0 : tensor<1x4x4x2xi32>
}

// -----

func.func @conv$bias_not_constant(%arg0: tensor<1x4x4x2xi8>, %b: tensor<2xi32>) -> tensor<1x4x4x2xi32> {
  %w = "tosa.const"() {values = dense<1> : tensor<2x1x1x2xi8>} : () -> tensor<2x1x1x2xi8>
  %z = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  // expected-error @below {{'tosa.conv2d' needs a constant bias}}
  %0 = tosa.conv2d %arg0, %w, %b, %z, %z {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  return %0 : tensor<1x4x4x2xi32>
}

// -----

func.func @transpose_conv$weights_not_constant(%arg0: tensor<1x2x2x2xi8>, %w: tensor<2x1x1x2xi8>) -> tensor<1x2x2x2xi32> {
  %b = "tosa.const"() {values = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %z = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  // expected-error @below {{'tosa.transpose_conv2d' needs constant weights and bias}}
  %0 = tosa.transpose_conv2d %arg0, %w, %b, %z, %z {acc_type = i32, out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x2x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2x2xi32>
  return %0 : tensor<1x2x2x2xi32>
}

// -----

func.func @reshape$float(%arg0: tensor<2x2xf32>) -> tensor<4xf32> {
  %s = tosa.const_shape {values = dense<[4]> : tensor<1xindex>} : () -> !tosa.shape<1>
  // expected-error @below {{'tosa.reshape' on f32 has no kernel (integer types only)}}
  %0 = tosa.reshape %arg0, %s : (tensor<2x2xf32>, !tosa.shape<1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pad$value_not_constant(%arg0: tensor<2x2xi8>, %v: tensor<1xi8>) -> tensor<4x2xi8> {
  %p = tosa.const_shape {values = dense<[1, 1, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  // expected-error @below {{'tosa.pad' needs a constant pad value}}
  %0 = tosa.pad %arg0, %p, %v : (tensor<2x2xi8>, !tosa.shape<4>, tensor<1xi8>) -> tensor<4x2xi8>
  return %0 : tensor<4x2xi8>
}

// -----

func.func @resize$float(%arg0: tensor<1x2x2x1xf32>) -> tensor<1x4x4x1xf32> {
  %scale = tosa.const_shape {values = dense<[4, 2, 4, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %offset = tosa.const_shape {values = dense<[0, 0]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %border = tosa.const_shape {values = dense<[2, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  // expected-error @below {{'tosa.resize' on f32 has no kernel (integer only)}}
  %0 = tosa.resize %arg0, %scale, %offset, %border {mode = NEAREST_NEIGHBOR} : (tensor<1x2x2x1xf32>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x4x4x1xf32>
  return %0 : tensor<1x4x4x1xf32>
}

// -----

func.func @reduce$float(%arg0: tensor<2x3xf32>) -> tensor<1x3xf32> {
  // expected-error @below {{'tosa.reduce_sum' on f32 has no kernel (integer types only)}}
  %0 = tosa.reduce_sum %arg0 {axis = 0 : i32} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

func.func @argmax$float(%arg0: tensor<2x3xf32>) -> tensor<3xi32> {
  // expected-error @below {{'tosa.argmax' on f32 has no kernel (integer in, int32 out)}}
  %0 = tosa.argmax %arg0 {axis = 0 : i32} : (tensor<2x3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @mul$shift_not_constant(%a: tensor<4xi32>, %s: tensor<1xi8>) -> tensor<4xi32> {
  // expected-error @below {{'tosa.mul' needs a constant shift}}
  %0 = tosa.mul %a, %a, %s : (tensor<4xi32>, tensor<4xi32>, tensor<1xi8>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @rescale$multiplier_not_constant(%a: tensor<4xi32>, %m: tensor<1xi32>) -> tensor<4xi8> {
  %s = "tosa.const"() {values = dense<30> : tensor<1xi8>} : () -> tensor<1xi8>
  %z32 = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %z8 = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  // expected-error @below {{'tosa.rescale' needs constant multiplier, shift and zero points}}
  %0 = tosa.rescale %a, %m, %s, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @table$not_constant(%a: tensor<4xi8>, %t: tensor<256xi8>) -> tensor<4xi8> {
  // expected-error @below {{'tosa.table' needs a constant table}}
  %0 = tosa.table %a, %t : (tensor<4xi8>, tensor<256xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @matmul$float(%a: tensor<1x2x3xf32>, %b: tensor<1x3x4xf32>) -> tensor<1x2x4xf32> {
  %z = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  // expected-error @below {{'tosa.matmul' on f32 x f32 has no integer kernel}}
  %0 = tosa.matmul %a, %b, %z, %z : (tensor<1x2x3xf32>, tensor<1x3x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4xf32>
  return %0 : tensor<1x2x4xf32>
}

// -----

func.func @matmul$zero_point_not_constant(%a: tensor<1x2x3xi8>, %b: tensor<1x3x4xi8>, %z: tensor<1xi8>) -> tensor<1x2x4xi32> {
  // expected-error @below {{'tosa.matmul' needs constant zero points}}
  %0 = tosa.matmul %a, %b, %z, %z : (tensor<1x2x3xi8>, tensor<1x3x4xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x4xi32>
  return %0 : tensor<1x2x4xi32>
}

// -----

func.func @max_pool$float(%a: tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32> {
  // expected-error @below {{'tosa.max_pool2d' on f32 has no kernel (int8 / int16 only)}}
  %0 = tosa.max_pool2d %a {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32>
  return %0 : tensor<1x2x2x1xf32>
}

// -----

func.func @avg_pool$zero_point_not_constant(%a: tensor<1x4x4x1xi8>, %z: tensor<1xi8>) -> tensor<1x2x2x1xi8> {
  // expected-error @below {{'tosa.avg_pool2d' needs constant zero points}}
  %0 = tosa.avg_pool2d %a, %z, %z {acc_type = i32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x4x4x1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2x1xi8>
  return %0 : tensor<1x2x2x1xi8>
}

// -----

// int4 weights take int8 activations (TOSA's EXT-INT4; CMSIS-NN's s4 kernels): an int16 input has no kernel.
func.func @conv2d$int4_weights_int16_input(%x: tensor<1x1x1x4xi16>) -> tensor<1x1x1x2xi48> {
  %w = "tosa.const"() <{values = dense<[[[[1, -2, 3, -4]]], [[[5, 6, -7, 0]]]]> : tensor<2x1x1x4xi4>}> : () -> tensor<2x1x1x4xi4>
  %b = "tosa.const"() <{values = dense<0> : tensor<2xi48>}> : () -> tensor<2xi48>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi4>}> : () -> tensor<1xi4>
  // expected-error @below {{'tosa.conv2d' on i16 x i4 has no kernel (int8 or int16 activations with int8 weights, or int8 activations with int4 weights)}}
  %acc = tosa.conv2d %x, %w, %b, %izp, %wzp {acc_type = i48, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x1x4xi16>, tensor<2x1x1x4xi4>, tensor<2xi48>, tensor<1xi16>, tensor<1xi4>) -> tensor<1x1x1x2xi48>
  return %acc : tensor<1x1x1x2xi48>
}

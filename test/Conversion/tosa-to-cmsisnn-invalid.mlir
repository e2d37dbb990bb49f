// RUN: mcu-opt %s --split-input-file --verify-diagnostics --mcu-convert-tosa-to-cmsisnn

func.func @conv$weight_zero_point(%arg0: tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi32> {
  %w = "tosa.const"() {values = dense<1> : tensor<2x1x1x2xi8>} : () -> tensor<2x1x1x2xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %izp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<3> : tensor<1xi8>} : () -> tensor<1xi8>
  // expected-error @below {{'tosa.conv2d' has weight zero point 3}}
  %0 = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  return %0 : tensor<1x4x4x2xi32>
}

// -----

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

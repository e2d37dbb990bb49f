// RUN: mcu-opt %s --split-input-file --mcu-conv1d-to-conv2d --verify-diagnostics

func.func @dynamic_length(%arg0: tensor<1x1x?x4xf32>) -> tensor<1x1x?x2xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<2x1x3x4xf32>}> : () -> tensor<2x1x3x4xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  // expected-error @below {{'tosa.conv2d' over a unit height needs a static length}}
  %c = tosa.conv2d %arg0, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x1x?x4xf32>, tensor<2x1x3x4xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x?x2xf32>
  return %c : tensor<1x1x?x2xf32>
}

// RUN: mcu-opt %s --split-input-file --mcu-nhwc-canonicalize --verify-diagnostics

func.func @dynamic_pool(%arg0: tensor<1x?x4x2xf32>) -> tensor<1x?x2x2xf32> {
  // expected-error @below {{'tosa.max_pool2d' on tensor<1x?x4x2xf32>: its layout needs a static shape}}
  %0 = tosa.max_pool2d %arg0 {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x?x4x2xf32>) -> tensor<1x?x2x2xf32>
  return %0 : tensor<1x?x2x2xf32>
}

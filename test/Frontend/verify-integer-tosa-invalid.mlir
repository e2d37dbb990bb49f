// RUN: mcu-opt %s --split-input-file --verify-diagnostics --mcu-verify-integer-tosa

func.func @sigmoid$float(%arg0: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @below {{'tosa.cast' computes in f32: the model is not fully quantized}}
  %0 = tosa.cast %arg0 : (tensor<4xi8>) -> tensor<4xf32>
  // expected-error @below {{'tosa.sigmoid' computes in f32}}
  %1 = tosa.sigmoid %0 : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @below {{'tosa.cast' computes in f32}}
  %2 = tosa.cast %1 : (tensor<4xf32>) -> tensor<4xi8>
  return %2 : tensor<4xi8>
}

// -----

// expected-error @below {{argument #0 is f32: integer TOSA takes quantized inputs}}
func.func @float$input(%arg0: tensor<4xf32>) -> tensor<4xi8> {
  // expected-error @below {{'tosa.cast' computes in f32}}
  %0 = tosa.cast %arg0 : (tensor<4xf32>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @rescale$single_round(%arg0: tensor<4xi32>) -> tensor<4xi8> {
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<40> : tensor<1xi8>}> : () -> tensor<1xi8>
  %iz = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %oz = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  // expected-error @below {{'tosa.rescale' of an int32 accumulator rounds with SINGLE_ROUND; CMSIS-NN rounds twice (DOUBLE_ROUND)}}
  %0 = tosa.rescale %arg0, %m, %s, %iz, %oz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @matmul$wide_inputs(%a: tensor<1x2x3xi32>, %b: tensor<1x3x2xi32>) -> tensor<1x2x2xi32> {
  %z = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  // expected-error @below {{'tosa.matmul' takes i32 and accumulates in i32; expected i8/i16 inputs and an i32/i48 accumulator}}
  %0 = tosa.matmul %a, %b, %z, %z : (tensor<1x2x3xi32>, tensor<1x3x2xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<1x2x2xi32>
  return %0 : tensor<1x2x2xi32>
}

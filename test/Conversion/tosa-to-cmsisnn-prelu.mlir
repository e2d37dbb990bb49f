// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s
// RUN: mcu-opt %s --split-input-file --mcu-attach-target --mcu-convert-tosa-to-cmsisnn=backend=portable | FileCheck %s

// nn.PReLU with a slope per channel (frontend/graph/decompose.prelu_by_depthwise, slopes 0.25,
// -0.5, 1.5): the clamp, eight rescales, sub, 1x1 depthwise conv and add become one mcu_prelu call
// reading the conv's int8 output; the channel-independent parts are its [3, 256] tables.
// CHECK-LABEL: func.func @prelu_per_channel
// CHECK: "portable.prelu"(
// CHECK-SAME: channels = 3 : i32
// CHECK-SAME: (tensor<1x3x3x3xi8>, tensor<3x256xi32>, tensor<4x3xi32>) -> tensor<1x3x3x3xi8>
// CHECK-NOT: "portable.{{(binary|rescale|clamp)}}"
// CHECK: return
module {
  func.func @prelu_per_channel(%arg0: tensor<1x2x3x3xi8> {mcu.scale = 0.02498847059905529 : f64, mcu.zero_point = -9 : i64}) -> (tensor<1x3x3x3xi8> {mcu.scale = 0.016328863799571991 : f64, mcu.zero_point = -35 : i64}) {
    %0 = "tosa.const"() <{values = dense<49> : tensor<1xi8>}> : () -> tensor<1xi8>
    %1 = "tosa.const"() <{values = dense<1076167467> : tensor<1xi32>}> : () -> tensor<1xi32>
    %2 = "tosa.const"() <{values = dense<32> : tensor<1xi8>}> : () -> tensor<1xi8>
    %3 = "tosa.const"() <{values = dense<1176018703> : tensor<1xi32>}> : () -> tensor<1xi32>
    %4 = "tosa.const"() <{values = dense<42> : tensor<1xi8>}> : () -> tensor<1xi8>
    %5 = "tosa.const"() <{values = dense<[40, 39, 37]> : tensor<3xi8>}> : () -> tensor<3xi8>
    %6 = "tosa.const"() <{values = dense<[1448867449, 1448867449, 1086650587]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %7 = "tosa.const"() <{values = dense<0> : tensor<3xi32>}> : () -> tensor<3xi32>
    %8 = "tosa.const"() <{values = dense<[[[[127], [-127], [127]]]]> : tensor<1x1x3x1xi8>}> : () -> tensor<1x1x3x1xi8>
    %9 = "tosa.const"() <{values = dense<127> : tensor<1xi8>}> : () -> tensor<1xi8>
    %10 = "tosa.const"() <{values = dense<48> : tensor<1xi8>}> : () -> tensor<1xi8>
    %11 = "tosa.const"() <{values = dense<1464512114> : tensor<1xi32>}> : () -> tensor<1xi32>
    %12 = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
    %13 = "tosa.const"() <{values = dense<10> : tensor<1xi8>}> : () -> tensor<1xi8>
    %14 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %15 = "tosa.const"() <{values = dense<-35> : tensor<1xi8>}> : () -> tensor<1xi8>
    %16 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %17 = "tosa.const"() <{values = dense<[38, 38, 39]> : tensor<3xi8>}> : () -> tensor<3xi8>
    %18 = "tosa.const"() <{values = dense<[1253571018, 1923306346, 1800071001]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %19 = "tosa.const"() <{values = dense<[-188, 4897, -1170]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %20 = "tosa.const"() <{values = dense<[[[[-2, 127]]], [[[-127, -114]]], [[[-127, 88]]]]> : tensor<3x1x1x2xi8>}> : () -> tensor<3x1x1x2xi8>
    %21 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %22 = "tosa.const"() <{values = dense<-9> : tensor<1xi8>}> : () -> tensor<1xi8>
    %23 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x2x3x3xi8>) -> tensor<1x3x3x2xi8>
    %24 = tosa.conv2d %23, %20, %19, %22, %21 {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x2xi8>, tensor<3x1x1x2xi8>, tensor<3xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x3x3xi32>
    %25 = tosa.rescale %24, %18, %17, %16, %15 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi32>, tensor<3xi32>, tensor<3xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x3x3xi8>
    %26 = tosa.clamp %25 {max_val = 127 : i8, min_val = -35 : i8} : (tensor<1x3x3x3xi8>) -> tensor<1x3x3x3xi8>
    %27 = tosa.rescale %25, %14, %13, %15, %16 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x3x3x3xi32>
    %28 = tosa.rescale %27, %14, %12, %16, %16 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<1x3x3x3xi32>
    %29 = tosa.rescale %26, %14, %13, %15, %16 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x3x3x3xi32>
    %30 = tosa.rescale %29, %14, %12, %16, %16 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<1x3x3x3xi32>
    %31 = tosa.sub %28, %30 : (tensor<1x3x3x3xi32>, tensor<1x3x3x3xi32>) -> tensor<1x3x3x3xi32>
    %32 = tosa.rescale %31, %11, %10, %16, %9 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x3x3xi8>
    %33 = tosa.depthwise_conv2d %32, %8, %7, %9, %21 {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x3xi8>, tensor<1x1x3x1xi8>, tensor<3xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x3x3xi32>
    %34 = tosa.rescale %33, %6, %5, %16, %4 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi32>, tensor<3xi32>, tensor<3xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x3x3xi8>
    %35 = tosa.rescale %34, %14, %13, %4, %16 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x3x3x3xi32>
    %36 = tosa.rescale %35, %3, %2, %16, %16 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<1x3x3x3xi32>
    %37 = tosa.add %30, %36 : (tensor<1x3x3x3xi32>, tensor<1x3x3x3xi32>) -> tensor<1x3x3x3xi32>
    %38 = tosa.rescale %37, %1, %0, %16, %15 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x3x3xi8>
    %39 = tosa.transpose %38 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x3x3x3xi8>) -> tensor<1x3x3x3xi8>
    return %39 : tensor<1x3x3x3xi8>
  }
}

// -----

// After a linear layer (the depthwise conv seen through the reshapes of its 1-D form).
// CHECK-LABEL: func.func @prelu_dense
// CHECK: "portable.prelu"(
// CHECK-SAME: channels = 4 : i32
// CHECK-SAME: (tensor<1x1x4xi8>, tensor<3x256xi32>, tensor<4x4xi32>) -> tensor<1x4xi8>
// CHECK-NOT: "portable.{{(binary|rescale|clamp)}}"
// CHECK: return
module {
  func.func @prelu_dense(%arg0: tensor<1x6xi8> {mcu.scale = 0.022680820897221565 : f64, mcu.zero_point = -10 : i64}) -> (tensor<1x4xi8> {mcu.scale = 0.012655185535550117 : f64, mcu.zero_point = 12 : i64}) {
    %0 = tosa.const_shape  {values = dense<[1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %1 = tosa.const_shape  {values = dense<[1, 1, 1, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %2 = "tosa.const"() <{values = dense<12> : tensor<1xi8>}> : () -> tensor<1xi8>
    %3 = "tosa.const"() <{values = dense<50> : tensor<1xi8>}> : () -> tensor<1xi8>
    %4 = "tosa.const"() <{values = dense<2086430572> : tensor<1xi32>}> : () -> tensor<1xi32>
    %5 = "tosa.const"() <{values = dense<32> : tensor<1xi8>}> : () -> tensor<1xi8>
    %6 = "tosa.const"() <{values = dense<1387783144> : tensor<1xi32>}> : () -> tensor<1xi32>
    %7 = "tosa.const"() <{values = dense<95> : tensor<1xi8>}> : () -> tensor<1xi8>
    %8 = "tosa.const"() <{values = dense<[40, 39, 37, 41]> : tensor<4xi8>}> : () -> tensor<4xi8>
    %9 = "tosa.const"() <{values = dense<[1798899689, 1798899689, 1349174767, 1439119751]> : tensor<4xi32>}> : () -> tensor<4xi32>
    %10 = "tosa.const"() <{values = dense<0> : tensor<4xi32>}> : () -> tensor<4xi32>
    %11 = "tosa.const"() <{values = dense<[[[[127], [-127], [127], [127]]]]> : tensor<1x1x4x1xi8>}> : () -> tensor<1x1x4x1xi8>
    %12 = "tosa.const"() <{values = dense<127> : tensor<1xi8>}> : () -> tensor<1xi8>
    %13 = "tosa.const"() <{values = dense<49> : tensor<1xi8>}> : () -> tensor<1xi8>
    %14 = "tosa.const"() <{values = dense<1999112769> : tensor<1xi32>}> : () -> tensor<1xi32>
    %15 = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
    %16 = "tosa.const"() <{values = dense<10> : tensor<1xi8>}> : () -> tensor<1xi8>
    %17 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %18 = "tosa.const"() <{values = dense<9> : tensor<1xi8>}> : () -> tensor<1xi8>
    %19 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %20 = "tosa.const"() <{values = dense<38> : tensor<4xi8>}> : () -> tensor<4xi8>
    %21 = "tosa.const"() <{values = dense<[1341529908, 1292377321, 1557178910, 1353498294]> : tensor<4xi32>}> : () -> tensor<4xi32>
    %22 = "tosa.const"() <{values = dense<[[[-1090, 756, 5310, -6248]]]> : tensor<1x1x4xi32>}> : () -> tensor<1x1x4xi32>
    %23 = "tosa.const"() <{values = dense<[[[-1, -3, -127, -104], [83, 127, -88, -67], [-127, -14, -55, 56], [-114, 42, 5, 127], [-59, -48, 53, -31], [41, -31, 80, 114]]]> : tensor<1x6x4xi8>}> : () -> tensor<1x6x4xi8>
    %24 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %25 = "tosa.const"() <{values = dense<-10> : tensor<1xi8>}> : () -> tensor<1xi8>
    %26 = tosa.const_shape  {values = dense<[1, 1, 6]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %27 = tosa.reshape %arg0, %26 : (tensor<1x6xi8>, !tosa.shape<3>) -> tensor<1x1x6xi8>
    %28 = tosa.matmul %27, %23, %25, %24 : (tensor<1x1x6xi8>, tensor<1x6x4xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x4xi32>
    %29 = tosa.add %28, %22 : (tensor<1x1x4xi32>, tensor<1x1x4xi32>) -> tensor<1x1x4xi32>
    %30 = tosa.rescale %29, %21, %20, %19, %18 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x1x4xi32>, tensor<4xi32>, tensor<4xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x1x4xi8>
    %31 = tosa.clamp %30 {max_val = 127 : i8, min_val = 9 : i8} : (tensor<1x1x4xi8>) -> tensor<1x1x4xi8>
    %32 = tosa.rescale %30, %17, %16, %18, %19 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x1x4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x1x4xi32>
    %33 = tosa.rescale %32, %17, %15, %19, %19 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x1x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<1x1x4xi32>
    %34 = tosa.rescale %31, %17, %16, %18, %19 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x1x4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x1x4xi32>
    %35 = tosa.rescale %34, %17, %15, %19, %19 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x1x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<1x1x4xi32>
    %36 = tosa.sub %33, %35 : (tensor<1x1x4xi32>, tensor<1x1x4xi32>) -> tensor<1x1x4xi32>
    %37 = tosa.rescale %36, %14, %13, %19, %12 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x1x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x1x4xi8>
    %38 = tosa.reshape %37, %1 : (tensor<1x1x4xi8>, !tosa.shape<4>) -> tensor<1x1x1x4xi8>
    %39 = tosa.depthwise_conv2d %38, %11, %10, %12, %24 {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x1x4xi8>, tensor<1x1x4x1xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x1x4xi32>
    %40 = tosa.rescale %39, %9, %8, %19, %7 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x1x1x4xi32>, tensor<4xi32>, tensor<4xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x1x1x4xi8>
    %41 = tosa.reshape %35, %0 : (tensor<1x1x4xi32>, !tosa.shape<2>) -> tensor<1x4xi32>
    %42 = tosa.rescale %40, %17, %16, %7, %19 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x1x1x4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x1x1x4xi32>
    %43 = tosa.rescale %42, %6, %5, %19, %19 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x1x1x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<1x1x1x4xi32>
    %44 = tosa.reshape %43, %0 : (tensor<1x1x1x4xi32>, !tosa.shape<2>) -> tensor<1x4xi32>
    %45 = tosa.add %41, %44 : (tensor<1x4xi32>, tensor<1x4xi32>) -> tensor<1x4xi32>
    %46 = tosa.rescale %45, %4, %3, %19, %2 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4xi8>
    return %46 : tensor<1x4xi8>
  }
}

// -----

// The relu part read outside the pattern: left to the per-op kernels.
// CHECK-LABEL: func.func @prelu_clamp_shared
// CHECK-NOT: "portable.prelu"
// CHECK: "portable.clamp"
// CHECK: return
module {
  func.func @prelu_clamp_shared(%arg0: tensor<1x2x3x3xi8> {mcu.scale = 0.02498847059905529 : f64, mcu.zero_point = -9 : i64}) -> (tensor<1x3x3x3xi8> {mcu.scale = 0.016328863799571991 : f64, mcu.zero_point = -35 : i64}, tensor<1x3x3x3xi8>) {
    %0 = "tosa.const"() <{values = dense<49> : tensor<1xi8>}> : () -> tensor<1xi8>
    %1 = "tosa.const"() <{values = dense<1076167467> : tensor<1xi32>}> : () -> tensor<1xi32>
    %2 = "tosa.const"() <{values = dense<32> : tensor<1xi8>}> : () -> tensor<1xi8>
    %3 = "tosa.const"() <{values = dense<1176018703> : tensor<1xi32>}> : () -> tensor<1xi32>
    %4 = "tosa.const"() <{values = dense<42> : tensor<1xi8>}> : () -> tensor<1xi8>
    %5 = "tosa.const"() <{values = dense<[40, 39, 37]> : tensor<3xi8>}> : () -> tensor<3xi8>
    %6 = "tosa.const"() <{values = dense<[1448867449, 1448867449, 1086650587]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %7 = "tosa.const"() <{values = dense<0> : tensor<3xi32>}> : () -> tensor<3xi32>
    %8 = "tosa.const"() <{values = dense<[[[[127], [-127], [127]]]]> : tensor<1x1x3x1xi8>}> : () -> tensor<1x1x3x1xi8>
    %9 = "tosa.const"() <{values = dense<127> : tensor<1xi8>}> : () -> tensor<1xi8>
    %10 = "tosa.const"() <{values = dense<48> : tensor<1xi8>}> : () -> tensor<1xi8>
    %11 = "tosa.const"() <{values = dense<1464512114> : tensor<1xi32>}> : () -> tensor<1xi32>
    %12 = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
    %13 = "tosa.const"() <{values = dense<10> : tensor<1xi8>}> : () -> tensor<1xi8>
    %14 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %15 = "tosa.const"() <{values = dense<-35> : tensor<1xi8>}> : () -> tensor<1xi8>
    %16 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %17 = "tosa.const"() <{values = dense<[38, 38, 39]> : tensor<3xi8>}> : () -> tensor<3xi8>
    %18 = "tosa.const"() <{values = dense<[1253571018, 1923306346, 1800071001]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %19 = "tosa.const"() <{values = dense<[-188, 4897, -1170]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %20 = "tosa.const"() <{values = dense<[[[[-2, 127]]], [[[-127, -114]]], [[[-127, 88]]]]> : tensor<3x1x1x2xi8>}> : () -> tensor<3x1x1x2xi8>
    %21 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %22 = "tosa.const"() <{values = dense<-9> : tensor<1xi8>}> : () -> tensor<1xi8>
    %23 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x2x3x3xi8>) -> tensor<1x3x3x2xi8>
    %24 = tosa.conv2d %23, %20, %19, %22, %21 {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x2xi8>, tensor<3x1x1x2xi8>, tensor<3xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x3x3xi32>
    %25 = tosa.rescale %24, %18, %17, %16, %15 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi32>, tensor<3xi32>, tensor<3xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x3x3xi8>
    %26 = tosa.clamp %25 {max_val = 127 : i8, min_val = -35 : i8} : (tensor<1x3x3x3xi8>) -> tensor<1x3x3x3xi8>
    %27 = tosa.rescale %25, %14, %13, %15, %16 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x3x3x3xi32>
    %28 = tosa.rescale %27, %14, %12, %16, %16 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<1x3x3x3xi32>
    %29 = tosa.rescale %26, %14, %13, %15, %16 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x3x3x3xi32>
    %30 = tosa.rescale %29, %14, %12, %16, %16 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<1x3x3x3xi32>
    %31 = tosa.sub %28, %30 : (tensor<1x3x3x3xi32>, tensor<1x3x3x3xi32>) -> tensor<1x3x3x3xi32>
    %32 = tosa.rescale %31, %11, %10, %16, %9 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x3x3xi8>
    %33 = tosa.depthwise_conv2d %32, %8, %7, %9, %21 {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x3xi8>, tensor<1x1x3x1xi8>, tensor<3xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x3x3xi32>
    %34 = tosa.rescale %33, %6, %5, %16, %4 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi32>, tensor<3xi32>, tensor<3xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x3x3xi8>
    %35 = tosa.rescale %34, %14, %13, %4, %16 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x3x3x3xi32>
    %36 = tosa.rescale %35, %3, %2, %16, %16 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<1x3x3x3xi32>
    %37 = tosa.add %30, %36 : (tensor<1x3x3x3xi32>, tensor<1x3x3x3xi32>) -> tensor<1x3x3x3xi32>
    %38 = tosa.rescale %37, %1, %0, %16, %15 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x3xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x3x3xi8>
    %39 = tosa.transpose %38 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x3x3x3xi8>) -> tensor<1x3x3x3xi8>
    return %39, %26 : tensor<1x3x3x3xi8>, tensor<1x3x3x3xi8>
  }
}

// RUN: mcu-opt %s --split-input-file --mcu-tosa-layout-pipeline | FileCheck %s
// RUN: mcu-opt %s --split-input-file --mcu-tosa-layout-pipeline=io-layout=nhwc | FileCheck %s --check-prefix=NHWC

// Inputs: torch-mlir's TOSA (conversion only, no folding) for a Wav2Letter-like and a
// Silero-VAD-like conv1d stack. Nothing may sit between two consecutive convolutions but their
// activation; with NCHW I/O the only transposes are at the boundary, with NHWC I/O there are none.

// CHECK-LABEL: func.func @wav2letter_like
// CHECK-COUNT-1: tosa.transpose
// CHECK: tosa.conv2d {{.*}} pad = array<i64: 2, 1, 0, 0>, stride = array<i64: 2, 1>} : (tensor<1x12x1x3xf32>
// CHECK-NEXT: tosa.clamp
// CHECK-NEXT: tosa.conv2d {{.*}} dilation = array<i64: 2, 1>
// CHECK-NEXT: tosa.clamp
// CHECK-NEXT: tosa.conv2d
// CHECK-COUNT-1: tosa.transpose
// CHECK-NOT: tosa.transpose
// NHWC-LABEL: func.func @wav2letter_like
// NHWC-SAME: (%arg0: tensor<1x12x3xf32> {mcu.layout = "nhwc"}) -> (tensor<1x6x2xf32> {mcu.layout = "nhwc"})
// NHWC-NOT: tosa.transpose
// NHWC: tosa.conv2d
// NHWC-NEXT: tosa.clamp
// NHWC-NEXT: tosa.conv2d
// NHWC-NEXT: tosa.clamp
// NHWC-NEXT: tosa.conv2d
// NHWC-NOT: tosa.transpose
module {
  func.func @wav2letter_like(%arg0: tensor<1x3x12xf32>) -> tensor<1x2x6xf32> {
    %0 = "tosa.const"() <{values = dense_resource<torch_tensor_2_torch.float32> : tensor<2xf32>}> : () -> tensor<2xf32>
    %1 = "tosa.const"() <{values = dense_resource<torch_tensor_4_torch.float32_1> : tensor<4xf32>}> : () -> tensor<4xf32>
    %2 = "tosa.const"() <{values = dense_resource<torch_tensor_4_torch.float32> : tensor<4xf32>}> : () -> tensor<4xf32>
    %3 = tosa.const_shape  {values = dense<[1, 3, 1, 12]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %4 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
    %5 = tosa.const_shape  {values = dense<[1, 4, 6]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %6 = tosa.const_shape  {values = dense<[1, 4, 1, 6]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %7 = tosa.const_shape  {values = dense<[1, 2, 6]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %8 = "tosa.const"() <{values = dense_resource<torch_tensor_4_3_5_torch.float32> : tensor<4x3x1x5xf32>}> : () -> tensor<4x3x1x5xf32>
    %9 = "tosa.const"() <{values = dense_resource<torch_tensor_4_4_3_torch.float32> : tensor<4x4x1x3xf32>}> : () -> tensor<4x4x1x3xf32>
    %10 = "tosa.const"() <{values = dense_resource<torch_tensor_2_4_1_torch.float32> : tensor<2x1x1x4xf32>}> : () -> tensor<2x1x1x4xf32>
    %11 = tosa.reshape %arg0, %3 : (tensor<1x3x12xf32>, !tosa.shape<4>) -> tensor<1x3x1x12xf32>
    %12 = tosa.transpose %11 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x3x1x12xf32>) -> tensor<1x1x12x3xf32>
    %13 = tosa.transpose %8 {perms = array<i32: 0, 2, 3, 1>} : (tensor<4x3x1x5xf32>) -> tensor<4x1x5x3xf32>
    %14 = tosa.conv2d %12, %13, %2, %4, %4 {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 2, 1>, stride = array<i64: 1, 2>} : (tensor<1x1x12x3xf32>, tensor<4x1x5x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x6x4xf32>
    %15 = tosa.transpose %14 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x1x6x4xf32>) -> tensor<1x4x1x6xf32>
    %16 = tosa.reshape %15, %5 : (tensor<1x4x1x6xf32>, !tosa.shape<3>) -> tensor<1x4x6xf32>
    %17 = tosa.clamp %16 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<1x4x6xf32>) -> tensor<1x4x6xf32>
    %18 = tosa.reshape %17, %6 : (tensor<1x4x6xf32>, !tosa.shape<4>) -> tensor<1x4x1x6xf32>
    %19 = tosa.transpose %18 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x4x1x6xf32>) -> tensor<1x1x6x4xf32>
    %20 = tosa.transpose %9 {perms = array<i32: 0, 2, 3, 1>} : (tensor<4x4x1x3xf32>) -> tensor<4x1x3x4xf32>
    %21 = tosa.conv2d %19, %20, %1, %4, %4 {acc_type = f32, dilation = array<i64: 1, 2>, pad = array<i64: 0, 0, 2, 2>, stride = array<i64: 1, 1>} : (tensor<1x1x6x4xf32>, tensor<4x1x3x4xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x6x4xf32>
    %22 = tosa.transpose %21 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x1x6x4xf32>) -> tensor<1x4x1x6xf32>
    %23 = tosa.reshape %22, %5 : (tensor<1x4x1x6xf32>, !tosa.shape<3>) -> tensor<1x4x6xf32>
    %24 = tosa.clamp %23 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<1x4x6xf32>) -> tensor<1x4x6xf32>
    %25 = tosa.reshape %24, %6 : (tensor<1x4x6xf32>, !tosa.shape<4>) -> tensor<1x4x1x6xf32>
    %26 = tosa.transpose %25 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x4x1x6xf32>) -> tensor<1x1x6x4xf32>
    %27 = tosa.conv2d %26, %10, %0, %4, %4 {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x6x4xf32>, tensor<2x1x1x4xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x6x2xf32>
    %28 = tosa.transpose %27 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x1x6x2xf32>) -> tensor<1x2x1x6xf32>
    %29 = tosa.reshape %28, %7 : (tensor<1x2x1x6xf32>, !tosa.shape<3>) -> tensor<1x2x6xf32>
    %30 = tosa.reduce_max %29 {axis = 1 : i32} : (tensor<1x2x6xf32>) -> tensor<1x1x6xf32>
    %31 = tosa.sub %29, %30 : (tensor<1x2x6xf32>, tensor<1x1x6xf32>) -> tensor<1x2x6xf32>
    %32 = tosa.exp %31 : (tensor<1x2x6xf32>) -> tensor<1x2x6xf32>
    %33 = tosa.reduce_sum %32 {axis = 1 : i32} : (tensor<1x2x6xf32>) -> tensor<1x1x6xf32>
    %34 = tosa.log %33 : (tensor<1x1x6xf32>) -> tensor<1x1x6xf32>
    %35 = tosa.sub %31, %34 : (tensor<1x2x6xf32>, tensor<1x1x6xf32>) -> tensor<1x2x6xf32>
    return %35 : tensor<1x2x6xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_2_torch.float32: "0x040000005691F5BEA0BB97BE",
      torch_tensor_4_torch.float32_1: "0x04000000DDE233BE5E1C863EB1934A3EFA4679BE",
      torch_tensor_4_torch.float32: "0x040000008A43EF3DB0A8D43D8D9D1CBE6AC09F3D",
      torch_tensor_4_3_5_torch.float32: "0x04000000B15FFDBA57D50D3E0C9C59BE3F9442BE92AACBBD9ECC8D3DF2A1A7BBF4A2513E55B5BBBCC1EC8B3DC2CE9FBD57E24FBD0A977CBEC21A2FBEE1FAD9BDE1B41C3CC10CD13DB7A41E3EA33E33BEDB44E6BDE910C03D0C8D5B3E94A659BDB3D9453EF8762ABD77D0DF3C6B676F3EA34575BE757226BE20DF85BD721FCEBD2570643E3A602BBE876BF3BDAFB738BE679F77BEA5561ABE2446633ED7F4EB3D3425003ECD7A5E3C228D07BE42ED323D66DD76BE1B0B3FBECC4D08BE37D1263E52051B3E2E84EABDF3A318BCDA18293E186C833E2BDED13D32DF0E3D1046313E42AD1BBEFF12453DC7FC4CBEBC3F37BE1C9508BE",
      torch_tensor_4_4_3_torch.float32: "0x040000002847223EB83D15BDE195343C41FC883DA962373E15EB8D3E84CC63BECBA8D8BD9E59E83D06EC743E3B9E803EEF69823E44516B3D998680BEDB8BD93C58EE38BE8FBE89BE1752833ECFC3603EB16F93BE92505D3D7A3047BD4D9442BD805007BE285AE33D3F162FBE33BBD83D2F7D153E319D533E0B0FDD3DD64892BEC8C13FBE6499133E107B773D6E9866BED3362ABE580B8B3ECD2E473EF7E300BE38CC94BDACCB8CBEDC05AABB529B5EBEFF0364BE104D82BC9488313DF61DF2BD86672F3E",
      torch_tensor_2_4_1_torch.float32: "0x0400000088DBFEBD80D2B83C1867953DD0DDF23D5CEC483EE059F53CCCD179BED445723E"
    }
  }
#-}

// -----

// CHECK-LABEL: func.func @silero_vad_like
// CHECK-NOT: tosa.transpose
// CHECK: tosa.conv2d {{.*}} stride = array<i64: 2, 1>} : (tensor<1x20x1x1xf32>
// CHECK-NOT: tosa.reshape
// CHECK: tosa.pow
// CHECK-NEXT: tosa.conv2d
// CHECK-NEXT: tosa.clamp
// CHECK-NEXT: tosa.conv2d
// CHECK-NEXT: tosa.clamp
// CHECK-NEXT: tosa.conv2d
// CHECK-NOT: tosa.transpose
// NHWC-LABEL: func.func @silero_vad_like
// NHWC-NOT: tosa.transpose
module {
  func.func @silero_vad_like(%arg0: tensor<1x1x16xf32>) -> tensor<1x1x5xf32> {
    %0 = "tosa.const"() <{values = dense<-0.356140375> : tensor<1xf32>}> : () -> tensor<1xf32>
    %1 = "tosa.const"() <{values = dense_resource<torch_tensor_4_torch.float32_1> : tensor<4xf32>}> : () -> tensor<4xf32>
    %2 = "tosa.const"() <{values = dense_resource<torch_tensor_4_torch.float32> : tensor<4xf32>}> : () -> tensor<4xf32>
    %3 = tosa.const_shape  {values = dense<[0, 0, 0, 0, 2, 2]> : tensor<6xindex>} : () -> !tosa.shape<6>
    %4 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
    %5 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<4xf32>}> : () -> tensor<4xf32>
    %6 = tosa.const_shape  {values = dense<[1, 4, 9]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %7 = tosa.const_shape  {values = dense<[1, 2, 9]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %8 = tosa.const_shape  {values = dense<0> : tensor<3xindex>} : () -> !tosa.shape<3>
    %9 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %10 = tosa.const_shape  {values = dense<[0, 2, 0]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %11 = tosa.const_shape  {values = dense<[1, 2, 1, 9]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %12 = tosa.const_shape  {values = dense<[1, 4, 1, 9]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %13 = tosa.const_shape  {values = dense<[1, 4, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %14 = tosa.const_shape  {values = dense<[1, 4, 1, 5]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %15 = tosa.const_shape  {values = dense<[1, 1, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %16 = "tosa.const"() <{values = dense<9.99999997E-7> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
    %17 = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
    %18 = "tosa.const"() <{values = dense_resource<torch_tensor_4_2_3_torch.float32> : tensor<4x2x1x3xf32>}> : () -> tensor<4x2x1x3xf32>
    %19 = "tosa.const"() <{values = dense_resource<torch_tensor_4_4_3_torch.float32> : tensor<4x4x1x3xf32>}> : () -> tensor<4x4x1x3xf32>
    %20 = tosa.const_shape  {values = dense<[1, 1, 20, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %21 = "tosa.const"() <{values = dense_resource<torch_tensor_4_1_4_torch.float32> : tensor<4x1x4x1xf32>}> : () -> tensor<4x1x4x1xf32>
    %22 = "tosa.const"() <{values = dense_resource<torch_tensor_1_4_1_torch.float32> : tensor<1x1x1x4xf32>}> : () -> tensor<1x1x1x4xf32>
    %23 = tosa.pad %arg0, %3, %4 : (tensor<1x1x16xf32>, !tosa.shape<6>, tensor<1xf32>) -> tensor<1x1x20xf32>
    %24 = tosa.reshape %23, %20 : (tensor<1x1x20xf32>, !tosa.shape<4>) -> tensor<1x1x20x1xf32>
    %25 = tosa.conv2d %24, %21, %5, %4, %4 {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 2>} : (tensor<1x1x20x1xf32>, tensor<4x1x4x1xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x9x4xf32>
    %26 = tosa.transpose %25 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x1x9x4xf32>) -> tensor<1x4x1x9xf32>
    %27 = tosa.reshape %26, %6 : (tensor<1x4x1x9xf32>, !tosa.shape<3>) -> tensor<1x4x9xf32>
    %28 = tosa.slice %27, %8, %7 : (tensor<1x4x9xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<1x2x9xf32>
    %29 = tosa.mul %28, %28, %9 : (tensor<1x2x9xf32>, tensor<1x2x9xf32>, tensor<1xi8>) -> tensor<1x2x9xf32>
    %30 = tosa.slice %27, %10, %7 : (tensor<1x4x9xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<1x2x9xf32>
    %31 = tosa.mul %30, %30, %9 : (tensor<1x2x9xf32>, tensor<1x2x9xf32>, tensor<1xi8>) -> tensor<1x2x9xf32>
    %32 = tosa.add %29, %31 : (tensor<1x2x9xf32>, tensor<1x2x9xf32>) -> tensor<1x2x9xf32>
    %33 = tosa.add %32, %16 : (tensor<1x2x9xf32>, tensor<1x1x1xf32>) -> tensor<1x2x9xf32>
    %34 = tosa.pow %33, %17 : (tensor<1x2x9xf32>, tensor<1x1x1xf32>) -> tensor<1x2x9xf32>
    %35 = tosa.reshape %34, %11 : (tensor<1x2x9xf32>, !tosa.shape<4>) -> tensor<1x2x1x9xf32>
    %36 = tosa.transpose %35 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x2x1x9xf32>) -> tensor<1x1x9x2xf32>
    %37 = tosa.transpose %18 {perms = array<i32: 0, 2, 3, 1>} : (tensor<4x2x1x3xf32>) -> tensor<4x1x3x2xf32>
    %38 = tosa.conv2d %36, %37, %2, %4, %4 {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x1x9x2xf32>, tensor<4x1x3x2xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x9x4xf32>
    %39 = tosa.transpose %38 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x1x9x4xf32>) -> tensor<1x4x1x9xf32>
    %40 = tosa.reshape %39, %6 : (tensor<1x4x1x9xf32>, !tosa.shape<3>) -> tensor<1x4x9xf32>
    %41 = tosa.clamp %40 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<1x4x9xf32>) -> tensor<1x4x9xf32>
    %42 = tosa.reshape %41, %12 : (tensor<1x4x9xf32>, !tosa.shape<4>) -> tensor<1x4x1x9xf32>
    %43 = tosa.transpose %42 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x4x1x9xf32>) -> tensor<1x1x9x4xf32>
    %44 = tosa.transpose %19 {perms = array<i32: 0, 2, 3, 1>} : (tensor<4x4x1x3xf32>) -> tensor<4x1x3x4xf32>
    %45 = tosa.conv2d %43, %44, %1, %4, %4 {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 1>, stride = array<i64: 1, 2>} : (tensor<1x1x9x4xf32>, tensor<4x1x3x4xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x5x4xf32>
    %46 = tosa.transpose %45 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x1x5x4xf32>) -> tensor<1x4x1x5xf32>
    %47 = tosa.reshape %46, %13 : (tensor<1x4x1x5xf32>, !tosa.shape<3>) -> tensor<1x4x5xf32>
    %48 = tosa.clamp %47 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<1x4x5xf32>) -> tensor<1x4x5xf32>
    %49 = tosa.reshape %48, %14 : (tensor<1x4x5xf32>, !tosa.shape<4>) -> tensor<1x4x1x5xf32>
    %50 = tosa.transpose %49 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x4x1x5xf32>) -> tensor<1x1x5x4xf32>
    %51 = tosa.conv2d %50, %22, %0, %4, %4 {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x5x4xf32>, tensor<1x1x1x4xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x5x1xf32>
    %52 = tosa.reshape %51, %15 : (tensor<1x1x5x1xf32>, !tosa.shape<3>) -> tensor<1x1x5xf32>
    %53 = tosa.sigmoid %52 : (tensor<1x1x5xf32>) -> tensor<1x1x5xf32>
    return %53 : tensor<1x1x5xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_4_torch.float32_1: "0x0400000092B26E3E5AE56FBE28CFA9BC0D36923E",
      torch_tensor_4_torch.float32: "0x040000006EE83DBE4A7A1D3E0E22BCBECAB3E1BC",
      torch_tensor_4_2_3_torch.float32: "0x040000000B73C63ED1DEF1BC1DC5BBBEAC2F46BE2F538E3E45702DBBD3C94FBE482DA0BE5F9DC3BED06AB0BE1D97A9BD5342653E5303623EAD96C9BE8762823E0590A3BE31C2B0BD9E8129BE500BA1BD2229A4BD2091BBBE7E7AB4BED2D482BD0000AD3B",
      torch_tensor_4_4_3_torch.float32: "0x04000000CBFA813E0226F1BD2277853E941BD63D9E6285BE07073B3EA87108BD98F503BE53616C3E2AE06EBEF0C1FD3C738F77BD1518533E3808A53DFB090E3E39CAD03D952B8EBD00AB78BDE99973BEC22B203EDCB36A3E57424A3E1E8350BE28F1523C816150BE97B922BEEB3F2CBEBC0ACA3D672730BE2B60CEBBB7F7463C7F8D3E3ED6735FBE70EF4ABE3EA52BBE14E74E3EA384D4BD8C56793EE8C8D53D6BB9153DA3D40CBBC6BD69BD645A143DB8FF86BD2EEE04BB22DE163DF23867BE5CEF1ABE",
      torch_tensor_4_1_4_torch.float32: "0x040000003C2B00BEEC6679BE5C1D33BEBAD2D1BE00D2D9BDF8E2DA3D76C6A6BE4034D2BC0042B73EF08852BD80AC633CC0AD30BD103DCF3D60C6A23EBA7EF23E0693A23E",
      torch_tensor_1_4_1_torch.float32: "0x0400000010F4383EC0F0673C26DADDBE2CA27D3E"
    }
  }
#-}

// -----

// A grouped conv as torch-mlir splits it (slice per group, conv, concat): the slices and the concat
// run on channels in NHWC, the per-group weights and biases become constants, no transpose is left.
// NHWC-LABEL: func.func @grouped_conv
// NHWC-NOT: tosa.transpose
// NHWC: tosa.slice %arg0, {{.*}} -> tensor<1x3x3x2xf32>
// NHWC: tosa.conv2d {{.*}} : (tensor<1x3x3x2xf32>, tensor<2x3x3x2xf32>, tensor<2xf32>
// NHWC: tosa.slice %arg0, {{.*}} -> tensor<1x3x3x2xf32>
// NHWC: tosa.conv2d {{.*}} : (tensor<1x3x3x2xf32>, tensor<2x3x3x2xf32>, tensor<2xf32>
// NHWC: tosa.concat {{.*}} {axis = 3 : i32}
// NHWC-NOT: tosa.slice
// NHWC-NOT: tosa.transpose
// CHECK-LABEL: func.func @grouped_conv
// CHECK-COUNT-2: tosa.transpose
// CHECK-NOT: tosa.transpose
module {
  func.func @grouped_conv(%arg0: tensor<1x4x3x3xf32>) -> tensor<1x2x3x3xf32> {
    %0 = "tosa.const"() <{values = dense_resource<torch_tensor_2_torch.float32> : tensor<2xf32>}> : () -> tensor<2xf32>
    %1 = "tosa.const"() <{values = dense_resource<torch_tensor_4_2_3_3_torch.float32> : tensor<4x2x3x3xf32>}> : () -> tensor<4x2x3x3xf32>
    %2 = "tosa.const"() <{values = dense_resource<torch_tensor_4_torch.float32> : tensor<4xf32>}> : () -> tensor<4xf32>
    %3 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
    %4 = tosa.const_shape  {values = dense<[1, 3, 3, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %5 = tosa.const_shape  {values = dense<[2, 3, 3, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %6 = tosa.const_shape  {values = dense<2> : tensor<1xindex>} : () -> !tosa.shape<1>
    %7 = tosa.const_shape  {values = dense<0> : tensor<4xindex>} : () -> !tosa.shape<4>
    %8 = tosa.const_shape  {values = dense<0> : tensor<1xindex>} : () -> !tosa.shape<1>
    %9 = tosa.const_shape  {values = dense<[0, 0, 0, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %10 = tosa.const_shape  {values = dense<[2, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %11 = "tosa.const"() <{values = dense_resource<torch_tensor_2_4_1_1_torch.float32> : tensor<2x1x1x4xf32>}> : () -> tensor<2x1x1x4xf32>
    %12 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x4x3x3xf32>) -> tensor<1x3x3x4xf32>
    %13 = tosa.transpose %1 {perms = array<i32: 0, 2, 3, 1>} : (tensor<4x2x3x3xf32>) -> tensor<4x3x3x2xf32>
    %14 = tosa.slice %12, %7, %4 : (tensor<1x3x3x4xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x3x3x2xf32>
    %15 = tosa.slice %13, %7, %5 : (tensor<4x3x3x2xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<2x3x3x2xf32>
    %16 = tosa.slice %2, %8, %6 : (tensor<4xf32>, !tosa.shape<1>, !tosa.shape<1>) -> tensor<2xf32>
    %17 = tosa.conv2d %14, %15, %16, %3, %3 {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x3x3x2xf32>, tensor<2x3x3x2xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x3x2xf32>
    %18 = tosa.slice %12, %9, %4 : (tensor<1x3x3x4xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x3x3x2xf32>
    %19 = tosa.slice %13, %10, %5 : (tensor<4x3x3x2xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<2x3x3x2xf32>
    %20 = tosa.slice %2, %6, %6 : (tensor<4xf32>, !tosa.shape<1>, !tosa.shape<1>) -> tensor<2xf32>
    %21 = tosa.conv2d %18, %19, %20, %3, %3 {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x3x3x2xf32>, tensor<2x3x3x2xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x3x2xf32>
    %22 = tosa.concat %17, %21 {axis = 3 : i32} : (tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>) -> tensor<1x3x3x4xf32>
    %23 = tosa.transpose %22 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x3x3x4xf32>) -> tensor<1x4x3x3xf32>
    %24 = tosa.clamp %23 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
    %25 = tosa.transpose %24 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x4x3x3xf32>) -> tensor<1x3x3x4xf32>
    %26 = tosa.conv2d %25, %11, %0, %3, %3 {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x4xf32>, tensor<2x1x1x4xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x3x2xf32>
    %27 = tosa.transpose %26 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32>
    return %27 : tensor<1x2x3x3xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_2_torch.float32: "0x0400000008AABF3DC880ACBD",
      torch_tensor_4_2_3_3_torch.float32: "0x040000002E4CE7BABE79013E42A646BE27A031BEC9EBB9BDC771813DE50699BB015F3F3E7D5AABBC74777F3D3EE291BD7AC53DBD029566BE0BD91FBED4FCC6BD880D0F3CE4D5BE3D2BD2103E94A023BEB234D2BDDF54AF3DF56B483EDFAF46BDA39C343EBF9C1BBD4750CC3C818B5A3ED6E65FBED9F117BE3B6A74BDDE29BCBDD388503EAE711CBE0936DEBD8D9F28BE2B0C62BE1EE40CBEC9784F3ED265D73DD5F5E93D62184B3C4F7BF7BD4A56233D115B61BEE0652EBE11DBF8BD5A48183E94830D3E4915D6BD4C570BBC225D1A3E6EF16F3E0F95BF3D6F6C023DF7D3213EE11C0EBE40E7333D86203BBE5C4827BE435DF9BDC06ADA3D5221C23D3DF80EBE25D5913DD97F043EAEB5F3BC8A72133C39B25F3DCABB153E69C0673E3DFF39BED1E6B0BD",
      torch_tensor_4_torch.float32: "0x040000008AB6BD3D5BFA473E5008523E00F7543E",
      torch_tensor_2_4_1_1_torch.float32: "0x0400000078CACB3DF89CDEBE90663C3DAC27A0BE8C94EEBE3E74E33EF0A6C23EFE5DFFBE"
    }
  }
#-}

// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s
// RUN: mcu-opt %s --split-input-file --mcu-attach-target --mcu-convert-tosa-to-cmsisnn=backend=portable | FileCheck %s

// The frontend's integer hypot(re, im) (sqrt(re * re + im * im) of two int8 inputs sharing one scale):
// its 17 TOSA ops become one mcu_hypot call with the input zero points, the square-root table, the
// rescale and the headroom the shifts take back.
// CHECK-LABEL: func.func @hypot
// CHECK: "portable.hypot"(%arg0, %arg1, %{{.*}}) {a_zp = -22 : i32, b_zp = -22 : i32, headroom = 13 : i32, mcu.source_op = "hypot", multiplier = 1786141434 : i32, output_zp = -128 : i32, shift = 23 : i32}
// CHECK-SAME: (tensor<2x6xi8>, tensor<2x6xi8>, tensor<513xi16>) -> tensor<2x6xi8>
// CHECK-NEXT: return
  func.func @hypot(%arg0: tensor<2x6xi8>, %arg1: tensor<2x6xi8>) -> tensor<2x6xi8> {
    %0 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %1 = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
    %2 = "tosa.const"() <{values = dense<-22> : tensor<1xi8>}> : () -> tensor<1xi8>
    %3 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %4 = tosa.rescale %arg0, %0, %1, %2, %3 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x6xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<2x6xi32>
    %5 = tosa.rescale %arg1, %0, %1, %2, %3 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x6xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<2x6xi32>
    %6 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %7 = tosa.mul %4, %4, %6 : (tensor<2x6xi32>, tensor<2x6xi32>, tensor<1xi8>) -> tensor<2x6xi32>
    %8 = tosa.mul %5, %5, %6 : (tensor<2x6xi32>, tensor<2x6xi32>, tensor<1xi8>) -> tensor<2x6xi32>
    %9 = tosa.add %7, %8 : (tensor<2x6xi32>, tensor<2x6xi32>) -> tensor<2x6xi32>
    %10 = tosa.clz %9 : (tensor<2x6xi32>) -> tensor<2x6xi32>
    %11 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %12 = tosa.sub %10, %11 : (tensor<2x6xi32>, tensor<1x1xi32>) -> tensor<2x6xi32>
    %13 = "tosa.const"() <{values = dense<-2> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %14 = tosa.bitwise_and %12, %13 : (tensor<2x6xi32>, tensor<1x1xi32>) -> tensor<2x6xi32>
    %15 = tosa.logical_left_shift %9, %14 : (tensor<2x6xi32>, tensor<2x6xi32>) -> tensor<2x6xi32>
    %16 = "tosa.const"() <{values = dense<16> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %17 = tosa.logical_right_shift %15, %16 : (tensor<2x6xi32>, tensor<1x1xi32>) -> tensor<2x6xi32>
    %18 = "tosa.const"() <{values = dense<16384> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %19 = tosa.sub %17, %18 : (tensor<2x6xi32>, tensor<1x1xi32>) -> tensor<2x6xi32>
    %20 = tosa.cast %19 : (tensor<2x6xi32>) -> tensor<2x6xi16>
    %21 = "tosa.const"() <{values = dense<"0x412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D9B2DF52D4E2EA62EFD2E542FAA2F00305530A930FD305131A431F63147329932E9323A338933D93327347634C33411355E35AA35F73542368D36D83623376D37B737003849389238DA3822396939B039F7393E3A843ACA3A0F3B543B993BDE3B223C663CAA3CED3C303D733DB63DF83D3A3E7B3EBD3EFE3E3F3F7F3FC03F004040408040BF40FE403D417C41BA41F84136427442B142EF422C436943A543E2431E445A449644D2440D4548458345BE45F94533466D46A746E1461B4755478E47C747004839487148AA48E2481A4952498A49C249F949304A684A9E4AD54A0C4B424B794BAF4BE54B1B4C514C864CBC4CF14C264D5B4D904DC54DF94D2E4E624E964ECA4EFE4E324F664F994FCD4F0050335066509950CC50FE50315163519651C851FA512C525D528F52C152F252235355538653B753E853185449547A54AA54DA540B553B556B559B55CA55FA552A5659568956B856E756165745577457A357D15700582E585D588B58B958E8581659435971599F59CD59FA59285A555A825AB05ADD5A0A5B375B645B905BBD5BEA5B165C435C6F5C9B5CC85CF45C205D4C5D775DA35DCF5DFB5D265E525E7D5EA85ED35EFF5E2A5F555F805FAB5FD55F00602B6055608060AA60D460FF60296153617D61A761D161FB6125624E627862A162CB62F4621E63476370639963C263EC6314643D6466648F64B864E064096531655A658265AB65D365FB6523664B6673669B66C366EB6613673A6762678A67B167D967006827684F6876689D68C468EB681269396960698769AE69D469FB69226A486A6F6A956ABC6AE26A086B2F6B556B7B6BA16BC76BED6B136C396C5F6C846CAA6CD06CF56C1B6D416D666D8B6DB16DD66DFB6D216E466E6B6E906EB56EDA6E"> : tensor<513xi16>}> : () -> tensor<513xi16>
    %22 = tosa.table %20, %21 : (tensor<2x6xi16>, tensor<513xi16>) -> tensor<2x6xi32>
    %23 = "tosa.const"() <{values = dense<1786141434> : tensor<1xi32>}> : () -> tensor<1xi32>
    %24 = "tosa.const"() <{values = dense<23> : tensor<1xi8>}> : () -> tensor<1xi8>
    %25 = tosa.rescale %22, %23, %24, %3, %3 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x6xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<2x6xi32>
    %26 = tosa.arithmetic_right_shift %14, %11 {round = false} : (tensor<2x6xi32>, tensor<1x1xi32>) -> tensor<2x6xi32>
    %27 = "tosa.const"() <{values = dense<13> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %28 = tosa.add %26, %27 : (tensor<2x6xi32>, tensor<1x1xi32>) -> tensor<2x6xi32>
    %29 = tosa.arithmetic_right_shift %25, %28 {round = true} : (tensor<2x6xi32>, tensor<2x6xi32>) -> tensor<2x6xi32>
    %30 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %31 = tosa.equal %9, %30 : (tensor<2x6xi32>, tensor<1x1xi32>) -> tensor<2x6xi1>
    %32 = tosa.select %31, %30, %29 : (tensor<2x6xi1>, tensor<1x1xi32>, tensor<2x6xi32>) -> tensor<2x6xi32>
    %33 = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
    %34 = tosa.rescale %32, %0, %1, %3, %33 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x6xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<2x6xi8>
    return %34 : tensor<2x6xi8>
  }


// -----

// The same ops with another mask on the shift (not an even normalisation): not the form the kernel
// computes, so each op stays its own kernel.
// CHECK-LABEL: func.func @odd_mask
// CHECK-NOT: portable.hypot
// CHECK: "portable.table"
// CHECK-NOT: portable.hypot
// CHECK: return
  func.func @odd_mask(%arg0: tensor<2x6xi8>, %arg1: tensor<2x6xi8>) -> tensor<2x6xi8> {
    %0 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %1 = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
    %2 = "tosa.const"() <{values = dense<-22> : tensor<1xi8>}> : () -> tensor<1xi8>
    %3 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %4 = tosa.rescale %arg0, %0, %1, %2, %3 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x6xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<2x6xi32>
    %5 = tosa.rescale %arg1, %0, %1, %2, %3 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x6xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<2x6xi32>
    %6 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %7 = tosa.mul %4, %4, %6 : (tensor<2x6xi32>, tensor<2x6xi32>, tensor<1xi8>) -> tensor<2x6xi32>
    %8 = tosa.mul %5, %5, %6 : (tensor<2x6xi32>, tensor<2x6xi32>, tensor<1xi8>) -> tensor<2x6xi32>
    %9 = tosa.add %7, %8 : (tensor<2x6xi32>, tensor<2x6xi32>) -> tensor<2x6xi32>
    %10 = tosa.clz %9 : (tensor<2x6xi32>) -> tensor<2x6xi32>
    %11 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %12 = tosa.sub %10, %11 : (tensor<2x6xi32>, tensor<1x1xi32>) -> tensor<2x6xi32>
    %13 = "tosa.const"() <{values = dense<-4> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %14 = tosa.bitwise_and %12, %13 : (tensor<2x6xi32>, tensor<1x1xi32>) -> tensor<2x6xi32>
    %15 = tosa.logical_left_shift %9, %14 : (tensor<2x6xi32>, tensor<2x6xi32>) -> tensor<2x6xi32>
    %16 = "tosa.const"() <{values = dense<16> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %17 = tosa.logical_right_shift %15, %16 : (tensor<2x6xi32>, tensor<1x1xi32>) -> tensor<2x6xi32>
    %18 = "tosa.const"() <{values = dense<16384> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %19 = tosa.sub %17, %18 : (tensor<2x6xi32>, tensor<1x1xi32>) -> tensor<2x6xi32>
    %20 = tosa.cast %19 : (tensor<2x6xi32>) -> tensor<2x6xi16>
    %21 = "tosa.const"() <{values = dense<"0x412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D412D9B2DF52D4E2EA62EFD2E542FAA2F00305530A930FD305131A431F63147329932E9323A338933D93327347634C33411355E35AA35F73542368D36D83623376D37B737003849389238DA3822396939B039F7393E3A843ACA3A0F3B543B993BDE3B223C663CAA3CED3C303D733DB63DF83D3A3E7B3EBD3EFE3E3F3F7F3FC03F004040408040BF40FE403D417C41BA41F84136427442B142EF422C436943A543E2431E445A449644D2440D4548458345BE45F94533466D46A746E1461B4755478E47C747004839487148AA48E2481A4952498A49C249F949304A684A9E4AD54A0C4B424B794BAF4BE54B1B4C514C864CBC4CF14C264D5B4D904DC54DF94D2E4E624E964ECA4EFE4E324F664F994FCD4F0050335066509950CC50FE50315163519651C851FA512C525D528F52C152F252235355538653B753E853185449547A54AA54DA540B553B556B559B55CA55FA552A5659568956B856E756165745577457A357D15700582E585D588B58B958E8581659435971599F59CD59FA59285A555A825AB05ADD5A0A5B375B645B905BBD5BEA5B165C435C6F5C9B5CC85CF45C205D4C5D775DA35DCF5DFB5D265E525E7D5EA85ED35EFF5E2A5F555F805FAB5FD55F00602B6055608060AA60D460FF60296153617D61A761D161FB6125624E627862A162CB62F4621E63476370639963C263EC6314643D6466648F64B864E064096531655A658265AB65D365FB6523664B6673669B66C366EB6613673A6762678A67B167D967006827684F6876689D68C468EB681269396960698769AE69D469FB69226A486A6F6A956ABC6AE26A086B2F6B556B7B6BA16BC76BED6B136C396C5F6C846CAA6CD06CF56C1B6D416D666D8B6DB16DD66DFB6D216E466E6B6E906EB56EDA6E"> : tensor<513xi16>}> : () -> tensor<513xi16>
    %22 = tosa.table %20, %21 : (tensor<2x6xi16>, tensor<513xi16>) -> tensor<2x6xi32>
    %23 = "tosa.const"() <{values = dense<1786141434> : tensor<1xi32>}> : () -> tensor<1xi32>
    %24 = "tosa.const"() <{values = dense<23> : tensor<1xi8>}> : () -> tensor<1xi8>
    %25 = tosa.rescale %22, %23, %24, %3, %3 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x6xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<2x6xi32>
    %26 = tosa.arithmetic_right_shift %14, %11 {round = false} : (tensor<2x6xi32>, tensor<1x1xi32>) -> tensor<2x6xi32>
    %27 = "tosa.const"() <{values = dense<13> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %28 = tosa.add %26, %27 : (tensor<2x6xi32>, tensor<1x1xi32>) -> tensor<2x6xi32>
    %29 = tosa.arithmetic_right_shift %25, %28 {round = true} : (tensor<2x6xi32>, tensor<2x6xi32>) -> tensor<2x6xi32>
    %30 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %31 = tosa.equal %9, %30 : (tensor<2x6xi32>, tensor<1x1xi32>) -> tensor<2x6xi1>
    %32 = tosa.select %31, %30, %29 : (tensor<2x6xi1>, tensor<1x1xi32>, tensor<2x6xi32>) -> tensor<2x6xi32>
    %33 = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
    %34 = tosa.rescale %32, %0, %1, %3, %33 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x6xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<2x6xi8>
    return %34 : tensor<2x6xi8>
  }

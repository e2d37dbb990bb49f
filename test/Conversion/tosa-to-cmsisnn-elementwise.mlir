// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s
// RUN: mcu-opt %s --split-input-file --mcu-attach-target --mcu-convert-tosa-to-cmsisnn=backend=portable | FileCheck %s --check-prefix=PORTABLE

// Patterns of conversion/elementwise.py: the fused int8 / int16 mul unit, one portable.binary per
// TOSA binary op (broadcasting), portable.unary, select, clamp, cast, rescale, table and the
// int16 table + rescale unit. (The add unit is in tosa-to-cmsisnn-add.mlir.)

// Widen both inputs exactly (x - zp), multiply, rescale: one call; the offsets are the negated
// input zero points.
// CHECK-LABEL: func.func @mul$int8
// CHECK: "cmsisnn.mul"(%arg0, %arg1) {activation = array<i32: -128, 127>, input1_offset = -3 : i32, input2_offset = 9 : i32, mcu.source_op = "tosa.rescale+tosa.rescale+tosa.mul+tosa.rescale", output_multiplier = 1288490189 : i32, output_offset = -4 : i32, output_shift = -9 : i32}
// CHECK-NOT: = tosa.
// PORTABLE-LABEL: func.func @mul$int8
// PORTABLE: "portable.elementwise_mul"(%arg0, %arg1) {activation = array<i32: -128, 127>, input1_offset = -3 : i32, input2_offset = 9 : i32

func.func @mul$int8(%arg0: tensor<1x8xi8>, %arg1: tensor<1x8xi8>) -> tensor<1x8xi8> {
  %one = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s30 = "tosa.const"() {values = dense<30> : tensor<1xi8>} : () -> tensor<1xi8>
  %za = "tosa.const"() {values = dense<3> : tensor<1xi8>} : () -> tensor<1xi8>
  %zb = "tosa.const"() {values = dense<-9> : tensor<1xi8>} : () -> tensor<1xi8>
  %z32 = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %z8 = "tosa.const"() {values = dense<-4> : tensor<1xi8>} : () -> tensor<1xi8>
  %sh = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %mo = "tosa.const"() {values = dense<1288490189> : tensor<1xi32>} : () -> tensor<1xi32>
  %so = "tosa.const"() {values = dense<40> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.rescale %arg0, %one, %s30, %za, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %1 = tosa.rescale %arg1, %one, %s30, %zb, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %2 = tosa.mul %0, %1, %sh : (tensor<1x8xi32>, tensor<1x8xi32>, tensor<1xi8>) -> tensor<1x8xi32>
  %3 = tosa.rescale %2, %mo, %so, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  return %3 : tensor<1x8xi8>
}

// -----

// Every TOSA binary op is one broadcasting portable.binary (also with backend=cmsis-nn).
// CHECK-LABEL: func.func @binary$all
// CHECK: "portable.binary"(%arg0, %arg1) {kind = #portable.binary_kind<"add">, mcu.source_op = "tosa.add", shift = 0 : i32} : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi32>
// CHECK: kind = #portable.binary_kind<"sub">
// CHECK: kind = #portable.binary_kind<"mul">, mcu.source_op = "tosa.mul", shift = 3 : i32
// CHECK: kind = #portable.binary_kind<"maximum">
// CHECK: kind = #portable.binary_kind<"minimum">
// CHECK: kind = #portable.binary_kind<"equal">{{.*}} -> tensor<2x4xi1>
// CHECK: kind = #portable.binary_kind<"greater">
// CHECK: kind = #portable.binary_kind<"greater_equal">
// CHECK: kind = #portable.binary_kind<"bitwise_and">
// CHECK: kind = #portable.binary_kind<"bitwise_or">
// CHECK: kind = #portable.binary_kind<"bitwise_xor">
// CHECK: kind = #portable.binary_kind<"shift_left">, mcu.source_op = "tosa.logical_left_shift"
// CHECK: kind = #portable.binary_kind<"shift_right_logical">, mcu.source_op = "tosa.logical_right_shift"
// CHECK: kind = #portable.binary_kind<"shift_right_round">, mcu.source_op = "tosa.arithmetic_right_shift"
// CHECK: kind = #portable.binary_kind<"intdiv">
// CHECK: kind = #portable.binary_kind<"shift_right">, mcu.source_op = "tosa.arithmetic_right_shift"
// CHECK: kind = #portable.binary_kind<"logical_and">
// CHECK: kind = #portable.binary_kind<"logical_or">
// CHECK: kind = #portable.binary_kind<"logical_xor">
// CHECK: kind = #portable.binary_kind<"pow">
// CHECK-NOT: = tosa.

func.func @binary$all(%a: tensor<2x4xi32>, %b: tensor<1x4xi32>, %p: tensor<2x4xi1>, %q: tensor<1x4xi1>) -> (tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi32>) {
  %sh = "tosa.const"() {values = dense<3> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.add %a, %b : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi32>
  %1 = tosa.sub %a, %b : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi32>
  %2 = tosa.mul %a, %b, %sh : (tensor<2x4xi32>, tensor<1x4xi32>, tensor<1xi8>) -> tensor<2x4xi32>
  %3 = tosa.maximum %a, %b : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi32>
  %4 = tosa.minimum %a, %b : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi32>
  %5 = tosa.equal %a, %b : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi1>
  %6 = tosa.greater %a, %b : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi1>
  %7 = tosa.greater_equal %a, %b : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi1>
  %8 = tosa.bitwise_and %a, %b : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi32>
  %9 = tosa.bitwise_or %a, %b : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi32>
  %10 = tosa.bitwise_xor %a, %b : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi32>
  %11 = tosa.logical_left_shift %a, %b : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi32>
  %12 = tosa.logical_right_shift %a, %b : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi32>
  %13 = tosa.arithmetic_right_shift %a, %b {round = true} : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi32>
  %14 = tosa.intdiv %a, %b : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi32>
  %15 = tosa.arithmetic_right_shift %a, %b {round = false} : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi32>
  %16 = tosa.logical_and %p, %q : (tensor<2x4xi1>, tensor<1x4xi1>) -> tensor<2x4xi1>
  %17 = tosa.logical_or %p, %q : (tensor<2x4xi1>, tensor<1x4xi1>) -> tensor<2x4xi1>
  %18 = tosa.logical_xor %p, %q : (tensor<2x4xi1>, tensor<1x4xi1>) -> tensor<2x4xi1>
  %19 = tosa.pow %a, %b : (tensor<2x4xi32>, tensor<1x4xi32>) -> tensor<2x4xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19 : tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi32>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi32>
}

// -----

// CHECK-LABEL: func.func @unary$all
// CHECK: "portable.unary"(%arg0) {input_zp = 0 : i32, kind = #portable.unary_kind<"abs">
// CHECK: "portable.unary"(%arg0) {input_zp = 3 : i32, kind = #portable.unary_kind<"negate">, mcu.source_op = "tosa.negate", output_zp = -2 : i32}
// CHECK: kind = #portable.unary_kind<"bitwise_not">
// CHECK: "portable.unary"(%arg1) {{.*}}kind = #portable.unary_kind<"logical_not">
// CHECK: "portable.unary"(%arg2) {{.*}}kind = #portable.unary_kind<"clz">

func.func @unary$all(%a: tensor<2x4xi8>, %b: tensor<2x4xi1>, %c: tensor<2x4xi32>) -> (tensor<2x4xi8>, tensor<2x4xi8>, tensor<2x4xi8>, tensor<2x4xi1>, tensor<2x4xi32>) {
  %zp = "tosa.const"() {values = dense<3> : tensor<1xi8>} : () -> tensor<1xi8>
  %zo = "tosa.const"() {values = dense<-2> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.abs %a : (tensor<2x4xi8>) -> tensor<2x4xi8>
  %1 = tosa.negate %a, %zp, %zo : (tensor<2x4xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x4xi8>
  %2 = tosa.bitwise_not %a : (tensor<2x4xi8>) -> tensor<2x4xi8>
  %3 = tosa.logical_not %b : (tensor<2x4xi1>) -> tensor<2x4xi1>
  %4 = tosa.clz %c : (tensor<2x4xi32>) -> tensor<2x4xi32>
  return %0, %1, %2, %3, %4 : tensor<2x4xi8>, tensor<2x4xi8>, tensor<2x4xi8>, tensor<2x4xi1>, tensor<2x4xi32>
}

// -----

// select broadcasts; a rescale keeps TOSA's shifts and flags (unsigned input here, per channel: the
// zero point stored as the i8 byte 0x80 is 128).
// CHECK-LABEL: func.func @misc$select_clamp_cast_rescale
// CHECK: "portable.select"(%arg0, %arg1, %arg2) {mcu.source_op = "tosa.select"} : (tensor<2x4xi1>, tensor<2x4xi8>, tensor<1x4xi8>) -> tensor<2x4xi8>
// CHECK: "portable.clamp"(%arg1) {max = 5 : i32, mcu.source_op = "tosa.clamp", min = -5 : i32}
// CHECK: "portable.cast"(%arg1) {{.*}} -> tensor<2x4xi32>
// CHECK: "portable.rescale"(%arg1) {double_round = 0 : i32, input_unsigned = 1 : i32, input_zp = 128 : i32, mcu.source_op = "tosa.rescale", multiplier = array<i32: 1073741824, 1200000000, 1300000000, 1400000000>, output_unsigned = 0 : i32, output_zp = 0 : i32, per_channel = 1 : i32, scale32 = 1 : i32, shift = array<i32: 30, 31, 32, 33>}

func.func @misc$select_clamp_cast_rescale(%c: tensor<2x4xi1>, %a: tensor<2x4xi8>, %b: tensor<1x4xi8>) -> (tensor<2x4xi8>, tensor<2x4xi8>, tensor<2x4xi32>, tensor<2x4xi16>) {
  %0 = tosa.select %c, %a, %b : (tensor<2x4xi1>, tensor<2x4xi8>, tensor<1x4xi8>) -> tensor<2x4xi8>
  %1 = tosa.clamp %a {min_val = -5 : i8, max_val = 5 : i8} : (tensor<2x4xi8>) -> tensor<2x4xi8>
  %2 = tosa.cast %a : (tensor<2x4xi8>) -> tensor<2x4xi32>
  %m = "tosa.const"() {values = dense<[1073741824, 1200000000, 1300000000, 1400000000]> : tensor<4xi32>} : () -> tensor<4xi32>
  %s = "tosa.const"() {values = dense<[30, 31, 32, 33]> : tensor<4xi8>} : () -> tensor<4xi8>
  %iz = "tosa.const"() {values = dense<-128> : tensor<1xi8>} : () -> tensor<1xi8>
  %oz = "tosa.const"() {values = dense<0> : tensor<1xi16>} : () -> tensor<1xi16>
  %3 = tosa.rescale %a, %m, %s, %iz, %oz {input_unsigned = true, output_unsigned = false, per_channel = true, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<2x4xi8>, tensor<4xi32>, tensor<4xi8>, tensor<1xi8>, tensor<1xi16>) -> tensor<2x4xi16>
  return %0, %1, %2, %3 : tensor<2x4xi8>, tensor<2x4xi8>, tensor<2x4xi32>, tensor<2x4xi16>
}

// -----

// An int16 table whose int32 result is only rescaled back to int16 is one table_rescale; alone
// it is an int16 -> int32 table.
// CHECK-LABEL: func.func @table$int8_and_int16
// CHECK: "portable.table"(%arg0, %{{.*}}) {mcu.source_op = "tosa.table"} : (tensor<2x4xi8>, tensor<256xi8>) -> tensor<2x4xi8>
// CHECK: "portable.table_rescale"(%arg1, %{{.*}}) {double_round = 1 : i32, input_zp = 0 : i32, mcu.source_op = "tosa.table+tosa.rescale", multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = 0 : i32, scale32 = 1 : i32, shift = array<i32: 37>}
// CHECK: "portable.table"(%arg1, %{{.*}}) {{.*}} -> tensor<2x4xi32>

func.func @table$int8_and_int16(%a: tensor<2x4xi8>, %h: tensor<2x4xi16>) -> (tensor<2x4xi8>, tensor<2x4xi16>, tensor<2x4xi32>) {
  %t8 = "tosa.const"() {values = dense<5> : tensor<256xi8>} : () -> tensor<256xi8>
  %t16 = "tosa.const"() {values = dense<7> : tensor<513xi16>} : () -> tensor<513xi16>
  %0 = tosa.table %a, %t8 : (tensor<2x4xi8>, tensor<256xi8>) -> tensor<2x4xi8>
  %w = tosa.table %h, %t16 : (tensor<2x4xi16>, tensor<513xi16>) -> tensor<2x4xi32>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<37> : tensor<1xi8>} : () -> tensor<1xi8>
  %z32 = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %z16 = "tosa.const"() {values = dense<0> : tensor<1xi16>} : () -> tensor<1xi16>
  %1 = tosa.rescale %w, %m, %s, %z32, %z16 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi16>) -> tensor<2x4xi16>
  %2 = tosa.table %h, %t16 : (tensor<2x4xi16>, tensor<513xi16>) -> tensor<2x4xi32>
  return %0, %1, %2 : tensor<2x4xi8>, tensor<2x4xi16>, tensor<2x4xi32>
}

// -----

// An int8 value rescaled to int16 (an int8 part of an int16 output concat) is one lookup in its 256
// int16 results; after an int8 table, the table and the rescale compose into one lookup. Entries
// as TOSA computes them: (5 - 3) * 2**30 >> 25 = 64 for the composed table of 5s; for the rescale
// alone, (-128 - 3) * 32 = -4192 first, (127 - 3) * 32 = 3968 last.
// CHECK-LABEL: func.func @table$int8_to_int16
// CHECK: %[[T:.*]] = "tosa.const"() <{values = dense<64> : tensor<256xi16>}>
// CHECK: "portable.table"(%arg0, %[[T]]) {mcu.source_op = "tosa.table+tosa.rescale"} : (tensor<2x4xi8>, tensor<256xi16>) -> tensor<2x4xi16>
// Little-endian int16: A0EF is -4192.
// CHECK: %[[R:.*]] = "tosa.const"() <{values = dense<"0xA0EFC0EF{{[0-9A-F]*}}600F800F"> : tensor<256xi16>}>
// CHECK: "portable.table"(%arg0, %[[R]]) {mcu.source_op = "tosa.rescale"} : (tensor<2x4xi8>, tensor<256xi16>) -> tensor<2x4xi16>
// CHECK-NOT: = tosa.rescale

func.func @table$int8_to_int16(%a: tensor<2x4xi8>) -> (tensor<2x4xi16>, tensor<2x4xi16>) {
  %t8 = "tosa.const"() {values = dense<5> : tensor<256xi8>} : () -> tensor<256xi8>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<25> : tensor<1xi8>} : () -> tensor<1xi8>
  %iz = "tosa.const"() {values = dense<3> : tensor<1xi8>} : () -> tensor<1xi8>
  %oz = "tosa.const"() {values = dense<0> : tensor<1xi16>} : () -> tensor<1xi16>
  %0 = tosa.table %a, %t8 : (tensor<2x4xi8>, tensor<256xi8>) -> tensor<2x4xi8>
  %1 = tosa.rescale %0, %m, %s, %iz, %oz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi16>) -> tensor<2x4xi16>
  %2 = tosa.rescale %a, %m, %s, %iz, %oz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi16>) -> tensor<2x4xi16>
  return %1, %2 : tensor<2x4xi16>, tensor<2x4xi16>
}

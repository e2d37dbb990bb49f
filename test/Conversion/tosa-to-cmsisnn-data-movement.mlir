// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s
// RUN: mcu-opt %s --split-input-file --mcu-attach-target --mcu-convert-tosa-to-cmsisnn=backend=portable | FileCheck %s --check-prefix=PORTABLE

// Patterns of conversion/data_movement.py and conversion/reduction.py.

// A reshape (and an identity) is a view: the planner gives it its input's bytes.
// CHECK-LABEL: func.func @views$reshape_identity
// CHECK: "cmsisnn.reshape"(%arg0) {mcu.source_op = "tosa.reshape"} : (tensor<1x2x3x4xi8>) -> tensor<24xi8>
// CHECK: "cmsisnn.reshape"(%arg0) {mcu.source_op = "tosa.identity"} : (tensor<1x2x3x4xi8>) -> tensor<1x2x3x4xi8>
// CHECK-NOT: = tosa.
func.func @views$reshape_identity(%a: tensor<1x2x3x4xi8>) -> (tensor<24xi8>, tensor<1x2x3x4xi8>) {
  %s = tosa.const_shape {values = dense<[24]> : tensor<1xindex>} : () -> !tosa.shape<1>
  %0 = tosa.reshape %a, %s : (tensor<1x2x3x4xi8>, !tosa.shape<1>) -> tensor<24xi8>
  %1 = tosa.identity %a : (tensor<1x2x3x4xi8>) -> tensor<1x2x3x4xi8>
  return %0, %1 : tensor<24xi8>, tensor<1x2x3x4xi8>
}

// -----

// CMSIS-NN has 4-D int8 transpose, concat and pad; everything else is portable.
// CHECK-LABEL: func.func @transpose$int8_and_int16
// CHECK: "cmsisnn.transpose"(%arg0) {mcu.source_op = "tosa.transpose", perms = array<i32: 0, 3, 1, 2>} : (tensor<1x2x3x4xi8>) -> tensor<1x4x2x3xi8>
// CHECK: "portable.transpose"(%arg1) {mcu.source_op = "tosa.transpose", perms = array<i32: 1, 0>} : (tensor<2x3xi16>) -> tensor<3x2xi16>
// CHECK-NOT: = tosa.
// PORTABLE-LABEL: func.func @transpose$int8_and_int16
// PORTABLE: "portable.transpose"(%arg0)
// PORTABLE: "portable.transpose"(%arg1)
func.func @transpose$int8_and_int16(%a: tensor<1x2x3x4xi8>, %b: tensor<2x3xi16>) -> (tensor<1x4x2x3xi8>, tensor<3x2xi16>) {
  %0 = tosa.transpose %a {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x2x3x4xi8>) -> tensor<1x4x2x3xi8>
  %1 = tosa.transpose %b {perms = array<i32: 1, 0>} : (tensor<2x3xi16>) -> tensor<3x2xi16>
  return %0, %1 : tensor<1x4x2x3xi8>, tensor<3x2xi16>
}

// -----

// Concat inputs come in runs of equal types, one variadic group each.
// CHECK-LABEL: func.func @concat$int8_and_int16
// CHECK: "cmsisnn.concat"(%arg0, %arg1, %arg0) {axis = 3 : i32, mcu.source_op = "tosa.concat", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0>} : (tensor<1x2x3x4xi8>, tensor<1x2x3x1xi8>, tensor<1x2x3x4xi8>) -> tensor<1x2x3x9xi8>
// CHECK: "portable.concat"(%arg2, %arg2) {axis = 0 : i32, mcu.source_op = "tosa.concat", operandSegmentSizes = array<i32: 2, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x3xi16>, tensor<2x3xi16>) -> tensor<4x3xi16>
// CHECK-NOT: = tosa.
// PORTABLE-LABEL: func.func @concat$int8_and_int16
// PORTABLE: "portable.concat"(%arg0, %arg1, %arg0)
// PORTABLE: "portable.concat"(%arg2, %arg2)
func.func @concat$int8_and_int16(%a: tensor<1x2x3x4xi8>, %b: tensor<1x2x3x1xi8>, %c: tensor<2x3xi16>) -> (tensor<1x2x3x9xi8>, tensor<4x3xi16>) {
  %0 = tosa.concat %a, %b, %a {axis = 3 : i32} : (tensor<1x2x3x4xi8>, tensor<1x2x3x1xi8>, tensor<1x2x3x4xi8>) -> tensor<1x2x3x9xi8>
  %1 = tosa.concat %c, %c {axis = 0 : i32} : (tensor<2x3xi16>, tensor<2x3xi16>) -> tensor<4x3xi16>
  return %0, %1 : tensor<1x2x3x9xi8>, tensor<4x3xi16>
}

// -----

// `padding` is [before, after] per axis.
// CHECK-LABEL: func.func @pad$int8_and_int16
// CHECK: "cmsisnn.pad"(%arg0) {mcu.source_op = "tosa.pad", pad_value = -7 : i32, padding = array<i32: 0, 0, 1, 1, 0, 0, 0, 0>} : (tensor<1x2x3x4xi8>) -> tensor<1x4x3x4xi8>
// CHECK: "portable.pad"(%arg1) {mcu.source_op = "tosa.pad", pad_value = 5 : i32, padding = array<i32: 1, 1, 1, 1>} : (tensor<2x3xi16>) -> tensor<4x5xi16>
// CHECK-NOT: = tosa.
// PORTABLE-LABEL: func.func @pad$int8_and_int16
// PORTABLE: "portable.pad"(%arg0)
// PORTABLE: "portable.pad"(%arg1)
func.func @pad$int8_and_int16(%a: tensor<1x2x3x4xi8>, %b: tensor<2x3xi16>) -> (tensor<1x4x3x4xi8>, tensor<4x5xi16>) {
  %p4 = tosa.const_shape {values = dense<[0, 0, 1, 1, 0, 0, 0, 0]> : tensor<8xindex>} : () -> !tosa.shape<8>
  %v8 = "tosa.const"() {values = dense<-7> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.pad %a, %p4, %v8 : (tensor<1x2x3x4xi8>, !tosa.shape<8>, tensor<1xi8>) -> tensor<1x4x3x4xi8>
  %p2 = tosa.const_shape {values = dense<[1, 1, 1, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %v16 = "tosa.const"() {values = dense<5> : tensor<1xi16>} : () -> tensor<1xi16>
  %1 = tosa.pad %b, %p2, %v16 : (tensor<2x3xi16>, !tosa.shape<4>, tensor<1xi16>) -> tensor<4x5xi16>
  return %0, %1 : tensor<1x4x3x4xi8>, tensor<4x5xi16>
}

// -----

// CHECK-LABEL: func.func @others$slice_tile_reverse_gather
// CHECK: "portable.slice"(%arg0) {mcu.source_op = "tosa.slice", start = array<i32: 1, 1>} : (tensor<2x3xi16>) -> tensor<1x2xi16>
// CHECK: "portable.tile"(%arg0) {mcu.source_op = "tosa.tile"} : (tensor<2x3xi16>) -> tensor<4x6xi16>
// CHECK: "portable.reverse"(%arg0) {axis = 1 : i32, mcu.source_op = "tosa.reverse"} : (tensor<2x3xi16>) -> tensor<2x3xi16>
// CHECK: "portable.gather"(%arg1, %arg2) {mcu.source_op = "tosa.gather"} : (tensor<1x5x3xi8>, tensor<1x2xi32>) -> tensor<1x2x3xi8>
// CHECK-NOT: = tosa.
func.func @others$slice_tile_reverse_gather(%a: tensor<2x3xi16>, %v: tensor<1x5x3xi8>, %i: tensor<1x2xi32>) -> (tensor<1x2xi16>, tensor<4x6xi16>, tensor<2x3xi16>, tensor<1x2x3xi8>) {
  %st = tosa.const_shape {values = dense<[1, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %sz = tosa.const_shape {values = dense<[1, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.slice %a, %st, %sz : (tensor<2x3xi16>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x2xi16>
  %m = tosa.const_shape {values = dense<[2, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %1 = tosa.tile %a, %m : (tensor<2x3xi16>, !tosa.shape<2>) -> tensor<4x6xi16>
  %2 = tosa.reverse %a {axis = 1 : i32} : (tensor<2x3xi16>) -> tensor<2x3xi16>
  %3 = tosa.gather %v, %i : (tensor<1x5x3xi8>, tensor<1x2xi32>) -> tensor<1x2x3xi8>
  return %0, %1, %2, %3 : tensor<1x2xi16>, tensor<4x6xi16>, tensor<2x3xi16>, tensor<1x2x3xi8>
}

// -----

// Run-time ids clamped to [0, K - 1] before the gather (the frontend's lookup): mcu_gather clamps
// itself, so it reads the ids and the two int32 ops go. Another clamp (here [0, K - 2]) stays.
// CHECK-LABEL: func.func @gather$clamped_ids
// CHECK-NOT: portable.binary
// CHECK: %[[G:.*]] = "portable.gather"(%arg0, %arg1) {mcu.source_op = "tosa.gather"} : (tensor<1x5x3xi8>, tensor<1x2xi32>) -> tensor<1x2x3xi8>
// CHECK: portable.binary
// CHECK: portable.binary
// CHECK: "portable.gather"(%arg0, %{{.*}})
// CHECK-NOT: = tosa.
func.func @gather$clamped_ids(%v: tensor<1x5x3xi8>, %i: tensor<1x2xi32>) -> (tensor<1x2x3xi8>, tensor<1x2x3xi8>) {
  %lo = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %hi = "tosa.const"() <{values = dense<4> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %0 = tosa.maximum %i, %lo : (tensor<1x2xi32>, tensor<1x1xi32>) -> tensor<1x2xi32>
  %1 = tosa.minimum %0, %hi : (tensor<1x2xi32>, tensor<1x1xi32>) -> tensor<1x2xi32>
  %2 = tosa.gather %v, %1 : (tensor<1x5x3xi8>, tensor<1x2xi32>) -> tensor<1x2x3xi8>
  %three = "tosa.const"() <{values = dense<3> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %3 = tosa.maximum %i, %lo : (tensor<1x2xi32>, tensor<1x1xi32>) -> tensor<1x2xi32>
  %4 = tosa.minimum %3, %three : (tensor<1x2xi32>, tensor<1x1xi32>) -> tensor<1x2xi32>
  %5 = tosa.gather %v, %4 : (tensor<1x5x3xi8>, tensor<1x2xi32>) -> tensor<1x2x3xi8>
  return %2, %5 : tensor<1x2x3xi8>, tensor<1x2x3xi8>
}

// -----

// scale [y_n, y_d, x_n, x_d], offset and border [y, x] as TOSA gives them.
// CHECK-LABEL: func.func @resize$nearest_and_bilinear
// CHECK: "portable.resize"(%arg0) {border = array<i32: 2, 2>, mcu.source_op = "tosa.resize", mode = #portable.resize_mode<"nearest">, offset = array<i32: 0, 0>, scale = array<i32: 4, 2, 4, 2>} : (tensor<1x2x2x3xi8>) -> tensor<1x4x4x3xi8>
// CHECK: "portable.resize"(%arg0) {border = array<i32: 2, 2>, mcu.source_op = "tosa.resize", mode = #portable.resize_mode<"bilinear">, offset = array<i32: 0, 0>, scale = array<i32: 4, 2, 4, 2>} : (tensor<1x2x2x3xi8>) -> tensor<1x4x4x3xi32>
// CHECK-NOT: = tosa.
func.func @resize$nearest_and_bilinear(%a: tensor<1x2x2x3xi8>) -> (tensor<1x4x4x3xi8>, tensor<1x4x4x3xi32>) {
  %scale = tosa.const_shape {values = dense<[4, 2, 4, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %offset = tosa.const_shape {values = dense<[0, 0]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %border = tosa.const_shape {values = dense<[2, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.resize %a, %scale, %offset, %border {mode = NEAREST_NEIGHBOR} : (tensor<1x2x2x3xi8>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x4x4x3xi8>
  %1 = tosa.resize %a, %scale, %offset, %border {mode = BILINEAR} : (tensor<1x2x2x3xi8>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x4x4x3xi32>
  return %0, %1 : tensor<1x4x4x3xi8>, tensor<1x4x4x3xi32>
}

// -----

// One portable.reduce per TOSA reduction, by kind; argmax returns int32 indices.
// CHECK-LABEL: func.func @reduce$all_kinds
// CHECK: "portable.reduce"(%arg0) {axis = 0 : i32, kind = #portable.reduce_kind<"sum">, mcu.source_op = "tosa.reduce_sum"} : (tensor<2x3xi32>) -> tensor<1x3xi32>
// CHECK: "portable.reduce"(%arg0) {axis = 1 : i32, kind = #portable.reduce_kind<"max">, mcu.source_op = "tosa.reduce_max"} : (tensor<2x3xi32>) -> tensor<2x1xi32>
// CHECK: "portable.reduce"(%arg0) {axis = 1 : i32, kind = #portable.reduce_kind<"min">, mcu.source_op = "tosa.reduce_min"} : (tensor<2x3xi32>) -> tensor<2x1xi32>
// CHECK: "portable.reduce"(%arg0) {axis = 0 : i32, kind = #portable.reduce_kind<"product">, mcu.source_op = "tosa.reduce_product"} : (tensor<2x3xi32>) -> tensor<1x3xi32>
// CHECK: "portable.reduce"(%arg1) {axis = 1 : i32, kind = #portable.reduce_kind<"all">, mcu.source_op = "tosa.reduce_all"} : (tensor<2x3xi1>) -> tensor<2x1xi1>
// CHECK: "portable.reduce"(%arg1) {axis = 0 : i32, kind = #portable.reduce_kind<"any">, mcu.source_op = "tosa.reduce_any"} : (tensor<2x3xi1>) -> tensor<1x3xi1>
// CHECK: "portable.argmax"(%arg2) {axis = 0 : i32, mcu.source_op = "tosa.argmax"} : (tensor<2x3xi8>) -> tensor<3xi32>
// CHECK-NOT: = tosa.
func.func @reduce$all_kinds(%a: tensor<2x3xi32>, %b: tensor<2x3xi1>, %c: tensor<2x3xi8>) -> (tensor<1x3xi32>, tensor<2x1xi32>, tensor<2x1xi32>, tensor<1x3xi32>, tensor<2x1xi1>, tensor<1x3xi1>, tensor<3xi32>) {
  %0 = tosa.reduce_sum %a {axis = 0 : i32} : (tensor<2x3xi32>) -> tensor<1x3xi32>
  %1 = tosa.reduce_max %a {axis = 1 : i32} : (tensor<2x3xi32>) -> tensor<2x1xi32>
  %2 = tosa.reduce_min %a {axis = 1 : i32} : (tensor<2x3xi32>) -> tensor<2x1xi32>
  %3 = tosa.reduce_product %a {axis = 0 : i32} : (tensor<2x3xi32>) -> tensor<1x3xi32>
  %4 = tosa.reduce_all %b {axis = 1 : i32} : (tensor<2x3xi1>) -> tensor<2x1xi1>
  %5 = tosa.reduce_any %b {axis = 0 : i32} : (tensor<2x3xi1>) -> tensor<1x3xi1>
  %6 = tosa.argmax %c {axis = 0 : i32} : (tensor<2x3xi8>) -> tensor<3xi32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<1x3xi32>, tensor<2x1xi32>, tensor<2x1xi32>, tensor<1x3xi32>, tensor<2x1xi1>, tensor<1x3xi1>, tensor<3xi32>
}

// -----

// scatter: one portable call (values copied, then the indexed rows replaced).
// CHECK-LABEL: func.func @scatter
// CHECK: "portable.scatter"(%arg0, %arg1, %arg2) {mcu.source_op = "tosa.scatter"} : (tensor<1x5x3xi16>, tensor<1x2xi32>, tensor<1x2x3xi16>) -> tensor<1x5x3xi16>
func.func @scatter(%v: tensor<1x5x3xi16>, %i: tensor<1x2xi32>, %x: tensor<1x2x3xi16>) -> tensor<1x5x3xi16> {
  %0 = tosa.scatter %v, %i, %x : (tensor<1x5x3xi16>, tensor<1x2xi32>, tensor<1x2x3xi16>) -> tensor<1x5x3xi16>
  return %0 : tensor<1x5x3xi16>
}

// -----

// A concat read only by a shuffle that writes its halves one after the other (what
// mcu-chunk-transposes leaves): one copy per input straight to its place. Input 0 (1x2x2x4,
// channel c of pixel p) goes to half c / 2, row p, slot (c % 2) * 2: sizes 4 pixels x 2 halves
// x 2 channels, strides 4, 16, 2, offset 0; input 1 the same at offset 1.
// CHECK-LABEL: func.func @concat_then_shuffle
// CHECK: "portable.concat_transposed"(%arg0, %arg1) {axis = 3 : i32, layout = array<i32: 3, 0, 4, 4, 2, 16, 2, 2, 3, 1, 4, 4, 2, 16, 2, 2>, mcu.source_op = "tosa.concat+tosa.transpose"{{.*}}} : (tensor<1x2x2x4xi8>, tensor<1x2x2x4xi8>) -> tensor<2x4x2x2xi8>
// CHECK-NOT: transpose"(
// CHECK-NOT: = tosa.
// PORTABLE-LABEL: func.func @concat_then_shuffle
// PORTABLE: "portable.concat_transposed"(%arg0, %arg1)
func.func @concat_then_shuffle(%a: tensor<1x2x2x4xi8>, %b: tensor<1x2x2x4xi8>) -> tensor<2x4x2x2xi8> {
  %c = tosa.concat %a, %b {axis = 3 : i32} : (tensor<1x2x2x4xi8>, tensor<1x2x2x4xi8>) -> tensor<1x2x2x8xi8>
  %s = tosa.const_shape {values = dense<[4, 2, 2, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %v = tosa.reshape %c, %s : (tensor<1x2x2x8xi8>, !tosa.shape<4>) -> tensor<4x2x2x2xi8>
  %t = tosa.transpose %v {perms = array<i32: 2, 0, 3, 1>} : (tensor<4x2x2x2xi8>) -> tensor<2x4x2x2xi8>
  return %t : tensor<2x4x2x2xi8>
}

// -----

// The concat is also read by something else: it is kept, and so is the transpose.
// CHECK-LABEL: func.func @concat_read_twice
// CHECK: "cmsisnn.concat"
// CHECK: "cmsisnn.transpose"
func.func @concat_read_twice(%a: tensor<1x2x2x4xi8>, %b: tensor<1x2x2x4xi8>) -> (tensor<2x4x2x2xi8>, tensor<1x2x2x8xi8>) {
  %c = tosa.concat %a, %b {axis = 3 : i32} : (tensor<1x2x2x4xi8>, tensor<1x2x2x4xi8>) -> tensor<1x2x2x8xi8>
  %s = tosa.const_shape {values = dense<[4, 2, 2, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %v = tosa.reshape %c, %s : (tensor<1x2x2x8xi8>, !tosa.shape<4>) -> tensor<4x2x2x2xi8>
  %t = tosa.transpose %v {perms = array<i32: 2, 0, 3, 1>} : (tensor<4x2x2x2xi8>) -> tensor<2x4x2x2xi8>
  return %t, %c : tensor<2x4x2x2xi8>, tensor<1x2x2x8xi8>
}

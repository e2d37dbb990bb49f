// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s
// RUN: mcu-opt %s --split-input-file --mcu-attach-target --mcu-convert-tosa-to-cmsisnn=backend=portable | FileCheck %s

// LayerNorm over 8 values (int8; negative gammas): the 30-odd TOSA ops of frontend/lowering/norm.py
// become one mcu_norm call reading the int8 input (its cast absorbed).
// CHECK-LABEL: func.func @layer_norm
// CHECK: "portable.norm"(%arg0,
// CHECK-SAME: batch = 2 : i32, centre = 1 : i32, count = 8 : i32
// CHECK-SAME: group_size = 8 : i32, groups = 1 : i32
// CHECK-SAME: (tensor<2x8xi8>, tensor<513xi16>, tensor<4x8xi32>) -> tensor<2x8xi8>
// CHECK-NOT: "portable.
// CHECK: return
  func.func @layer_norm(%arg0: tensor<2x8xi8>) -> (tensor<2x8xi8>) {
    %0 = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
    %1 = "tosa.const"() <{values = dense<46> : tensor<1xi8>}> : () -> tensor<1xi8>
    %2 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %3 = "tosa.const"() <{values = dense<[[-182448, 544016, -621318, -404118, -1964096, -1361582, -847487, 76158]]> : tensor<1x8xi32>}> : () -> tensor<1x8xi32>
    %4 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %5 = "tosa.const"() <{values = dense<[29, 22, 22, 22, 23, 23, 27, 22]> : tensor<8xi8>}> : () -> tensor<8xi8>
    %6 = "tosa.const"() <{values = dense<[2139920857, 1197882991, 1837866528, 1643357953, 1720105794, 1197595234, 1415775850, 1770528692]> : tensor<8xi32>}> : () -> tensor<8xi32>
    %7 = "tosa.const"() <{values = dense<[[-1, 1, -1, -1, -1, 1, -1, 1]]> : tensor<1x8xi32>}> : () -> tensor<1x8xi32>
    %8 = "tosa.const"() <{values = dense<7> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %9 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %10 = "tosa.const"() <{values = dense<7> : tensor<1xi8>}> : () -> tensor<1xi8>
    %11 = "tosa.const"() <{values = dense<"0xFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7F807F027F867E0B7E917D197DA27C2D7CB87B457BD47A637AF47986791979AD784278D97770770977A2763D76D87575751375B1745174F17392733573D8727C722172C6716D711471BC7065700F70B96F656F116FBD6E6B6E196EC86D786D286DD96C8A6C3D6CF06BA36B576B0C6BC26A786A2E6AE5699D6956690F69C86882683D68F867B46770672C67EA66A76666662466E465A36563652465E564A76469642B64EE63B16375633963FE62C36288624E621462DB61A26169613161F960C2608A6054601D60E75FB25F7C5F475F135FDE5EAA5E775E445E115EDE5DAC5D7A5D485D175DE55CB55C845C545C245CF55BC55B965B675B395B0B5BDD5AAF5A825A555A285AFB59CF59A35977594B592059F558CA589F5875584B582158F757CE57A5577C5753572A570257DA56B2568B5663563C561556EE55C755A1557B5555552F550955E454BF549954755450542B540754E353BF539B537853545331530E53EB52C852A652845261523F521D52FC51DA51B95197517651565135511451F450D350B35093507350545034501550F54FD64FB74F984F7A4F5B4F3D4F1E4F004FE24EC44EA74E894E6B4E4E4E314E144EF74DDA4DBD4DA04D844D684D4B4D2F4D134DF74CDC4CC04CA44C894C6E4C524C374C1C4C024CE74BCC4BB24B974B7D4B634B494B2F4B154BFB4AE14AC84AAE4A954A7C4A624A494A304A174AFF49E649CD49B5499D4984496C4954493C4924490C49F448DD48C548AE4896487F48684851483A4823480C48F547DE47C847B1479B4784476E47584742472C4716470047EA46D446BF46A94694467E46694654463E4629461446FF45EA45D645C145AC45974583456E455A45464532451D450945F544E144CD44B944A64492447E446B445744444430441D440A44F743E343D043BD43AA439843854372435F434D433A43284315430343F042DE42CC42BA42A84296428442724260424E423C422A4219420742F641E441D341C141B0419F418E417C416B415A4149413841274116410641F540E440D440C340B240A2409140814071406040504040403040204010400040"> : tensor<513xi16>}> : () -> tensor<513xi16>
    %12 = "tosa.const"() <{values = dense<32768> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %13 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %14 = "tosa.const"() <{values = dense<-2> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %15 = "tosa.const"() <{values = dense<17> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %16 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %17 = "tosa.const"() <{values = dense<8> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %18 = tosa.cast %arg0 : (tensor<2x8xi8>) -> tensor<2x8xi32>
    %19 = tosa.reduce_sum %18 {axis = 1 : i32} : (tensor<2x8xi32>) -> tensor<2x1xi32>
    %20 = tosa.mul %18, %17, %16 : (tensor<2x8xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<2x8xi32>
    %21 = tosa.sub %20, %19 : (tensor<2x8xi32>, tensor<2x1xi32>) -> tensor<2x8xi32>
    %22 = tosa.mul %21, %21, %16 : (tensor<2x8xi32>, tensor<2x8xi32>, tensor<1xi8>) -> tensor<2x8xi32>
    %23 = tosa.reduce_sum %22 {axis = 1 : i32} : (tensor<2x8xi32>) -> tensor<2x1xi32>
    %24 = tosa.add %23, %15 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %25 = tosa.clz %24 : (tensor<2x1xi32>) -> tensor<2x1xi32>
    %26 = tosa.sub %15, %25 : (tensor<1x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi32>
    %27 = tosa.bitwise_and %26, %14 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %28 = tosa.sub %13, %27 : (tensor<1x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi32>
    %29 = tosa.maximum %28, %13 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %30 = tosa.maximum %27, %13 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %31 = tosa.logical_left_shift %24, %29 : (tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi32>
    %32 = tosa.arithmetic_right_shift %31, %30 {round = false} : (tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi32>
    %33 = tosa.sub %32, %12 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %34 = tosa.cast %33 : (tensor<2x1xi32>) -> tensor<2x1xi16>
    %35 = tosa.table %34, %11 : (tensor<2x1xi16>, tensor<513xi16>) -> tensor<2x1xi32>
    %36 = tosa.mul %21, %35, %10 : (tensor<2x8xi32>, tensor<2x1xi32>, tensor<1xi8>) -> tensor<2x8xi32>
    %37 = tosa.arithmetic_right_shift %27, %9 {round = false} : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %38 = tosa.add %37, %8 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %39 = tosa.arithmetic_right_shift %36, %38 {round = true} : (tensor<2x8xi32>, tensor<2x1xi32>) -> tensor<2x8xi32>
    %40 = tosa.mul %39, %7, %16 : (tensor<2x8xi32>, tensor<1x8xi32>, tensor<1xi8>) -> tensor<2x8xi32>
    %41 = tosa.rescale %40, %6, %5, %4, %4 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x8xi32>, tensor<8xi32>, tensor<8xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<2x8xi32>
    %42 = tosa.add %41, %3 : (tensor<2x8xi32>, tensor<1x8xi32>) -> tensor<2x8xi32>
    %43 = tosa.rescale %42, %2, %1, %4, %0 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<2x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<2x8xi8>
    return %43 : tensor<2x8xi8>
  }

// -----

// GroupNorm, 2 groups of 2 channels over 3x3: normalised as [N, S, G, C / G] after the transpose
// to channels last; the transposes stay (in a network the layout passes fold them).
// CHECK-LABEL: func.func @group_norm
// CHECK: "portable.transpose"
// CHECK: "portable.norm"(
// CHECK-SAME: batch = 1 : i32, centre = 1 : i32, count = 18 : i32
// CHECK-SAME: group_size = 2 : i32, groups = 2 : i32
// CHECK-SAME: spatial = 9 : i32
// CHECK-NOT: "portable.binary
// CHECK: return
  func.func @group_norm(%arg0: tensor<1x4x3x3xi8>) -> (tensor<1x4x3x3xi8>) {
    %0 = tosa.const_shape  {values = dense<[1, 4, 3, 3]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %1 = tosa.const_shape  {values = dense<[1, 9, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %2 = "tosa.const"() <{values = dense<18> : tensor<1x1x1xi32>}> : () -> tensor<1x1x1xi32>
    %3 = tosa.const_shape  {values = dense<[1, 9, 2, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %4 = tosa.const_shape  {values = dense<[1, 4, 9]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %5 = "tosa.const"() <{values = dense<-2> : tensor<1xi8>}> : () -> tensor<1xi8>
    %6 = "tosa.const"() <{values = dense<46> : tensor<1xi8>}> : () -> tensor<1xi8>
    %7 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %8 = "tosa.const"() <{values = dense<[[[-634643, 441860, -32647, 1306493]]]> : tensor<1x1x4xi32>}> : () -> tensor<1x1x4xi32>
    %9 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %10 = "tosa.const"() <{values = dense<[28, 22, 21, 22]> : tensor<4xi8>}> : () -> tensor<4xi8>
    %11 = "tosa.const"() <{values = dense<[1286330579, 1440121972, 1104762313, 1975682026]> : tensor<4xi32>}> : () -> tensor<4xi32>
    %12 = "tosa.const"() <{values = dense<[[[-1, 1, -1, -1]]]> : tensor<1x1x4xi32>}> : () -> tensor<1x1x4xi32>
    %13 = "tosa.const"() <{values = dense<7> : tensor<1x1x1x1xi32>}> : () -> tensor<1x1x1x1xi32>
    %14 = "tosa.const"() <{values = dense<1> : tensor<1x1x1x1xi32>}> : () -> tensor<1x1x1x1xi32>
    %15 = "tosa.const"() <{values = dense<7> : tensor<1xi8>}> : () -> tensor<1xi8>
    %16 = "tosa.const"() <{values = dense<"0xFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7F807F027F867E0B7E917D197DA27C2D7CB87B457BD47A637AF47986791979AD784278D97770770977A2763D76D87575751375B1745174F17392733573D8727C722172C6716D711471BC7065700F70B96F656F116FBD6E6B6E196EC86D786D286DD96C8A6C3D6CF06BA36B576B0C6BC26A786A2E6AE5699D6956690F69C86882683D68F867B46770672C67EA66A76666662466E465A36563652465E564A76469642B64EE63B16375633963FE62C36288624E621462DB61A26169613161F960C2608A6054601D60E75FB25F7C5F475F135FDE5EAA5E775E445E115EDE5DAC5D7A5D485D175DE55CB55C845C545C245CF55BC55B965B675B395B0B5BDD5AAF5A825A555A285AFB59CF59A35977594B592059F558CA589F5875584B582158F757CE57A5577C5753572A570257DA56B2568B5663563C561556EE55C755A1557B5555552F550955E454BF549954755450542B540754E353BF539B537853545331530E53EB52C852A652845261523F521D52FC51DA51B95197517651565135511451F450D350B35093507350545034501550F54FD64FB74F984F7A4F5B4F3D4F1E4F004FE24EC44EA74E894E6B4E4E4E314E144EF74DDA4DBD4DA04D844D684D4B4D2F4D134DF74CDC4CC04CA44C894C6E4C524C374C1C4C024CE74BCC4BB24B974B7D4B634B494B2F4B154BFB4AE14AC84AAE4A954A7C4A624A494A304A174AFF49E649CD49B5499D4984496C4954493C4924490C49F448DD48C548AE4896487F48684851483A4823480C48F547DE47C847B1479B4784476E47584742472C4716470047EA46D446BF46A94694467E46694654463E4629461446FF45EA45D645C145AC45974583456E455A45464532451D450945F544E144CD44B944A64492447E446B445744444430441D440A44F743E343D043BD43AA439843854372435F434D433A43284315430343F042DE42CC42BA42A84296428442724260424E423C422A4219420742F641E441D341C141B0419F418E417C416B415A4149413841274116410641F540E440D440C340B240A2409140814071406040504040403040204010400040"> : tensor<513xi16>}> : () -> tensor<513xi16>
    %17 = "tosa.const"() <{values = dense<32768> : tensor<1x1x1x1xi32>}> : () -> tensor<1x1x1x1xi32>
    %18 = "tosa.const"() <{values = dense<0> : tensor<1x1x1x1xi32>}> : () -> tensor<1x1x1x1xi32>
    %19 = "tosa.const"() <{values = dense<-2> : tensor<1x1x1x1xi32>}> : () -> tensor<1x1x1x1xi32>
    %20 = "tosa.const"() <{values = dense<17> : tensor<1x1x1x1xi32>}> : () -> tensor<1x1x1x1xi32>
    %21 = "tosa.const"() <{values = dense<124> : tensor<1x1x1x1xi32>}> : () -> tensor<1x1x1x1xi32>
    %22 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %23 = tosa.cast %arg0 : (tensor<1x4x3x3xi8>) -> tensor<1x4x3x3xi32>
    %24 = tosa.reshape %23, %4 : (tensor<1x4x3x3xi32>, !tosa.shape<3>) -> tensor<1x4x9xi32>
    %25 = tosa.transpose %24 {perms = array<i32: 0, 2, 1>} : (tensor<1x4x9xi32>) -> tensor<1x9x4xi32>
    %26 = tosa.reshape %25, %3 : (tensor<1x9x4xi32>, !tosa.shape<4>) -> tensor<1x9x2x2xi32>
    %27 = tosa.reduce_sum %26 {axis = 1 : i32} : (tensor<1x9x2x2xi32>) -> tensor<1x1x2x2xi32>
    %28 = tosa.reduce_sum %27 {axis = 3 : i32} : (tensor<1x1x2x2xi32>) -> tensor<1x1x2x1xi32>
    %29 = tosa.mul %25, %2, %22 : (tensor<1x9x4xi32>, tensor<1x1x1xi32>, tensor<1xi8>) -> tensor<1x9x4xi32>
    %30 = tosa.reshape %29, %3 : (tensor<1x9x4xi32>, !tosa.shape<4>) -> tensor<1x9x2x2xi32>
    %31 = tosa.sub %30, %28 : (tensor<1x9x2x2xi32>, tensor<1x1x2x1xi32>) -> tensor<1x9x2x2xi32>
    %32 = tosa.mul %31, %31, %22 : (tensor<1x9x2x2xi32>, tensor<1x9x2x2xi32>, tensor<1xi8>) -> tensor<1x9x2x2xi32>
    %33 = tosa.reduce_sum %32 {axis = 1 : i32} : (tensor<1x9x2x2xi32>) -> tensor<1x1x2x2xi32>
    %34 = tosa.reduce_sum %33 {axis = 3 : i32} : (tensor<1x1x2x2xi32>) -> tensor<1x1x2x1xi32>
    %35 = tosa.add %34, %21 : (tensor<1x1x2x1xi32>, tensor<1x1x1x1xi32>) -> tensor<1x1x2x1xi32>
    %36 = tosa.clz %35 : (tensor<1x1x2x1xi32>) -> tensor<1x1x2x1xi32>
    %37 = tosa.sub %20, %36 : (tensor<1x1x1x1xi32>, tensor<1x1x2x1xi32>) -> tensor<1x1x2x1xi32>
    %38 = tosa.bitwise_and %37, %19 : (tensor<1x1x2x1xi32>, tensor<1x1x1x1xi32>) -> tensor<1x1x2x1xi32>
    %39 = tosa.sub %18, %38 : (tensor<1x1x1x1xi32>, tensor<1x1x2x1xi32>) -> tensor<1x1x2x1xi32>
    %40 = tosa.maximum %39, %18 : (tensor<1x1x2x1xi32>, tensor<1x1x1x1xi32>) -> tensor<1x1x2x1xi32>
    %41 = tosa.maximum %38, %18 : (tensor<1x1x2x1xi32>, tensor<1x1x1x1xi32>) -> tensor<1x1x2x1xi32>
    %42 = tosa.logical_left_shift %35, %40 : (tensor<1x1x2x1xi32>, tensor<1x1x2x1xi32>) -> tensor<1x1x2x1xi32>
    %43 = tosa.arithmetic_right_shift %42, %41 {round = false} : (tensor<1x1x2x1xi32>, tensor<1x1x2x1xi32>) -> tensor<1x1x2x1xi32>
    %44 = tosa.sub %43, %17 : (tensor<1x1x2x1xi32>, tensor<1x1x1x1xi32>) -> tensor<1x1x2x1xi32>
    %45 = tosa.cast %44 : (tensor<1x1x2x1xi32>) -> tensor<1x1x2x1xi16>
    %46 = tosa.table %45, %16 : (tensor<1x1x2x1xi16>, tensor<513xi16>) -> tensor<1x1x2x1xi32>
    %47 = tosa.mul %31, %46, %15 : (tensor<1x9x2x2xi32>, tensor<1x1x2x1xi32>, tensor<1xi8>) -> tensor<1x9x2x2xi32>
    %48 = tosa.arithmetic_right_shift %38, %14 {round = false} : (tensor<1x1x2x1xi32>, tensor<1x1x1x1xi32>) -> tensor<1x1x2x1xi32>
    %49 = tosa.add %48, %13 : (tensor<1x1x2x1xi32>, tensor<1x1x1x1xi32>) -> tensor<1x1x2x1xi32>
    %50 = tosa.arithmetic_right_shift %47, %49 {round = true} : (tensor<1x9x2x2xi32>, tensor<1x1x2x1xi32>) -> tensor<1x9x2x2xi32>
    %51 = tosa.reshape %50, %1 : (tensor<1x9x2x2xi32>, !tosa.shape<3>) -> tensor<1x9x4xi32>
    %52 = tosa.mul %51, %12, %22 : (tensor<1x9x4xi32>, tensor<1x1x4xi32>, tensor<1xi8>) -> tensor<1x9x4xi32>
    %53 = tosa.rescale %52, %11, %10, %9, %9 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x9x4xi32>, tensor<4xi32>, tensor<4xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<1x9x4xi32>
    %54 = tosa.add %53, %8 : (tensor<1x9x4xi32>, tensor<1x1x4xi32>) -> tensor<1x9x4xi32>
    %55 = tosa.rescale %54, %7, %6, %9, %5 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x9x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x9x4xi8>
    %56 = tosa.transpose %55 {perms = array<i32: 0, 2, 1>} : (tensor<1x9x4xi8>) -> tensor<1x4x9xi8>
    %57 = tosa.reshape %56, %0 : (tensor<1x4x9xi8>, !tosa.shape<4>) -> tensor<1x4x3x3xi8>
    return %57 : tensor<1x4x3x3xi8>
  }

// -----

// RMSNorm in int16 (zero point 0: the frontend's x - 0 is folded away, x itself is the deviation).
// CHECK-LABEL: func.func @rms_norm
// CHECK: "portable.norm"(%arg0,
// CHECK-SAME: centre = 0 : i32
// CHECK-SAME: (tensor<2x8xi16>, tensor<513xi16>, tensor<4x8xi32>) -> tensor<2x8xi16>
// CHECK-NOT: "portable.
// CHECK: return
  func.func @rms_norm(%arg0: tensor<2x8xi16>) -> (tensor<2x8xi16>) {
    %0 = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
    %1 = "tosa.const"() <{values = dense<43> : tensor<1xi8>}> : () -> tensor<1xi8>
    %2 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %3 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %4 = "tosa.const"() <{values = dense<[25, 19, 18, 19, 20, 20, 24, 19]> : tensor<8xi8>}> : () -> tensor<8xi8>
    %5 = "tosa.const"() <{values = dense<[1273708885, 1425991251, 1093922198, 1956296299, 2047658937, 1425648697, 1685376610, 2107683674]> : tensor<8xi32>}> : () -> tensor<8xi32>
    %6 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %7 = "tosa.const"() <{values = dense<[[-1, 1, -1, -1, -1, 1, -1, 1]]> : tensor<1x8xi32>}> : () -> tensor<1x8xi32>
    %8 = "tosa.const"() <{values = dense<7> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %9 = "tosa.const"() <{values = dense<7> : tensor<1xi8>}> : () -> tensor<1xi8>
    %10 = "tosa.const"() <{values = dense<"0xFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7F807F027F867E0B7E917D197DA27C2D7CB87B457BD47A637AF47986791979AD784278D97770770977A2763D76D87575751375B1745174F17392733573D8727C722172C6716D711471BC7065700F70B96F656F116FBD6E6B6E196EC86D786D286DD96C8A6C3D6CF06BA36B576B0C6BC26A786A2E6AE5699D6956690F69C86882683D68F867B46770672C67EA66A76666662466E465A36563652465E564A76469642B64EE63B16375633963FE62C36288624E621462DB61A26169613161F960C2608A6054601D60E75FB25F7C5F475F135FDE5EAA5E775E445E115EDE5DAC5D7A5D485D175DE55CB55C845C545C245CF55BC55B965B675B395B0B5BDD5AAF5A825A555A285AFB59CF59A35977594B592059F558CA589F5875584B582158F757CE57A5577C5753572A570257DA56B2568B5663563C561556EE55C755A1557B5555552F550955E454BF549954755450542B540754E353BF539B537853545331530E53EB52C852A652845261523F521D52FC51DA51B95197517651565135511451F450D350B35093507350545034501550F54FD64FB74F984F7A4F5B4F3D4F1E4F004FE24EC44EA74E894E6B4E4E4E314E144EF74DDA4DBD4DA04D844D684D4B4D2F4D134DF74CDC4CC04CA44C894C6E4C524C374C1C4C024CE74BCC4BB24B974B7D4B634B494B2F4B154BFB4AE14AC84AAE4A954A7C4A624A494A304A174AFF49E649CD49B5499D4984496C4954493C4924490C49F448DD48C548AE4896487F48684851483A4823480C48F547DE47C847B1479B4784476E47584742472C4716470047EA46D446BF46A94694467E46694654463E4629461446FF45EA45D645C145AC45974583456E455A45464532451D450945F544E144CD44B944A64492447E446B445744444430441D440A44F743E343D043BD43AA439843854372435F434D433A43284315430343F042DE42CC42BA42A84296428442724260424E423C422A4219420742F641E441D341C141B0419F418E417C416B415A4149413841274116410641F540E440D440C340B240A2409140814071406040504040403040204010400040"> : tensor<513xi16>}> : () -> tensor<513xi16>
    %11 = "tosa.const"() <{values = dense<32768> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %12 = "tosa.const"() <{values = dense<-2> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %13 = "tosa.const"() <{values = dense<17> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %14 = "tosa.const"() <{values = dense<6> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %15 = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
    %16 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %17 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %18 = tosa.cast %arg0 : (tensor<2x8xi16>) -> tensor<2x8xi32>
    %19 = tosa.arithmetic_right_shift %18, %16 {round = true} : (tensor<2x8xi32>, tensor<1x1xi32>) -> tensor<2x8xi32>
    %20 = tosa.mul %19, %19, %15 : (tensor<2x8xi32>, tensor<2x8xi32>, tensor<1xi8>) -> tensor<2x8xi32>
    %21 = tosa.reduce_sum %20 {axis = 1 : i32} : (tensor<2x8xi32>) -> tensor<2x1xi32>
    %22 = tosa.add %21, %14 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %23 = tosa.clz %22 : (tensor<2x1xi32>) -> tensor<2x1xi32>
    %24 = tosa.sub %13, %23 : (tensor<1x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi32>
    %25 = tosa.bitwise_and %24, %12 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %26 = tosa.sub %17, %25 : (tensor<1x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi32>
    %27 = tosa.maximum %26, %17 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %28 = tosa.maximum %25, %17 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %29 = tosa.logical_left_shift %22, %27 : (tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi32>
    %30 = tosa.arithmetic_right_shift %29, %28 {round = false} : (tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi32>
    %31 = tosa.sub %30, %11 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %32 = tosa.cast %31 : (tensor<2x1xi32>) -> tensor<2x1xi16>
    %33 = tosa.table %32, %10 : (tensor<2x1xi16>, tensor<513xi16>) -> tensor<2x1xi32>
    %34 = tosa.mul %19, %33, %9 : (tensor<2x8xi32>, tensor<2x1xi32>, tensor<1xi8>) -> tensor<2x8xi32>
    %35 = tosa.arithmetic_right_shift %25, %16 {round = false} : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %36 = tosa.add %35, %8 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %37 = tosa.arithmetic_right_shift %34, %36 {round = true} : (tensor<2x8xi32>, tensor<2x1xi32>) -> tensor<2x8xi32>
    %38 = tosa.mul %37, %7, %6 : (tensor<2x8xi32>, tensor<1x8xi32>, tensor<1xi8>) -> tensor<2x8xi32>
    %39 = tosa.rescale %38, %5, %4, %3, %3 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x8xi32>, tensor<8xi32>, tensor<8xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<2x8xi32>
    %40 = tosa.rescale %39, %2, %1, %3, %0 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<2x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi16>) -> tensor<2x8xi16>
    return %40 : tensor<2x8xi16>
  }

// -----

// An intermediate read outside the pattern (here the rsqrt lookup, also returned): no fused
// kernel, every op on its own kernel, as computed.
// CHECK-LABEL: func.func @layer_norm_shared
// CHECK-NOT: "portable.norm"
// CHECK: "portable.table"
// CHECK: return
  func.func @layer_norm_shared(%arg0: tensor<2x8xi8>) -> (tensor<2x8xi8>, tensor<2x1xi32>) {
    %0 = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
    %1 = "tosa.const"() <{values = dense<46> : tensor<1xi8>}> : () -> tensor<1xi8>
    %2 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %3 = "tosa.const"() <{values = dense<[[-182448, 544016, -621318, -404118, -1964096, -1361582, -847487, 76158]]> : tensor<1x8xi32>}> : () -> tensor<1x8xi32>
    %4 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %5 = "tosa.const"() <{values = dense<[29, 22, 22, 22, 23, 23, 27, 22]> : tensor<8xi8>}> : () -> tensor<8xi8>
    %6 = "tosa.const"() <{values = dense<[2139920857, 1197882991, 1837866528, 1643357953, 1720105794, 1197595234, 1415775850, 1770528692]> : tensor<8xi32>}> : () -> tensor<8xi32>
    %7 = "tosa.const"() <{values = dense<[[-1, 1, -1, -1, -1, 1, -1, 1]]> : tensor<1x8xi32>}> : () -> tensor<1x8xi32>
    %8 = "tosa.const"() <{values = dense<7> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %9 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %10 = "tosa.const"() <{values = dense<7> : tensor<1xi8>}> : () -> tensor<1xi8>
    %11 = "tosa.const"() <{values = dense<"0xFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7F807F027F867E0B7E917D197DA27C2D7CB87B457BD47A637AF47986791979AD784278D97770770977A2763D76D87575751375B1745174F17392733573D8727C722172C6716D711471BC7065700F70B96F656F116FBD6E6B6E196EC86D786D286DD96C8A6C3D6CF06BA36B576B0C6BC26A786A2E6AE5699D6956690F69C86882683D68F867B46770672C67EA66A76666662466E465A36563652465E564A76469642B64EE63B16375633963FE62C36288624E621462DB61A26169613161F960C2608A6054601D60E75FB25F7C5F475F135FDE5EAA5E775E445E115EDE5DAC5D7A5D485D175DE55CB55C845C545C245CF55BC55B965B675B395B0B5BDD5AAF5A825A555A285AFB59CF59A35977594B592059F558CA589F5875584B582158F757CE57A5577C5753572A570257DA56B2568B5663563C561556EE55C755A1557B5555552F550955E454BF549954755450542B540754E353BF539B537853545331530E53EB52C852A652845261523F521D52FC51DA51B95197517651565135511451F450D350B35093507350545034501550F54FD64FB74F984F7A4F5B4F3D4F1E4F004FE24EC44EA74E894E6B4E4E4E314E144EF74DDA4DBD4DA04D844D684D4B4D2F4D134DF74CDC4CC04CA44C894C6E4C524C374C1C4C024CE74BCC4BB24B974B7D4B634B494B2F4B154BFB4AE14AC84AAE4A954A7C4A624A494A304A174AFF49E649CD49B5499D4984496C4954493C4924490C49F448DD48C548AE4896487F48684851483A4823480C48F547DE47C847B1479B4784476E47584742472C4716470047EA46D446BF46A94694467E46694654463E4629461446FF45EA45D645C145AC45974583456E455A45464532451D450945F544E144CD44B944A64492447E446B445744444430441D440A44F743E343D043BD43AA439843854372435F434D433A43284315430343F042DE42CC42BA42A84296428442724260424E423C422A4219420742F641E441D341C141B0419F418E417C416B415A4149413841274116410641F540E440D440C340B240A2409140814071406040504040403040204010400040"> : tensor<513xi16>}> : () -> tensor<513xi16>
    %12 = "tosa.const"() <{values = dense<32768> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %13 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %14 = "tosa.const"() <{values = dense<-2> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %15 = "tosa.const"() <{values = dense<17> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %16 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %17 = "tosa.const"() <{values = dense<8> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %18 = tosa.cast %arg0 : (tensor<2x8xi8>) -> tensor<2x8xi32>
    %19 = tosa.reduce_sum %18 {axis = 1 : i32} : (tensor<2x8xi32>) -> tensor<2x1xi32>
    %20 = tosa.mul %18, %17, %16 : (tensor<2x8xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<2x8xi32>
    %21 = tosa.sub %20, %19 : (tensor<2x8xi32>, tensor<2x1xi32>) -> tensor<2x8xi32>
    %22 = tosa.mul %21, %21, %16 : (tensor<2x8xi32>, tensor<2x8xi32>, tensor<1xi8>) -> tensor<2x8xi32>
    %23 = tosa.reduce_sum %22 {axis = 1 : i32} : (tensor<2x8xi32>) -> tensor<2x1xi32>
    %24 = tosa.add %23, %15 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %25 = tosa.clz %24 : (tensor<2x1xi32>) -> tensor<2x1xi32>
    %26 = tosa.sub %15, %25 : (tensor<1x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi32>
    %27 = tosa.bitwise_and %26, %14 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %28 = tosa.sub %13, %27 : (tensor<1x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi32>
    %29 = tosa.maximum %28, %13 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %30 = tosa.maximum %27, %13 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %31 = tosa.logical_left_shift %24, %29 : (tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi32>
    %32 = tosa.arithmetic_right_shift %31, %30 {round = false} : (tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi32>
    %33 = tosa.sub %32, %12 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %34 = tosa.cast %33 : (tensor<2x1xi32>) -> tensor<2x1xi16>
    %35 = tosa.table %34, %11 : (tensor<2x1xi16>, tensor<513xi16>) -> tensor<2x1xi32>
    %36 = tosa.mul %21, %35, %10 : (tensor<2x8xi32>, tensor<2x1xi32>, tensor<1xi8>) -> tensor<2x8xi32>
    %37 = tosa.arithmetic_right_shift %27, %9 {round = false} : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %38 = tosa.add %37, %8 : (tensor<2x1xi32>, tensor<1x1xi32>) -> tensor<2x1xi32>
    %39 = tosa.arithmetic_right_shift %36, %38 {round = true} : (tensor<2x8xi32>, tensor<2x1xi32>) -> tensor<2x8xi32>
    %40 = tosa.mul %39, %7, %16 : (tensor<2x8xi32>, tensor<1x8xi32>, tensor<1xi8>) -> tensor<2x8xi32>
    %41 = tosa.rescale %40, %6, %5, %4, %4 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x8xi32>, tensor<8xi32>, tensor<8xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<2x8xi32>
    %42 = tosa.add %41, %3 : (tensor<2x8xi32>, tensor<1x8xi32>) -> tensor<2x8xi32>
    %43 = tosa.rescale %42, %2, %1, %4, %0 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<2x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<2x8xi8>
    return %43, %35 : tensor<2x8xi8>, tensor<2x1xi32>
  }

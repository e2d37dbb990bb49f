// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn=softmax=cmsis-nn | FileCheck %s
// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m4 --mcu-convert-tosa-to-cmsisnn=softmax=cmsis-nn | FileCheck %s
// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s --check-prefix=TABLE
// RUN: mcu-opt %s --split-input-file --mcu-attach-target --mcu-convert-tosa-to-cmsisnn=backend=portable | FileCheck %s --check-prefix=TABLE

// The frontend's int8 softmax in arm_softmax_s8's arithmetic (input scale 0.0362): its ~60 TOSA
// ops become one arm_softmax_s8 call, the parameters recovered from the exponential table and
// checked against the kernel's arithmetic on the core's code path (MVE and DSP). Any parameters
// that reproduce all 256 table entries compute the same softmax: here the first found is one below
// TFLite's multiplier (1244562816), and diff_min -255 (TFLite: -496) excludes no int8 difference.
// CHECK-LABEL: func.func @softmax
// CHECK: "cmsisnn.softmax"(%arg0) {diff_min = -255 : i32, mcu.source_op = "softmax", mult = 1244562815 : i32, num_rows = 3 : i32, row_size = 10 : i32, shift = 22 : i32}
// CHECK-NEXT: return
// By default the same integers come from one portable kernel that looks the exponentials up
// (arm_softmax_s8 computes each one twice; GCC 12.2 builds it without MVE).
// TABLE-LABEL: func.func @softmax
// TABLE: "portable.softmax"(%arg0, %{{.*}}, %{{.*}}) {mcu.source_op = "softmax", num_rows = 3 : i32, row_size = 10 : i32}
// TABLE-SAME: (tensor<3x10xi8>, tensor<1x256x1xi32>, tensor<1x256x1xi32>) -> tensor<3x10xi8>
// TABLE-NEXT: return
  func.func @softmax(%arg0: tensor<3x10xi8>) -> (tensor<3x10xi8>) {
    %0 = tosa.const_shape  {values = dense<[3, 10]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %1 = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
    %2 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %3 = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
    %4 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %5 = "tosa.const"() <{values = dense<"0xFFFFFF7F5E54727B04210E7721EBD172E446BC6E1FD5CB6A7D43FF66AB4855638FAECC5FA141645C9ADD1A59D867EF55EBCFE052370FEE4F6026164D5224584ABA1AB347A9262645F46CB042001A51401A62073EF87ED23B9AB5B1390B4DA4373195A935EAE3C0332495E931AD0A23309EAA6C2EC7E3C52CD8262E2B03EBA42945AC292846EBBB26632D5B25FEFA062476E3BE229D778221584D51201FFE2A1F27270F1E4169FD1C9C67F51BC6CAF61A833C011A766A14191C053018B8BF53177A507F16426FB2154DD8EC14A7482E1464807613CC41C51263511A12D37575111877D610A7203D10973EA90F3E9F1A0FBB12910EE16A0C0E407B8C0D4518110D3C199A0CD655270C92A7B80B3EE94D0B09F7E60A75AE830AAEED230A2195C70988856E09FEA01809ABCAC508BFE6750832DA28088B8BDE0788E196071FC45107211C0F0729D3CE06A8D390069E085506435E1B0602C1E305371EAE05DE637A0599804805AC631805CCFCE9049C3CBD04ED13920446746804AF4F4004AA9819043C42F403BF3FD0034985AD030F078C03D7B96B03CA924C0371872E03B88D1103CD9BF50270A8DA027FAAC0024099A7024A6C8F027E1B78020B9F610251EF4B022105370266D922025C650F027AA2FC01738AEA013717D901DA42C801C907B8018560A801CF47990194B88A01F0AD7C0130236F01B8136201397B55016C554901409E3D01C5513201306C2701D9E91C012EC71201D70009018393FF00087CF6005AB7ED008542E500B61ADD00253DD5003AA7CD006356C6002B48BF00347AB80036EAB100F795AB00617BA5005F989F00F8EA99004671940070298F00B2118A0052288500B06B800031DA7B004B7277008532730071196F00AF256B00E9556700DCA86300481D6000FDB15C00D5655900B43756008B2653004D31500002574D00B1964A006DEF47005460450088E8420037874000913B3E00D4043C0040E239001DD33700BBD635006FEC3300941332008A4B3000BA932E008FEB2C007B522B00F4C72900774B280082DC26009B7A25004B2524001FDC2200A99E21007E6C200037451F0072281E00CD151D00ED0C1C007A0D1B001D171A00842919005F441800606717003E921600B0C4150073FE1400433F1400E08613000DD512008D29120026841100A2E41000CA4A10006CB60F0054270F00549D0E003C180E00E1970D00171C0D00B3A40C008F310C0084C20B006C570B0023F00A00878C0A00762C0A00D0CF090075760900492009002DCD0800057D0800B82F08002BE50700449D0700ED5707000D1507008ED406005A9606005D5A060082200600B6E80500E6B20500007F0500F34C0500AD1C05001FEE04003AC10400ED9504002A6C0400E34304000C1D040096F7030075D303009EB00300038F03009B6E03005A4F030035310300"> : tensor<1x256x1xi32>}> : () -> tensor<1x256x1xi32>
    %6 = "tosa.const"() <{values = dense<2> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %7 = "tosa.const"() <{values = dense<1073741823> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %9 = "tosa.const"() <{values = dense<4> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %10 = "tosa.const"() <{values = dense<536870912> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %11 = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
    %12 = "tosa.const"() <{values = dense<1010580540> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %13 = "tosa.const"() <{values = dense<1515870810> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %14 = "tosa.const"() <{values = dense<1073741824> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %15 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %16 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %17 = "tosa.const"() <{values = dense<2147483647> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %18 = "tosa.const"() <{values = dense<35> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %19 = "tosa.const"() <{values = dense<"0x0000080025B70700E27007001F2D0700C4EB0600BDAC0600F46F060055350600CBFC050044C60500AE910500F65E05000D2E0500E1FE040062D1040082A50400327B040062520400072B04001205040076E0030028BD03001B9B0300457A0300995A03000E3C0300991E030031020300CBE602005ECC0200E2B202004F9A02009B820200BF6B0200B355020070400200EE2B02002718020015050200B0F20100F2E00100D7CF010056BF01006DAF010014A0010047910100008301003C750100F5670100275B0100CE4E0100E542010068370100542C0100A521010057170100670D0100D203010094FA0000AAF1000011E90000C7E00000C8D8000012D10000A2C9000075C200008ABB0000DFB400006FAE00003BA800003FA20000799C0000E89600008A9100005D8C00005E8700008E820000E97D00006E7900001C750000F2700000ED6C00000D69000051650000B66100003C5E0000E25A0000A65700008854000086510000A04E0000D44B00002149000087460000054400009A410000443F0000043D0000D83A0000C0380000BC360000C9340000E8320000193100005A2F0000AB2D00000B2C00007A2A0000F7280000822700001A260000BF240000702300002E220000F6200000CA1F0000A91E0000911D0000841C0000801B0000861A000094190000AC180000CB170000F2160000211600005815000095140000DA1300002513000077120000CF1100002C11000090100000F90F0000680F0000DB0E0000540E0000D20D0000540D0000DA0C0000650C0000F50B0000880B00001F0B0000B90A0000580A0000FA0900009F09000047090000F3080000A10800005308000007080000BE0700007707000033070000F2060000B2060000750600003B06000002060000CB05000096050000630500003205000003050000D5040000A90400007F040000560400002F04000008040000E4030000C00300009E0300007D0300005D0300003F0300002103000005030000E9020000CF020000B50200009C020000850200006E02000058020000420200002E0200001A02000007020000F4010000E3010000D1010000C1010000B1010000A1010000930100008401000076010000690100005C0100005001000044010000380100002D01000023010000180100000E01000005010000FB000000F2000000EA000000E2000000D9000000D2000000CA000000C3000000BC000000B5000000AF000000A9000000A30000009D00000097000000920000008D00000088000000830000007E0000007A00000075000000710000006D0000006900000066000000620000005F0000005B0000005800000055000000520000004F0000004C000000490000004700000044000000420000003F0000003D0000003B00000039000000370000003500000033000000"> : tensor<1x256x1xi32>}> : () -> tensor<1x256x1xi32>
    %20 = tosa.const_shape  {values = dense<[1, 30]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %21 = tosa.cast %arg0 : (tensor<3x10xi8>) -> tensor<3x10xi32>
    %22 = tosa.reduce_max %21 {axis = 1 : i32} : (tensor<3x10xi32>) -> tensor<3x1xi32>
    %23 = tosa.sub %22, %21 : (tensor<3x1xi32>, tensor<3x10xi32>) -> tensor<3x10xi32>
    %24 = tosa.reshape %23, %20 : (tensor<3x10xi32>, !tosa.shape<2>) -> tensor<1x30xi32>
    %25 = tosa.gather %19, %24 : (tensor<1x256x1xi32>, tensor<1x30xi32>) -> tensor<1x30x1xi32>
    %26 = tosa.reshape %25, %0 : (tensor<1x30x1xi32>, !tosa.shape<2>) -> tensor<3x10xi32>
    %27 = tosa.reduce_sum %26 {axis = 1 : i32} : (tensor<3x10xi32>) -> tensor<3x1xi32>
    %28 = tosa.clz %27 : (tensor<3x1xi32>) -> tensor<3x1xi32>
    %29 = tosa.sub %18, %28 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %30 = tosa.logical_left_shift %27, %28 : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %31 = tosa.bitwise_and %30, %17 : (tensor<3x1xi32>, tensor<1x1xi32>) -> tensor<3x1xi32>
    %32 = tosa.arithmetic_right_shift %31, %15 {round = false} : (tensor<3x1xi32>, tensor<1x1xi32>) -> tensor<3x1xi32>
    %33 = tosa.add %32, %14 : (tensor<3x1xi32>, tensor<1x1xi32>) -> tensor<3x1xi32>
    %34 = tosa.mul %33, %12, %11 : (tensor<3x1xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %35 = tosa.sub %13, %34 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %36 = tosa.mul %33, %35, %11 : (tensor<3x1xi32>, tensor<3x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %37 = tosa.sub %10, %36 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %38 = tosa.abs %37 : (tensor<3x1xi32>) -> tensor<3x1xi32>
    %39 = tosa.mul %35, %38, %11 : (tensor<3x1xi32>, tensor<3x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %40 = tosa.greater %16, %37 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi1>
    %41 = tosa.sub %16, %39 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %42 = tosa.select %40, %41, %39 : (tensor<3x1xi1>, tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %43 = tosa.mul %42, %9, %8 : (tensor<3x1xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %44 = tosa.add %35, %43 : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %45 = tosa.mul %33, %44, %11 : (tensor<3x1xi32>, tensor<3x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %46 = tosa.sub %10, %45 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %47 = tosa.abs %46 : (tensor<3x1xi32>) -> tensor<3x1xi32>
    %48 = tosa.mul %44, %47, %11 : (tensor<3x1xi32>, tensor<3x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %49 = tosa.greater %16, %46 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi1>
    %50 = tosa.sub %16, %48 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %51 = tosa.select %49, %50, %48 : (tensor<3x1xi1>, tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %52 = tosa.mul %51, %9, %8 : (tensor<3x1xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %53 = tosa.add %44, %52 : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %54 = tosa.mul %33, %53, %11 : (tensor<3x1xi32>, tensor<3x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %55 = tosa.sub %10, %54 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %56 = tosa.abs %55 : (tensor<3x1xi32>) -> tensor<3x1xi32>
    %57 = tosa.mul %53, %56, %11 : (tensor<3x1xi32>, tensor<3x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %58 = tosa.greater %16, %55 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi1>
    %59 = tosa.sub %16, %57 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %60 = tosa.select %58, %59, %57 : (tensor<3x1xi1>, tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %61 = tosa.mul %60, %9, %8 : (tensor<3x1xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %62 = tosa.add %53, %61 : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %63 = tosa.minimum %62, %7 : (tensor<3x1xi32>, tensor<1x1xi32>) -> tensor<3x1xi32>
    %64 = tosa.greater %62, %63 : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi1>
    %65 = tosa.cast %64 : (tensor<3x1xi1>) -> tensor<3x1xi32>
    %66 = tosa.mul %63, %6, %8 : (tensor<3x1xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %67 = tosa.add %66, %65 : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %68 = tosa.gather %5, %24 : (tensor<1x256x1xi32>, tensor<1x30xi32>) -> tensor<1x30x1xi32>
    %69 = tosa.reshape %68, %0 : (tensor<1x30x1xi32>, !tosa.shape<2>) -> tensor<3x10xi32>
    %70 = tosa.mul %69, %67, %11 : (tensor<3x10xi32>, tensor<3x1xi32>, tensor<1xi8>) -> tensor<3x10xi32>
    %71 = tosa.arithmetic_right_shift %70, %29 {round = true} : (tensor<3x10xi32>, tensor<3x1xi32>) -> tensor<3x10xi32>
    %72 = tosa.rescale %71, %4, %3, %2, %1 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<3x10xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<3x10xi8>
    return %72 : tensor<3x10xi8>
  }

// -----

// The same form over the first axis (ResNeSt's and SKNet's softmax over paths): the axis moved
// last by a transpose, the row kernel, and a transpose back.
// CHECK-LABEL: func.func @softmax_inner_axis
// CHECK: transpose
// CHECK: "cmsisnn.softmax"(%{{.*}}) {diff_min = -255 : i32, mcu.source_op = "softmax", mult = 1244562815 : i32, num_rows = 10 : i32, row_size = 3 : i32, shift = 22 : i32}
// CHECK-SAME: (tensor<10x3xi8>) -> tensor<10x3xi8>
// CHECK: transpose
// CHECK: return
// TABLE-LABEL: func.func @softmax_inner_axis
// TABLE: transpose
// TABLE: "portable.softmax"(%{{.*}}, %{{.*}}, %{{.*}}) {mcu.source_op = "softmax", num_rows = 10 : i32, row_size = 3 : i32}
// TABLE: transpose
// TABLE: return

  func.func @softmax_inner_axis(%arg0: tensor<3x10xi8>) -> (tensor<3x10xi8>) {
    %0 = tosa.const_shape  {values = dense<[3, 10]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %1 = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
    %2 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %3 = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
    %4 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %5 = "tosa.const"() <{values = dense<"0xFFFFFF7F5E54727B04210E7721EBD172E446BC6E1FD5CB6A7D43FF66AB4855638FAECC5FA141645C9ADD1A59D867EF55EBCFE052370FEE4F6026164D5224584ABA1AB347A9262645F46CB042001A51401A62073EF87ED23B9AB5B1390B4DA4373195A935EAE3C0332495E931AD0A23309EAA6C2EC7E3C52CD8262E2B03EBA42945AC292846EBBB26632D5B25FEFA062476E3BE229D778221584D51201FFE2A1F27270F1E4169FD1C9C67F51BC6CAF61A833C011A766A14191C053018B8BF53177A507F16426FB2154DD8EC14A7482E1464807613CC41C51263511A12D37575111877D610A7203D10973EA90F3E9F1A0FBB12910EE16A0C0E407B8C0D4518110D3C199A0CD655270C92A7B80B3EE94D0B09F7E60A75AE830AAEED230A2195C70988856E09FEA01809ABCAC508BFE6750832DA28088B8BDE0788E196071FC45107211C0F0729D3CE06A8D390069E085506435E1B0602C1E305371EAE05DE637A0599804805AC631805CCFCE9049C3CBD04ED13920446746804AF4F4004AA9819043C42F403BF3FD0034985AD030F078C03D7B96B03CA924C0371872E03B88D1103CD9BF50270A8DA027FAAC0024099A7024A6C8F027E1B78020B9F610251EF4B022105370266D922025C650F027AA2FC01738AEA013717D901DA42C801C907B8018560A801CF47990194B88A01F0AD7C0130236F01B8136201397B55016C554901409E3D01C5513201306C2701D9E91C012EC71201D70009018393FF00087CF6005AB7ED008542E500B61ADD00253DD5003AA7CD006356C6002B48BF00347AB80036EAB100F795AB00617BA5005F989F00F8EA99004671940070298F00B2118A0052288500B06B800031DA7B004B7277008532730071196F00AF256B00E9556700DCA86300481D6000FDB15C00D5655900B43756008B2653004D31500002574D00B1964A006DEF47005460450088E8420037874000913B3E00D4043C0040E239001DD33700BBD635006FEC3300941332008A4B3000BA932E008FEB2C007B522B00F4C72900774B280082DC26009B7A25004B2524001FDC2200A99E21007E6C200037451F0072281E00CD151D00ED0C1C007A0D1B001D171A00842919005F441800606717003E921600B0C4150073FE1400433F1400E08613000DD512008D29120026841100A2E41000CA4A10006CB60F0054270F00549D0E003C180E00E1970D00171C0D00B3A40C008F310C0084C20B006C570B0023F00A00878C0A00762C0A00D0CF090075760900492009002DCD0800057D0800B82F08002BE50700449D0700ED5707000D1507008ED406005A9606005D5A060082200600B6E80500E6B20500007F0500F34C0500AD1C05001FEE04003AC10400ED9504002A6C0400E34304000C1D040096F7030075D303009EB00300038F03009B6E03005A4F030035310300"> : tensor<1x256x1xi32>}> : () -> tensor<1x256x1xi32>
    %6 = "tosa.const"() <{values = dense<2> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %7 = "tosa.const"() <{values = dense<1073741823> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %9 = "tosa.const"() <{values = dense<4> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %10 = "tosa.const"() <{values = dense<536870912> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %11 = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
    %12 = "tosa.const"() <{values = dense<1010580540> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %13 = "tosa.const"() <{values = dense<1515870810> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %14 = "tosa.const"() <{values = dense<1073741824> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %15 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %16 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %17 = "tosa.const"() <{values = dense<2147483647> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %18 = "tosa.const"() <{values = dense<35> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %19 = "tosa.const"() <{values = dense<"0x0000080025B70700E27007001F2D0700C4EB0600BDAC0600F46F060055350600CBFC050044C60500AE910500F65E05000D2E0500E1FE040062D1040082A50400327B040062520400072B04001205040076E0030028BD03001B9B0300457A0300995A03000E3C0300991E030031020300CBE602005ECC0200E2B202004F9A02009B820200BF6B0200B355020070400200EE2B02002718020015050200B0F20100F2E00100D7CF010056BF01006DAF010014A0010047910100008301003C750100F5670100275B0100CE4E0100E542010068370100542C0100A521010057170100670D0100D203010094FA0000AAF1000011E90000C7E00000C8D8000012D10000A2C9000075C200008ABB0000DFB400006FAE00003BA800003FA20000799C0000E89600008A9100005D8C00005E8700008E820000E97D00006E7900001C750000F2700000ED6C00000D69000051650000B66100003C5E0000E25A0000A65700008854000086510000A04E0000D44B00002149000087460000054400009A410000443F0000043D0000D83A0000C0380000BC360000C9340000E8320000193100005A2F0000AB2D00000B2C00007A2A0000F7280000822700001A260000BF240000702300002E220000F6200000CA1F0000A91E0000911D0000841C0000801B0000861A000094190000AC180000CB170000F2160000211600005815000095140000DA1300002513000077120000CF1100002C11000090100000F90F0000680F0000DB0E0000540E0000D20D0000540D0000DA0C0000650C0000F50B0000880B00001F0B0000B90A0000580A0000FA0900009F09000047090000F3080000A10800005308000007080000BE0700007707000033070000F2060000B2060000750600003B06000002060000CB05000096050000630500003205000003050000D5040000A90400007F040000560400002F04000008040000E4030000C00300009E0300007D0300005D0300003F0300002103000005030000E9020000CF020000B50200009C020000850200006E02000058020000420200002E0200001A02000007020000F4010000E3010000D1010000C1010000B1010000A1010000930100008401000076010000690100005C0100005001000044010000380100002D01000023010000180100000E01000005010000FB000000F2000000EA000000E2000000D9000000D2000000CA000000C3000000BC000000B5000000AF000000A9000000A30000009D00000097000000920000008D00000088000000830000007E0000007A00000075000000710000006D0000006900000066000000620000005F0000005B0000005800000055000000520000004F0000004C000000490000004700000044000000420000003F0000003D0000003B00000039000000370000003500000033000000"> : tensor<1x256x1xi32>}> : () -> tensor<1x256x1xi32>
    %20 = tosa.const_shape  {values = dense<[1, 30]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %21 = tosa.cast %arg0 : (tensor<3x10xi8>) -> tensor<3x10xi32>
    %22 = tosa.reduce_max %21 {axis = 0 : i32} : (tensor<3x10xi32>) -> tensor<1x10xi32>
    %23 = tosa.sub %22, %21 : (tensor<1x10xi32>, tensor<3x10xi32>) -> tensor<3x10xi32>
    %24 = tosa.reshape %23, %20 : (tensor<3x10xi32>, !tosa.shape<2>) -> tensor<1x30xi32>
    %25 = tosa.gather %19, %24 : (tensor<1x256x1xi32>, tensor<1x30xi32>) -> tensor<1x30x1xi32>
    %26 = tosa.reshape %25, %0 : (tensor<1x30x1xi32>, !tosa.shape<2>) -> tensor<3x10xi32>
    %27 = tosa.reduce_sum %26 {axis = 0 : i32} : (tensor<3x10xi32>) -> tensor<1x10xi32>
    %28 = tosa.clz %27 : (tensor<1x10xi32>) -> tensor<1x10xi32>
    %29 = tosa.sub %18, %28 : (tensor<1x1xi32>, tensor<1x10xi32>) -> tensor<1x10xi32>
    %30 = tosa.logical_left_shift %27, %28 : (tensor<1x10xi32>, tensor<1x10xi32>) -> tensor<1x10xi32>
    %31 = tosa.bitwise_and %30, %17 : (tensor<1x10xi32>, tensor<1x1xi32>) -> tensor<1x10xi32>
    %32 = tosa.arithmetic_right_shift %31, %15 {round = false} : (tensor<1x10xi32>, tensor<1x1xi32>) -> tensor<1x10xi32>
    %33 = tosa.add %32, %14 : (tensor<1x10xi32>, tensor<1x1xi32>) -> tensor<1x10xi32>
    %34 = tosa.mul %33, %12, %11 : (tensor<1x10xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<1x10xi32>
    %35 = tosa.sub %13, %34 : (tensor<1x1xi32>, tensor<1x10xi32>) -> tensor<1x10xi32>
    %36 = tosa.mul %33, %35, %11 : (tensor<1x10xi32>, tensor<1x10xi32>, tensor<1xi8>) -> tensor<1x10xi32>
    %37 = tosa.sub %10, %36 : (tensor<1x1xi32>, tensor<1x10xi32>) -> tensor<1x10xi32>
    %38 = tosa.abs %37 : (tensor<1x10xi32>) -> tensor<1x10xi32>
    %39 = tosa.mul %35, %38, %11 : (tensor<1x10xi32>, tensor<1x10xi32>, tensor<1xi8>) -> tensor<1x10xi32>
    %40 = tosa.greater %16, %37 : (tensor<1x1xi32>, tensor<1x10xi32>) -> tensor<1x10xi1>
    %41 = tosa.sub %16, %39 : (tensor<1x1xi32>, tensor<1x10xi32>) -> tensor<1x10xi32>
    %42 = tosa.select %40, %41, %39 : (tensor<1x10xi1>, tensor<1x10xi32>, tensor<1x10xi32>) -> tensor<1x10xi32>
    %43 = tosa.mul %42, %9, %8 : (tensor<1x10xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<1x10xi32>
    %44 = tosa.add %35, %43 : (tensor<1x10xi32>, tensor<1x10xi32>) -> tensor<1x10xi32>
    %45 = tosa.mul %33, %44, %11 : (tensor<1x10xi32>, tensor<1x10xi32>, tensor<1xi8>) -> tensor<1x10xi32>
    %46 = tosa.sub %10, %45 : (tensor<1x1xi32>, tensor<1x10xi32>) -> tensor<1x10xi32>
    %47 = tosa.abs %46 : (tensor<1x10xi32>) -> tensor<1x10xi32>
    %48 = tosa.mul %44, %47, %11 : (tensor<1x10xi32>, tensor<1x10xi32>, tensor<1xi8>) -> tensor<1x10xi32>
    %49 = tosa.greater %16, %46 : (tensor<1x1xi32>, tensor<1x10xi32>) -> tensor<1x10xi1>
    %50 = tosa.sub %16, %48 : (tensor<1x1xi32>, tensor<1x10xi32>) -> tensor<1x10xi32>
    %51 = tosa.select %49, %50, %48 : (tensor<1x10xi1>, tensor<1x10xi32>, tensor<1x10xi32>) -> tensor<1x10xi32>
    %52 = tosa.mul %51, %9, %8 : (tensor<1x10xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<1x10xi32>
    %53 = tosa.add %44, %52 : (tensor<1x10xi32>, tensor<1x10xi32>) -> tensor<1x10xi32>
    %54 = tosa.mul %33, %53, %11 : (tensor<1x10xi32>, tensor<1x10xi32>, tensor<1xi8>) -> tensor<1x10xi32>
    %55 = tosa.sub %10, %54 : (tensor<1x1xi32>, tensor<1x10xi32>) -> tensor<1x10xi32>
    %56 = tosa.abs %55 : (tensor<1x10xi32>) -> tensor<1x10xi32>
    %57 = tosa.mul %53, %56, %11 : (tensor<1x10xi32>, tensor<1x10xi32>, tensor<1xi8>) -> tensor<1x10xi32>
    %58 = tosa.greater %16, %55 : (tensor<1x1xi32>, tensor<1x10xi32>) -> tensor<1x10xi1>
    %59 = tosa.sub %16, %57 : (tensor<1x1xi32>, tensor<1x10xi32>) -> tensor<1x10xi32>
    %60 = tosa.select %58, %59, %57 : (tensor<1x10xi1>, tensor<1x10xi32>, tensor<1x10xi32>) -> tensor<1x10xi32>
    %61 = tosa.mul %60, %9, %8 : (tensor<1x10xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<1x10xi32>
    %62 = tosa.add %53, %61 : (tensor<1x10xi32>, tensor<1x10xi32>) -> tensor<1x10xi32>
    %63 = tosa.minimum %62, %7 : (tensor<1x10xi32>, tensor<1x1xi32>) -> tensor<1x10xi32>
    %64 = tosa.greater %62, %63 : (tensor<1x10xi32>, tensor<1x10xi32>) -> tensor<1x10xi1>
    %65 = tosa.cast %64 : (tensor<1x10xi1>) -> tensor<1x10xi32>
    %66 = tosa.mul %63, %6, %8 : (tensor<1x10xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<1x10xi32>
    %67 = tosa.add %66, %65 : (tensor<1x10xi32>, tensor<1x10xi32>) -> tensor<1x10xi32>
    %68 = tosa.gather %5, %24 : (tensor<1x256x1xi32>, tensor<1x30xi32>) -> tensor<1x30x1xi32>
    %69 = tosa.reshape %68, %0 : (tensor<1x30x1xi32>, !tosa.shape<2>) -> tensor<3x10xi32>
    %70 = tosa.mul %69, %67, %11 : (tensor<3x10xi32>, tensor<1x10xi32>, tensor<1xi8>) -> tensor<3x10xi32>
    %71 = tosa.arithmetic_right_shift %70, %29 {round = true} : (tensor<3x10xi32>, tensor<1x10xi32>) -> tensor<3x10xi32>
    %72 = tosa.rescale %71, %4, %3, %2, %1 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<3x10xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<3x10xi8>
    return %72 : tensor<3x10xi8>
  }

// -----

// The same ops with one exponential changed by one: no arm_softmax_s8 computes it, so every op
// keeps its own kernel; the table kernel computes any tables, so it still takes the whole form.
// CHECK-LABEL: func.func @softmax_other_table
// CHECK-NOT: cmsisnn.softmax
// CHECK: "portable.gather"
// TABLE-LABEL: func.func @softmax_other_table
// TABLE: "portable.softmax"
  func.func @softmax_other_table(%arg0: tensor<3x10xi8>) -> (tensor<3x10xi8>) {
    %0 = tosa.const_shape  {values = dense<[3, 10]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %1 = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
    %2 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %3 = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
    %4 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %5 = "tosa.const"() <{values = dense<"0xFFFFFF7F5F54727B04210E7721EBD172E446BC6E1FD5CB6A7D43FF66AB4855638FAECC5FA141645C9ADD1A59D867EF55EBCFE052370FEE4F6026164D5224584ABA1AB347A9262645F46CB042001A51401A62073EF87ED23B9AB5B1390B4DA4373195A935EAE3C0332495E931AD0A23309EAA6C2EC7E3C52CD8262E2B03EBA42945AC292846EBBB26632D5B25FEFA062476E3BE229D778221584D51201FFE2A1F27270F1E4169FD1C9C67F51BC6CAF61A833C011A766A14191C053018B8BF53177A507F16426FB2154DD8EC14A7482E1464807613CC41C51263511A12D37575111877D610A7203D10973EA90F3E9F1A0FBB12910EE16A0C0E407B8C0D4518110D3C199A0CD655270C92A7B80B3EE94D0B09F7E60A75AE830AAEED230A2195C70988856E09FEA01809ABCAC508BFE6750832DA28088B8BDE0788E196071FC45107211C0F0729D3CE06A8D390069E085506435E1B0602C1E305371EAE05DE637A0599804805AC631805CCFCE9049C3CBD04ED13920446746804AF4F4004AA9819043C42F403BF3FD0034985AD030F078C03D7B96B03CA924C0371872E03B88D1103CD9BF50270A8DA027FAAC0024099A7024A6C8F027E1B78020B9F610251EF4B022105370266D922025C650F027AA2FC01738AEA013717D901DA42C801C907B8018560A801CF47990194B88A01F0AD7C0130236F01B8136201397B55016C554901409E3D01C5513201306C2701D9E91C012EC71201D70009018393FF00087CF6005AB7ED008542E500B61ADD00253DD5003AA7CD006356C6002B48BF00347AB80036EAB100F795AB00617BA5005F989F00F8EA99004671940070298F00B2118A0052288500B06B800031DA7B004B7277008532730071196F00AF256B00E9556700DCA86300481D6000FDB15C00D5655900B43756008B2653004D31500002574D00B1964A006DEF47005460450088E8420037874000913B3E00D4043C0040E239001DD33700BBD635006FEC3300941332008A4B3000BA932E008FEB2C007B522B00F4C72900774B280082DC26009B7A25004B2524001FDC2200A99E21007E6C200037451F0072281E00CD151D00ED0C1C007A0D1B001D171A00842919005F441800606717003E921600B0C4150073FE1400433F1400E08613000DD512008D29120026841100A2E41000CA4A10006CB60F0054270F00549D0E003C180E00E1970D00171C0D00B3A40C008F310C0084C20B006C570B0023F00A00878C0A00762C0A00D0CF090075760900492009002DCD0800057D0800B82F08002BE50700449D0700ED5707000D1507008ED406005A9606005D5A060082200600B6E80500E6B20500007F0500F34C0500AD1C05001FEE04003AC10400ED9504002A6C0400E34304000C1D040096F7030075D303009EB00300038F03009B6E03005A4F030035310300"> : tensor<1x256x1xi32>}> : () -> tensor<1x256x1xi32>
    %6 = "tosa.const"() <{values = dense<2> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %7 = "tosa.const"() <{values = dense<1073741823> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %9 = "tosa.const"() <{values = dense<4> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %10 = "tosa.const"() <{values = dense<536870912> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %11 = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
    %12 = "tosa.const"() <{values = dense<1010580540> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %13 = "tosa.const"() <{values = dense<1515870810> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %14 = "tosa.const"() <{values = dense<1073741824> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %15 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %16 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %17 = "tosa.const"() <{values = dense<2147483647> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %18 = "tosa.const"() <{values = dense<35> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %19 = "tosa.const"() <{values = dense<"0x0000080025B70700E27007001F2D0700C4EB0600BDAC0600F46F060055350600CBFC050044C60500AE910500F65E05000D2E0500E1FE040062D1040082A50400327B040062520400072B04001205040076E0030028BD03001B9B0300457A0300995A03000E3C0300991E030031020300CBE602005ECC0200E2B202004F9A02009B820200BF6B0200B355020070400200EE2B02002718020015050200B0F20100F2E00100D7CF010056BF01006DAF010014A0010047910100008301003C750100F5670100275B0100CE4E0100E542010068370100542C0100A521010057170100670D0100D203010094FA0000AAF1000011E90000C7E00000C8D8000012D10000A2C9000075C200008ABB0000DFB400006FAE00003BA800003FA20000799C0000E89600008A9100005D8C00005E8700008E820000E97D00006E7900001C750000F2700000ED6C00000D69000051650000B66100003C5E0000E25A0000A65700008854000086510000A04E0000D44B00002149000087460000054400009A410000443F0000043D0000D83A0000C0380000BC360000C9340000E8320000193100005A2F0000AB2D00000B2C00007A2A0000F7280000822700001A260000BF240000702300002E220000F6200000CA1F0000A91E0000911D0000841C0000801B0000861A000094190000AC180000CB170000F2160000211600005815000095140000DA1300002513000077120000CF1100002C11000090100000F90F0000680F0000DB0E0000540E0000D20D0000540D0000DA0C0000650C0000F50B0000880B00001F0B0000B90A0000580A0000FA0900009F09000047090000F3080000A10800005308000007080000BE0700007707000033070000F2060000B2060000750600003B06000002060000CB05000096050000630500003205000003050000D5040000A90400007F040000560400002F04000008040000E4030000C00300009E0300007D0300005D0300003F0300002103000005030000E9020000CF020000B50200009C020000850200006E02000058020000420200002E0200001A02000007020000F4010000E3010000D1010000C1010000B1010000A1010000930100008401000076010000690100005C0100005001000044010000380100002D01000023010000180100000E01000005010000FB000000F2000000EA000000E2000000D9000000D2000000CA000000C3000000BC000000B5000000AF000000A9000000A30000009D00000097000000920000008D00000088000000830000007E0000007A00000075000000710000006D0000006900000066000000620000005F0000005B0000005800000055000000520000004F0000004C000000490000004700000044000000420000003F0000003D0000003B00000039000000370000003500000033000000"> : tensor<1x256x1xi32>}> : () -> tensor<1x256x1xi32>
    %20 = tosa.const_shape  {values = dense<[1, 30]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %21 = tosa.cast %arg0 : (tensor<3x10xi8>) -> tensor<3x10xi32>
    %22 = tosa.reduce_max %21 {axis = 1 : i32} : (tensor<3x10xi32>) -> tensor<3x1xi32>
    %23 = tosa.sub %22, %21 : (tensor<3x1xi32>, tensor<3x10xi32>) -> tensor<3x10xi32>
    %24 = tosa.reshape %23, %20 : (tensor<3x10xi32>, !tosa.shape<2>) -> tensor<1x30xi32>
    %25 = tosa.gather %19, %24 : (tensor<1x256x1xi32>, tensor<1x30xi32>) -> tensor<1x30x1xi32>
    %26 = tosa.reshape %25, %0 : (tensor<1x30x1xi32>, !tosa.shape<2>) -> tensor<3x10xi32>
    %27 = tosa.reduce_sum %26 {axis = 1 : i32} : (tensor<3x10xi32>) -> tensor<3x1xi32>
    %28 = tosa.clz %27 : (tensor<3x1xi32>) -> tensor<3x1xi32>
    %29 = tosa.sub %18, %28 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %30 = tosa.logical_left_shift %27, %28 : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %31 = tosa.bitwise_and %30, %17 : (tensor<3x1xi32>, tensor<1x1xi32>) -> tensor<3x1xi32>
    %32 = tosa.arithmetic_right_shift %31, %15 {round = false} : (tensor<3x1xi32>, tensor<1x1xi32>) -> tensor<3x1xi32>
    %33 = tosa.add %32, %14 : (tensor<3x1xi32>, tensor<1x1xi32>) -> tensor<3x1xi32>
    %34 = tosa.mul %33, %12, %11 : (tensor<3x1xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %35 = tosa.sub %13, %34 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %36 = tosa.mul %33, %35, %11 : (tensor<3x1xi32>, tensor<3x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %37 = tosa.sub %10, %36 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %38 = tosa.abs %37 : (tensor<3x1xi32>) -> tensor<3x1xi32>
    %39 = tosa.mul %35, %38, %11 : (tensor<3x1xi32>, tensor<3x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %40 = tosa.greater %16, %37 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi1>
    %41 = tosa.sub %16, %39 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %42 = tosa.select %40, %41, %39 : (tensor<3x1xi1>, tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %43 = tosa.mul %42, %9, %8 : (tensor<3x1xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %44 = tosa.add %35, %43 : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %45 = tosa.mul %33, %44, %11 : (tensor<3x1xi32>, tensor<3x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %46 = tosa.sub %10, %45 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %47 = tosa.abs %46 : (tensor<3x1xi32>) -> tensor<3x1xi32>
    %48 = tosa.mul %44, %47, %11 : (tensor<3x1xi32>, tensor<3x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %49 = tosa.greater %16, %46 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi1>
    %50 = tosa.sub %16, %48 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %51 = tosa.select %49, %50, %48 : (tensor<3x1xi1>, tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %52 = tosa.mul %51, %9, %8 : (tensor<3x1xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %53 = tosa.add %44, %52 : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %54 = tosa.mul %33, %53, %11 : (tensor<3x1xi32>, tensor<3x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %55 = tosa.sub %10, %54 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %56 = tosa.abs %55 : (tensor<3x1xi32>) -> tensor<3x1xi32>
    %57 = tosa.mul %53, %56, %11 : (tensor<3x1xi32>, tensor<3x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %58 = tosa.greater %16, %55 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi1>
    %59 = tosa.sub %16, %57 : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %60 = tosa.select %58, %59, %57 : (tensor<3x1xi1>, tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %61 = tosa.mul %60, %9, %8 : (tensor<3x1xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %62 = tosa.add %53, %61 : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %63 = tosa.minimum %62, %7 : (tensor<3x1xi32>, tensor<1x1xi32>) -> tensor<3x1xi32>
    %64 = tosa.greater %62, %63 : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi1>
    %65 = tosa.cast %64 : (tensor<3x1xi1>) -> tensor<3x1xi32>
    %66 = tosa.mul %63, %6, %8 : (tensor<3x1xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<3x1xi32>
    %67 = tosa.add %66, %65 : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
    %68 = tosa.gather %5, %24 : (tensor<1x256x1xi32>, tensor<1x30xi32>) -> tensor<1x30x1xi32>
    %69 = tosa.reshape %68, %0 : (tensor<1x30x1xi32>, !tosa.shape<2>) -> tensor<3x10xi32>
    %70 = tosa.mul %69, %67, %11 : (tensor<3x10xi32>, tensor<3x1xi32>, tensor<1xi8>) -> tensor<3x10xi32>
    %71 = tosa.arithmetic_right_shift %70, %29 {round = true} : (tensor<3x10xi32>, tensor<3x1xi32>) -> tensor<3x10xi32>
    %72 = tosa.rescale %71, %4, %3, %2, %1 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<3x10xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<3x10xi8>
    return %72 : tensor<3x10xi8>
  }

// -----

// The frontend's int16 softmax (interpolated exponential table, rounded division by the row sum)
// on one portable kernel, whatever the backend.
// CHECK-LABEL: func.func @softmax_s16
// CHECK: "portable.softmax_s16"(%arg0, %{{.*}}) {mcu.source_op = "softmax", num_rows = 3 : i32, row_size = 10 : i32}
// CHECK-SAME: (tensor<3x10xi16>, tensor<513xi16>) -> tensor<3x10xi16>
// CHECK-NEXT: return
// TABLE-LABEL: func.func @softmax_s16
// TABLE: "portable.softmax_s16"
  func.func @softmax_s16(%arg0: tensor<3x10xi16>) -> (tensor<3x10xi16>) {
    %0 = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
    %1 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %2 = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
    %3 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
    %4 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %5 = "tosa.const"() <{values = dense<7> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %6 = "tosa.const"() <{values = dense<256> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %7 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %8 = "tosa.const"() <{values = dense<"0x0040DA3EBA3D9E3C883B773A6A396338603762366835733482339632AE31C930EA2F0E2F362E612D912CC52BFC2A362A7529B628FB2744279026DF2531258624DE233A239822F9215D21C4202E209A1F091F7A1EEE1D651DDE1C5A1CD71B581BDA1A5F1AE6196F19FA1887181718A8173C17D116681601169C153915D81478141A14BE1363130A13B3125D120912B61165111511C61079102E10E30F9B0F530F0D0FC70E840E410E000EBF0D800D420D050DCA0C8F0C550C1D0CE50BAE0B790B440B100BDE0AAC0A7B0A4B0A1B0AED09BF09930967093C091109E808BF0897086F0848082208FD07D807B40791076E074C072B070A07E906CA06AB068C066E06500633061706FB05E005C505AA05900577055D0545052D051505FE04E704D004BA04A4048F047A04660451043E042A0417040404F203E003CE03BC03AB039A038A037A036A035A034B033C032D031E0310030203F402E602D902CC02BF02B302A6029A028E02820277026C02600255024B02400236022C02220218020E020502FC01F301EA01E101D801D001C701BF01B701AF01A801A001990191018A0183017C0175016F01680162015B0155014F01490143013D01370132012C01270122011D01170112010E0109010401FF00FB00F600F200ED00E900E500E100DD00D900D500D100CD00CA00C600C300BF00BC00B800B500B200AF00AB00A800A500A2009F009D009A009700940092008F008C008A0088008500830080007E007C007A0077007500730071006F006D006B006900670065006400620060005E005D005B0059005800560055005300520050004F004D004C004B00490048004700450044004300420041003F003E003D003C003B003A0039003800370036003500340033003200310030002F002F002E002D002C002B002B002A002900280028002700260025002500240024002300220022002100200020001F001F001E001E001D001D001C001C001B001B001A001A001900190018001800170017001700160016001500150015001400140014001300130013001200120012001100110011001000100010000F000F000F000F000E000E000E000E000D000D000D000D000C000C000C000C000C000B000B000B000B000B000A000A000A000A000A0009000900090009000900090009000800080008000800080008000700070007000700070007000700070006000600060006000600060006000600060006000500050005000500050005000500050005000500050004000400040004000400040004000400040004000400040004000400030003000300030003000300030003000300030003000300030003000300030003000300020002000200020002000200020002000200020002000200020002000200020002000200020002000200020002000200020002000200"> : tensor<513xi16>}> : () -> tensor<513xi16>
    %9 = "tosa.const"() <{values = dense<32768> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
    %10 = tosa.cast %arg0 : (tensor<3x10xi16>) -> tensor<3x10xi32>
    %11 = tosa.reduce_max %10 {axis = 1 : i32} : (tensor<3x10xi32>) -> tensor<3x1xi32>
    %12 = tosa.sub %11, %10 : (tensor<3x1xi32>, tensor<3x10xi32>) -> tensor<3x10xi32>
    %13 = tosa.sub %12, %9 : (tensor<3x10xi32>, tensor<1x1xi32>) -> tensor<3x10xi32>
    %14 = tosa.cast %13 : (tensor<3x10xi32>) -> tensor<3x10xi16>
    %15 = tosa.table %14, %8 : (tensor<3x10xi16>, tensor<513xi16>) -> tensor<3x10xi32>
    %16 = tosa.reduce_sum %15 {axis = 1 : i32} : (tensor<3x10xi32>) -> tensor<3x1xi32>
    %17 = tosa.mul %15, %6, %7 : (tensor<3x10xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<3x10xi32>
    %18 = tosa.arithmetic_right_shift %16, %5 {round = false} : (tensor<3x1xi32>, tensor<1x1xi32>) -> tensor<3x1xi32>
    %19 = tosa.arithmetic_right_shift %18, %4 {round = false} : (tensor<3x1xi32>, tensor<1x1xi32>) -> tensor<3x1xi32>
    %20 = tosa.add %17, %19 : (tensor<3x10xi32>, tensor<3x1xi32>) -> tensor<3x10xi32>
    %21 = tosa.intdiv %20, %18 : (tensor<3x10xi32>, tensor<3x1xi32>) -> tensor<3x10xi32>
    %22 = tosa.rescale %21, %3, %2, %1, %0 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<3x10xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi16>) -> tensor<3x10xi16>
    return %22 : tensor<3x10xi16>
  }

# The cores mcu-mlir builds for: compiler flags and the QEMU machine whose memory map the firmware
# is linked for. Read by the toolchain file (flags) and by CMakeLists.txt (linker script).
#
# M55: MVE needs a hard or softfp float ABI (with soft it silently disappears), and GCC 12.2
# miscompiles some MVE auto-vectorised C (a wrong predicate mask), hence -fno-tree-vectorize:
# CMSIS-NN's MVE paths use intrinsics and are unaffected.
set(MCU_KNOWN_TARGETS host cortex-m0 cortex-m3 cortex-m4 cortex-m7 cortex-m33 cortex-m55)

function(mcu_target_properties target out_cpu_flags out_machine out_linker_script)
  if(target STREQUAL "cortex-m55")
    set(flags "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard -fno-tree-vectorize")
    set(machine "mps3-an547")
    set(script "mps3-an547")
  elseif(target STREQUAL "cortex-m33")
    set(flags "-mcpu=cortex-m33 -mthumb -mfloat-abi=hard")
    set(machine "mps2-an505")
    set(script "mps2-an505")
  elseif(target STREQUAL "cortex-m7")
    set(flags "-mcpu=cortex-m7 -mthumb -mfloat-abi=hard")
    set(machine "mps2-an500")
    set(script "mps2")
  elseif(target STREQUAL "cortex-m4")
    set(flags "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard")
    set(machine "mps2-an386")
    set(script "mps2")
  elseif(target STREQUAL "cortex-m3")
    set(flags "-mcpu=cortex-m3 -mthumb -mfloat-abi=soft")
    set(machine "mps2-an385")
    set(script "mps2")
  elseif(target STREQUAL "cortex-m0")
    # ARMv6-M code runs on the Cortex-M3 of mps2-an385 with identical instruction counts (the M3
    # tolerates unaligned accesses a real M0 would fault on).
    set(flags "-mcpu=cortex-m0 -mthumb -mfloat-abi=soft")
    set(machine "mps2-an385")
    set(script "mps2")
  else()
    message(FATAL_ERROR "unknown MCU_TARGET '${target}' (known: ${MCU_KNOWN_TARGETS})")
  endif()
  set(${out_cpu_flags} "${flags}" PARENT_SCOPE)
  set(${out_machine} "${machine}" PARENT_SCOPE)
  set(${out_linker_script} "${script}" PARENT_SCOPE)
endfunction()

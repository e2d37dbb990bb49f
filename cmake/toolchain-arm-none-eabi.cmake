# Cross-compiling for a Cortex-M with the GNU Arm Embedded toolchain (arm-none-eabi-gcc + newlib).
# The core comes from the MCU_TARGET cache variable (cortex-m0 ... cortex-m55, see mcu-targets.cmake).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

# try_compile projects re-read this file without the cache: forward the core to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES MCU_TARGET)
# Bare metal has no loader for a test executable; test-compile static libraries.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

if(NOT MCU_TARGET OR MCU_TARGET STREQUAL "host")
  set(MCU_TARGET "cortex-m55")
endif()

set(MCU_ARM_PREFIX "arm-none-eabi-" CACHE STRING "Prefix of the cross toolchain's executables")
find_program(MCU_ARM_GCC ${MCU_ARM_PREFIX}gcc)
if(NOT MCU_ARM_GCC)
  message(FATAL_ERROR "${MCU_ARM_PREFIX}gcc not found: install gcc-arm-none-eabi and libnewlib-arm-none-eabi")
endif()
get_filename_component(_mcu_arm_bin "${MCU_ARM_GCC}" DIRECTORY)
set(CMAKE_C_COMPILER "${_mcu_arm_bin}/${MCU_ARM_PREFIX}gcc")
set(CMAKE_CXX_COMPILER "${_mcu_arm_bin}/${MCU_ARM_PREFIX}g++")
set(CMAKE_ASM_COMPILER "${_mcu_arm_bin}/${MCU_ARM_PREFIX}gcc")
set(CMAKE_OBJCOPY "${_mcu_arm_bin}/${MCU_ARM_PREFIX}objcopy" CACHE FILEPATH "")
set(CMAKE_SIZE "${_mcu_arm_bin}/${MCU_ARM_PREFIX}size" CACHE FILEPATH "")

include("${CMAKE_CURRENT_LIST_DIR}/mcu-targets.cmake")
mcu_target_properties("${MCU_TARGET}" _mcu_cpu_flags _mcu_machine _mcu_script)

set(CMAKE_C_FLAGS_INIT "${_mcu_cpu_flags} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${_mcu_cpu_flags} -ffunction-sections -fdata-sections")
set(CMAKE_ASM_FLAGS_INIT "${_mcu_cpu_flags}")
# Our own startup (startup.S) replaces crt0; newlib-nano provides memcpy/memset/libm.
set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=nano.specs --specs=nosys.specs -nostartfiles -Wl,--gc-sections")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)

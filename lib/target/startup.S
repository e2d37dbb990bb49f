/* Cortex-M startup for the QEMU machines: vector table and reset handler.
 *
 * The reset handler enables the FPU / MVE before any C runs (compiled C may use FP or vector
 * registers from its first instruction), copies .data from its load address, zeroes .bss and
 * calls mcu_target_start() (platform_semihost.c), which runs main and exits through semihosting.
 * Written for ARMv6-M's Thumb subset so the same file serves every core. */
  .syntax unified
  .thumb

  .section .vectors, "a"
  .align 2
  .globl __mcu_vectors
__mcu_vectors:
  .word __mcu_stack_top
  .word mcu_reset_handler
  .rept 14                  /* NMI, HardFault, MemManage, BusFault, UsageFault, ..., SysTick */
  .word mcu_fault_handler
  .endr
  .rept 32                  /* external interrupts: none are enabled */
  .word mcu_fault_handler
  .endr

  .text
  .thumb_func
  .globl mcu_reset_handler
  .type mcu_reset_handler, %function
mcu_reset_handler:
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
  /* CPACR: full access to CP10 and CP11 (FPU, and MVE on ARMv8.1-M). */
  ldr r0, =0xE000ED88
  ldr r1, [r0]
  ldr r2, =(0xF << 20)
  orrs r1, r1, r2
  str r1, [r0]
  dsb
  isb
#endif
  ldr r1, =__mcu_data_load
  ldr r2, =__mcu_data_start
  ldr r3, =__mcu_data_end
1:
  cmp r2, r3
  bhs 2f
  ldr r0, [r1]
  str r0, [r2]
  adds r1, r1, #4
  adds r2, r2, #4
  b 1b
2:
  ldr r2, =__mcu_bss_start
  ldr r3, =__mcu_bss_end
  movs r0, #0
3:
  cmp r2, r3
  bhs 4f
  str r0, [r2]
  adds r2, r2, #4
  b 3b
4:
  bl mcu_target_start
  b .
  .size mcu_reset_handler, . - mcu_reset_handler

  .thumb_func
  .globl mcu_fault_handler
  .type mcu_fault_handler, %function
mcu_fault_handler:
  ldr r0, =__mcu_stack_top  /* a fault may come from a broken stack: start from a fresh one */
  mov sp, r0
  bl mcu_target_fault
  b .
  .size mcu_fault_handler, . - mcu_fault_handler

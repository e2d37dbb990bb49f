/* Reset and exit for a bare Cortex-M under QEMU: vector table, FPU/MVE access, .data and .bss,
 * then main(); its result leaves through Arm semihosting. */
#include <stdint.h>

extern uint32_t __stack_top, __data_load, __data_start, __data_end, __bss_start, __bss_end;
int main(void);
void reset_handler(void);

static int semihost(int op, const void *arg) {
  register int r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void semihost_print(const char *text) { semihost(0x04, text); } /* SYS_WRITE0 */

static void semihost_exit(int status) {
  /* SYS_EXIT: ADP_Stopped_ApplicationExit (0x20026) ends QEMU with 0, anything else with 1. */
  semihost(0x18, (const void *)(uintptr_t)(status == 0 ? 0x20026 : 0x20024));
  for (;;) {
  }
}

static void fault_handler(void) {
  semihost_print("fault\n");
  semihost_exit(1);
}

void reset_handler(void) {
  /* CP10/CP11 (FPU, and MVE on the M55) before any code that may use them. */
  *(volatile uint32_t *)0xE000ED88 |= 0xFu << 20;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
  volatile uint32_t *src = &__data_load;
  for (volatile uint32_t *dst = &__data_start; dst < &__data_end;) *dst++ = *src++;
  for (volatile uint32_t *dst = &__bss_start; dst < &__bss_end;) *dst++ = 0;
  semihost_exit(main());
}

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)&__stack_top, reset_handler, fault_handler, fault_handler,
    fault_handler, fault_handler, fault_handler, 0, 0, 0, 0, fault_handler, fault_handler, 0,
    fault_handler, fault_handler};

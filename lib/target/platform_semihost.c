/* The harness platform on bare-metal Cortex-M under a semihosting debugger or QEMU.
 *
 * Every host service is an Arm semihosting call (BKPT 0xAB): the command line, input files, the
 * console and the exit code (SYS_EXIT_EXTENDED, so QEMU exits with main's return value). Startup
 * (startup.S) calls mcu_target_start() once memory is initialised. */
#include <stdint.h>
#include <string.h>

#include "platform.h"

enum {
  SYS_OPEN = 0x01,
  SYS_CLOSE = 0x02,
  SYS_WRITE0 = 0x04,
  SYS_READ = 0x06,
  SYS_FLEN = 0x0C,
  SYS_GET_CMDLINE = 0x15,
  SYS_EXIT = 0x18,
  SYS_EXIT_EXTENDED = 0x20,
};
enum { ADP_STOPPED_APPLICATION_EXIT = 0x20026 };
enum { OPEN_MODE_READ_BINARY = 1 };

static int32_t semihost_call(int32_t operation, void *argument) {
  register int32_t r0 __asm__("r0") = operation;
  register void *r1 __asm__("r1") = argument;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

long mcu_platform_read_file(const char *path, void *dst, long capacity) {
  uint32_t open_args[3] = {(uint32_t)(uintptr_t)path, OPEN_MODE_READ_BINARY, (uint32_t)strlen(path)};
  int32_t handle = semihost_call(SYS_OPEN, open_args);
  if (handle < 0) return -1;
  uint32_t handle_arg = (uint32_t)handle;
  long size = semihost_call(SYS_FLEN, &handle_arg);
  if (size >= 0 && size <= capacity) {
    uint32_t read_args[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)dst, (uint32_t)size};
    if (semihost_call(SYS_READ, read_args) != 0) size = -1; /* returns the bytes NOT read */
  }
  semihost_call(SYS_CLOSE, &handle_arg);
  return size;
}

void mcu_platform_puts(const char *text) { semihost_call(SYS_WRITE0, (void *)text); }

/* The heap region between the linker script's __mcu_heap_start and __mcu_heap_end. */
extern uint8_t __mcu_heap_start[], __mcu_heap_end[];
static uint8_t *heap_next = __mcu_heap_start;

void *mcu_platform_alloc(size_t bytes) {
  uint8_t *start = (uint8_t *)(((uintptr_t)heap_next + 15u) & ~(uintptr_t)15u);
  if (bytes > (size_t)(__mcu_heap_end - start)) return NULL;
  heap_next = start + bytes;
  memset(start, 0, bytes);
  return start;
}

__attribute__((noreturn)) void mcu_target_exit(int code) {
  uint32_t exit_args[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)code};
  semihost_call(SYS_EXIT_EXTENDED, exit_args);
  /* A debugger without the extended call: plain SYS_EXIT (the code is lost). */
  semihost_call(SYS_EXIT, (void *)(uintptr_t)ADP_STOPPED_APPLICATION_EXIT);
  for (;;) {
  }
}

/* newlib's exit paths (abort(), a failed assert) end here instead of in libnosys's endless loop. */
__attribute__((noreturn)) void _exit(int code) { mcu_target_exit(code); }

__attribute__((noreturn)) void __assert_func(const char *file, int line, const char *function,
                                             const char *expression) {
  char number[12];
  int length = 0;
  unsigned value = line > 0 ? (unsigned)line : 0u;
  do {
    number[length++] = (char)('0' + value % 10u);
    value /= 10u;
  } while (value && length < 11);
  char text[12];
  for (int i = 0; i < length; i++) text[i] = number[length - 1 - i];
  text[length] = '\0';
  mcu_platform_puts("error: assertion failed: ");
  mcu_platform_puts(expression ? expression : "?");
  mcu_platform_puts(" (");
  mcu_platform_puts(file ? file : "?");
  mcu_platform_puts(":");
  mcu_platform_puts(text);
  mcu_platform_puts(function ? ", " : "");
  mcu_platform_puts(function ? function : "");
  mcu_platform_puts(")\n");
  mcu_target_exit(3);
}

#define MCU_MAX_ARGS 16
static char command_line[512];

int main(int argc, char **argv);

/* The stack is painted before main and checked after it: the untouched part gives the peak use,
 * and a touched bottom word means the stack overflowed (on the MPS2 machines the memory below it
 * does not fault, so nothing else would tell). */
extern uint32_t __mcu_stack_bottom[], __mcu_stack_top[];
#define STACK_PAINT 0x5AC3A55Au

static void paint_stack(void) {
  uint32_t *sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  for (uint32_t *word = __mcu_stack_bottom; word < sp - 16; word++) *word = STACK_PAINT;
}

static void report_stack(void) {
  const uint32_t *word = __mcu_stack_bottom;
  while (word < __mcu_stack_top && *word == STACK_PAINT) word++;
  uint32_t used = (uint32_t)((const uint8_t *)__mcu_stack_top - (const uint8_t *)word);
  char text[40] = "stack_bytes ";
  char digits[12];
  int count = 0, length = 12;
  do {
    digits[count++] = (char)('0' + used % 10u);
    used /= 10u;
  } while (used);
  while (count) text[length++] = digits[--count];
  text[length++] = '\n';
  text[length] = '\0';
  mcu_platform_puts(text);
  if (word == __mcu_stack_bottom) {
    mcu_platform_puts("error: stack overflow: the model needs more than the firmware's stack (raise MCU_STACK_BYTES)\n");
    mcu_target_exit(4);
  }
}

/* ARMv7-M: a no-access MPU region over the 16 MiB below the stack, so an overflow faults at once
 * (the MPS2 machines have nothing there that would). Only when the stack starts a 16 MiB block, as
 * in mps2.ld.in. ARMv8-M machines (AN505, AN547) fault below their RAM by themselves. */
static void guard_below_stack(void) {
#if defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__)
  uintptr_t bottom = (uintptr_t)__mcu_stack_bottom;
  volatile uint32_t *const mpu_type = (volatile uint32_t *)0xE000ED90u;
  volatile uint32_t *const mpu_ctrl = (volatile uint32_t *)0xE000ED94u;
  volatile uint32_t *const mpu_rnr = (volatile uint32_t *)0xE000ED98u;
  volatile uint32_t *const mpu_rbar = (volatile uint32_t *)0xE000ED9Cu;
  volatile uint32_t *const mpu_rasr = (volatile uint32_t *)0xE000EDA0u;
  if ((bottom & 0xFFFFFFu) != 0 || bottom < 0x1000000u || ((*mpu_type >> 8) & 0xFFu) == 0) return;
  *mpu_rnr = 0;
  *mpu_rbar = (uint32_t)(bottom - 0x1000000u);
  *mpu_rasr = (1u << 28) /* XN */ | (0u << 24) /* no access */ | (23u << 1) /* 2^24 bytes */ | 1u;
  *mpu_ctrl = (1u << 2) /* default map elsewhere */ | 1u;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
}

/* Splits the semihosting command line on spaces (file names given to the harness have none). */
__attribute__((noreturn)) void mcu_target_start(void) {
  guard_below_stack();
  paint_stack();
  char *argv[MCU_MAX_ARGS + 1];
  int argc = 0;
  uint32_t cmdline_args[2] = {(uint32_t)(uintptr_t)command_line, sizeof(command_line) - 1};
  if (semihost_call(SYS_GET_CMDLINE, cmdline_args) == 0) {
    char *cursor = command_line;
    while (*cursor && argc < MCU_MAX_ARGS) {
      while (*cursor == ' ') *cursor++ = '\0';
      if (!*cursor) break;
      argv[argc++] = cursor;
      while (*cursor && *cursor != ' ') cursor++;
    }
  }
  if (argc == 0) argv[argc++] = "firmware";
  argv[argc] = 0;
  int status = main(argc, argv);
  report_stack();
  mcu_target_exit(status);
}

/* Any fault: say where and stop with a distinctive exit code instead of hanging QEMU. */
void mcu_target_fault(void) {
  static const char hex[] = "0123456789abcdef";
  char text[] = "mcu: fault, CFSR=0x00000000 HFSR=0x00000000\n";
  uint32_t registers[2] = {*(volatile uint32_t *)0xE000ED28u, *(volatile uint32_t *)0xE000ED2Cu};
  for (int r = 0; r < 2; r++)
    for (int i = 0; i < 8; i++) text[19 + r * 16 + i] = hex[(registers[r] >> (28 - 4 * i)) & 0xF];
  mcu_platform_puts(text);
  mcu_target_exit(134);
}

/* What the harness needs from the machine it runs on: arguments, input files, console, memory.
 * platform_host.c implements it with stdio, platform_semihost.c with Arm semihosting (QEMU). */
#ifndef MCU_TARGET_PLATFORM_H
#define MCU_TARGET_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

/* Reads the whole file at `path` into `dst` (at most `capacity` bytes).
 * Returns its size, or -1 when it cannot be opened or read. */
long mcu_platform_read_file(const char *path, void *dst, long capacity);

/* Writes a NUL-terminated string to the console (stdout). */
void mcu_platform_puts(const char *text);

/* Memory for input and output buffers; never freed. NULL when exhausted. */
void *mcu_platform_alloc(size_t bytes);

#endif /* MCU_TARGET_PLATFORM_H */

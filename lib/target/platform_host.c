/* The harness platform on a hosted C library (the `host` target). */
#include <stdio.h>
#include <stdlib.h>

#include "platform.h"

long mcu_platform_read_file(const char *path, void *dst, long capacity) {
  FILE *file = fopen(path, "rb");
  if (!file) return -1;
  long size = (long)fread(dst, 1, (size_t)capacity, file);
  /* A file longer than `capacity` is reported by its true size so the caller can complain. */
  if (size == capacity && fgetc(file) != EOF) size = capacity + 1;
  if (ferror(file)) size = -1;
  fclose(file);
  return size;
}

void mcu_platform_puts(const char *text) { fputs(text, stdout); }

void *mcu_platform_alloc(size_t bytes) { return calloc(1, bytes ? bytes : 1); }

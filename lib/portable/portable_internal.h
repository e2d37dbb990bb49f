/* Helpers shared by the portable kernels (not part of the public API). */
#ifndef MCU_PORTABLE_INTERNAL_H
#define MCU_PORTABLE_INTERNAL_H

#include "mcu/portable.h"

static inline int64_t mcu_read(const void *base, mcu_dtype_t type, int32_t i) {
  switch (type) {
    case MCU_I8: return ((const int8_t *)base)[i];
    case MCU_I16: return ((const int16_t *)base)[i];
    case MCU_I32: return ((const int32_t *)base)[i];
    case MCU_U8: return ((const uint8_t *)base)[i];
    case MCU_U16: return ((const uint16_t *)base)[i];
    case MCU_BOOL: return ((const uint8_t *)base)[i] != 0;
    case MCU_I64: return ((const int64_t *)base)[i];
  }
  return 0;
}

/* Stores the low bits (two's complement wrap), as a C cast would. */
static inline void mcu_write(void *base, mcu_dtype_t type, int32_t i, int64_t v) {
  switch (type) {
    case MCU_I8: ((int8_t *)base)[i] = (int8_t)v; break;
    case MCU_I16: ((int16_t *)base)[i] = (int16_t)v; break;
    case MCU_I32: ((int32_t *)base)[i] = (int32_t)v; break;
    case MCU_U8: ((uint8_t *)base)[i] = (uint8_t)v; break;
    case MCU_U16: ((uint16_t *)base)[i] = (uint16_t)v; break;
    case MCU_BOOL: ((uint8_t *)base)[i] = (uint8_t)(v != 0); break;
    case MCU_I64: ((int64_t *)base)[i] = v; break;
  }
}

static inline int64_t mcu_type_min(mcu_dtype_t type) {
  switch (type) {
    case MCU_I8: return -128;
    case MCU_I16: return -32768;
    case MCU_I32: return INT32_MIN;
    case MCU_I64: return INT64_MIN;
    default: return 0;
  }
}

static inline int64_t mcu_type_max(mcu_dtype_t type) {
  switch (type) {
    case MCU_I8: return 127;
    case MCU_I16: return 32767;
    case MCU_I32: return INT32_MAX;
    case MCU_U8: return 255;
    case MCU_U16: return 65535;
    case MCU_BOOL: return 1;
    case MCU_I64: return INT64_MAX;
  }
  return 0;
}

static inline int32_t mcu_type_bytes(mcu_dtype_t type) {
  switch (type) {
    case MCU_I8: case MCU_U8: case MCU_BOOL: return 1;
    case MCU_I16: case MCU_U16: return 2;
    case MCU_I32: return 4;
    case MCU_I64: return 8;
  }
  return 1;
}

static inline int64_t mcu_clip(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

static inline int32_t mcu_numel(const mcu_shape_t *s) {
  int32_t n = 1;
  for (int32_t i = 0; i < s->rank; ++i) n *= s->dims[i];
  return n;
}

/* Row-major strides of `s`; a broadcast (size 1) dimension gets stride 0 when `broadcast`. */
static inline void mcu_strides(const mcu_shape_t *s, int32_t *strides, int broadcast) {
  int32_t st = 1;
  for (int32_t i = s->rank - 1; i >= 0; --i) {
    strides[i] = (broadcast && s->dims[i] == 1) ? 0 : st;
    st *= s->dims[i];
  }
}

/* TOSA MUL on int32: int64 product, rounded right shift when shift > 0, int32 result. */
static inline int32_t mcu_tosa_mul_i32(int32_t a, int32_t b, int32_t shift) {
  int64_t product = (int64_t)a * b;
  if (shift > 0) product = (product + ((int64_t)1 << (shift - 1))) >> shift;
  return (int32_t)product;
}

/* Leading zeros of a 32-bit pattern (32 for 0), TOSA CLZ. */
static inline int32_t mcu_clz32(uint32_t v) {
  if (v == 0) return 32;
#if defined(__GNUC__) || defined(__clang__)
  return (int32_t)__builtin_clz(v); /* one CLZ instruction on Armv7-M and later */
#else
  int32_t n = 0;
  while (!(v & 0x80000000u)) {
    v <<= 1;
    ++n;
  }
  return n;
#endif
}

/* TOSA TABLE on int16: 513 points, 7 interpolated fraction bits (an int32 result). */
static inline int32_t mcu_tosa_table_s16(const int16_t *table, int32_t value) {
  const int32_t index = value + 32768, base = index >> 7, frac = index & 0x7F;
  return (int32_t)table[base] * 128 + ((int32_t)table[base + 1] - table[base]) * frac;
}

/* TOSA ARITHMETIC_RIGHT_SHIFT with round = true. */
static inline int32_t mcu_tosa_shift_round(int32_t a, int32_t shift) {
  if (shift <= 0) return a;
  return (a >> shift) + ((a >> (shift - 1)) & 1);
}

/* Two's complement wrap without signed overflow (TOSA forbids the overflow anyway). */
static inline int32_t mcu_wrap_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static inline int32_t mcu_wrap_sub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

#endif /* MCU_PORTABLE_INTERNAL_H */

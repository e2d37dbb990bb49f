/* Portable elementwise kernels (TOSA integer semantics, broadcasting). */
#include "portable_internal.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#define MCU_HAVE_MVE 1
#endif

/* Walks every output index of `out`; calls back with the flat offsets into in1 and in2. */
#define MCU_FOR_EACH_BROADCAST(out_shape, s1, s2, body)                                          \
  do {                                                                                           \
    int32_t idx_[MCU_PORTABLE_MAX_RANK] = {0};                                                   \
    const int32_t total_ = mcu_numel(out_shape);                                                 \
    int32_t o1_ = 0, o2_ = 0;                                                                    \
    for (int32_t flat_ = 0; flat_ < total_; ++flat_) {                                           \
      const int32_t i1 = o1_, i2 = o2_, o = flat_;                                               \
      body;                                                                                      \
      for (int32_t d_ = (out_shape)->rank - 1; d_ >= 0; --d_) {                                  \
        if (++idx_[d_] < (out_shape)->dims[d_]) {                                                \
          o1_ += (s1)[d_];                                                                       \
          o2_ += (s2)[d_];                                                                       \
          break;                                                                                 \
        }                                                                                        \
        o1_ -= (s1)[d_] * (idx_[d_] - 1);                                                        \
        o2_ -= (s2)[d_] * (idx_[d_] - 1);                                                        \
        idx_[d_] = 0;                                                                            \
      }                                                                                          \
    }                                                                                            \
  } while (0)

static int64_t wrap32(int64_t v) { return (int64_t)(int32_t)(uint32_t)(uint64_t)v; }

static int64_t binary_value(const mcu_binary_params_t *p, int64_t a, int64_t b, int *ok) {
  switch (p->op) {
    case MCU_BIN_ADD: return wrap32(a + b);
    case MCU_BIN_SUB: return wrap32(a - b);
    case MCU_BIN_MUL:
      if (p->in_type == MCU_I32 && p->shift > 0) {
        const int64_t product = a * b;
        return (product + ((int64_t)1 << (p->shift - 1))) >> p->shift;
      }
      return wrap32(a * b);
    case MCU_BIN_MAXIMUM: return a > b ? a : b;
    case MCU_BIN_MINIMUM: return a < b ? a : b;
    case MCU_BIN_EQUAL: return a == b;
    case MCU_BIN_GREATER: return a > b;
    case MCU_BIN_GREATER_EQUAL: return a >= b;
    case MCU_BIN_BITWISE_AND: return a & b;
    case MCU_BIN_BITWISE_OR: return a | b;
    case MCU_BIN_BITWISE_XOR: return a ^ b;
    case MCU_BIN_LOGICAL_AND: return (a != 0) && (b != 0);
    case MCU_BIN_LOGICAL_OR: return (a != 0) || (b != 0);
    case MCU_BIN_LOGICAL_XOR: return (a != 0) != (b != 0);
    case MCU_BIN_SHIFT_LEFT: return (int64_t)((uint64_t)a << (b & 31));
    case MCU_BIN_SHIFT_RIGHT: return a >> b;
    case MCU_BIN_SHIFT_RIGHT_LOGICAL: {
      const uint64_t mask = p->in_type == MCU_I8 ? 0xFFu : p->in_type == MCU_I16 ? 0xFFFFu : 0xFFFFFFFFu;
      return (int64_t)(((uint64_t)a & mask) >> (b & 31));
    }
    case MCU_BIN_SHIFT_RIGHT_ROUND: {
      int64_t r = a >> b;
      if (b > 0 && ((a >> (b - 1)) & 1)) r += 1;
      return r;
    }
    case MCU_BIN_INTDIV:
      if (b == 0) { *ok = 0; return 0; }
      return a / b; /* C99 truncates toward zero, as TOSA INTDIV */
    case MCU_BIN_POW: {
      int64_t r = 1;
      for (int64_t i = 0; i < b; ++i) r *= a;
      return r;
    }
  }
  *ok = 0;
  return 0;
}

/* int32 operands (the common case after widening rescales): the op's switch is taken once per
 * call instead of once per element. Returns 0 when the op is not one of these. */
static int binary_i32(const mcu_binary_params_t *p, const int32_t *a, const int32_t *b, void *output,
                      const int32_t *s1, const int32_t *s2) {
  int32_t *o32 = (int32_t *)output;
  uint8_t *o8 = (uint8_t *)output;
  if (p->out_type == MCU_I32) {
    switch (p->op) {
      case MCU_BIN_ADD:
        MCU_FOR_EACH_BROADCAST(&p->out, s1, s2, { o32[o] = (int32_t)((uint32_t)a[i1] + (uint32_t)b[i2]); });
        return 1;
      case MCU_BIN_SUB:
        MCU_FOR_EACH_BROADCAST(&p->out, s1, s2, { o32[o] = (int32_t)((uint32_t)a[i1] - (uint32_t)b[i2]); });
        return 1;
      case MCU_BIN_MUL:
        if (p->shift > 0) return 0;
        MCU_FOR_EACH_BROADCAST(&p->out, s1, s2, { o32[o] = (int32_t)((uint32_t)a[i1] * (uint32_t)b[i2]); });
        return 1;
      case MCU_BIN_MAXIMUM:
        MCU_FOR_EACH_BROADCAST(&p->out, s1, s2, { o32[o] = a[i1] > b[i2] ? a[i1] : b[i2]; });
        return 1;
      case MCU_BIN_MINIMUM:
        MCU_FOR_EACH_BROADCAST(&p->out, s1, s2, { o32[o] = a[i1] < b[i2] ? a[i1] : b[i2]; });
        return 1;
      default:
        return 0;
    }
  }
  if (p->out_type == MCU_BOOL) {
    switch (p->op) {
      case MCU_BIN_EQUAL:
        MCU_FOR_EACH_BROADCAST(&p->out, s1, s2, { o8[o] = (uint8_t)(a[i1] == b[i2]); });
        return 1;
      case MCU_BIN_GREATER:
        MCU_FOR_EACH_BROADCAST(&p->out, s1, s2, { o8[o] = (uint8_t)(a[i1] > b[i2]); });
        return 1;
      case MCU_BIN_GREATER_EQUAL:
        MCU_FOR_EACH_BROADCAST(&p->out, s1, s2, { o8[o] = (uint8_t)(a[i1] >= b[i2]); });
        return 1;
      default:
        return 0;
    }
  }
  return 0;
}

int mcu_binary(const mcu_binary_params_t *p, const void *in1, const void *in2, void *output) {
  int32_t s1[MCU_PORTABLE_MAX_RANK], s2[MCU_PORTABLE_MAX_RANK];
  int ok = 1;
  if (p->in1.rank != p->out.rank || p->in2.rank != p->out.rank) return MCU_STATUS_BAD_ARGUMENT;
  mcu_strides(&p->in1, s1, 1);
  mcu_strides(&p->in2, s2, 1);
  if (p->in_type == MCU_I32 &&
      binary_i32(p, (const int32_t *)in1, (const int32_t *)in2, output, s1, s2))
    return MCU_STATUS_OK;
  MCU_FOR_EACH_BROADCAST(&p->out, s1, s2, {
    const int64_t v = binary_value(p, mcu_read(in1, p->in_type, i1), mcu_read(in2, p->in_type, i2), &ok);
    mcu_write(output, p->out_type, o, v);
  });
  return ok ? MCU_STATUS_OK : MCU_STATUS_BAD_ARGUMENT;
}

int mcu_select(const mcu_binary_params_t *p, const uint8_t *cond, const mcu_shape_t *cond_shape,
               const void *in1, const void *in2, void *output) {
  int32_t s1[MCU_PORTABLE_MAX_RANK], s2[MCU_PORTABLE_MAX_RANK], sc[MCU_PORTABLE_MAX_RANK];
  mcu_strides(&p->in1, s1, 1);
  mcu_strides(&p->in2, s2, 1);
  mcu_strides(cond_shape, sc, 1);
  {
    int32_t idx[MCU_PORTABLE_MAX_RANK] = {0};
    const int32_t total = mcu_numel(&p->out);
    for (int32_t flat = 0; flat < total; ++flat) {
      int32_t o1 = 0, o2 = 0, oc = 0;
      for (int32_t d = 0; d < p->out.rank; ++d) {
        o1 += idx[d] * s1[d];
        o2 += idx[d] * s2[d];
        oc += idx[d] * sc[d];
      }
      const int64_t v = cond[oc] ? mcu_read(in1, p->in_type, o1) : mcu_read(in2, p->in_type, o2);
      mcu_write(output, p->out_type, flat, v);
      for (int32_t d = p->out.rank - 1; d >= 0; --d) {
        if (++idx[d] < p->out.dims[d]) break;
        idx[d] = 0;
      }
    }
  }
  return MCU_STATUS_OK;
}

int mcu_unary(const mcu_unary_params_t *p, const void *input, void *output) {
  for (int32_t i = 0; i < p->count; ++i) {
    const int64_t a = mcu_read(input, p->type, i);
    int64_t v = 0;
    switch (p->op) {
      case MCU_UN_ABS: v = a < 0 ? -a : a; break;
      case MCU_UN_NEGATE:
        v = mcu_clip(p->output_zp - (a - p->input_zp), mcu_type_min(p->type), mcu_type_max(p->type));
        break;
      case MCU_UN_BITWISE_NOT: v = ~a; break;
      case MCU_UN_LOGICAL_NOT: v = a == 0; break;
      case MCU_UN_CLZ: v = mcu_clz32((uint32_t)a); break;
    }
    mcu_write(output, p->type, i, v);
  }
  return MCU_STATUS_OK;
}

/* TOSA RESCALE of one value (already read), for element i. */
static int64_t rescale_value(const mcu_rescale_params_t *p, int64_t raw, int32_t i) {
  const int32_t c = p->per_channel ? i % p->channels : 0;
  const int64_t value = raw - p->input_zp;
  int64_t r;
  if (p->scale32)
    r = mcu_tosa_apply_scale_32((int32_t)value, p->multiplier[c], p->shift[c], p->double_round);
  else
    r = mcu_tosa_apply_scale_16(value, p->multiplier[c], p->shift[c]);
  return mcu_clip(r + p->output_zp, mcu_type_min(p->out_type), mcu_type_max(p->out_type));
}

int mcu_rescale(const mcu_rescale_params_t *p, const void *input, void *output) {
  /* The most common form (int32 accumulator -> int8, one scale) without per-element dispatch. */
  if (p->in_type == MCU_I32 && p->out_type == MCU_I8 && !p->per_channel && p->scale32) {
    const int32_t *in = (const int32_t *)input;
    int8_t *out = (int8_t *)output;
    const int32_t m = p->multiplier[0], sh = p->shift[0];
    for (int32_t i = 0; i < p->count; ++i) {
      const int64_t v = (int64_t)mcu_tosa_apply_scale_32((int32_t)((int64_t)in[i] - p->input_zp), m, sh,
                                                         p->double_round) + p->output_zp;
      out[i] = (int8_t)mcu_clip(v, -128, 127);
    }
    return MCU_STATUS_OK;
  }
  for (int32_t i = 0; i < p->count; ++i)
    mcu_write(output, p->out_type, i, rescale_value(p, mcu_read(input, p->in_type, i), i));
  return MCU_STATUS_OK;
}

int mcu_clamp(mcu_dtype_t type, int32_t count, int32_t min, int32_t max, const void *input,
              void *output) {
  for (int32_t i = 0; i < count; ++i)
    mcu_write(output, type, i, mcu_clip(mcu_read(input, type, i), min, max));
  return MCU_STATUS_OK;
}

int mcu_cast(mcu_dtype_t in_type, mcu_dtype_t out_type, int32_t count, const void *input,
             void *output) {
  for (int32_t i = 0; i < count; ++i) mcu_write(output, out_type, i, mcu_read(input, in_type, i));
  return MCU_STATUS_OK;
}

int mcu_table_s8_s16(int32_t count, const int16_t *table, const int8_t *input, int16_t *output) {
  const int16_t *lut = table + 128; /* indexed by the signed input itself */
  for (int32_t i = 0; i < count; ++i) output[i] = lut[input[i]];
  return MCU_STATUS_OK;
}

int mcu_table_s8(int32_t count, const int8_t *table, const int8_t *input, int8_t *output) {
  const int8_t *lut = table + 128; /* indexed by the signed input itself */
  int32_t i = 0;
#if MCU_HAVE_MVE
  /* Helium: sixteen lookups a step as one byte gather (index = input + 128 = input ^ 0x80). */
  for (; i + 16 <= count; i += 16) {
    const uint8x16_t index = veorq_u8(vldrbq_u8((const uint8_t *)input + i), vdupq_n_u8(0x80));
    vstrbq_u8((uint8_t *)output + i, vldrbq_gather_offset_u8((const uint8_t *)table, index));
  }
#endif
  /* Four lookups a step: the loop overhead is paid once per four elements. All four inputs are
     read before any output is written, so the lookup may run in place. */
  for (; i + 4 <= count; i += 4) {
    const int8_t a = input[i], b = input[i + 1], c = input[i + 2], d = input[i + 3];
    output[i] = lut[a];
    output[i + 1] = lut[b];
    output[i + 2] = lut[c];
    output[i + 3] = lut[d];
  }
  for (; i < count; ++i) output[i] = lut[input[i]];
  return MCU_STATUS_OK;
}

int mcu_table_s16(int32_t count, const int16_t *table, const int16_t *input, int32_t *output) {
  for (int32_t i = 0; i < count; ++i) output[i] = mcu_tosa_table_s16(table, input[i]);
  return MCU_STATUS_OK;
}

static int32_t add_s8_value(const mcu_elementwise_params_t *p, int8_t x, int8_t y) {
  int32_t a = (int32_t)((uint32_t)((int32_t)x + p->input1_offset) << p->left_shift);
  int32_t b = (int32_t)((uint32_t)((int32_t)y + p->input2_offset) << p->left_shift);
  a = mcu_requantize(a, p->input1_multiplier, p->input1_shift);
  b = mcu_requantize(b, p->input2_multiplier, p->input2_shift);
  const int32_t sum = mcu_requantize(a + b, p->output_multiplier, p->output_shift) + p->output_offset;
  return (int32_t)mcu_clip(sum, p->act_min, p->act_max);
}

static int32_t mul_s8_value(const mcu_elementwise_params_t *p, int8_t x, int8_t y) {
  const int32_t product = ((int32_t)x + p->input1_offset) * ((int32_t)y + p->input2_offset);
  const int32_t v = mcu_requantize(product, p->output_multiplier, p->output_shift) + p->output_offset;
  return (int32_t)mcu_clip(v, p->act_min, p->act_max);
}

static int elementwise_s8(const mcu_elementwise_params_t *p, const int8_t *in1, const int8_t *in2,
                          int8_t *output, int32_t (*value)(const mcu_elementwise_params_t *, int8_t, int8_t)) {
  if (!p->broadcast) {
    for (int32_t i = 0; i < p->count; ++i) output[i] = (int8_t)value(p, in1[i], in2[i]);
    return MCU_STATUS_OK;
  }
  int32_t s1[MCU_PORTABLE_MAX_RANK], s2[MCU_PORTABLE_MAX_RANK];
  if (p->in1.rank != p->out.rank || p->in2.rank != p->out.rank) return MCU_STATUS_BAD_ARGUMENT;
  mcu_strides(&p->in1, s1, 1);
  mcu_strides(&p->in2, s2, 1);
  MCU_FOR_EACH_BROADCAST(&p->out, s1, s2, { output[o] = (int8_t)value(p, in1[i1], in2[i2]); });
  return MCU_STATUS_OK;
}

int mcu_table_s16_rescale(int32_t count, const int16_t *table, const mcu_rescale_params_t *rescale,
                          const int16_t *input, int16_t *output) {
  for (int32_t i = 0; i < count; ++i)
    output[i] = (int16_t)rescale_value(rescale, mcu_tosa_table_s16(table, input[i]), i);
  return MCU_STATUS_OK;
}

int mcu_elementwise_add_s8(const mcu_elementwise_params_t *p, const int8_t *in1, const int8_t *in2,
                           int8_t *output) {
  return elementwise_s8(p, in1, in2, output, add_s8_value);
}

int mcu_elementwise_mul_s8(const mcu_elementwise_params_t *p, const int8_t *in1, const int8_t *in2,
                           int8_t *output) {
  return elementwise_s8(p, in1, in2, output, mul_s8_value);
}

int mcu_elementwise_add_s16(const mcu_elementwise_params_t *p, const int16_t *in1,
                            const int16_t *in2, int16_t *output) {
  int32_t s1[MCU_PORTABLE_MAX_RANK], s2[MCU_PORTABLE_MAX_RANK];
  mcu_shape_t flat = {1, {p->count}};
  const mcu_shape_t *out = p->broadcast ? &p->out : &flat;
  if (p->broadcast) {
    if (p->in1.rank != p->out.rank || p->in2.rank != p->out.rank) return MCU_STATUS_BAD_ARGUMENT;
    mcu_strides(&p->in1, s1, 1);
    mcu_strides(&p->in2, s2, 1);
  } else {
    s1[0] = s2[0] = 1;
  }
  MCU_FOR_EACH_BROADCAST(out, s1, s2, {
    int32_t a = (int32_t)((uint32_t)((int32_t)in1[i1] + p->input1_offset) << p->left_shift);
    int32_t b = (int32_t)((uint32_t)((int32_t)in2[i2] + p->input2_offset) << p->left_shift);
    a = mcu_requantize(a, p->input1_multiplier, p->input1_shift);
    b = mcu_requantize(b, p->input2_multiplier, p->input2_shift);
    const int32_t sum = mcu_requantize(a + b, p->output_multiplier, p->output_shift) + p->output_offset;
    output[o] = (int16_t)mcu_clip(sum, p->act_min, p->act_max);
  });
  return MCU_STATUS_OK;
}

int mcu_elementwise_mul_s16(const mcu_elementwise_params_t *p, const int16_t *in1,
                            const int16_t *in2, int16_t *output) {
  int32_t s1[MCU_PORTABLE_MAX_RANK], s2[MCU_PORTABLE_MAX_RANK];
  mcu_shape_t flat = {1, {p->count}};
  const mcu_shape_t *out = p->broadcast ? &p->out : &flat;
  if (p->broadcast) {
    if (p->in1.rank != p->out.rank || p->in2.rank != p->out.rank) return MCU_STATUS_BAD_ARGUMENT;
    mcu_strides(&p->in1, s1, 1);
    mcu_strides(&p->in2, s2, 1);
  } else {
    s1[0] = s2[0] = 1;
  }
  MCU_FOR_EACH_BROADCAST(out, s1, s2, {
    const int32_t product = ((int32_t)in1[i1] + p->input1_offset) * ((int32_t)in2[i2] + p->input2_offset);
    const int32_t v = mcu_requantize(product, p->output_multiplier, p->output_shift) + p->output_offset;
    output[o] = (int16_t)mcu_clip(v, p->act_min, p->act_max);
  });
  return MCU_STATUS_OK;
}

/* hypot(a, b) as the frontend's integer form (frontend/lowering/elementwise.py, _lower_hypot):
   the exact sum of squares, CLZ-normalised by an even shift, its square root looked up in the
   interpolated int16 table, rescaled, shifted back and offset. */
/* The root of one element's sum of squares, shifted back (before the output offset). */
static inline int32_t hypot_root(int32_t x, int32_t y, const int16_t *table, int32_t multiplier, int32_t shift,
                                 int32_t headroom) {
  const int32_t total = x * x + y * y; /* < 2^31: |x|, |y| <= 32767 */
  if (total == 0) return 0;
  const int32_t even = (mcu_clz32((uint32_t)total) - 1) & -2;
  const int32_t normalised = (int32_t)((uint32_t)total << even);
  const int32_t looked = mcu_tosa_table_s16(table, (int16_t)((normalised >> 16) - 16384));
  return mcu_tosa_shift_round(mcu_tosa_apply_scale_32(looked, multiplier, shift, 1), (even >> 1) + headroom);
}

int mcu_hypot(int32_t count, mcu_dtype_t input_type, const void *a, const void *b, int32_t a_zp, int32_t b_zp,
              const int16_t *table, int32_t multiplier, int32_t shift, int32_t headroom, mcu_dtype_t output_type,
              int32_t output_zp, void *output) {
  const int32_t lo = (int32_t)mcu_type_min(output_type), hi = (int32_t)mcu_type_max(output_type);
  if (input_type != MCU_I8 && input_type != MCU_I16) return MCU_STATUS_BAD_ARGUMENT;
  if (output_type != MCU_I8 && output_type != MCU_I16) return MCU_STATUS_BAD_ARGUMENT;
  for (int32_t i = 0; i < count; ++i) {
    /* |x - zp| <= 32767, as the frontend clamps int16 inputs first: two squares of -32768 leave int32. */
    int32_t x = (input_type == MCU_I8 ? ((const int8_t *)a)[i] : ((const int16_t *)a)[i]) - a_zp;
    int32_t y = (input_type == MCU_I8 ? ((const int8_t *)b)[i] : ((const int16_t *)b)[i]) - b_zp;
    x = x < -32767 ? -32767 : (x > 32767 ? 32767 : x);
    y = y < -32767 ? -32767 : (y > 32767 ? 32767 : y);
    int32_t v = hypot_root(x, y, table, multiplier, shift, headroom) + output_zp;
    v = v < lo ? lo : (v > hi ? hi : v);
    if (output_type == MCU_I8)
      ((int8_t *)output)[i] = (int8_t)v;
    else
      ((int16_t *)output)[i] = (int16_t)v;
  }
  return MCU_STATUS_OK;
}

/* Portable convolution, matmul and pooling kernels (TOSA integer semantics). */
#include "portable_internal.h"

int32_t mcu_requantize(int32_t value, int32_t multiplier, int32_t shift) {
  /* arm_nn_requantize: (value << left) * multiplier, doubling high half with rounding, then a
   * rounding right shift that rounds half away from zero. */
  const int32_t left = shift > 0 ? shift : 0;
  const int32_t right = shift > 0 ? 0 : -shift;
  const int32_t shifted = (int32_t)((uint32_t)value << left);
  int64_t mult = (int64_t)1 << 30;
  if ((shifted < 0) ^ (multiplier < 0)) mult = 1 - mult;
  mult += (int64_t)shifted * multiplier;
  const int32_t high = (int32_t)(mult / ((int64_t)1 << 31));
  if (right == 0) return high;
  const int32_t mask = (int32_t)((1u << right) - 1u);
  int32_t result = high >> right;
  const int32_t remainder = high & mask;
  int32_t threshold = mask >> 1;
  if (result < 0) threshold++;
  if (remainder > threshold) result++;
  return result;
}

int32_t mcu_tosa_apply_scale_32(int32_t value, int32_t multiplier, int32_t shift, int double_round) {
  int64_t round = (int64_t)1 << (shift - 1);
  if (double_round && shift > 31) round += value >= 0 ? ((int64_t)1 << 30) : -((int64_t)1 << 30);
  int64_t result = (int64_t)value * multiplier + round;
  result >>= shift;
  return (int32_t)mcu_clip(result, INT32_MIN, INT32_MAX);
}

int32_t mcu_tosa_apply_scale_16(int64_t value, int32_t multiplier, int32_t shift) {
  int64_t round = (int64_t)1 << (shift - 1);
  int64_t result = value * multiplier + round;
  result >>= shift;
  return (int32_t)mcu_clip(result, INT32_MIN, INT32_MAX);
}

static void store_conv_result(const mcu_conv_params_t *p, void *output, int32_t index, int32_t oc,
                              int32_t acc) {
  if (p->multiplier == NULL) {
    ((int32_t *)output)[index] = acc;
    return;
  }
  const int32_t q = p->per_channel ? oc : 0;
  int32_t v = mcu_requantize(acc, p->multiplier[q], p->shift[q]) + p->output_offset;
  v = (int32_t)mcu_clip(v, p->act_min, p->act_max);
  ((int8_t *)output)[index] = (int8_t)v;
}

int mcu_conv2d_s8(const mcu_conv_params_t *p, const int8_t *input, const int8_t *filter,
                  const int32_t *bias, void *output) {
  const int32_t groups = p->groups > 0 ? p->groups : 1;
  if (p->c % groups != 0 || p->out_c % groups != 0) return MCU_STATUS_BAD_ARGUMENT;
  const int32_t in_per_group = p->c / groups;
  const int32_t out_per_group = p->out_c / groups;
  for (int32_t b = 0; b < p->n; ++b)
    for (int32_t oy = 0; oy < p->out_h; ++oy)
      for (int32_t ox = 0; ox < p->out_w; ++ox)
        for (int32_t oc = 0; oc < p->out_c; ++oc) {
          const int32_t g = oc / out_per_group;
          int32_t acc = bias ? bias[oc] : 0;
          for (int32_t ky = 0; ky < p->kernel_h; ++ky) {
            const int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dilation_h;
            if (iy < 0 || iy >= p->h) continue;
            for (int32_t kx = 0; kx < p->kernel_w; ++kx) {
              const int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dilation_w;
              if (ix < 0 || ix >= p->w) continue;
              const int8_t *in = input + (((b * p->h + iy) * p->w + ix) * p->c) + g * in_per_group;
              const int8_t *w = filter + ((oc * p->kernel_h + ky) * p->kernel_w + kx) * in_per_group;
              for (int32_t ic = 0; ic < in_per_group; ++ic)
                acc += ((int32_t)in[ic] + p->input_offset) * ((int32_t)w[ic] + p->weight_offset);
            }
          }
          store_conv_result(p, output, ((b * p->out_h + oy) * p->out_w + ox) * p->out_c + oc, oc, acc);
        }
  return MCU_STATUS_OK;
}

int mcu_depthwise_conv2d_s8(const mcu_conv_params_t *p, const int8_t *input, const int8_t *filter,
                            const int32_t *bias, void *output) {
  if (p->out_c != p->c * p->ch_mult) return MCU_STATUS_BAD_ARGUMENT;
  for (int32_t b = 0; b < p->n; ++b)
    for (int32_t oy = 0; oy < p->out_h; ++oy)
      for (int32_t ox = 0; ox < p->out_w; ++ox)
        for (int32_t oc = 0; oc < p->out_c; ++oc) {
          const int32_t ic = oc / p->ch_mult;
          int32_t acc = bias ? bias[oc] : 0;
          for (int32_t ky = 0; ky < p->kernel_h; ++ky) {
            const int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dilation_h;
            if (iy < 0 || iy >= p->h) continue;
            for (int32_t kx = 0; kx < p->kernel_w; ++kx) {
              const int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dilation_w;
              if (ix < 0 || ix >= p->w) continue;
              const int32_t in = input[((b * p->h + iy) * p->w + ix) * p->c + ic];
              const int32_t w = filter[(ky * p->kernel_w + kx) * p->out_c + oc] + p->weight_offset;
              acc += (in + p->input_offset) * w;
            }
          }
          store_conv_result(p, output, ((b * p->out_h + oy) * p->out_w + ox) * p->out_c + oc, oc, acc);
        }
  return MCU_STATUS_OK;
}

static void store_conv_result_s16(const mcu_conv_params_t *p, void *output, int32_t index,
                                  int32_t oc, int64_t acc) {
  if (p->multiplier == NULL) {
    ((int64_t *)output)[index] = acc;
    return;
  }
  const int32_t q = p->per_channel ? oc : 0;
  const int32_t mult32 = p->multiplier[q];
  const int32_t mult16 = mult32 < 0x7FFF0000 ? (int32_t)(((int64_t)mult32 + (1 << 15)) >> 16) : 0x7FFF;
  int64_t v = (int64_t)mcu_tosa_apply_scale_16(acc, mult16, 15 - p->shift[q]) + p->output_offset;
  v = mcu_clip(v, -32768, 32767);
  ((int16_t *)output)[index] = (int16_t)mcu_clip(v, p->act_min, p->act_max);
}

int mcu_conv2d_s16(const mcu_conv_params_t *p, const int16_t *input, const int8_t *filter,
                   const int64_t *bias, void *output) {
  const int32_t groups = p->groups > 0 ? p->groups : 1;
  if (p->c % groups != 0 || p->out_c % groups != 0) return MCU_STATUS_BAD_ARGUMENT;
  const int32_t in_per_group = p->c / groups;
  const int32_t out_per_group = p->out_c / groups;
  for (int32_t b = 0; b < p->n; ++b)
    for (int32_t oy = 0; oy < p->out_h; ++oy)
      for (int32_t ox = 0; ox < p->out_w; ++ox)
        for (int32_t oc = 0; oc < p->out_c; ++oc) {
          const int32_t g = oc / out_per_group;
          int64_t acc = bias ? bias[oc] : 0;
          for (int32_t ky = 0; ky < p->kernel_h; ++ky) {
            const int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dilation_h;
            if (iy < 0 || iy >= p->h) continue;
            for (int32_t kx = 0; kx < p->kernel_w; ++kx) {
              const int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dilation_w;
              if (ix < 0 || ix >= p->w) continue;
              const int16_t *in = input + (((b * p->h + iy) * p->w + ix) * p->c) + g * in_per_group;
              const int8_t *w = filter + ((oc * p->kernel_h + ky) * p->kernel_w + kx) * in_per_group;
              for (int32_t ic = 0; ic < in_per_group; ++ic)
                acc += ((int64_t)in[ic] + p->input_offset) * ((int64_t)w[ic] + p->weight_offset);
            }
          }
          store_conv_result_s16(p, output, ((b * p->out_h + oy) * p->out_w + ox) * p->out_c + oc, oc, acc);
        }
  return MCU_STATUS_OK;
}

int mcu_depthwise_conv2d_s16(const mcu_conv_params_t *p, const int16_t *input, const int8_t *filter,
                             const int64_t *bias, void *output) {
  if (p->out_c != p->c * p->ch_mult) return MCU_STATUS_BAD_ARGUMENT;
  for (int32_t b = 0; b < p->n; ++b)
    for (int32_t oy = 0; oy < p->out_h; ++oy)
      for (int32_t ox = 0; ox < p->out_w; ++ox)
        for (int32_t oc = 0; oc < p->out_c; ++oc) {
          const int32_t ic = oc / p->ch_mult;
          int64_t acc = bias ? bias[oc] : 0;
          for (int32_t ky = 0; ky < p->kernel_h; ++ky) {
            const int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dilation_h;
            if (iy < 0 || iy >= p->h) continue;
            for (int32_t kx = 0; kx < p->kernel_w; ++kx) {
              const int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dilation_w;
              if (ix < 0 || ix >= p->w) continue;
              const int64_t in = input[((b * p->h + iy) * p->w + ix) * p->c + ic];
              const int64_t w = filter[(ky * p->kernel_w + kx) * p->out_c + oc] + p->weight_offset;
              acc += (in + p->input_offset) * w;
            }
          }
          store_conv_result_s16(p, output, ((b * p->out_h + oy) * p->out_w + ox) * p->out_c + oc, oc, acc);
        }
  return MCU_STATUS_OK;
}

/* Transposed convolution: every input pixel scatters its products into the output window. */
#define MCU_TRANSPOSE_CONV(IN_T, ACC_T)                                                           \
  for (int32_t b = 0; b < p->n; ++b)                                                              \
    for (int32_t oy = 0; oy < p->out_h; ++oy)                                                     \
      for (int32_t ox = 0; ox < p->out_w; ++ox)                                                   \
        for (int32_t oc = 0; oc < p->out_c; ++oc)                                                 \
          output[((b * p->out_h + oy) * p->out_w + ox) * p->out_c + oc] = bias ? bias[oc] : 0;    \
  for (int32_t b = 0; b < p->n; ++b)                                                              \
    for (int32_t iy = 0; iy < p->h; ++iy)                                                         \
      for (int32_t ix = 0; ix < p->w; ++ix)                                                       \
        for (int32_t ky = 0; ky < p->kernel_h; ++ky) {                                            \
          const int32_t oy = iy * p->stride_h + p->out_pad_top + ky;                              \
          if (oy < 0 || oy >= p->out_h) continue;                                                 \
          for (int32_t kx = 0; kx < p->kernel_w; ++kx) {                                          \
            const int32_t ox = ix * p->stride_w + p->out_pad_left + kx;                           \
            if (ox < 0 || ox >= p->out_w) continue;                                               \
            ACC_T *out = output + ((b * p->out_h + oy) * p->out_w + ox) * p->out_c;               \
            const IN_T *in = input + ((b * p->h + iy) * p->w + ix) * p->c;                        \
            for (int32_t oc = 0; oc < p->out_c; ++oc) {                                           \
              const int8_t *w = filter + ((oc * p->kernel_h + ky) * p->kernel_w + kx) * p->c;     \
              ACC_T acc = 0;                                                                      \
              for (int32_t ic = 0; ic < p->c; ++ic)                                               \
                acc += ((ACC_T)in[ic] - p->input_zp) * ((ACC_T)w[ic] - p->weight_zp);            \
              out[oc] += acc;                                                                     \
            }                                                                                     \
          }                                                                                       \
        }                                                                                         \
  return MCU_STATUS_OK

int mcu_transpose_conv2d_s8(const mcu_transpose_conv_params_t *p, const int8_t *input,
                            const int8_t *filter, const int32_t *bias, int32_t *output) {
  MCU_TRANSPOSE_CONV(int8_t, int32_t);
}

int mcu_transpose_conv2d_s16(const mcu_transpose_conv_params_t *p, const int16_t *input,
                             const int8_t *filter, const int64_t *bias, int64_t *output) {
  MCU_TRANSPOSE_CONV(int16_t, int64_t);
}
#undef MCU_TRANSPOSE_CONV

/* 3-D convolution: each output is bias + the window's products (padding contributes nothing). */
#define MCU_CONV3D(IN_T, ACC_T)                                                                   \
  for (int32_t b = 0; b < p->n; ++b)                                                              \
    for (int32_t od = 0; od < p->out_d; ++od)                                                     \
      for (int32_t oy = 0; oy < p->out_h; ++oy)                                                   \
        for (int32_t ox = 0; ox < p->out_w; ++ox)                                                 \
          for (int32_t oc = 0; oc < p->out_c; ++oc) {                                             \
            ACC_T acc = bias ? bias[oc] : 0;                                                      \
            for (int32_t kd = 0; kd < p->kernel_d; ++kd) {                                        \
              const int32_t id = od * p->stride_d - p->pad_front + kd * p->dilation_d;            \
              if (id < 0 || id >= p->d) continue;                                                 \
              for (int32_t ky = 0; ky < p->kernel_h; ++ky) {                                      \
                const int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dilation_h;            \
                if (iy < 0 || iy >= p->h) continue;                                               \
                for (int32_t kx = 0; kx < p->kernel_w; ++kx) {                                    \
                  const int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dilation_w;        \
                  if (ix < 0 || ix >= p->w) continue;                                             \
                  const IN_T *in = input + (((b * p->d + id) * p->h + iy) * p->w + ix) * p->c;    \
                  const int8_t *w =                                                               \
                      filter + (((oc * p->kernel_d + kd) * p->kernel_h + ky) * p->kernel_w + kx) * p->c; \
                  for (int32_t ic = 0; ic < p->c; ++ic)                                           \
                    acc += ((ACC_T)in[ic] - p->input_zp) * ((ACC_T)w[ic] - p->weight_zp);        \
                }                                                                                 \
              }                                                                                   \
            }                                                                                     \
            output[(((b * p->out_d + od) * p->out_h + oy) * p->out_w + ox) * p->out_c + oc] = acc; \
          }                                                                                       \
  return MCU_STATUS_OK

int mcu_conv3d_s8(const mcu_conv3d_params_t *p, const int8_t *input, const int8_t *filter,
                  const int32_t *bias, int32_t *output) {
  MCU_CONV3D(int8_t, int32_t);
}

int mcu_conv3d_s16(const mcu_conv3d_params_t *p, const int16_t *input, const int8_t *filter,
                   const int64_t *bias, int64_t *output) {
  MCU_CONV3D(int16_t, int64_t);
}
#undef MCU_CONV3D

int mcu_matmul(const mcu_matmul_params_t *p, const void *lhs, const void *rhs, const int32_t *bias,
               void *output) {
  const mcu_dtype_t t = p->input_type;
  for (int32_t b = 0; b < p->batch; ++b) {
    const int32_t lhs_base = b * p->m * p->k;
    const int32_t rhs_base = p->rhs_batch ? b * p->k * p->n : 0;
    for (int32_t i = 0; i < p->m; ++i)
      for (int32_t j = 0; j < p->n; ++j) {
        int64_t acc = bias ? bias[j] : 0;
        for (int32_t kk = 0; kk < p->k; ++kk) {
          const int64_t a = mcu_read(lhs, t, lhs_base + i * p->k + kk) + p->lhs_offset;
          const int32_t ri = p->rhs_transposed ? j * p->k + kk : kk * p->n + j;
          const int64_t w = mcu_read(rhs, t, rhs_base + ri) + p->rhs_offset;
          acc += a * w;
        }
        const int32_t index = (b * p->m + i) * p->n + j;
        if (p->multiplier == NULL) {
          if (t == MCU_I16) ((int64_t *)output)[index] = acc;
          else ((int32_t *)output)[index] = (int32_t)acc;
        } else {
          const int32_t q = p->per_channel ? j : 0;
          int32_t v = mcu_requantize((int32_t)acc, p->multiplier[q], p->shift[q]) + p->output_offset;
          ((int8_t *)output)[index] = (int8_t)mcu_clip(v, p->act_min, p->act_max);
        }
      }
  }
  return MCU_STATUS_OK;
}

static int32_t count_leading_zeros(uint32_t v) {
  int32_t n = 0;
  if (v == 0) return 32;
  while (!(v & 0x80000000u)) { v <<= 1; ++n; }
  return n;
}

int mcu_avg_pool2d(const mcu_pool_params_t *p, const void *input, void *output) {
  for (int32_t b = 0; b < p->n; ++b)
    for (int32_t oy = 0; oy < p->out_h; ++oy)
      for (int32_t ox = 0; ox < p->out_w; ++ox)
        for (int32_t c = 0; c < p->c; ++c) {
          int32_t acc = 0, count = 0;
          for (int32_t ky = 0; ky < p->kernel_h; ++ky) {
            const int32_t iy = oy * p->stride_h - p->pad_top + ky;
            if (iy < 0 || iy >= p->h) continue;
            for (int32_t kx = 0; kx < p->kernel_w; ++kx) {
              const int32_t ix = ox * p->stride_w - p->pad_left + kx;
              if (ix < 0 || ix >= p->w) continue;
              acc += (int32_t)mcu_read(input, p->type, ((b * p->h + iy) * p->w + ix) * p->c + c) - p->input_zp;
              ++count;
            }
          }
          if (count == 0) return MCU_STATUS_BAD_ARGUMENT;
          /* TOSA reciprocal_scale(count) */
          const int32_t k = 32 - count_leading_zeros((uint32_t)count - 1u);
          const int64_t numerator = (((int64_t)1 << 30) + 1) << k;
          const int32_t multiplier = (int32_t)(numerator / count);
          int64_t v = mcu_tosa_apply_scale_32(acc, multiplier, 30 + k, 0);
          v = mcu_clip(v + p->output_zp, mcu_type_min(p->type), mcu_type_max(p->type));
          v = mcu_clip(v, p->act_min, p->act_max);
          mcu_write(output, p->type, ((b * p->out_h + oy) * p->out_w + ox) * p->c + c, v);
        }
  return MCU_STATUS_OK;
}

int mcu_max_pool2d(const mcu_pool_params_t *p, const void *input, void *output) {
  for (int32_t b = 0; b < p->n; ++b)
    for (int32_t oy = 0; oy < p->out_h; ++oy)
      for (int32_t ox = 0; ox < p->out_w; ++ox)
        for (int32_t c = 0; c < p->c; ++c) {
          int64_t best = mcu_type_min(p->type);
          for (int32_t ky = 0; ky < p->kernel_h; ++ky) {
            const int32_t iy = oy * p->stride_h - p->pad_top + ky;
            if (iy < 0 || iy >= p->h) continue;
            for (int32_t kx = 0; kx < p->kernel_w; ++kx) {
              const int32_t ix = ox * p->stride_w - p->pad_left + kx;
              if (ix < 0 || ix >= p->w) continue;
              const int64_t v = mcu_read(input, p->type, ((b * p->h + iy) * p->w + ix) * p->c + c);
              if (v > best) best = v;
            }
          }
          mcu_write(output, p->type, ((b * p->out_h + oy) * p->out_w + ox) * p->c + c,
                    mcu_clip(best, p->act_min, p->act_max));
        }
  return MCU_STATUS_OK;
}

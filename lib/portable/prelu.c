/* The frontend's integer PReLU (relu(x) + slope * min(x, 0), the product a 1x1 depthwise conv) in
   one pass: the twelve TOSA ops per element, the channel-independent ones read from tables the
   compiler evaluated, every int32 intermediate in registers (see mcu/portable.h). */
#include "portable_internal.h"

/* y for one int8 x of a channel (slope, bias, per-channel rescale). */
static inline int8_t prelu_one(const mcu_prelu_params_t *p, const int32_t *relu_part, const int32_t *negative,
                               const int32_t *scaled, int32_t x, int32_t slope, int32_t bias, int32_t mult,
                               int32_t shift) {
  const int32_t n = negative[x + 128];
  const int32_t acc = mcu_wrap_add(bias, (n + p->slope_input_offset) * (slope + p->slope_weight_offset));
  const int64_t d = (int64_t)mcu_tosa_apply_scale_32(acc, mult, shift, p->slope_double_round) + p->slope_output_zp;
  const int32_t dq = (int32_t)mcu_clip(mcu_clip(d, -128, 127), p->slope_act_min, p->slope_act_max);
  const int32_t s = mcu_wrap_add(relu_part[x + 128], scaled[dq + 128]);
  const int64_t y = (int64_t)mcu_tosa_apply_scale_32((int32_t)((int64_t)s - p->output_input_zp), p->output_multiplier,
                                                     p->output_shift, p->output_double_round) + p->output_zp;
  return (int8_t)mcu_clip(mcu_clip(y, -128, 127), p->act_min, p->act_max);
}

/* y is a function of (x, c): where a channel has more elements than int8 has values, its 256
   outputs are computed once into a table on the stack and looked up; else element by element. */
int mcu_prelu(const mcu_prelu_params_t *p, int32_t count, const int32_t *tables, const int32_t *channel_params,
              const int8_t *input, int8_t *output) {
  const int32_t channels = p->channels;
  const int32_t *relu_part = tables, *negative = tables + 256, *scaled = tables + 512;
  const int32_t *slope = channel_params, *bias = channel_params + channels;
  const int32_t *mult = channel_params + 2 * channels, *shift = channel_params + 3 * channels;
  if (channels <= 0 || count % channels) return MCU_STATUS_BAD_ARGUMENT;
  if (count / channels > 256) {
    int8_t table[256];
    for (int32_t c = 0; c < channels; ++c) {
      for (int32_t x = -128; x < 128; ++x)
        table[x + 128] = prelu_one(p, relu_part, negative, scaled, x, slope[c], bias[c], mult[c], shift[c]);
      for (int32_t i = c; i < count; i += channels) output[i] = table[input[i] + 128];
    }
    return MCU_STATUS_OK;
  }
  for (int32_t i = 0, c = 0; i < count; ++i) {
    output[i] = prelu_one(p, relu_part, negative, scaled, input[i], slope[c], bias[c], mult[c], shift[c]);
    if (++c == channels) c = 0;
  }
  return MCU_STATUS_OK;
}

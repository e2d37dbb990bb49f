/* One LSTM time step with the integers of CMSIS-NN's arm_lstm_unidirectional_s8 (see
   mcu/portable.h), element by element: each hidden unit's four gates, then its cell and output. */
#include "portable_internal.h"

/* CMSIS-NN's sigmoid_table_uint16 (arm_nntables.c, Apache-2.0): 65536 * sigmoid(i / 24). */
static const uint16_t sigmoid_table[256] = {
  32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432,
  42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475,
  49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485,
  55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519,
  59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036,
  62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
  63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308, 64357, 64405,
  64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
  64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179,
  65194, 65208, 65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337,
  65345, 65352, 65360, 65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425,
  65429, 65433, 65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
  65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
  65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516, 65517,
  65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524, 65525, 65525,
  65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
  65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533,
  65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
  65534, 65534, 65534, 65535
};

/* arm_nn_activation_s16 on one value: the table read at |x| * 3 (scaled by left_shift), linear
   interpolation, tanh(x) = 2 sigmoid(2x) - 1. */
static int16_t activation_s16(int32_t x, int32_t left_shift, int sigmoid) {
  const uint32_t abs_shift = sigmoid ? 9 : 8;
  const uint32_t max_saturation = sigmoid ? (0x7FFFu << 10) : (0xFFFFu << 8);
  const int32_t multiplier = left_shift < 0 ? 3 : 3 << left_shift;
  const int32_t right = left_shift < 0 ? -left_shift : 0;
  const int32_t rounding = right > 0 ? 1 << (right - 1) : 0;
  const int32_t data = (x * multiplier + rounding) >> right;
  const uint32_t magnitude = (uint32_t)(data > 0 ? data : -data);
  const uint32_t uh = magnitude >> abs_shift;
  uint32_t result;
  if (uh >= 255) {
    result = max_saturation;
  } else {
    const uint32_t ua = sigmoid_table[uh], ub = sigmoid_table[uh + 1];
    const uint32_t ut = magnitude & ((1u << abs_shift) - 1);
    result = (ua << abs_shift) + ut * (ub - ua);
  }
  if (sigmoid)
    result = (data >= 0 ? result + (1u << 9) : (1u << 25) - result + (1u << 9) - 1) >> 10;
  else
    result = (data >= 0 ? (result - (1u << 23)) + (1u << 7) : (-result + (1u << 23)) + (1u << 7) - 1) >> 8;
  return (int16_t)result;
}

static int32_t dot(const int8_t *a, const int8_t *w, int32_t n, int32_t acc) {
  for (int32_t k = 0; k < n; ++k) acc += (int32_t)a[k] * w[k];
  return acc;
}

int mcu_lstm_step_s8(const mcu_lstm_params_t *p, const int8_t *x, const int8_t *h, const int16_t *c,
                     int8_t *h_out, int16_t *c_out) {
  const int32_t in = p->input_size, hid = p->hidden_size;
  for (int32_t r = 0; r < p->rows; ++r) {
    const int8_t *xr = x + r * in, *hr = h + r * hid;
    for (int32_t j = 0; j < hid; ++j) {
      int32_t gate[4];
      for (int g = 0; g < 4; ++g) {
        int32_t v = mcu_requantize(dot(xr, p->input_weights[g] + j * in, in, p->input_bias[g][j]),
                                   p->input_multiplier[g], p->input_shift[g]);
        v = (int32_t)mcu_clip(v, -32768, 32767);
        v += mcu_requantize(dot(hr, p->hidden_weights[g] + j * hid, hid, p->hidden_bias[g][j]),
                            p->hidden_multiplier[g], p->hidden_shift[g]);
        gate[g] = activation_s16((int32_t)mcu_clip(v, -32768, 32767), 0, g != 2);
      }
      const int32_t o = r * hid + j;
      int32_t forget = mcu_requantize(gate[1] * c[o], p->forget_to_cell_multiplier, p->forget_to_cell_shift);
      forget = (int32_t)mcu_clip(forget, -32768, 32767);
      int32_t cell = mcu_requantize(gate[0] * gate[2], p->input_to_cell_multiplier, p->input_to_cell_shift) + forget;
      cell = (int32_t)mcu_clip(cell, -p->cell_clip, p->cell_clip);
      c_out[o] = (int16_t)cell;
      const int32_t squashed = activation_s16(cell, p->cell_scale_power + 12, 0);
      const int32_t out = mcu_requantize(gate[3] * squashed, p->output_multiplier, p->output_shift) + p->output_offset;
      h_out[o] = (int8_t)mcu_clip(out, -128, 127);
    }
  }
  return MCU_STATUS_OK;
}

/* mcu-mlir portable kernels: plain C99 implementations of the integer TOSA operators.
 *
 * Every kernel computes exactly what the TOSA 1.0 specification (and tosa_reference_model) computes
 * for the same integers. Fused kernels (conv / depthwise / matmul + RESCALE + CLAMP) requantise the
 * way CMSIS-NN's arm_nn_requantize does, which equals TOSA RESCALE with DOUBLE_ROUND.
 * Shifts follow CMSIS-NN: shift > 0 shifts left, shift < 0 right (TOSA shift = 31 - shift).
 * Every kernel returns 0 on success and a nonzero MCU_STATUS_* on bad arguments.
 */
#ifndef MCU_PORTABLE_H
#define MCU_PORTABLE_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MCU_STATUS_OK 0
#define MCU_STATUS_BAD_ARGUMENT (-1)

#define MCU_PORTABLE_MAX_RANK 6

/* Element types of tensors the kernels read and write. */
typedef enum {
  MCU_I8 = 0,
  MCU_I16 = 1,
  MCU_I32 = 2,
  MCU_U8 = 3,
  MCU_U16 = 4,
  MCU_BOOL = 5, /* one byte, 0 or 1 */
  MCU_I64 = 6,  /* also holds TOSA's int48 accumulators */
} mcu_dtype_t;

/* A tensor shape: rank and dimensions (outermost first). */
typedef struct {
  int32_t rank;
  int32_t dims[MCU_PORTABLE_MAX_RANK];
} mcu_shape_t;

/* -- requantisation ------------------------------------------------------------------------ */

/* CMSIS-NN's arm_nn_requantize: saturating rounding doubling high multiply, then a rounding
 * right shift (round half away from zero). Equals TOSA apply_scale_32(value, multiplier,
 * 31 - shift, double_round = true). */
int32_t mcu_requantize(int32_t value, int32_t multiplier, int32_t shift);

/* TOSA 1.0 apply_scale_32 / apply_scale_16 with a TOSA shift (2..62). */
int32_t mcu_tosa_apply_scale_32(int32_t value, int32_t multiplier, int32_t shift, int double_round);
int32_t mcu_tosa_apply_scale_16(int64_t value, int32_t multiplier, int32_t shift);

/* -- convolution family (NHWC; weights OHWI for conv, 1HW(C*M) for depthwise) ---------------- */

typedef struct {
  int32_t n, h, w, c; /* input */
  int32_t out_h, out_w, out_c;
  int32_t kernel_h, kernel_w;
  int32_t stride_h, stride_w;
  int32_t pad_top, pad_left;
  int32_t dilation_h, dilation_w;
  int32_t groups;           /* conv: input channels per group = c / groups */
  int32_t ch_mult;          /* depthwise: output channels per input channel */
  int32_t input_offset;     /* -input zero point */
  int32_t weight_offset;    /* -weight zero point: 0 for symmetric weights (CMSIS-NN's only kind) */
  int32_t output_offset;    /* output zero point */
  int32_t act_min, act_max; /* output clamp */
  int32_t per_channel;      /* 1: multiplier/shift per output channel, 0: one for all */
  const int32_t *multiplier; /* NULL: output the raw int32 accumulator */
  const int32_t *shift;
} mcu_conv_params_t;

int mcu_conv2d_s8(const mcu_conv_params_t *p, const int8_t *input, const int8_t *filter,
                  const int32_t *bias, void *output);
int mcu_depthwise_conv2d_s8(const mcu_conv_params_t *p, const int8_t *input, const int8_t *filter,
                            const int32_t *bias, void *output);

/* int16 activations, int8 weights, int48 (int64) bias and accumulator. The requantisation uses
 * CMSIS-NN's s16 convention: multiplier = TOSA 16-bit multiplier << 16, shift = 15 - TOSA shift;
 * it is computed in 64 bits exactly as TOSA RESCALE (scale32 = false). NULL multiplier: the raw
 * int64 accumulator is written. */
int mcu_conv2d_s16(const mcu_conv_params_t *p, const int16_t *input, const int8_t *filter,
                   const int64_t *bias, void *output);
int mcu_depthwise_conv2d_s16(const mcu_conv_params_t *p, const int16_t *input, const int8_t *filter,
                             const int64_t *bias, void *output);

/* TOSA TRANSPOSE_CONV2D (int8 in, OHWI weights, int32 out): out_pad [top, bottom, left, right]. */
typedef struct {
  int32_t n, h, w, c;
  int32_t out_h, out_w, out_c;
  int32_t kernel_h, kernel_w;
  int32_t stride_h, stride_w;
  int32_t out_pad_top, out_pad_left;
  int32_t input_zp, weight_zp;
} mcu_transpose_conv_params_t;

int mcu_transpose_conv2d_s8(const mcu_transpose_conv_params_t *p, const int8_t *input,
                            const int8_t *filter, const int32_t *bias, int32_t *output);
/* int16 activations: int48 accumulators (TOSA) held in int64, bias int48 in int64. */
int mcu_transpose_conv2d_s16(const mcu_transpose_conv_params_t *p, const int16_t *input,
                             const int8_t *filter, const int64_t *bias, int64_t *output);

/* 3-D convolution to raw accumulators (a RESCALE kernel follows): input N x D x H x W x C,
 * filter OC x KD x KH x KW x C, output N x OD x OH x OW x OC. */
typedef struct {
  int32_t n, d, h, w, c;
  int32_t out_d, out_h, out_w, out_c;
  int32_t kernel_d, kernel_h, kernel_w;
  int32_t stride_d, stride_h, stride_w;
  int32_t pad_front, pad_top, pad_left;
  int32_t dilation_d, dilation_h, dilation_w;
  int32_t input_zp, weight_zp;
} mcu_conv3d_params_t;

int mcu_conv3d_s8(const mcu_conv3d_params_t *p, const int8_t *input, const int8_t *filter,
                  const int32_t *bias, int32_t *output);
int mcu_conv3d_s16(const mcu_conv3d_params_t *p, const int16_t *input, const int8_t *filter,
                   const int64_t *bias, int64_t *output);

/* Batched matmul out[b] = (lhs[b] + lhs_offset) x (rhs[b] + rhs_offset) (+ bias), then optional
 * requantisation per output column. lhs [B, M, K]; rhs [B, K, N] (rhs_transposed = 0) or
 * [B, N, K] (1); rhs_batch = 0 shares one rhs across batches. */
typedef struct {
  int32_t batch, m, k, n;
  int32_t rhs_transposed;
  int32_t rhs_batch;
  int32_t lhs_offset, rhs_offset, output_offset;
  int32_t act_min, act_max;
  int32_t per_channel;
  const int32_t *multiplier; /* NULL: int32 accumulator out */
  const int32_t *shift;
  mcu_dtype_t input_type;    /* MCU_I8 or MCU_I16 */
} mcu_matmul_params_t;

int mcu_matmul(const mcu_matmul_params_t *p, const void *lhs, const void *rhs, const int32_t *bias,
               void *output);

/* -- pooling (NHWC) ----------------------------------------------------------------------------- */

typedef struct {
  int32_t n, h, w, c;
  int32_t out_h, out_w;
  int32_t kernel_h, kernel_w;
  int32_t stride_h, stride_w;
  int32_t pad_top, pad_left, pad_bottom, pad_right;
  int32_t input_zp, output_zp; /* avg pool */
  int32_t act_min, act_max;
  mcu_dtype_t type;             /* MCU_I8 or MCU_I16 */
} mcu_pool_params_t;

/* TOSA AVG_POOL2D: divisor counts only valid (unpadded) positions, rounding as the spec's
 * reciprocal scale. */
int mcu_avg_pool2d(const mcu_pool_params_t *p, const void *input, void *output);
int mcu_max_pool2d(const mcu_pool_params_t *p, const void *input, void *output);

/* -- elementwise ------------------------------------------------------------------------------ */

typedef enum {
  MCU_BIN_ADD = 0, MCU_BIN_SUB, MCU_BIN_MUL, MCU_BIN_MAXIMUM, MCU_BIN_MINIMUM,
  MCU_BIN_EQUAL, MCU_BIN_GREATER, MCU_BIN_GREATER_EQUAL,
  MCU_BIN_BITWISE_AND, MCU_BIN_BITWISE_OR, MCU_BIN_BITWISE_XOR,
  MCU_BIN_LOGICAL_AND, MCU_BIN_LOGICAL_OR, MCU_BIN_LOGICAL_XOR,
  MCU_BIN_SHIFT_LEFT, MCU_BIN_SHIFT_RIGHT, MCU_BIN_SHIFT_RIGHT_ROUND, MCU_BIN_INTDIV, MCU_BIN_POW,
  MCU_BIN_SHIFT_RIGHT_LOGICAL /* zeros in from the left, at the element's width */
} mcu_binary_op_t;

/* Broadcasting binary op: shapes have the output's rank; a dimension of 1 broadcasts. MUL with
 * int32 operands applies TOSA's `shift` (rounding right shift of the 64-bit product). */
typedef struct {
  mcu_binary_op_t op;
  mcu_dtype_t in_type, out_type;
  mcu_shape_t in1, in2, out;
  int32_t shift;
} mcu_binary_params_t;

int mcu_binary(const mcu_binary_params_t *p, const void *in1, const void *in2, void *output);

typedef enum {
  MCU_UN_ABS = 0, MCU_UN_NEGATE, MCU_UN_BITWISE_NOT, MCU_UN_LOGICAL_NOT, MCU_UN_CLZ
} mcu_unary_op_t;

typedef struct {
  mcu_unary_op_t op;
  mcu_dtype_t type;
  int32_t count;
  int32_t input_zp, output_zp; /* negate */
} mcu_unary_params_t;

int mcu_unary(const mcu_unary_params_t *p, const void *input, void *output);

/* SELECT: out = cond ? in1 : in2, broadcasting like mcu_binary. */
int mcu_select(const mcu_binary_params_t *p, const uint8_t *cond, const mcu_shape_t *cond_shape,
               const void *in1, const void *in2, void *output);

/* TOSA RESCALE; channel = innermost index when per_channel. */
typedef struct {
  mcu_dtype_t in_type, out_type;
  int32_t count, channels;
  int32_t input_zp, output_zp;
  int32_t scale32, double_round, per_channel;
  const int32_t *multiplier;
  const int32_t *shift; /* TOSA shifts */
} mcu_rescale_params_t;

int mcu_rescale(const mcu_rescale_params_t *p, const void *input, void *output);

/* CLAMP and CAST between integer types (CAST to bool: != 0). */
int mcu_clamp(mcu_dtype_t type, int32_t count, int32_t min, int32_t max, const void *input,
              void *output);
int mcu_cast(mcu_dtype_t in_type, mcu_dtype_t out_type, int32_t count, const void *input,
             void *output);

/* TABLE: int8 -> int8 with 256 entries; int16 -> int32 with 513 entries (interpolated). */
int mcu_table_s8(int32_t count, const int8_t *table, const int8_t *input, int8_t *output);
int mcu_table_s16(int32_t count, const int16_t *table, const int16_t *input, int32_t *output);
/* int8 -> int16 lookup in 256 entries (an int8 TABLE and / or RESCALE to int16, composed). */
int mcu_table_s8_s16(int32_t count, const int16_t *table, const int8_t *input, int16_t *output);
/* The int16 TABLE and the RESCALE of its int32 result in one pass (no int32 intermediate):
 * `rescale` (in_type MCU_I32, out_type MCU_I16, channels of the output) as for mcu_rescale. */
int mcu_table_s16_rescale(int32_t count, const int16_t *table, const mcu_rescale_params_t *rescale,
                          const int16_t *input, int16_t *output);

/* Fused int8 add / mul with CMSIS-NN's parameters (arm_elementwise_add_s8 / _mul_s8); with
 * `broadcast` set, in1/in2 broadcast to `out` (size-1 dimensions), which CMSIS-NN cannot do. */
typedef struct {
  int32_t count;
  int32_t broadcast;
  mcu_shape_t in1, in2, out;
  int32_t input1_offset, input1_multiplier, input1_shift;
  int32_t input2_offset, input2_multiplier, input2_shift;
  int32_t left_shift;
  int32_t output_offset, output_multiplier, output_shift;
  int32_t act_min, act_max;
} mcu_elementwise_params_t;

int mcu_elementwise_add_s8(const mcu_elementwise_params_t *p, const int8_t *in1, const int8_t *in2,
                           int8_t *output);
int mcu_elementwise_mul_s8(const mcu_elementwise_params_t *p, const int8_t *in1, const int8_t *in2,
                           int8_t *output);
/* int16 add (arm_elementwise_add_s16: no offsets, 16-bit clamp). */
int mcu_elementwise_add_s16(const mcu_elementwise_params_t *p, const int16_t *in1,
                            const int16_t *in2, int16_t *output);
/* int16 mul (arm_elementwise_mul_s16). */
int mcu_elementwise_mul_s16(const mcu_elementwise_params_t *p, const int16_t *in1,
                            const int16_t *in2, int16_t *output);

/* -- data movement (any element size) ----------------------------------------------------------- */

int mcu_transpose(int32_t elem_bytes, const mcu_shape_t *in_shape, const int32_t *perms,
                  const void *input, void *output);
/* Copies `input` (shape in_shape) into `output` (shape out_shape) at offset `start` (concat). */
int mcu_copy_into(int32_t elem_bytes, const mcu_shape_t *in_shape, const mcu_shape_t *out_shape,
                  const int32_t *start, const void *input, void *output);
/* Copies `input`, read in order, to output[offset + sum_d i_d * dst_strides[d]] for the index
   (i_0 .. i_rank-1) of sizes (outermost first): one input of a concat whose result is written
   transposed (a channel shuffle after a concat). */
int mcu_copy_strided(int32_t elem_bytes, int32_t rank, const int32_t *sizes, const int32_t *dst_strides,
                     int32_t offset, const void *input, void *output);
/* SLICE: output = input[start : start + out_shape]. */
int mcu_slice(int32_t elem_bytes, const mcu_shape_t *in_shape, const mcu_shape_t *out_shape,
              const int32_t *start, const void *input, void *output);
/* PAD: padding[2*i] before and padding[2*i+1] after dimension i, filled with pad_value. */
int mcu_pad(mcu_dtype_t type, const mcu_shape_t *in_shape, const int32_t *padding,
            int32_t pad_value, const void *input, void *output);
int mcu_tile(int32_t elem_bytes, const mcu_shape_t *in_shape, const mcu_shape_t *out_shape,
             const void *input, void *output);
int mcu_reverse(int32_t elem_bytes, const mcu_shape_t *shape, int32_t axis, const void *input,
                void *output);
/* Overlap-safe copy (reshapes the planner could not alias). */
int mcu_copy(int32_t bytes, const void *input, void *output);

/* -- reductions, gather, resize --------------------------------------------------------------- */

typedef enum { MCU_REDUCE_SUM = 0, MCU_REDUCE_MAX, MCU_REDUCE_MIN, MCU_REDUCE_PRODUCT,
               MCU_REDUCE_ALL, MCU_REDUCE_ANY } mcu_reduce_op_t;

/* Reduces the middle dimension of an [outer, axis, inner] view. */
int mcu_reduce(mcu_reduce_op_t op, mcu_dtype_t type, int32_t outer, int32_t axis, int32_t inner,
               const void *input, void *output);
/* ARGMAX over the middle dimension; int32 indices out (first maximum wins). */
int mcu_argmax(mcu_dtype_t type, int32_t outer, int32_t axis, int32_t inner, const void *input,
               int32_t *output);
/* GATHER: values [N, K, C], indices [N, W] -> [N, W, C]; an index below 0 reads row 0, one past K - 1
 * row K - 1 (the clamp the frontend puts before a lookup of run-time ids). */
int mcu_gather(int32_t elem_bytes, int32_t n, int32_t k, int32_t c, int32_t w,
               const void *values, const int32_t *indices, void *output);
/* SCATTER: values_in [N, K, C] with rows indices [N, W] replaced by input [N, W, C] -> [N, K, C]. */
int mcu_scatter(int32_t elem_bytes, int32_t n, int32_t k, int32_t c, int32_t w, const void *values_in,
                const int32_t *indices, const void *input, void *output);

typedef struct {
  int32_t n, h, w, c, out_h, out_w;
  int32_t scale_y_n, scale_y_d, scale_x_n, scale_x_d;
  int32_t offset_y, offset_x, border_y, border_x;
  int32_t bilinear;      /* 0: nearest neighbour */
  mcu_dtype_t in_type, out_type;
} mcu_resize_params_t;

int mcu_resize(const mcu_resize_params_t *p, const void *input, void *output);

/* The integer log_softmax the frontend emits (reduce_max, exp table, reduce_sum, clz-normalised
   log table, RESCALE), fused: per (outer, inner) column of the input viewed as outer x axis x inner,
     d = max - x;  s = sum(exp_table[d]);  z = clz(s)
     l = mul(exp_bits - z, exp_mul, exp_shift) + log_table[(s >>> (norm_bits - z)) & norm_mask]
     y = rescale((base - (mul(d, diff_mul, diff_shift) + l - bias)) >> out_shift)
   with TOSA's MUL (int64 product, rounded shift) and RESCALE, bit for bit. */
typedef struct {
  int32_t outer, axis, inner;
  int32_t table_size;          /* entries of each table */
  int32_t diff_mul, diff_shift;
  int32_t norm_bits, norm_mask;
  int32_t exp_bits, exp_mul, exp_shift;
  int32_t bias, base, out_shift;
  int32_t multiplier, shift, output_zp, double_round; /* RESCALE int32 -> int8, per tensor */
  int32_t input_s8;            /* 1: int8 input (its CAST to int32 absorbed), 0: int32 input */
} mcu_log_softmax_params_t;

int mcu_log_softmax_s8(const mcu_log_softmax_params_t *p, const int32_t *exp_table,
                       const int32_t *log_table, const void *input, int8_t *output);

/* The integer LayerNorm / RMSNorm / GroupNorm the frontend emits, fused (see
   frontend/lowering/norm.py). The input is batch x spatial x groups x group_size; each (batch,
   group) is normalised over its spatial x group_size values:
     d = centre ? count * x - sum(x) : x - input_zp;   d = (d + 2^(s0-1)) >> s0
     V = sum(mul(d, d, s1)) + eps;   e = (17 - clz(V)) & -2;   m = V * 2^-e in [2^14, 2^16)
     T = table_s16(m - 32768);   Z = mul(d, T, 7) >> (e / 2 + 7), rounded
     y = rescale(rescale(sign[c] Z, mult[c], shift[c]) + offset[c], output) + output_zp, clamped
   channel_params holds the rows mult, shift, offset, sign (groups x group_size channels each),
   with TOSA's MUL, TABLE and RESCALE, bit for bit. */
typedef struct {
  int32_t batch, spatial, groups, group_size;
  int32_t centre, count, input_zp;
  int32_t s0, s1, eps;
  int32_t double_round;                 /* of the per-channel rescale */
  int32_t output_multiplier, output_shift, output_double_round, output_zp;
  int32_t act_min, act_max;
  mcu_dtype_t input_type, output_type;  /* int8 / int16 / int32 in; int8 / int16 out */
} mcu_norm_params_t;

int mcu_norm(const mcu_norm_params_t *p, const int16_t *rsqrt_table, const int32_t *channel_params,
             const void *input, void *output);

/* The integer PReLU the frontend emits (relu(x) + slope * min(x, 0), the product a 1x1 depthwise
   conv), fused: per int8 element x of channel c (the last axis, `channels` wide), with the tables
   [3][256] the compiler evaluated from the TOSA (index v + 128): relu_part (int32), negative
   (int8 in int32) and scaled (the int32 the sum adds for a product d):
     d = clamp(rescale_c((negative[x] + slope_input_offset) * (slope[c] + slope_weight_offset) + bias[c]))
     y = clamp(rescale(relu_part[x] + scaled[d] - output_input_zp, output) + output_zp)
   channel_params holds the rows slope, bias, multiplier and TOSA shift of rescale_c (channels
   each). Bit for bit the TOSA ops; no int32 tensor in memory. */
typedef struct {
  int32_t channels;
  int32_t slope_input_offset, slope_weight_offset, slope_output_zp, slope_double_round;
  int32_t slope_act_min, slope_act_max;
  int32_t output_multiplier, output_shift, output_input_zp, output_zp, output_double_round;
  int32_t act_min, act_max;
} mcu_prelu_params_t;

int mcu_prelu(const mcu_prelu_params_t *p, int32_t count, const int32_t *tables, const int32_t *channel_params,
              const int8_t *input, int8_t *output);

/* -- recurrent ------------------------------------------------------------------------------- */

/* One LSTM time step with the integers of CMSIS-NN's arm_lstm_unidirectional_s8 (one step, time
 * major): x [rows, input_size] and h [rows, hidden_size] int8, the cell state c int16 at scale
 * 2**cell_scale_power. Per gate (input, forget, cell, output):
 *   g = act(clamp16(clamp16(rq(x . Wx + bx, mx, sx)) + rq(h . Wh + bh, mh, sh)))
 * with act the int16 sigmoid (tanh for the cell gate) of arm_nn_activation_s16 and rq
 * mcu_requantize; then
 *   c' = clamp(rq(i * g, input_to_cell) + clamp16(rq(f * c, forget_to_cell)), -cell_clip, cell_clip)
 *   h' = clamp8(rq(o * tanh(c' read as Q3.12), output) + output_offset).
 * The biases already hold the zero points' terms (bias - zp x row sums). h_out and c_out must not
 * overlap the inputs. */
typedef struct {
  int32_t rows, input_size, hidden_size;
  const int8_t *input_weights[4];   /* [hidden_size, input_size] per gate */
  const int8_t *hidden_weights[4];  /* [hidden_size, hidden_size] per gate */
  const int32_t *input_bias[4];
  const int32_t *hidden_bias[4];
  int32_t input_multiplier[4], input_shift[4], hidden_multiplier[4], hidden_shift[4];
  int32_t forget_to_cell_multiplier, forget_to_cell_shift;
  int32_t input_to_cell_multiplier, input_to_cell_shift;
  int32_t cell_clip, cell_scale_power;
  int32_t output_multiplier, output_shift, output_offset;
} mcu_lstm_params_t;

int mcu_lstm_step_s8(const mcu_lstm_params_t *p, const int8_t *x, const int8_t *h, const int16_t *c,
                     int8_t *h_out, int16_t *c_out);

/* arm_softmax_s8's integers over rows of int8, from the frontend's tables (exp_table[d]: the
   kernel's exponential of -d in Q0.31, sum_table[d]: its share of the row sum, d = max - x):
     total = sum(sum_table[d]);  h = clz(total);  s = ONE_OVER1((total << h) & INT32_MAX)
     y = round(mul31(exp_table[d], s) >> (35 - h)) - 128
   (ONE_OVER1 by the kernel's Newton steps). Output scale 1/256, zero point -128. */
int mcu_softmax_s8(int32_t rows, int32_t row_size, const int32_t *exp_table, const int32_t *sum_table,
                   const int8_t *input, int8_t *output);

/* The frontend's int16 softmax (output 1/32768, 0) over rows, fused: e = table_s16(max - x - 32768)
   (TOSA's interpolated int16 TABLE, e(0) = 2^21), den = sum(e) >> 7,
   y = (e * 256 + (den >> 1)) / den. */
int mcu_softmax_s16(int32_t rows, int32_t row_size, const int16_t *exp_table, const int16_t *input,
                    int16_t *output);

/* hypot(a, b) (a magnitude) as the frontend's integer form: (a - a_zp)^2 + (b - b_zp)^2 exactly in
   int32, CLZ-normalised by an even shift, its square root from the interpolated int16 table (513
   entries), rescaled (multiplier, shift, double rounding), shifted back by half the normalisation
   plus headroom (rounding), offset by output_zp and saturated; 0 for a zero sum. */
int mcu_hypot(int32_t count, mcu_dtype_t input_type, const void *a, const void *b, int32_t a_zp, int32_t b_zp,
              const int16_t *table, int32_t multiplier, int32_t shift, int32_t headroom, mcu_dtype_t output_type,
              int32_t output_zp, void *output);

/* arm_softmax_s16's integers (mcu_mlir/cmsis_softmax.py): the same algorithm and tables (513 int16
   each: exp on [-10, 0] and 1 / (1 + x) on [0, 1]), for builds without CMSIS-NN. */
int mcu_softmax_s16_lut(int32_t rows, int32_t row_size, int32_t mult, int32_t shift, const int16_t *exp_lut,
                        const int16_t *one_by_one_lut, const int16_t *input, int16_t *output);

#ifdef __cplusplus
}
#endif

#endif /* MCU_PORTABLE_H */

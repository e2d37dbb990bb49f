/* Portable data-movement, reduction, gather and resize kernels. */
#include <string.h>

#include "portable_internal.h"

int mcu_copy(int32_t bytes, const void *input, void *output) {
  if (input != output) memmove(output, input, (size_t)bytes);
  return MCU_STATUS_OK;
}

/* Advances a multi-index over `shape`; returns 0 after the last one. */
static int next_index(int32_t *idx, const mcu_shape_t *shape) {
  for (int32_t d = shape->rank - 1; d >= 0; --d) {
    if (++idx[d] < shape->dims[d]) return 1;
    idx[d] = 0;
  }
  return 0;
}

/* One run of `n` elements read `stride` elements apart, written densely. */
static void gather_run(int32_t elem_bytes, int32_t n, int32_t stride, const uint8_t *in, uint8_t *out) {
  if (stride == 1) {
    memcpy(out, in, (size_t)n * elem_bytes);
    return;
  }
  switch (elem_bytes) {
    case 1:
      for (int32_t k = 0; k < n; ++k) out[k] = in[(size_t)k * stride];
      break;
    case 2: {
      const int16_t *i = (const int16_t *)(const void *)in;
      int16_t *o = (int16_t *)(void *)out;
      for (int32_t k = 0; k < n; ++k) o[k] = i[(size_t)k * stride];
      break;
    }
    case 4: {
      const int32_t *i = (const int32_t *)(const void *)in;
      int32_t *o = (int32_t *)(void *)out;
      for (int32_t k = 0; k < n; ++k) o[k] = i[(size_t)k * stride];
      break;
    }
    default:
      for (int32_t k = 0; k < n; ++k)
        memcpy(out + (size_t)k * elem_bytes, in + (size_t)k * stride * elem_bytes, (size_t)elem_bytes);
  }
}

int mcu_transpose(int32_t elem_bytes, const mcu_shape_t *in_shape, const int32_t *perms,
                  const void *input, void *output) {
  int32_t in_strides[MCU_PORTABLE_MAX_RANK];
  mcu_strides(in_shape, in_strides, 0);
  /* The output's dims in order with the input stride of each; size-1 dims dropped and neighbours
     the permutation keeps adjacent merged, so the innermost run is as long as it can be. */
  int32_t dims[MCU_PORTABLE_MAX_RANK], strides[MCU_PORTABLE_MAX_RANK], rank = 0;
  for (int32_t d = 0; d < in_shape->rank; ++d) {
    const int32_t n = in_shape->dims[perms[d]], stride = in_strides[perms[d]];
    if (n == 0) return MCU_STATUS_OK;
    if (n == 1) continue;
    if (rank > 0 && strides[rank - 1] == stride * n) {
      dims[rank - 1] *= n;
      strides[rank - 1] = stride;
      continue;
    }
    dims[rank] = n;
    strides[rank] = stride;
    ++rank;
  }
  const uint8_t *in = (const uint8_t *)input;
  uint8_t *out = (uint8_t *)output;
  if (rank == 0) {
    memcpy(out, in, (size_t)elem_bytes);
    return MCU_STATUS_OK;
  }
  const int32_t inner = dims[rank - 1], inner_stride = strides[rank - 1];
  int32_t idx[MCU_PORTABLE_MAX_RANK] = {0};
  int32_t src = 0;
  for (;;) {
    gather_run(elem_bytes, inner, inner_stride, in + (size_t)src * elem_bytes, out);
    out += (size_t)inner * elem_bytes;
    int32_t d = rank - 2;
    for (; d >= 0; --d) {   /* the next outer index: the source offset moves by the dim's stride */
      src += strides[d];
      if (++idx[d] < dims[d]) break;
      src -= strides[d] * dims[d];
      idx[d] = 0;
    }
    if (d < 0) return MCU_STATUS_OK;
  }
}

int mcu_copy_into(int32_t elem_bytes, const mcu_shape_t *in_shape, const mcu_shape_t *out_shape,
                  const int32_t *start, const void *input, void *output) {
  int32_t out_strides[MCU_PORTABLE_MAX_RANK];
  int32_t idx[MCU_PORTABLE_MAX_RANK] = {0};
  mcu_strides(out_shape, out_strides, 0);
  const int32_t rank = in_shape->rank;
  const int32_t inner = in_shape->dims[rank - 1];
  const int32_t rows = mcu_numel(in_shape) / (inner > 0 ? inner : 1);
  const uint8_t *in = (const uint8_t *)input;
  uint8_t *out = (uint8_t *)output;
  mcu_shape_t outer = *in_shape;
  outer.dims[rank - 1] = 1;
  for (int32_t r = 0; r < rows; ++r) {
    int32_t dst = 0;
    for (int32_t d = 0; d < rank; ++d) dst += (idx[d] + start[d]) * out_strides[d];
    memcpy(out + (size_t)dst * elem_bytes, in + (size_t)r * inner * elem_bytes, (size_t)inner * elem_bytes);
    next_index(idx, &outer);
  }
  return MCU_STATUS_OK;
}

int mcu_copy_strided(int32_t elem_bytes, int32_t rank, const int32_t *sizes, const int32_t *dst_strides,
                     int32_t offset, const void *input, void *output) {
  if (rank < 1 || rank > MCU_PORTABLE_MAX_RANK) return MCU_STATUS_BAD_ARGUMENT;
  int32_t idx[MCU_PORTABLE_MAX_RANK] = {0};
  const int32_t inner = sizes[rank - 1], step = dst_strides[rank - 1];
  int32_t rows = 1;
  for (int32_t d = 0; d < rank - 1; ++d) rows *= sizes[d];
  const uint8_t *in = (const uint8_t *)input;
  uint8_t *out = (uint8_t *)output;
  for (int32_t r = 0; r < rows; ++r) {
    int32_t dst = offset;
    for (int32_t d = 0; d < rank - 1; ++d) dst += idx[d] * dst_strides[d];
    if (elem_bytes == 1) {
      for (int32_t j = 0; j < inner; ++j) out[dst + j * step] = *in++;
    } else {
      for (int32_t j = 0; j < inner; ++j, in += elem_bytes)
        memcpy(out + (size_t)(dst + j * step) * elem_bytes, in, (size_t)elem_bytes);
    }
    for (int32_t d = rank - 2; d >= 0; --d) {   /* next outer index */
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return MCU_STATUS_OK;
}

int mcu_slice(int32_t elem_bytes, const mcu_shape_t *in_shape, const mcu_shape_t *out_shape,
              const int32_t *start, const void *input, void *output) {
  int32_t in_strides[MCU_PORTABLE_MAX_RANK];
  int32_t idx[MCU_PORTABLE_MAX_RANK] = {0};
  mcu_strides(in_shape, in_strides, 0);
  const int32_t rank = out_shape->rank;
  const int32_t inner = out_shape->dims[rank - 1];
  const int32_t rows = mcu_numel(out_shape) / (inner > 0 ? inner : 1);
  const uint8_t *in = (const uint8_t *)input;
  uint8_t *out = (uint8_t *)output;
  mcu_shape_t outer = *out_shape;
  outer.dims[rank - 1] = 1;
  for (int32_t r = 0; r < rows; ++r) {
    int32_t src = 0;
    for (int32_t d = 0; d < rank; ++d) src += (idx[d] + start[d]) * in_strides[d];
    memcpy(out + (size_t)r * inner * elem_bytes, in + (size_t)src * elem_bytes, (size_t)inner * elem_bytes);
    next_index(idx, &outer);
  }
  return MCU_STATUS_OK;
}

int mcu_pad(mcu_dtype_t type, const mcu_shape_t *in_shape, const int32_t *padding,
            int32_t pad_value, const void *input, void *output) {
  mcu_shape_t out_shape = *in_shape;
  int32_t start[MCU_PORTABLE_MAX_RANK];
  for (int32_t d = 0; d < in_shape->rank; ++d) {
    out_shape.dims[d] = in_shape->dims[d] + padding[2 * d] + padding[2 * d + 1];
    start[d] = padding[2 * d];
  }
  const int32_t total = mcu_numel(&out_shape);
  for (int32_t i = 0; i < total; ++i) mcu_write(output, type, i, pad_value);
  if (mcu_numel(in_shape) == 0) return MCU_STATUS_OK;
  return mcu_copy_into(mcu_type_bytes(type), in_shape, &out_shape, start, input, output);
}

int mcu_tile(int32_t elem_bytes, const mcu_shape_t *in_shape, const mcu_shape_t *out_shape,
             const void *input, void *output) {
  int32_t in_strides[MCU_PORTABLE_MAX_RANK];
  int32_t idx[MCU_PORTABLE_MAX_RANK] = {0};
  mcu_strides(in_shape, in_strides, 0);
  const int32_t total = mcu_numel(out_shape);
  for (int32_t flat = 0; flat < total; ++flat) {
    int32_t src = 0;
    for (int32_t d = 0; d < out_shape->rank; ++d) src += (idx[d] % in_shape->dims[d]) * in_strides[d];
    memcpy((uint8_t *)output + (size_t)flat * elem_bytes,
           (const uint8_t *)input + (size_t)src * elem_bytes, (size_t)elem_bytes);
    next_index(idx, out_shape);
  }
  return MCU_STATUS_OK;
}

int mcu_reverse(int32_t elem_bytes, const mcu_shape_t *shape, int32_t axis, const void *input,
                void *output) {
  int32_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= shape->dims[d];
  for (int32_t d = axis + 1; d < shape->rank; ++d) inner *= shape->dims[d];
  const int32_t n = shape->dims[axis];
  for (int32_t o = 0; o < outer; ++o)
    for (int32_t a = 0; a < n; ++a)
      memcpy((uint8_t *)output + ((size_t)(o * n + a) * inner) * elem_bytes,
             (const uint8_t *)input + ((size_t)(o * n + (n - 1 - a)) * inner) * elem_bytes,
             (size_t)inner * elem_bytes);
  return MCU_STATUS_OK;
}

int mcu_reduce(mcu_reduce_op_t op, mcu_dtype_t type, int32_t outer, int32_t axis, int32_t inner,
               const void *input, void *output) {
  for (int32_t o = 0; o < outer; ++o)
    for (int32_t i = 0; i < inner; ++i) {
      int64_t acc = 0;
      switch (op) {
        case MCU_REDUCE_SUM: acc = 0; break;
        case MCU_REDUCE_MAX: acc = mcu_type_min(type); break;
        case MCU_REDUCE_MIN: acc = mcu_type_max(type); break;
        case MCU_REDUCE_PRODUCT: acc = 1; break;
        case MCU_REDUCE_ALL: acc = 1; break;
        case MCU_REDUCE_ANY: acc = 0; break;
      }
      for (int32_t a = 0; a < axis; ++a) {
        const int64_t v = mcu_read(input, type, (o * axis + a) * inner + i);
        switch (op) {
          case MCU_REDUCE_SUM: acc = (int64_t)(int32_t)(uint32_t)(uint64_t)(acc + v); break;
          case MCU_REDUCE_MAX: if (v > acc) acc = v; break;
          case MCU_REDUCE_MIN: if (v < acc) acc = v; break;
          case MCU_REDUCE_PRODUCT: acc = (int64_t)(int32_t)(uint32_t)(uint64_t)(acc * v); break;
          case MCU_REDUCE_ALL: acc = acc && v; break;
          case MCU_REDUCE_ANY: acc = acc || v; break;
        }
      }
      mcu_write(output, type, o * inner + i, acc);
    }
  return MCU_STATUS_OK;
}

int mcu_argmax(mcu_dtype_t type, int32_t outer, int32_t axis, int32_t inner, const void *input,
               int32_t *output) {
  for (int32_t o = 0; o < outer; ++o)
    for (int32_t i = 0; i < inner; ++i) {
      int64_t best = mcu_read(input, type, o * axis * inner + i);
      int32_t best_index = 0;
      for (int32_t a = 1; a < axis; ++a) {
        const int64_t v = mcu_read(input, type, (o * axis + a) * inner + i);
        if (v > best) { best = v; best_index = a; }
      }
      output[o * inner + i] = best_index;
    }
  return MCU_STATUS_OK;
}

int mcu_gather(int32_t elem_bytes, int32_t n, int32_t k, int32_t c, int32_t w,
               const void *values, const int32_t *indices, void *output) {
  for (int32_t b = 0; b < n; ++b)
    for (int32_t j = 0; j < w; ++j) {
      /* Clamped to [0, k - 1], as the frontend clamps run-time ids before its tosa.gather (GATHER
       * REQUIREs an index in range); an index already in range is read as it is. */
      const int32_t given = indices[b * w + j];
      const int32_t index = given < 0 ? 0 : given >= k ? k - 1 : given;
      memcpy((uint8_t *)output + ((size_t)(b * w + j) * c) * elem_bytes,
             (const uint8_t *)values + ((size_t)(b * k + index) * c) * elem_bytes, (size_t)c * elem_bytes);
    }
  return MCU_STATUS_OK;
}

int mcu_scatter(int32_t elem_bytes, int32_t n, int32_t k, int32_t c, int32_t w, const void *values_in,
                const int32_t *indices, const void *input, void *output) {
  const size_t row = (size_t)c * elem_bytes;
  memmove(output, values_in, (size_t)n * k * row);   /* the planner may give both one buffer */
  for (int32_t b = 0; b < n; ++b)
    for (int32_t j = 0; j < w; ++j) {
      const int32_t index = indices[b * w + j];
      if (index < 0 || index >= k) return MCU_STATUS_BAD_ARGUMENT;
      memcpy((uint8_t *)output + (size_t)(b * k + index) * row,
             (const uint8_t *)input + (size_t)(b * w + j) * row, row);
    }
  return MCU_STATUS_OK;
}

static int32_t floor_div(int32_t a, int32_t b) {
  int32_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

/* Where output coordinate o samples one input axis of `size`: its two neighbours (clamped) and
   the distance from the first, in units of 1 / scale_n (TOSA RESIZE). */
typedef struct {
  int32_t i0, i1, frac;
} resize_sample_t;

static resize_sample_t resize_sample(int32_t o, int32_t scale_n, int32_t scale_d, int32_t offset, int32_t size) {
  const int32_t v = o * scale_d + offset;
  const int32_t i = floor_div(v, scale_n);
  const resize_sample_t s = {i > 0 ? i : 0, i + 1 < size - 1 ? i + 1 : size - 1, v - i * scale_n};
  return s;
}

static int32_t resize_nearest(resize_sample_t s, int32_t scale_n) { return 2 * s.frac >= scale_n ? s.i1 : s.i0; }

/* Nearest neighbour with one element type in and out: a pixel's channels are copied whole. */
static void resize_nearest_copy(const mcu_resize_params_t *p, const uint8_t *in, uint8_t *out) {
  const size_t pixel = (size_t)p->c * (size_t)mcu_type_bytes(p->in_type);
  for (int32_t b = 0; b < p->n; ++b)
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      const int32_t ny = resize_nearest(resize_sample(oy, p->scale_y_n, p->scale_y_d, p->offset_y, p->h), p->scale_y_n);
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const int32_t nx = resize_nearest(resize_sample(ox, p->scale_x_n, p->scale_x_d, p->offset_x, p->w), p->scale_x_n);
        memcpy(out + ((size_t)(b * p->out_h + oy) * p->out_w + ox) * pixel,
               in + ((size_t)(b * p->h + ny) * p->w + nx) * pixel, pixel);
      }
    }
}

int mcu_resize(const mcu_resize_params_t *p, const void *input, void *output) {
  if (!p->bilinear && p->in_type == p->out_type) {
    resize_nearest_copy(p, (const uint8_t *)input, (uint8_t *)output);
    return MCU_STATUS_OK;
  }
  for (int32_t b = 0; b < p->n; ++b)
    for (int32_t oy = 0; oy < p->out_h; ++oy)
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const resize_sample_t sy = resize_sample(oy, p->scale_y_n, p->scale_y_d, p->offset_y, p->h);
        const resize_sample_t sx = resize_sample(ox, p->scale_x_n, p->scale_x_d, p->offset_x, p->w);
        for (int32_t c = 0; c < p->c; ++c) {
          const int32_t out_index = ((b * p->out_h + oy) * p->out_w + ox) * p->c + c;
#define MCU_AT(yy, xx) mcu_read(input, p->in_type, ((b * p->h + (yy)) * p->w + (xx)) * p->c + c)
          if (p->bilinear) {
            const int64_t uy = p->scale_y_n, ux = p->scale_x_n, dy = sy.frac, dx = sx.frac;
            int64_t acc = MCU_AT(sy.i0, sx.i0) * (uy - dy) * (ux - dx);
            acc += MCU_AT(sy.i0, sx.i1) * (uy - dy) * dx;
            acc += MCU_AT(sy.i1, sx.i0) * dy * (ux - dx);
            acc += MCU_AT(sy.i1, sx.i1) * dy * dx;
            mcu_write(output, p->out_type, out_index, acc);
          } else {
            mcu_write(output, p->out_type, out_index,
                      MCU_AT(resize_nearest(sy, p->scale_y_n), resize_nearest(sx, p->scale_x_n)));
          }
#undef MCU_AT
        }
      }
  return MCU_STATUS_OK;
}

/* mcu-mlir runtime: what generated model code and the harnesses share. */
#ifndef MCU_RUNTIME_H
#define MCU_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MCU_MAX_RANK 6

/* A graph input or output as the generated model.h describes it. */
typedef struct {
  const char *name;
  int32_t rank;
  int32_t shape[MCU_MAX_RANK];
  int32_t elem_bytes;  /* 1 (int8), 2 (int16), 4 (int32 / float) */
  int32_t is_float;    /* 1 for a float tensor (unquantized graph) */
  float scale;         /* quantization: real = scale * (q - zero_point) */
  int32_t zero_point;
  int32_t size_bytes;
} mcu_tensor_info_t;

/* A slice [start, stop) along `axis` of graph output `output` with its own quantization: an output
 * that is a concat of parts of very different ranges (YOLO's boxes in pixels beside class scores)
 * keeps each part's scale; its mcu_tensor_info_t has scale 0. model.h declares
 * mcu_model_output_parts[] (MCU_MODEL_NUM_OUTPUT_PARTS rows) when the model has such an output. */
typedef struct {
  int32_t output;
  int32_t axis;
  int32_t start;
  int32_t stop;
  float scale;         /* real = scale * (q - zero_point) within the slice */
  int32_t zero_point;
} mcu_tensor_part_t;

/* Called before layer `index` runs and with -1 after the last one. Never inlined, so an
 * instruction-counting QEMU plugin can split counts per layer at its address. */
void mcu_layer_marker(int32_t index);

#ifdef __cplusplus
}
#endif

#endif /* MCU_RUNTIME_H */

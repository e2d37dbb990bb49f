/* Runs two generated models one after the other in one shared arena and prints their outputs as
 * hex, one line per output: "<model> <index> <hex bytes>". */
#include <stdint.h>

#include "kws_model.h"
#include "vad_model.h"
#include "test_inputs.h" /* written by the test: kws_test_inputs[], vad_test_inputs[] */

void semihost_print(const char *text);

/* The models never run at the same time: one arena, sized to the larger. */
#define ARENA_BYTES \
  (KWS_MODEL_ARENA_BYTES > VAD_MODEL_ARENA_BYTES ? KWS_MODEL_ARENA_BYTES : VAD_MODEL_ARENA_BYTES)
static uint8_t arena[ARENA_BYTES > 0 ? ARENA_BYTES : 1] __attribute__((aligned(16)));
static uint8_t output_bytes[4][4096] __attribute__((aligned(16)));

static void print_output(const char *model, int index, const uint8_t *bytes, int32_t count) {
  static const char hex[] = "0123456789abcdef";
  char line[16 + 2 * 4096 + 2];
  char *cursor = line;
  while (*model) *cursor++ = *model++;
  *cursor++ = ' ';
  *cursor++ = (char)('0' + index);
  *cursor++ = ' ';
  for (int32_t i = 0; i < count; i++) {
    *cursor++ = hex[bytes[i] >> 4];
    *cursor++ = hex[bytes[i] & 0xF];
  }
  *cursor++ = '\n';
  *cursor = '\0';
  semihost_print(line);
}

int main(void) {
  void *outputs[4] = {output_bytes[0], output_bytes[1], output_bytes[2], output_bytes[3]};
  if (KWS_MODEL_NUM_OUTPUTS > 4 || VAD_MODEL_NUM_OUTPUTS > 4) return 3;
  for (int i = 0; i < KWS_MODEL_NUM_OUTPUTS; i++)
    if (kws_model_outputs[i].size_bytes > 4096) return 3;
  for (int i = 0; i < VAD_MODEL_NUM_OUTPUTS; i++)
    if (vad_model_outputs[i].size_bytes > 4096) return 3;

  if (kws_model_run(kws_test_inputs, outputs, arena) != 0) return 2;
  for (int i = 0; i < KWS_MODEL_NUM_OUTPUTS; i++)
    print_output("kws", i, output_bytes[i], kws_model_outputs[i].size_bytes);

  if (vad_model_run(vad_test_inputs, outputs, arena) != 0) return 2;
  for (int i = 0; i < VAD_MODEL_NUM_OUTPUTS; i++)
    print_output("vad", i, output_bytes[i], vad_model_outputs[i].size_bytes);
  return 0;
}

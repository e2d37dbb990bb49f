"""The quantization stage: PT2E with the project's quantizer, ranges, per-layer precision."""

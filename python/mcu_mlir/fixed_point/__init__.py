"""The integer arithmetic of quantized kernels: TOSA's rescale, CMSIS-NN's softmax and LSTM models."""

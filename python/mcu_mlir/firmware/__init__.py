"""Building a generated model with CMake and running it on the host or a Cortex-M under QEMU."""

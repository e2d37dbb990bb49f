"""What the kernel libraries ask of a core: CMSIS-NN scratch sizes, its padding contract, MACs."""

"""The torch graph stage: export and the rewrites of the exported graph before quantization."""

"""The `.tflite` frontend: a TFLite int8 or int16x8 model's flatbuffer -> integer TOSA (reader.py
checks and reads the file, lower.py, ops.py and int16.py build the TOSA TFLite Micro's kernels
compute)."""

from .importer import import_tflite  # noqa: F401  (the frontend's API)

"""mcu-mlir: PyTorch models to C calling CMSIS-NN kernels on Cortex-M, through MLIR."""

__version__ = "0.1.0"


from .options import CompileOptions, with_options


@with_options
def compile(model, example_inputs=None, options: CompileOptions | None = None, /,  # noqa: A001 - the contract's name
            **fields):
    """Compiles `model` (an nn.Module with its example inputs, a TOSA `.mlir` file, a `.tosa` flatbuffer
    or a `.tflite` model) to C for a microcontroller; returns a CompileResult (output_dir, report, files).

    `options` is a CompileOptions; keyword arguments set its fields (over `options` when both are given)."""
    from .driver import compile as _compile
    return _compile(model, example_inputs, options, **fields)

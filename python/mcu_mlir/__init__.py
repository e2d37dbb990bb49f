"""mcu-mlir: PyTorch models to C calling CMSIS-NN kernels on Cortex-M, through MLIR."""

__version__ = "0.1.0"


def compile(model, example_inputs, **options):  # noqa: A001 - the public name of the contract
    """Compiles `model` for a microcontroller; see `mcu_mlir.driver.compile`."""
    from .driver import compile as _compile
    return _compile(model, example_inputs, **options)

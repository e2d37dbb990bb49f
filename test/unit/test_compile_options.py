"""CompileOptions, as the Python API gets it: every option mcu-compile offers a fixed set of values
for is checked the same way when it comes from Python, with an error naming the flag."""

from dataclasses import fields

import pytest

from mcu_mlir.diagnostics import UserError
from mcu_mlir.options import CompileOptions

CHOICE_FIELDS = [f for f in fields(CompileOptions) if f.metadata.get("choices")]


def test_the_choice_options_are_found():
    names = {f.name for f in CHOICE_FIELDS}
    assert {"target", "backend", "quantize", "emit", "prefer", "softmax"} <= names


@pytest.mark.parametrize("option", CHOICE_FIELDS, ids=lambda f: f.name)
def test_a_value_outside_the_choices_is_a_clear_error(option):
    flag = "--" + option.name.replace("_", "-")
    with pytest.raises(UserError, match=f"^{flag} 'bogus' is not one of: {option.metadata['choices'][0]}"):
        CompileOptions(**{option.name: "bogus"}).validate()


@pytest.mark.parametrize("option", CHOICE_FIELDS, ids=lambda f: f.name)
def test_every_offered_value_passes(option):
    for value in option.metadata["choices"]:
        changed = {option.name: value}
        if option.name in ("activation_ranges", "range_equalization") and value != "auto":
            changed["quantize"] = "int8"
        if option.name == "quantize" and value == "none":
            changed["emit"] = "tosa"
        CompileOptions(**changed).validate()

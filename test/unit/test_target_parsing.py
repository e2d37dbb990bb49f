"""Parsers of the target side: harness output, linker scripts and overflow messages, plugin counts."""

import struct

import numpy as np
import pytest

from mcu_mlir.diagnostics import UserError
from mcu_mlir.firmware import build, qemu, run, sources

HARNESS_TEXT = """mcu-harness 1
input 0 x rank=2 shape=1,3 elem_bytes=1 is_float=0 scale=0x3d4ccccd zero_point=-3 bytes=3
output 0 y rank=1 shape=2 elem_bytes=2 is_float=0 scale=0x3f000000 zero_point=0 bytes=4
status 0
data 0 4
ff7f0180
end
stack_bytes 660
"""


def test_parse_harness_output():
    parsed = run.parse_harness_output(HARNESS_TEXT)
    assert parsed.inputs[0].name == "x" and parsed.inputs[0].shape == (1, 3)
    assert parsed.inputs[0].scale == struct.unpack("<f", struct.pack("<f", 0.05))[0]
    assert parsed.inputs[0].zero_point == -3 and parsed.inputs[0].dtype == np.int8
    assert parsed.outputs[0].dtype == np.int16 and parsed.outputs[0].scale == 0.5
    assert parsed.status == 0 and parsed.stack_bytes == 660
    assert np.frombuffer(parsed.data[0], np.int16).tolist() == [0x7fff, -32767]


def test_parse_harness_output_errors():
    with pytest.raises(UserError, match="no harness header"):
        run.parse_harness_output("Lockup\n")
    with pytest.raises(UserError, match="wrong size"):
        run.parse_harness_output("mcu-harness 1\nerror: an input file has the wrong size\n")


def test_quantize_rounds_half_to_even_and_saturates():
    info = run.TensorInfo("x", (6,), 1, False, 0.5, 1, 6)
    x = np.array([0.25, 0.75, -0.25, 1000.0, -1000.0, 1.0], np.float32)
    assert run.quantize(x, info).tolist() == [1, 3, 1, 127, -128, 3]
    assert run.quantize(np.array([5], np.int8), info).tolist() == [5]   # integers are already quantized
    assert run.dequantize(np.array([1, 3], np.int8), info).tolist() == [0.0, 1.0]


def test_memory_regions_of_the_linker_scripts():
    root = sources.root() / "lib" / "target"
    assert build.memory_regions(root / "mps2.ld.in") == {"FLASH": (0, 4 << 20), "RAM": (0x20000000, 4 << 20)}
    an547 = build.memory_regions(root / "mps3-an547.ld.in")
    assert an547["ITCM"] == (0, 512 << 10) and an547["DTCM"] == (0x20000000, 512 << 10)
    assert an547["SRAM"] == (0x21000000, 2 << 20) and an547["DDR"] == (0x60000000, 256 << 20)


def test_overflow_message_names_bytes_needed_and_available(tmp_path):
    (tmp_path / "mps2.ld").write_text((sources.root() / "lib" / "target" / "mps2.ld.in").read_text())
    log = ("ld: mcu_model.elf section `.mcu_arena' will not fit in region `RAM'\n"
           "ld: region `RAM' overflowed by 1000 bytes\ncollect2: error: ld returned 1 exit status\n")
    with pytest.raises(UserError) as err:
        build._raise_if_too_big(log, tmp_path, "cortex-m3")
    assert "does not fit the memory of mps2-an385 (cortex-m3)" in str(err.value)
    assert f"RAM (.mcu_arena) needs {4 * 1024 * 1024 + 1000} bytes, {4 * 1024 * 1024} available" in str(err.value)
    build._raise_if_too_big("undefined reference to `foo'", tmp_path, "cortex-m3")   # not an overflow: no error


def test_parse_plugin_counts(tmp_path):
    path = tmp_path / "counts.txt"
    path.write_text("tb 0 0x100 3 2 1 0\ntb 1 0x200 5 1 4 2\nsegment 0\n0 1\nsegment 1\n1 7\n0 2\nend\n")
    blocks, segments = qemu.parse_counts(path)
    assert blocks == {0: (0x100, 3, 2, 1, 0), 1: (0x200, 5, 1, 4, 2)}
    assert segments == [{0: 1}, {1: 7, 0: 2}]


def test_unknown_target_and_machine():
    with pytest.raises(UserError, match="unknown target"):
        build.check_toolchain("cortex-a53")
    with pytest.raises(UserError, match="no QEMU machine"):
        qemu.machine_for("host")


def test_marked_layers_follow_the_source_and_the_report(tmp_path):
    (tmp_path / "model.c").write_text("int f(void) {\n  mcu_layer_marker(0);\n  g();\n  mcu_layer_marker(2);\n"
                                      "  h();\n  mcu_layer_marker(-1);\n}\n")
    assert run.marked_layers(tmp_path) == [{"index": 0, "name": "layer0"}, {"index": 2, "name": "layer2"}]
    (tmp_path / "report.json").write_text('{"ops": [{"name": "conv", "kernel": "arm_convolve_wrapper_s8"},'
                                          ' {"name": "flat", "kernel": "view"}, {"name": "fc", "kernel": "portable:matmul"}]}')
    assert run.marked_layers(tmp_path) == [{"index": 0, "name": "conv", "kernel": "arm_convolve_wrapper_s8"},
                                           {"index": 2, "name": "fc", "kernel": "portable:matmul"}]

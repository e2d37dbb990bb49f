"""emission/kernel_share: the instruction share by kind of kernel and the arena's int32
temporaries, on reports shaped as mcu-compile writes them."""

from mcu_mlir.emission.kernel_share import instruction_share, int32_note, int32_temporaries


def _op(name, kernel):
    return {"name": name, "kernel": kernel, "tosa_op": "x"}


def test_share_separates_expanded_layers_from_one_kernel_ones():
    ops = [_op("conv", "arm_convolve_wrapper_s8"), _op("act", "portable:prelu"), _op("flat", "view")]
    ops += [_op("norm", k) for k in ("portable:reduce", "portable:binary", "portable:binary", "portable:rescale")]
    counts = [{"index": i, "name": op["name"], "instructions": n}
              for i, (op, n) in enumerate(zip(ops, (500, 200, 0, 100, 100, 50, 50))) if op["kernel"] != "view"]
    share = instruction_share({"ops": ops}, counts)
    assert share["cmsis_nn"] == 0.5 and share["portable_one_kernel"] == 0.2 and share["portable_expanded"] == 0.3
    assert share["cmsis_nn_or_one_kernel"] == 0.7 and share["expanded_layers"] == ["norm"]


def test_share_refuses_counts_of_another_build():
    assert instruction_share({"ops": [_op("conv", "arm_convolve_wrapper_s8")]},
                             [{"index": 0, "name": "other", "instructions": 5}]) is None


def _buf(layer, start, end, offset, nbytes, elem):
    return {"layer": layer, "kernel": "k", "start": start, "end": end, "offset": offset, "bytes": nbytes,
            "scratch": False, "elem": elem}


def test_int32_temporaries_at_the_arena_peak():
    buffers = [_buf("conv", 0, 1, 0, 100, "i8"), _buf("act", 1, 2, 100, 400, "i32"),
               _buf("act", 2, 3, 100, 400, "i32"),          # in place over the first: counted once
               _buf("act", 3, 4, 0, 100, "i8"), _buf("head", 4, 5, 500, 40, "i32")]
    wide = int32_temporaries({"buffers": buffers})
    assert wide["bytes_at_peak"] == 400 and wide["arena_bytes_at_peak"] == 500
    assert wide["layers"][0] == {"layer": "act", "bytes": 400, "at_peak": True}
    assert wide["layers"][1] == {"layer": "head", "bytes": 40, "at_peak": False}
    assert "act (400 B)" in int32_note({"int32_temporaries": wide})


def test_no_note_for_small_or_absent_int32_tensors():
    buffers = [_buf("conv", 0, 1, 0, 1000, "i8"), _buf("head", 1, 1, 1000, 40, "i32")]
    assert int32_note({"int32_temporaries": int32_temporaries({"buffers": buffers})}) is None
    assert int32_temporaries({"buffers": buffers[:1]}) is None

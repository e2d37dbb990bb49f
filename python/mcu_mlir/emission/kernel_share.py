"""Where a model's work and arena go, by kind of kernel.

`instruction_share`: of the instructions one inference counts under QEMU, the shares on CMSIS-NN,
on portable kernels that compute a layer's op in at most EXPANDED_CALLS calls, and on portable
kernels of a layer expanded into more calls (a composite op left as per-op arithmetic: PReLU or
a norm the fused patterns did not take). `int32_temporaries`: the layers whose int32 / int64
tensors the arena holds, and how many of the arena's bytes they take where the most bytes are
live (the plan's peak): the arena a fused kernel would save.
"""

from __future__ import annotations

import collections

EXPANDED_CALLS = 3
WIDE = ("i32", "i64")


def layer_calls(ops: list[dict]) -> collections.Counter:
    """Kernel calls per layer (views are no call)."""
    return collections.Counter(op["name"] for op in ops if op["kernel"] != "view")


def instruction_share(report: dict, layers: list[dict]) -> dict | None:
    """Shares of the counted instructions (`layers`: index, name, instructions per kernel call,
    as mcu-run counts them); None when the counts are not this report's calls."""
    ops = report.get("ops") or []
    calls = layer_calls(ops)
    sums = dict.fromkeys(("cmsis_nn", "portable_one_kernel", "portable_expanded", "other"), 0)
    expanded = set()
    for layer in layers:
        if layer["index"] >= len(ops) or ops[layer["index"]]["name"] != layer["name"]:
            return None
        op = ops[layer["index"]]
        if op["kernel"].startswith("arm_"):
            key = "cmsis_nn"
        elif op["kernel"].startswith("portable:"):
            key = "portable_expanded" if calls[op["name"]] > EXPANDED_CALLS else "portable_one_kernel"
            if key == "portable_expanded":
                expanded.add(op["name"])
        else:
            key = "other"
        sums[key] += layer["instructions"]
    total = sum(sums.values())
    if not total:
        return None
    share = {key: round(value / total, 4) for key, value in sums.items()}
    share["cmsis_nn_or_one_kernel"] = round((sums["cmsis_nn"] + sums["portable_one_kernel"]) / total, 4)
    share["expanded_layers"] = sorted(expanded)
    return share


def _footprint(bufs) -> int:
    """Bytes of the union of the buffers' address ranges (in-place buffers share theirs)."""
    total, reach = 0, 0
    for start, end in sorted((b["offset"], b["offset"] + b["bytes"]) for b in bufs):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def int32_temporaries(report: dict) -> dict | None:
    """The arena's int32 / int64 tensors: the bytes they hold at the call where the arena is
    fullest (the plan's peak) and per layer (largest first, `at_peak` where it is live there);
    None when there are none."""
    buffers = report.get("buffers") or []
    wide = [b for b in buffers if not b["scratch"] and b.get("elem") in WIDE]
    if not wide:
        return None
    steps = max(b["end"] for b in buffers) + 1

    def live(bufs, i):
        return [b for b in bufs if b["start"] <= i <= b["end"]]
    peak = max(range(steps), key=lambda i: _footprint(live(buffers, i)))
    per_layer = {}
    for b in wide:
        row = per_layer.setdefault(b["layer"], {"layer": b["layer"], "bytes": 0, "at_peak": False})
        row["bytes"] = max(row["bytes"], b["bytes"])
        row["at_peak"] |= b["start"] <= peak <= b["end"]
    return {"bytes_at_peak": _footprint(live(wide, peak)), "arena_bytes_at_peak": _footprint(live(buffers, peak)),
            "layers": sorted(per_layer.values(), key=lambda r: -r["bytes"])}


def int32_note(report: dict) -> str | None:
    """One line for mcu-compile when int32 temporaries hold a tenth or more of the arena where it
    is fullest."""
    wide = report.get("int32_temporaries")
    if not wide or wide["bytes_at_peak"] * 10 < wide["arena_bytes_at_peak"]:
        return None
    shown = ", ".join(f"{r['layer']} ({r['bytes']:,} B)" for r in wide["layers"] if r["at_peak"])
    return (f"int32 temporaries hold {wide['bytes_at_peak']:,} of the {wide['arena_bytes_at_peak']:,} arena bytes "
            f"in use where it is fullest: {shown} (report.json int32_temporaries)")

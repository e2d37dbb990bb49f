"""report.html: the memory and layer report of a compiled model, for a person.

One self-contained page (inline CSS and SVG, no script, nothing fetched): RAM and flash against the
target's limits, the arena timeline (every tensor and scratch buffer as a bar over the kernels it
lives across, at its arena offset; the peak marked), and a per-layer table (kernel, weights, scratch,
arena offset, and instructions of the last `mcu-run --count-instructions` under QEMU, when there is
one). Rendered from report.json alone.
"""

from __future__ import annotations

import hashlib
import html
import json
from pathlib import Path

WIDTH, HEIGHT, MARGIN = 1000, 360, 56


def _kb(n) -> str:
    return "-" if n is None else f"{n / 1024:,.1f} kB"


def _color(name: str) -> str:
    hue = int(hashlib.sha256(name.encode()).hexdigest()[:4], 16) % 360
    return f"hsl({hue}, 55%, 62%)"


def _bar(label: str, used, limit) -> str:
    if not used:
        return ""
    share = min(used / limit, 1.0) if limit else 0.0
    over = limit and used > limit
    limit_text = f" of {_kb(limit)} ({used / limit:.0%})" if limit else " (no limit given)"
    return (f'<div class="bar-row"><span class="bar-label">{html.escape(label)}</span>'
            f'<span class="bar"><span class="fill{" over" if over else ""}" style="width:{share * 100:.1f}%"></span>'
            f'</span><span class="bar-text">{_kb(used)}{limit_text}</span></div>')


def _patched_columns(ops) -> list[int]:
    """Kernel calls of the patched stage (their layers are named '... (band i of n)')."""
    return [i for i, op in enumerate(ops) if " (band " in op.get("name", "")]


def _timeline(report: dict) -> str:
    buffers = report.get("buffers") or []
    ops = report.get("ops") or []
    arena = report.get("arena_bytes") or 0
    if not buffers or not arena:
        return '<p class="note">The arena is empty: every tensor lives in the caller\'s input and output buffers.</p>'
    columns = len(ops) + 1
    x_scale, y_scale = WIDTH / columns, HEIGHT / arena

    def y(byte):
        return MARGIN // 2 + HEIGHT - byte * y_scale
    parts = [f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{WIDTH + MARGIN * 2}" '
             f'height="{HEIGHT + MARGIN * 2}" role="img" aria-label="arena timeline">',
             f'<rect class="frame" x="{MARGIN}" y="{y(arena):.1f}" width="{WIDTH}" height="{HEIGHT}"/>']
    stage = _patched_columns(ops)
    if stage:
        # The patched stage: its kernels run band by band, so its tensors are bands of rows.
        x0, x1 = MARGIN + stage[0] * x_scale, MARGIN + (stage[-1] + 1) * x_scale
        parts.append(f'<rect class="patched" x="{x0:.1f}" y="{y(arena):.1f}" width="{x1 - x0:.1f}" '
                     f'height="{HEIGHT}"><title>patched stage: {report.get("patched_bands")} bands of rows, '
                     f'kernel calls {stage[0]}-{stage[-1]}</title></rect>')
        parts.append(f'<text class="patched-label" x="{x0 + 4:.1f}" y="{y(0) + 14:.1f}">patched stage '
                     f'({report.get("patched_bands")} bands)</text>')
    tops = [0] * columns
    for b in buffers:
        for t in range(b["start"], min(b["end"], columns - 1) + 1):
            tops[t] = max(tops[t], b["offset"] + b["bytes"])
        x0 = MARGIN + b["start"] * x_scale
        w = max((b["end"] - b["start"] + 1) * x_scale - 1, 1)
        cls = "buffer scratch" if b.get("scratch") else "buffer"
        fill = "#9a9a9a" if b.get("scratch") else _color(b["layer"])
        kind = "scratch of " if b.get("scratch") else ""
        parts.append(f'<rect class="{cls}" x="{x0:.1f}" y="{y(b["offset"] + b["bytes"]):.1f}" width="{w:.1f}" '
                     f'height="{max(b["bytes"] * y_scale, 1):.1f}" fill="{fill}"><title>{kind}{html.escape(b["layer"])}'
                     f' ({html.escape(b.get("kernel", ""))}): {b["bytes"]:,} bytes at offset {b["offset"]:,}, '
                     f'kernels {b["start"]}-{b["end"]}</title></rect>')
    peak = max(range(columns), key=lambda t: tops[t])
    px = MARGIN + (peak + 0.5) * x_scale
    peak_name = ops[peak]["name"] if peak < len(ops) else "the outputs"
    parts += [f'<line class="peak" x1="{px:.1f}" x2="{px:.1f}" y1="{y(arena) - 8:.1f}" y2="{y(0):.1f}"/>',
              f'<text class="peak-label" x="{px + 4:.1f}" y="{y(arena) - 10:.1f}">peak: {html.escape(peak_name)} '
              f'({_kb(tops[peak])})</text>',
              f'<text class="axis" x="{MARGIN - 6}" y="{y(arena) + 4:.1f}" text-anchor="end">{_kb(arena)}</text>',
              f'<text class="axis" x="{MARGIN - 6}" y="{y(0):.1f}" text-anchor="end">0</text>',
              f'<text class="axis" x="{MARGIN + WIDTH / 2:.1f}" y="{y(0) + 28:.1f}" text-anchor="middle">'
              f'kernel calls in run order (0-{columns - 2}); height: arena bytes</text>']
    ram = report.get("ram_limit_bytes")
    if ram and ram < arena * 1.5:
        parts.append(f'<line class="limit" x1="{MARGIN}" x2="{MARGIN + WIDTH}" y1="{y(ram):.1f}" y2="{y(ram):.1f}"/>')
    parts.append("</svg>")
    return "\n".join(parts)


def _table(report: dict) -> str:
    layers = {row["index"]: row for row in (report.get("instructions") or {}).get("layers", [])}
    rows = []
    for i, op in enumerate(report.get("ops") or []):
        counted = layers.get(i, {}).get("instructions")
        rows.append(f'<tr><td>{i}</td><td>{html.escape(op["name"])}</td><td>{html.escape(op["kernel"])}</td>'
                    f'<td>{html.escape(op["tosa_op"])}</td><td class="num">{op.get("weights_bytes", 0):,}</td>'
                    f'<td class="num">{op.get("macs", 0):,}</td><td class="num">{op.get("scratch_bytes", 0):,}</td>'
                    f'<td class="num">{"-" if op.get("arena_offset") is None else format(op["arena_offset"], ",")}</td>'
                    f'<td class="num">{"-" if counted is None else format(counted, ",")}</td></tr>')
    return ('<table class="layers"><thead><tr><th>#</th><th>layer</th><th>kernel</th><th>TOSA ops</th>'
            '<th>weights (bytes)</th><th>MACs</th><th>scratch (bytes)</th><th>arena offset</th>'
            '<th>instructions</th></tr></thead>'
            '<tbody>' + "".join(rows) + "</tbody></table>")


CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
.bar-row { display: flex; align-items: center; gap: 10px; margin: 6px 0; }
.bar-label { width: 110px; } .bar-text { white-space: nowrap; }
.bar { display: inline-block; width: 420px; height: 16px; background: #e8e8e8; border-radius: 3px; overflow: hidden; }
.fill { display: block; height: 100%; background: #4a90d9; } .fill.over { background: #d9534f; }
.timeline .frame { fill: #fafafa; stroke: #bbb; } .timeline .buffer { stroke: #fff; stroke-width: 0.5; }
.timeline .peak { stroke: #d9534f; stroke-width: 2; } .timeline .peak-label { fill: #d9534f; font-size: 12px; }
.timeline .limit { stroke: #d9534f; stroke-dasharray: 6 4; } .timeline .axis { font-size: 12px; fill: #555; }
table.layers { border-collapse: collapse; font-size: 13px; } .layers th, .layers td { border-bottom: 1px solid #ddd;
 padding: 3px 8px; text-align: left; vertical-align: top; } .layers td:nth-child(4) { max-width: 360px;
 overflow-wrap: anywhere; } .layers td.num { text-align: right; font-variant-numeric: tabular-nums; }
.timeline .patched { fill: #e3eefb; } .timeline .patched-label { font-size: 12px; fill: #2a6ab0; }
.note { color: #666; }
"""


def _stage_note(report: dict) -> str:
    if not report.get("patched_bands"):
        return "The layers run one after another (no patched stage)."
    return (f"The first {report.get('patched_ops')} TOSA ops run as a patched stage (shaded): each of its "
            f"{report['patched_bands']} bands of rows through all of them before the next band, so only one band's "
            f"tensors and the stage's output are live there.")


def render(report: dict, title: str = "model") -> str:
    arena, lower = report.get("arena_bytes"), report.get("arena_lower_bound_bytes")
    facts = [f"target {report.get('target') or '-'}", f"backend {report.get('backend') or '-'}",
             f"arena {_kb(arena)} (layer-by-layer lower bound {_kb(lower)})",
             f"weights {_kb(report.get('weights_bytes'))}", f"{len(report.get('ops') or [])} kernel calls"]
    if report.get("instructions"):
        facts.append(f"{report['instructions']['total']:,} instructions on {report['instructions'].get('target', '')}")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}: memory report</title>", f"<style>{CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>", f'<p class="facts">{" &middot; ".join(html.escape(f) for f in facts)}</p>',
        "<h2>Memory against the target</h2>",
        _bar("RAM (arena)", arena, report.get("ram_limit_bytes")),
        _bar("flash", report.get("flash_bytes") or report.get("weights_bytes"), report.get("flash_limit_bytes")),
        "" if report.get("flash_bytes") else '<p class="note">flash: the weights (compile with --emit elf for the '
                                             'whole firmware)</p>',
        "<h2>Arena timeline</h2>", _timeline(report),
        '<p class="note">Each bar is a tensor (or a kernel\'s scratch, grey) from the kernel that writes it to the '
        'last that reads it, at its offset in the arena. ' + _stage_note(report) + '</p>',
        "<h2>Layers</h2>", _table(report), "</body></html>", ""])


def write(outdir) -> Path:
    """OUTDIR/report.html from OUTDIR/report.json (and OUTDIR/instructions.json, the counts of the
    last `mcu-run --count-instructions`, when there is one)."""
    outdir = Path(outdir)
    report = json.loads((outdir / "report.json").read_text())
    counts = outdir / "instructions.json"
    if counts.exists():
        report["instructions"] = json.loads(counts.read_text())
    path = outdir / "report.html"
    path.write_text(render(report, title=report.get("name") or outdir.name))
    return path

"""Reading printed MLIR locations: the source file and line, and the layer a kernel came from."""

from __future__ import annotations

import re

# A file location anywhere in a printed location: loc("f.py":3:0), or inside a name / fused / callsite
# location, loc("layer"("f.py":3:0)).
_FILE_LINE_COL = re.compile(r'"(?P<file>(?:[^"\\]|\\.)*)":(?P<line>\d+):(?P<col>\d+)')
_NAME = re.compile(r'loc\("([^"]+)"')
_LINE = re.compile(r':(\d+):\d+')


def parse_location(loc_text: str) -> tuple[str | None, int | None, int | None]:
    """The first file:line:col inside a printed MLIR location (fused/callsite/name locs included)."""
    m = _FILE_LINE_COL.search(loc_text)
    if not m:
        return None, None, None
    return m.group("file").replace('\\"', '"'), int(m.group("line")), int(m.group("col"))


def layer_name(location) -> str:
    """The layer a location names (the frontend names locations after PyTorch modules), or its
    source line; safe inside a C comment."""
    text = str(location)
    names = [n for n in _NAME.findall(text) if n != "-"]
    if names:
        name = names[0]
    else:
        m = _LINE.search(text)
        name = f"line {m.group(1)}" if m else text
    return name.replace("*/", "* /")

"""Where a benchmark's figures go: its table printed, and written to files when asked."""

from __future__ import annotations

import json


def save(rows: list, table: str, markdown: str | None = None, json_path: str | None = None) -> None:
    """Prints `table`; writes it to `markdown` and `rows` to `json_path`, each when given."""
    print(table)
    if markdown:
        with open(markdown, "w") as f:
            f.write(table)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(rows, f, indent=1)

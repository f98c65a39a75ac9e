"""What every benchmark shares: a description of the machine, and writing its section of the docs.

Each benchmark owns one ``## Section`` of ``docs/benchmarks.md`` and replaces only that one,
keeping every other section as it is.
"""

from __future__ import annotations

import os
import platform
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


def machine() -> str:
    """Describe the machine and the load it was under (cores, system, Python, SQLite, load, date)."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    system = f"{platform.system()} {platform.machine()}, Python {platform.python_version()}"
    return (
        f"{os.cpu_count()} cores, {system},"
        f" SQLite {sqlite3.sqlite_version}; load average at the end {load} (other jobs shared the machine"
        f" when above the core count); measured {datetime.now(UTC):%Y-%m-%d}"
    )


def replace_section(heading: str, text: str, path: Path = DOCS) -> None:
    """Replace the section starting with the line ``heading`` in ``path`` by ``text`` (or append it).

    Args:
        heading: The section's heading line, e.g. ``## Stores``.
        text: The whole new section, starting with ``heading``.
        path: The Markdown file (created with a ``# Benchmarks`` title if absent).
    """
    existing = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    lines = existing.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == heading), None)
    if start is None:
        updated = existing.rstrip("\n") + "\n\n" + text
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        tail = "".join(lines[end:])
        updated = "".join(lines[:start]) + text + ("\n" + tail if tail else "")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(updated, encoding="utf-8")

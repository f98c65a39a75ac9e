"""The server embeds off the write path (issue 21 item 5), through the real MCP client over stdio.

``remember`` returns before its vector is computed, even once the model is loaded; the next
``recall`` embeds what waits and finds it by its vectors too (search/freshness.py, "Deferred").
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mcp_harness import Connect


def vector_entries(home: Path) -> set[str]:
    """Return the record ids the Home's vector index holds (read beside the running server)."""
    held: set[str] = set()
    for path in (home / ".cache" / "indexes").glob("*/index.sqlite"):
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "entries" in tables:
                held |= {record_id for (record_id,) in conn.execute("SELECT record_id FROM entries")}
    return held


def test_remember_leaves_its_vector_to_the_next_recall_which_finds_it(
    default_home: Path, stdio: Connect
) -> None:
    with stdio(default_home) as client:
        first = client.ok("remember", text="The staging database is db-2 in Frankfurt.")
        client.ok("recall", query="Where is the staging database?")  # loads the model, embeds the first
        assert first["record_id"] in vector_entries(default_home)
        second = client.ok("remember", text="Ada drinks green tea every morning.")
        waiting = vector_entries(default_home)
        found = client.ok("recall", query="What does Ada drink in the morning?")
        after = vector_entries(default_home)
    assert second["record_id"] not in waiting  # the model was loaded, and still the write did not embed
    assert second["record_id"] in after
    assert found["records"][0]["id"] == second["record_id"]
    assert found["records"][0]["score"] > 0

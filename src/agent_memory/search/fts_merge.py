"""Merging in the BM25 index: FTS5 segments folded into one, and AND hits joined to OR hits.

:func:`merge_when_due` keeps the on-disk layout of :class:`~agent_memory.search.fts.FtsIndex`
close to one segment as it grows (issue 23); :func:`join_hits` puts the rows matching every
word of a question ahead of those matching any (the ``and-then-or`` query mode).
"""

from __future__ import annotations

import sqlite3

from agent_memory.search.base import Hit

__all__ = ["MERGE_ROWS", "MERGE_SHARE", "join_hits", "merge_when_due"]

# FTS5 keeps a few segments per level (automerge) and a query reads every one of them. At
# 100,000 notes BM25 queries over one segment took 4.88 ms p50 against 5.50 over a fresh
# rebuild's segments; merging whenever a tenth of the index was written since (never under
# 2,000 rows) gave 4.96 ms, for 0.9 s more in a 5.3 s fill of 100,000 notes (issue 23).
MERGE_ROWS = 2_000
"""The fewest FTS rows written since the last merge that make a merge due."""
MERGE_SHARE = 10
"""A merge is due once the rows written since reach ``1 / MERGE_SHARE`` of the notes held."""


def merge_when_due(conn: sqlite3.Connection, written: int, count: int) -> None:
    """Add ``written`` FTS rows to those since the last merge; merge every segment into one when due.

    Due when they reach a tenth of the ``count`` notes held and at least :data:`MERGE_ROWS`
    (FTS5 ``optimize``, in the caller's open transaction on ``conn``; the running total is the
    ``unmerged`` row of the index's ``meta`` table). A merge rewrites the whole index (0.17 s
    at 100,000 notes), so its cost per row written stays constant as the index grows, and a
    query never reads more than a tenth of the index outside the merged segment. Scores are
    the same before and after: only the layout changes.

    Raises:
        sqlite3.Error: As the statements raise (the caller's transaction rolls back).
    """
    row = conn.execute("SELECT value FROM meta WHERE key = 'unmerged'").fetchone()
    unmerged = (int(row[0]) if row else 0) + written
    if unmerged >= max(MERGE_ROWS, count // MERGE_SHARE):
        conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
        unmerged = 0
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('unmerged', ?)", (str(unmerged),))


def join_hits(first: list[Hit], rest: list[Hit], k: int) -> list[Hit]:
    """Return ``first``, then the other hits of ``rest`` up to ``k`` in all, scores kept descending."""
    held = {hit.record_id for hit in first}
    others = [hit for hit in rest if hit.record_id not in held][: k - len(first)]
    if not first or not others:
        return first + others
    lift = others[0].score
    return [Hit(h.record_id, h.score + lift) for h in first] + others

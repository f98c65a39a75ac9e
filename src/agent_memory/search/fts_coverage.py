"""How much of a question each BM25 candidate covers: the second look of the hybrid (issue 21 item 3).

BM25 ranks a note by the words it shares with the question, and a note holding one rare word
of the question many times can outrank one holding most of its words. Coverage counts each
content word of the question once, weighted by its rarity: the share of the question's
``idf`` mass a note holds, a word in the note's own text counting 1 and a word only in its
neighbours' context column (:class:`~agent_memory.search.fts.FtsIndex` ``context``)
:data:`CONTEXT_SHARE`::

    coverage(note) = Σ idf(w) · held(w, note) / Σ idf(w)    over the question's content words w
    held = 1 (own text) | CONTEXT_SHARE (context only) | 0;  idf(w) = ln(1 + (N − n + 0.5) / (n + 0.5))

with ``N`` notes and ``n`` notes holding ``w`` (BM25's idf, kept positive). The hybrid
multiplies the BM25 part's normalised score of each candidate by ``coverage ** exponent``
(:class:`~agent_memory.search.hybrid.HybridIndex` ``coverage``); docs/benchmarks.md,
Retrieval quality, has the figures.

Invariant: read-only for the index (the candidates are copied into the connection's scratch
table ``temp.candidates`` inside a savepoint that is rolled back, so it is empty between
calls), and only over the rows asked about; a word FTS5 cannot find in any note adds to the
question's mass but to no note's, so coverage lies in [0, 1].
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Sequence

from agent_memory.search.fts_query import Term, quote
from agent_memory.stores.sqlite_file import rolled_back

__all__ = ["CONTEXT_SHARE", "coverage", "idf"]

CONTEXT_SHARE = 0.5
"""What a word found only in a note's context column counts (as the column's weight in ``bm25()``)."""

# The candidates' two columns, copied into the connection's scratch table ``temp.candidates``
# (an FTS5 table with the index's tokenizer): each word is then looked up among a hundred rows
# instead of walking its doclist over the whole index (issue 23: 10 ms → 2 ms per question
# at 100,000 notes, and no longer growing with the Home).
_COPY = (
    "INSERT INTO temp.candidates (record_id, text, context) SELECT d.record_id, f.text, f.context"
    " FROM docs d JOIN fts f ON f.rowid = d.rowid WHERE d.record_id IN (SELECT value FROM json_each(?))"
)
_HOLDING = "SELECT record_id FROM temp.candidates WHERE candidates MATCH ?"


def idf(df: int, total: int) -> float:
    """Return BM25's idf of a word ``df`` of ``total`` notes hold, ``ln(1 + (N − n + 0.5) / (n + 0.5))``."""
    return math.log(1.0 + (max(total - df, 0) + 0.5) / (df + 0.5))


def coverage(
    conn: sqlite3.Connection,
    terms: Sequence[Term],
    df: dict[str, int],
    total: int,
    record_ids: Sequence[str],
) -> dict[str, float]:
    """Return ``{record id: coverage in [0, 1]}`` of the question's ``terms`` for the ids asked.

    Args:
        conn: An :class:`~agent_memory.search.fts.FtsIndex` connection (tables ``fts`` with
            columns ``text`` and ``context``, ``docs``, and the scratch FTS5 table
            ``temp.candidates (record_id UNINDEXED, text, context)`` with the same
            tokenizer), under its lock.
        terms: The question's content terms (:func:`~.fts_query.content_terms`), stems distinct.
        df: Notes holding each stem (absent: 0).
        total: Notes in the index.
        record_ids: The candidates; ids not held get 0.

    Returns:
        Every id asked, with its coverage (module docstring); all 0 when ``terms`` is empty.
    """
    ids = list(dict.fromkeys(record_ids))
    got = dict.fromkeys(ids, 0.0)
    weights = {t.stem: idf(df.get(t.stem, 0), total) for t in terms}
    mass = sum(weights.values())
    if not ids or mass <= 0:
        return got
    with rolled_back(conn, "coverage"):
        conn.execute(_COPY, (json.dumps(ids),))
        for term in {t.stem: t for t in terms}.values():
            if not df.get(term.stem):
                continue
            own = {r for (r,) in conn.execute(_HOLDING, (f"text : {quote(term.token)}",))}
            near = {r for (r,) in conn.execute(_HOLDING, (f"context : {quote(term.token)}",))} - own
            weight = weights[term.stem] / mass
            for record_id in own:
                got[record_id] += weight
            for record_id in near:
                got[record_id] += CONTEXT_SHARE * weight
    return {record_id: min(1.0, value) for record_id, value in got.items()}

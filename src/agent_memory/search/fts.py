"""`FtsIndex`: BM25 keyword search over SQLite FTS5 (stdlib ``sqlite3``, WAL).

The BM25 index of seed 001 (origin-notes §1.16) as a disposable cache (seed 003), with the
query rules of issue 4 item 2. How text is searched:

- **Tokenizer**: ``porter unicode61 remove_diacritics 2``. Words are runs of letters and
  digits (every other character separates them, emoji included as their own words);
  case and diacritics are folded (``Café`` finds ``cafe``) and English words are stemmed
  (``running`` finds ``runs``). Text is NFKC-normalised first (``ＡＢＣ`` finds ``ABC``).
- **Text without spaces** (Chinese, Japanese, Korean, Thai, Lao, Khmer, Myanmar) is cut into
  overlapping two-character pieces, and each character is also indexed alone, so any
  run of one or more characters is found: ``咖`` and ``咖啡`` and ``喜欢咖啡`` all find
  ``我很喜欢咖啡``.
- **Literal queries**: any text is accepted and searched as plain words; quotes, ``AND``,
  ``OR``, ``NOT``, ``NEAR``, ``*``, ``^``, ``:``, ``-``, parentheses and slashes are not
  operators. ``e-mail`` finds notes with the words ``e`` and ``mail``; ``C++`` finds ``c``.
  Text without any letter or digit returns nothing.
- **Questions**: stopwords (the origin's 62 function words, question words and pronouns
  such as ``what`` and ``her``, and the ``s`` and ``t`` of ``Caroline's``/``didn't``) are
  ignored unless the query has nothing else; ``May`` next to a number stays a month.
  Notes with every remaining word come first. When fewer than ``k`` notes have them all,
  the rest of the hits come from an "any of these words" query, ranked by BM25, over at
  most the 8 rarest words and leaving out words found in more than a quarter of the notes:
  such words barely move the ranking but make FTS5 score most of the index (measured in
  ``docs/benchmarks.md``, Search).
- **Context** (``context`` > 0, the built-in recipe reads 2): each note is also indexed with
  the text of up to ``context`` neighbouring turns on each side of its conversation thread
  (:mod:`.threads`: same anchor path and event time), in a second column weighted half its
  own text. A turn that answers the one before it (``"Caroline: Yes, yesterday!"``) is then
  found by the words of the question it answers; the turn's own words still rank it first.
  When a note is added, replaced or removed, the context of its neighbours is rewritten.
- **Scores**: ``-bm25()`` of the query that found the note (higher is better); notes with
  every word are lifted by the best score of the rest, so scores always descend. Only
  comparable within one index and one query; ties are ordered by record id.

Invariants: one row per record id (the latest version given); :meth:`FtsIndex.inputs` is
derived from exactly the rows held; every note's context column holds exactly its current
neighbours' text; after :meth:`FtsIndex.remove` and :meth:`FtsIndex.purge` no byte of a removed
text remains in the database, its ``-wal`` or ``-shm``, neighbours' context included (DESIGN.md §9).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Literal

from agent_memory.records.card import Card, cards_of_rows
from agent_memory.records.record import MemoryRecord
from agent_memory.records.wire import format_timestamp, parse_timestamp, utc_now
from agent_memory.search import fts_coverage, fts_merge
from agent_memory.search.base import Hit, IndexInputs, Recipe, document_text, inputs_digest, version_digest
from agent_memory.search.fts_prune import PRUNE_SHARE, bounds, leave_out
from agent_memory.search.fts_query import (
    SMALL_INDEX,
    STOPWORDS_NAME,
    Term,
    and_expression,
    content_terms,
    or_expression,
    or_terms,
    prepare_document,
    prepare_query,
)
from agent_memory.search.threads import place_of
from agent_memory.stores.sqlite_file import SharedConnection, connect, rolled_back, use_wal

__all__ = ["QUERY_MODES", "TOKENIZER", "FtsIndex", "QueryMode"]

QueryMode = Literal["and-then-or", "and-or", "or"]
QUERY_MODES: tuple[QueryMode, ...] = ("and-then-or", "and-or", "or")

TOKENIZER = "porter unicode61 remove_diacritics 2"
_SCHEMA_TAG = "agent-memory-fts/3"
_MAX_AND_TERMS = 64  # a longer query (a pasted page) goes straight to its rarest terms
_OR_CAP = 8
# docs/benchmarks.md (Search): best LoCoMo recall@10 of 0.1/0.25/0.5, p50 within 5% of 0.1 at 100k.
_OR_MAX_SHARE = 0.25
_BATCH = 500
MAX_CONTEXT = 8
# bm25() weight of the neighbours' column against the note's own text (docs/benchmarks.md,
# Retrieval quality: weights 1 and 0.5 were measured; 0.5 keeps a turn's own words first in the top 3).
_CONTEXT_WEIGHT = 0.5
_BUSY_TIMEOUT_MS = 5000
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS docs (
    rowid INTEGER PRIMARY KEY,
    record_id TEXT NOT NULL UNIQUE,
    version TEXT NOT NULL,
    thread TEXT,
    position TEXT,
    card TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS docs_thread ON docs (thread, position);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(text, context, tokenize='{TOKENIZER}');
CREATE VIRTUAL TABLE IF NOT EXISTS fts_vocab USING fts5vocab(fts, row);
"""
# Scratch tables through which SQLite itself cuts a query into tokens and stems, so the
# query side can never disagree with how documents were tokenized; ``candidates`` holds a
# query's candidates for a moment while :mod:`.fts_coverage` asks which words each holds.
_SCRATCH = f"""
PRAGMA temp_store = MEMORY;
CREATE VIRTUAL TABLE temp.q_stems USING fts5(text, tokenize='{TOKENIZER}');
CREATE VIRTUAL TABLE temp.q_tokens USING fts5(text, tokenize='{TOKENIZER.removeprefix("porter ")}');
CREATE VIRTUAL TABLE temp.q_stems_i USING fts5vocab(temp, q_stems, instance);
CREATE VIRTUAL TABLE temp.q_tokens_i USING fts5vocab(temp, q_tokens, instance);
CREATE VIRTUAL TABLE temp.candidates USING fts5(record_id UNINDEXED, text, context, tokenize='{TOKENIZER}');
"""
# FTS5 ranks the matches alone; only the top rows are joined to their record ids.
_MATCH = (
    "SELECT d.record_id, -f.score FROM (SELECT rowid, bm25(fts, 1.0, "  # noqa: S608 - constants only
    + repr(_CONTEXT_WEIGHT)
    + ") AS score FROM fts WHERE fts MATCH ? ORDER BY score LIMIT ?) AS f JOIN docs d ON d.rowid = f.rowid"
)

# The same ranking over only the rows an inner MATCH finds: bm25() still scores every phrase
# of the outer expression (same idf, same sums), but is computed for fewer rows. ``+rowid``
# keeps the filter out of FTS5's plan (a rowid lookup per row would recount every idf).
_MATCH_WITHIN = (
    "SELECT d.record_id, -f.score FROM (SELECT rowid, bm25(fts, 1.0, "  # noqa: S608 - constants only
    + repr(_CONTEXT_WEIGHT)
    + ") AS score FROM fts WHERE fts MATCH ? AND +rowid IN (SELECT rowid FROM fts WHERE fts MATCH ?)"
    " ORDER BY score LIMIT ?) AS f JOIN docs d ON d.rowid = f.rowid"
)


def _rank(hit: Hit) -> tuple[float, str]:
    return (-hit.score, hit.record_id)


class FtsIndex(SharedConnection):
    """BM25 over SQLite FTS5 (a :class:`~agent_memory.search.base.SearchIndex`).

    One connection is shared by all threads under a lock. The database is a cache: a file
    written by another version of this schema is emptied on open (``inputs().count`` is then
    0, so the caller rebuilds it).

    Args:
        path: The database file, created if absent, or ``":memory:"``.
        name: The index's name in its recipe (its folder under ``.cache/indexes/``).
        mode: How a query with several words is run: ``and-then-or`` (notes with every word
            first, then notes with any of them), ``and-or`` (every word if that finds ``k``
            notes, else any word, by BM25 alone) or ``or`` (any word). Recorded in the recipe.
        context: How many neighbouring turns on each side (0 to :data:`MAX_CONTEXT`) are
            indexed with each note, in a second column: the notes of its thread
            (:mod:`.threads`), nearest first. 0 reads every note alone. Recorded in the recipe.
        clock: Returns the current aware UTC time; stamps ``built_at``. Defaults to the wall
            clock.

    Raises:
        ValueError: An unknown ``mode``, or ``context`` out of range.
        sqlite3.Error: The file cannot be opened or is not a database.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        name: str = "bm25",
        mode: QueryMode = "and-then-or",
        context: int = 0,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if mode not in QUERY_MODES:
            raise ValueError(f"unknown query mode {mode!r} (one of: {', '.join(QUERY_MODES)})")
        if isinstance(context, bool) or not isinstance(context, int) or not 0 <= context <= MAX_CONTEXT:
            raise ValueError(f"context must be an integer in [0, {MAX_CONTEXT}], got {context!r}")
        self.path = os.fspath(path)
        self._name = name
        self._mode = mode
        self._context = context
        self._clock = clock or utc_now
        self._lock = threading.RLock()
        # The last question cut into terms, with the index state it was read at (see _question).
        self._asked: tuple[str, tuple[int, int], list[Term], dict[str, int]] | None = None
        self._written = 0  # FTS rows written by the open transaction (fts_merge)
        self._conn = connect(self.path, timeout_seconds=_BUSY_TIMEOUT_MS / 1000)
        try:
            self._conn.execute("PRAGMA secure_delete = ON")
            if self.path != ":memory:":
                use_wal(self._conn, synchronous="NORMAL", timeout_seconds=_BUSY_TIMEOUT_MS / 1000)
            self._conn.executescript(_SCRATCH)
            self._open_schema()
        except BaseException:
            self._conn.close()
            raise

    def __repr__(self) -> str:
        return f"FtsIndex({self.path!r}, name={self._name!r})"

    # ------------------------------------------------------------------ the port

    @property
    def recipe(self) -> Recipe:
        """How this index is built (``recipe.json``, seed 003)."""
        return Recipe(
            kind="bm25",
            name=self._name,
            params={
                "tokenizer": TOKENIZER,
                "normalization": "NFKC",
                "cjk": "bigrams+unigrams",
                "fields": ["body", "tags"],
                "stopwords": STOPWORDS_NAME,
                "query": self._mode,
                "context": self._context,
                "context_weight": str(_CONTEXT_WEIGHT),
                "or_terms": _OR_CAP,
                "or_max_share": str(_OR_MAX_SHARE),
                "schema": _SCHEMA_TAG,
            },
        )

    def index(self, records: Iterable[MemoryRecord]) -> None:
        """Add records, replacing the row of any id already held (last one wins within a call).

        A record whose version digest is already held is skipped. Work is committed in one
        transaction per 500 records.
        """
        items = list({record.id: record for record in records}.values())
        with self._lock:
            for start in range(0, len(items), _BATCH):
                self._write_batch(items[start : start + _BATCH])
            if not items:
                self._transaction(lambda: None)

    def remove(self, record_ids: Iterable[str]) -> None:
        """Forget these ids (unknown ids are ignored); their text never matches again.

        The text stays in freed pages until :meth:`purge`.
        """
        ids = [(record_id,) for record_id in dict.fromkeys(record_ids)]
        with self._lock:

            def delete() -> int:
                threads = self._threads_of([record_id for (record_id,) in ids])
                self._delete_rows(self._rowids([record_id for (record_id,) in ids]).values())
                removed = self._conn.executemany("DELETE FROM docs WHERE record_id = ?", ids).rowcount
                self._refresh_context(threads)
                return -max(removed, 0)

            self._transaction(delete)

    def query(self, text: str, *, k: int = 32) -> list[Hit]:
        """Return up to ``k`` hits for any user text, best first (score = ``-bm25``), ties by id.

        Never raises on odd input: see the module docstring for how text is read. Empty,
        blank or punctuation-only text gives ``[]``.
        """
        if k <= 0:
            return []
        with self._lock:
            terms, df = self._question(text)
            if not terms:
                return []
            hits: list[Hit] = []
            if self._mode != "or" and len(terms) <= _MAX_AND_TERMS and all(df.get(t.stem, 0) for t in terms):
                hits = self._match(and_expression(terms), k)
                if len(hits) >= k or len(terms) == 1:
                    return hits
            chosen = or_terms(terms, df, self._count(), cap=_OR_CAP, max_share=_OR_MAX_SHARE)
            if not chosen:
                return hits
            others = self._match_any(chosen, df, k)
            return fts_merge.join_hits(hits, others, k) if self._mode == "and-then-or" else others

    def threads(self, record_ids: Sequence[str]) -> dict[str, str]:
        """Return ``{record id: thread key}`` for the held ids that are in a conversation thread.

        The key is :func:`~agent_memory.search.threads.place_of`'s thread, kept for every row
        whatever ``context`` is; ids not held or in no thread are absent. The hybrid's thread
        boost reads it (:class:`~agent_memory.search.hybrid.ThreadLookup`).
        """
        ids = list(dict.fromkeys(record_ids))
        if not ids:
            return {}
        with self._lock:
            rows = self._conn.execute(
                "SELECT record_id, thread FROM docs WHERE thread IS NOT NULL"
                " AND record_id IN (SELECT value FROM json_each(?))",
                (json.dumps(ids),),
            ).fetchall()
        return {record_id: thread for record_id, thread in rows}

    def coverage(self, text: str, record_ids: Sequence[str]) -> dict[str, float]:
        """Return ``{record id: share of the question's words it holds}``, each in [0, 1], for every id given.

        The share is idf-weighted, a word only in the note's context column counting half
        (:mod:`.fts_coverage`); ids not held, and every id when ``text`` has no word, get 0.
        The hybrid's second look reads it (:class:`~agent_memory.search.hybrid.CoverageLookup`).
        """
        ids = list(dict.fromkeys(record_ids))
        with self._lock:
            terms, df = self._question(text)
            if not terms or not ids:
                return dict.fromkeys(ids, 0.0)
            return fts_coverage.coverage(self._conn, terms, df, self._count(), ids)

    def inputs(self) -> IndexInputs:
        """Return the count and digest of the (record id, version digest) pairs held, and ``built_at``."""
        with self._lock:
            pairs = self._conn.execute("SELECT record_id, version FROM docs").fetchall()
            row = self._conn.execute("SELECT value FROM meta WHERE key = 'built_at'").fetchone()
        built_at = parse_timestamp(row[0], "built_at") if row else None
        return IndexInputs(count=len(pairs), digest=inputs_digest(pairs), built_at=built_at)

    def cards(self, record_ids: Iterable[str]) -> dict[str, Card]:
        """Return the :class:`~agent_memory.records.card.Card` of each id held (others left out).

        One query for the whole batch (recall's candidates). A row whose card does not parse
        is left out, so the caller reads that record instead.
        """
        ids = list(dict.fromkeys(record_ids))
        if not ids:
            return {}
        with self._lock:
            rows = self._conn.execute(
                "SELECT record_id, card FROM docs WHERE record_id IN (SELECT value FROM json_each(?))",
                (json.dumps(ids),),
            ).fetchall()
        return cards_of_rows(rows)

    # ------------------------------------------------------------------ erasure

    def purge(self) -> None:
        """Leave no byte of removed text in the files: merge FTS segments, ``VACUUM``, empty the WAL.

        ``secure_delete`` is on, FTS5 ``optimize`` rewrites the index without deleted
        entries, ``VACUUM`` rebuilds the file, and a TRUNCATE checkpoint empties the
        ``-wal`` (DESIGN.md §9 erasure).

        Raises:
            sqlite3.OperationalError: Another connection keeps the database busy.
        """
        with self._lock:

            def optimize() -> None:
                self._conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
                self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('unmerged', '0')")

            self._transaction(optimize)
            self._conn.execute("VACUUM")
            if self.path != ":memory:":
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()

    # ------------------------------------------------------------------ internals

    def _open_schema(self) -> None:
        def create() -> None:
            tables = {r[0] for r in self._conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
            if "meta" in tables:
                row = self._conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                if row is None or row[0] != _SCHEMA_TAG:
                    for table in ("fts_vocab", "fts", "docs", "meta"):
                        self._conn.execute(f"DROP TABLE IF EXISTS {table}")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._conn.execute(statement)
            self._conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (_SCHEMA_TAG,))
            self._conn.execute("INSERT OR IGNORE INTO meta VALUES ('count', '0')")

        self._transaction(create, stamp=False)

    def _transaction(self, body: Callable[[], int | None], *, stamp: bool = True) -> None:
        """Run ``body`` in one write transaction; then move the row count and stamp ``built_at``.

        ``body`` returns how many rows of ``docs`` it added (negative: removed), so the count
        costs nothing at any size; ``SELECT count(*)`` cost 2-7 ms per write at 100k rows.
        The FTS rows it wrote may make a merge due (:func:`.fts_merge.merge_when_due`).
        """
        self._conn.execute("BEGIN IMMEDIATE")
        self._written = 0
        try:
            added = body()
            if stamp and added:
                self._conn.execute(
                    "UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'count'", (added,)
                )
            if self._written:
                fts_merge.merge_when_due(self._conn, self._written, self._count())
            if stamp:
                self._conn.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('built_at', ?)",
                    (format_timestamp(self._clock()),),
                )
            self._conn.execute("COMMIT")
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise

    def _write_batch(self, records: list[MemoryRecord]) -> None:
        rows = [(r.id, version_digest(r), r) for r in records]

        def write() -> int:
            found = self._conn.execute(
                "SELECT record_id, version, rowid FROM docs"
                " WHERE record_id IN (SELECT value FROM json_each(?))",
                (json.dumps([record_id for record_id, _, _ in rows]),),
            ).fetchall()
            held = {record_id: version for record_id, version, _ in found}
            rowids = {record_id: rowid for record_id, _, rowid in found}  # kept by the upsert below
            changed = [row for row in rows if held.get(row[0]) != row[1]]
            # Threads the changed notes leave and join: their neighbours' context changes.
            threads = self._threads_of([record_id for record_id, _, _ in changed if record_id in held])
            places = {record_id: place_of(record) for record_id, _, record in changed}
            if self._context:
                threads.update(place[0] for place in places.values() if place is not None)
            self._delete_rows([rowids[record_id] for record_id, _, _ in changed if record_id in held])
            self._conn.executemany(
                "INSERT INTO docs (record_id, version, thread, position, card) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (record_id) DO UPDATE SET version = excluded.version,"
                " thread = excluded.thread, position = excluded.position, card = excluded.card",
                [
                    (record_id, version, *(places[record_id] or (None, None)), Card.of(record).dumps())
                    for record_id, version, record in changed
                ],
            )
            # Plain VALUES rows in rowid order (see _rowids): an INSERT ... SELECT per row left
            # one segment per note (issue 23: 0.32 ms a row against 0.04 ms on 20,000 rows).
            rowids |= self._rowids([record_id for record_id, _, _ in changed if record_id not in held])
            self._conn.executemany(
                "INSERT INTO fts (rowid, text, context) VALUES (?, ?, '')",
                sorted(
                    (rowids[record_id], prepare_document(document_text(record)))
                    for record_id, _, record in changed
                ),
            )
            self._written += len(changed)
            self._refresh_context(threads)
            return sum(1 for record_id, _, _ in changed if record_id not in held)

        self._transaction(write)

    def _rowids(self, record_ids: list[str]) -> dict[str, int]:
        """Return ``{record id: rowid}`` of the held ones among ``record_ids`` (one query).

        The FTS table is written by rowid, in ascending order, one plain statement per row:
        FTS5 writes its pending terms out as a new segment whenever a row's rowid is below
        the last one written in the transaction, and at every statement savepoint (an
        ``INSERT ... SELECT`` or a subquery takes one per row), so rows in any other order
        cost a segment each and the merges that follow (issue 23: deletes in random order
        0.10 ms a row, in rowid order 0.02 ms, on a 20,000-row table).
        """
        if not record_ids:
            return {}
        rows = self._conn.execute(
            "SELECT record_id, rowid FROM docs WHERE record_id IN (SELECT value FROM json_each(?))",
            (json.dumps(record_ids),),
        ).fetchall()
        return dict(rows)

    def _delete_rows(self, rowids: Iterable[int]) -> None:
        """Delete these FTS rows, in rowid order (:meth:`_rowids`); their docs rows stay."""
        ordered = [(rowid,) for rowid in sorted(rowids)]
        self._conn.executemany("DELETE FROM fts WHERE rowid = ?", ordered)
        self._written += len(ordered)

    def _threads_of(self, record_ids: list[str]) -> set[str]:
        """Return the threads the held rows of these ids are in (none when context is off)."""
        if not self._context or not record_ids:
            return set()
        rows = self._conn.execute(
            "SELECT DISTINCT thread FROM docs WHERE thread IS NOT NULL"
            " AND record_id IN (SELECT value FROM json_each(?))",
            (json.dumps(record_ids),),
        )
        return {thread for (thread,) in rows}

    def _refresh_context(self, threads: set[str]) -> None:
        """Rewrite the context column of each note of these threads whose neighbours changed.

        A note's context is the text of up to ``context`` notes on each side in its thread,
        nearest first. Only rows whose context differs are written.
        """
        reach = self._context
        updates = []
        for thread in sorted(threads):
            rows = self._conn.execute(
                "SELECT d.rowid, f.text, f.context FROM docs d JOIN fts f ON f.rowid = d.rowid"
                " WHERE d.thread = ? ORDER BY d.position, d.record_id",
                (thread,),
            ).fetchall()
            for at, (rowid, _, current) in enumerate(rows):
                near = [
                    rows[j][1] for d in range(1, reach + 1) for j in (at - d, at + d) if 0 <= j < len(rows)
                ]
                context = "\n".join(near)
                if context != current:
                    updates.append((rowid, context))
        # In rowid order, as every write of the FTS table (_rowids).
        ordered = [(context, rowid) for rowid, context in sorted(updates)]
        self._conn.executemany("UPDATE fts SET context = ? WHERE rowid = ?", ordered)
        self._written += len(ordered)

    def _question(self, text: str) -> tuple[list[Term], dict[str, int]]:
        """Return the content terms of a user text and the notes holding each stem (under the lock).

        The last answer is kept: a hybrid asks :meth:`coverage` of the question it just gave
        :meth:`query` (issue 23), and cutting it into tokens and reading its document
        frequencies again cost 0.8 ms of the 15 ms the two take at 100,000 notes. It is used
        only while the index is unchanged: no row changed through this connection
        (``total_changes``) and no other connection committed (``PRAGMA data_version``).
        """
        state = (self._conn.total_changes, self._conn.execute("PRAGMA data_version").fetchone()[0])
        if self._asked is not None and self._asked[:2] == (text, state):
            return self._asked[2], self._asked[3]
        terms = content_terms(self._tokenize(prepare_query(text)))
        df = self._document_frequencies(terms) if terms else {}
        after = (self._conn.total_changes, state[1])  # the tokenizing wrote scratch rows
        self._asked = (text, after, terms, df)
        return terms, df

    def _tokenize(self, text: str) -> list[Term]:
        """Return the tokens and stems the index's tokenizer makes of ``text``, in order."""
        if not text.strip():
            return []
        with rolled_back(self._conn, "tokenize"):
            self._conn.execute("INSERT INTO temp.q_tokens (rowid, text) VALUES (1, ?)", (text,))
            self._conn.execute("INSERT INTO temp.q_stems (rowid, text) VALUES (1, ?)", (text,))
            tokens = self._conn.execute("SELECT offset, term FROM temp.q_tokens_i").fetchall()
            stems = dict(self._conn.execute("SELECT offset, term FROM temp.q_stems_i").fetchall())
        return [Term(token, stems.get(offset, token)) for offset, token in sorted(tokens)]

    def _document_frequencies(self, terms: list[Term]) -> dict[str, int]:
        stems = sorted({t.stem for t in terms})
        rows = self._conn.execute(
            "SELECT term, doc FROM fts_vocab WHERE term IN (SELECT value FROM json_each(?))",
            (json.dumps(stems),),
        ).fetchall()
        return {term: int(doc) for term, doc in rows}

    def _count(self) -> int:
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'count'").fetchone()
        return int(row[0])

    def _match_any(self, terms: list[Term], df: dict[str, int], k: int) -> list[Hit]:
        """Return the top ``k`` rows for "any of ``terms``", exactly as :meth:`_match` ranks them.

        The most common words match most rows and make an OR query slow (issue 10). Rows
        holding only them are left unscored when the ``k``-th best of the others scores
        above their BM25 bound (:mod:`.fts_prune`); FTS5 still scores over the whole
        expression, so each score is bit for bit the same. A first guess too bold gives a
        floor of the ``k``-th score, which then fixes which words can be left out for sure.
        """
        expression = or_expression(terms)
        total = self._count()
        if len(terms) < 2 or total < SMALL_INDEX:
            return self._match(expression, k)
        costs = bounds(terms, df, total)
        ceiling = PRUNE_SHARE * max(cost for _, cost in costs)
        while True:
            dropped, spent = leave_out(costs, ceiling)
            if not dropped:
                return self._match(expression, k)
            hits = self._match(expression, k, within=or_expression(t for t in terms if t.stem not in dropped))
            if len(hits) < k:
                return self._match(expression, k)
            if hits[-1].score >= spent:
                return hits
            ceiling = hits[-1].score  # fewer words are left out next time, and their bound is below it

    def _match(self, expression: str, k: int, *, within: str | None = None) -> list[Hit]:
        """Return the top ``k`` rows for ``expression``, ties by record id even across the cut.

        With ``within``, only rows that the expression ``within`` also matches are ranked.
        """
        limit = k + 1
        while True:
            found = (
                (_MATCH, (expression, limit))
                if within is None
                else (_MATCH_WITHIN, (expression, within, limit))
            )
            rows = self._conn.execute(*found).fetchall()
            hits = sorted((Hit(record_id, float(score)) for record_id, score in rows), key=_rank)
            # A tie at the cut may hide rows of the same score whose ids sort first: fetch more.
            if len(rows) < limit or hits[k - 1].score != hits[-1].score:
                return hits[:k]
            limit *= 2

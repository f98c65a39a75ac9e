"""Search indexes on a PostgreSQL server: full text and pgvector (issue 4 item 8, DESIGN.md §6).

Both implement the :class:`~agent_memory.search.base.SearchIndex` port, for memory shared by
many agents over one server, next to :class:`~agent_memory.stores.postgres.PostgresStore`.
Each index owns tables named ``<name>_…`` in one schema:

- :class:`PgTextIndex`: ``<name>_docs(record_id, version, tsv tsvector, card)`` with a GIN index,
  and ``<name>_words(lexeme, docs)``, the word statistics its writers keep
  (:mod:`agent_memory.search.pg_text_sql`). Words and lexemes are made by
  :mod:`agent_memory.search.postgres_text`; the query is a ``tsquery`` built from quoted
  lexemes, so any user text is searched literally and never raises. A query needs every
  content word first, then, when that finds fewer than ``k`` notes, any of its 8 rarest
  words (leaving out words in more than a tenth of the notes); stopwords count only when the
  query has nothing else (the rules of the FTS5 index). The server applies those rules in
  one statement, so a query is one round trip. Scores are ``ts_rank(tsv, query, 1)`` (term
  frequency over 1 + log of the note's length; PostgreSQL has no IDF), only comparable
  within one index. The GIN index has ``fastupdate`` off: a pending list makes every query
  scan it, and the planner then prefers a sequential scan (12× slower at 10k notes,
  docs/benchmarks.md).
- :class:`PgVectorIndex` (:mod:`agent_memory.search.pg_vectors`):
  ``<name>_entries(record_id, version, text_hash, embedding vector(d))`` with an HNSW index
  (cosine), needing the ``vector`` extension (pgvector) in the database.

Invariants: one row per record id (the latest version given); :meth:`inputs` is derived from
exactly the rows held; the word statistics count exactly the rows held (writers take the
index's advisory lock); no text is stored but lexemes, and :meth:`purge` rewrites the tables
(``VACUUM FULL``) so that no byte of a removed note stays in their files (DESIGN.md §9; what
PostgreSQL may still hold is :data:`~agent_memory.stores.postgres.ERASURE_LIMITATIONS`).
psycopg is imported on first use: without the ``postgres`` extra the module still imports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from agent_memory.records.card import Card, cards_of_rows
from agent_memory.records.record import MemoryRecord
from agent_memory.search.base import Hit, Recipe, document_text, version_digest
from agent_memory.search.fts_query import SMALL_INDEX, STOPWORDS_NAME, content_flags
from agent_memory.search.pg_base import PgIndexBase
from agent_memory.search.pg_text_sql import CARDS, DDL, DELETE_EMPTY, QUERY, REMOVE, WRITE
from agent_memory.search.pg_vectors import PgVectorIndex
from agent_memory.search.postgres_text import MAX_WORD, document_words, query_words, tsvector_literal

__all__ = ["PgTextIndex", "PgVectorIndex"]

_TAG = "agent-memory-pg-fulltext/3"
_BATCH = 500
_MAX_AND_TERMS = 64
_OR_CAP = 8
_OR_MAX_SHARE = 0.1
_STEM_CACHE = 100_000
_STEMS = (
    "SELECT w, coalesce((ts_lexize('pg_catalog.english_stem'::regdictionary, w))[1], w)"
    " FROM unnest(%s::text[]) AS w"
)


class PgTextIndex(PgIndexBase):
    """Full-text search over ``tsvector`` + GIN (a :class:`~agent_memory.search.base.SearchIndex`).

    One connection per index object, shared by threads under a lock; it is reopened after it
    breaks. Tables are created on open; tables of another format are emptied and rebuilt
    (the index is a cache: ``inputs().count`` is then 0 and the caller reindexes).

    Args:
        dsn: A libpq connection string (see :func:`agent_memory.stores.postgres.connect`).
        schema: The schema of the tables, created when absent (lower-case letters, digits, ``_``).
        name: The index's name: its recipe name and its tables' prefix (lower-case letters,
            digits, ``_`` and ``-``, at most 40 characters).
        clock: Returns the current aware UTC time; stamps ``built_at``. Defaults to the wall clock.

    Raises:
        StoreError: A refused schema or name, psycopg not installed, or the server cannot be
            reached or fails.
    """

    _tag = _TAG
    _suffixes = ("docs", "words")

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "agent_memory",
        name: str = "fulltext",
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._stems: dict[str, str] = {}
        super().__init__(dsn, schema=schema, name=name, clock=clock)

    # ------------------------------------------------------------------ the port

    @property
    def recipe(self) -> Recipe:
        """How this index is built (``recipe.json``, seed 003)."""
        return Recipe(
            kind="fulltext",
            name=self.name,
            params={
                "engine": "postgresql",
                "words": "python-unicode/1",
                "normalization": "NFKC",
                "cjk": "bigrams+unigrams",
                "max_word": MAX_WORD,
                "stemmer": "english_stem",
                "fields": ["body", "tags"],
                "stopwords": STOPWORDS_NAME,
                "query": "and-then-or",
                "or_terms": _OR_CAP,
                "or_max_share": str(_OR_MAX_SHARE),
                "ranking": "ts_rank/1",
                "schema": _TAG,
            },
        )

    def index(self, records: Iterable[MemoryRecord]) -> None:
        """Add records, replacing the row of any id already held (last one wins within a call).

        A record whose version digest is already held is skipped. Work is committed in one
        transaction per 500 records.

        Raises:
            StoreError: The server failed; batches before the failing one stay committed.
        """
        items = self._latest_per_id(records)
        for start in range(0, len(items), _BATCH):
            self._write_batch(items[start : start + _BATCH])

    def query(self, text: str, *, k: int = 32) -> list[Hit]:
        """Return up to ``k`` hits for any user text, best first, ties by record id.

        One statement (:data:`~agent_memory.search.pg_text_sql.QUERY`), so one round trip.
        Never raises on odd input (see :mod:`agent_memory.search.postgres_text`): text without
        a letter, digit or symbol gives ``[]``.

        Raises:
            StoreError: The server failed.
        """
        if k <= 0:
            return []
        found = query_words(text)
        if not found:
            return []
        params = {
            "words": found,
            "keep": content_flags(found),
            "k": k,
            "most": _MAX_AND_TERMS,
            "small": SMALL_INDEX,
            "share": _OR_MAX_SHARE,
            "cap": _OR_CAP,
        }
        statement = self._sql(
            QUERY, docs=self._table("docs"), words=self._table("words"), meta=self._table("meta")
        )
        parts: tuple[list[Hit], list[Hit]] = ([], [])
        for part, record_id, score in self._fetch(statement, params):
            parts[part - 1].append(Hit(str(record_id), float(score)))
        every, some = (sorted(hits, key=lambda h: (-h.score, h.record_id)) for hits in parts)
        return _merge(every, some, k)

    def cards(self, record_ids: Iterable[str]) -> dict[str, Card]:
        """Return the :class:`~agent_memory.records.card.Card` of each id held (others left out).

        One statement for the whole batch (recall's candidates). A row whose card does not
        parse is left out, so the caller reads that record instead.

        Raises:
            StoreError: The server failed.
        """
        ids = list(dict.fromkeys(record_ids))
        if not ids:
            return {}
        return cards_of_rows(self._fetch(self._statement(CARDS), {"ids": ids}))

    def remove(self, record_ids: Iterable[str]) -> None:
        """Forget these ids (unknown ids are ignored); they never match again.

        Their rows' bytes stay in the table files until :meth:`purge`; their words' counts
        go down, and a word no note holds any more loses its row.

        Raises:
            StoreError: The server failed; nothing is removed.
        """
        ids = list(dict.fromkeys(record_ids))
        with self._transaction() as cur:
            if ids:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key(),))
                cur.execute(self._statement(REMOVE), {"ids": ids})
                self._delete_empty(cur, cur.fetchall())
            self._stamp(cur)

    # ------------------------------------------------------------------ internals

    def _create(self, cur: Any, existing: set[str]) -> None:
        if {f"{self.name}_docs", f"{self.name}_words"} <= existing:
            return
        # Both or neither: counts made without their rows would be wrong (the index is a cache).
        for suffix in self._suffixes:
            cur.execute(self._sql("DROP TABLE IF EXISTS {t}", t=self._table(suffix)))
        cur.execute(
            self._sql(
                DDL,
                docs=self._table("docs"),
                words=self._table("words"),
                meta=self._table("meta"),
                gin=self._ident("docs_tsv"),
            )
        )

    def _statement(self, text: str) -> Any:
        return self._sql(text, docs=self._table("docs"), words=self._table("words"), meta=self._table("meta"))

    def _delete_empty(self, cur: Any, counts: list[tuple[Any, ...]]) -> None:
        """Delete the word rows whose count reached zero (``counts``: ``(lexeme, docs)`` now)."""
        empty = [str(lexeme) for lexeme, docs in counts if int(docs) <= 0]
        if empty:
            cur.execute(self._statement(DELETE_EMPTY), {"lexemes": empty})

    def _write_batch(self, records: list[MemoryRecord]) -> None:
        versions = {r.id: version_digest(r) for r in records}
        held = self._held(list(versions))
        changed = [r for r in records if held.get(r.id) != versions[r.id]]
        if not changed:
            self._stamp_only()
            return
        per_record = {r.id: document_words(document_text(r)) for r in changed}
        with self._lock:
            stems = self._stem([word for found in per_record.values() for word in found])
            params = {
                "ids": [r.id for r in changed],
                "versions": [versions[r.id] for r in changed],
                "tsvs": [tsvector_literal([stems[w] for w in per_record[r.id]]) for r in changed],
                "cards": [Card.of(r).dumps() for r in changed],
            }
            with self._transaction() as cur:
                # One writer at a time per index: each count moves from the rows as they are now.
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key(),))
                cur.execute(self._statement(WRITE), params)
                self._delete_empty(cur, cur.fetchall())
                self._stamp(cur)

    def _stem(self, found: list[str]) -> dict[str, str]:
        """Return each word's lexeme by the server's ``english_stem`` (a stopword stays itself), cached."""
        missing = sorted({word for word in found if word not in self._stems})
        if missing:
            if len(self._stems) + len(missing) > _STEM_CACHE:
                self._stems.clear()
                missing = sorted(set(found))
            self._stems.update({str(w): str(s) for w, s in self._fetch(_STEMS, (missing,))})
        return {word: self._stems[word] for word in found}


def _merge(first: list[Hit], rest: list[Hit], k: int) -> list[Hit]:
    """Return ``first`` then the other hits of ``rest``, lifted so that scores stay descending."""
    held = {hit.record_id for hit in first}
    others = [hit for hit in rest if hit.record_id not in held][: k - len(first)]
    if not first or not others:
        return first + others
    lift = others[0].score
    return [Hit(h.record_id, h.score + lift) for h in first] + others

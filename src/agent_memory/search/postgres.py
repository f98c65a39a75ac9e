"""Search indexes on a PostgreSQL server: full text and pgvector (issue 4 item 8, DESIGN.md §6).

Both implement the :class:`~agent_memory.search.base.SearchIndex` port, for memory shared by
many agents over one server, next to :class:`~agent_memory.stores.postgres.PostgresStore`.
Each index owns tables named ``<name>_…`` in one schema:

- :class:`PgTextIndex`: ``<name>_docs(record_id, version, tsv tsvector)`` with a GIN index.
  Words and lexemes are made by :mod:`agent_memory.search.postgres_text`; the query is a
  ``tsquery`` built from quoted lexemes, so any user text is searched literally and never
  raises. A query needs every content word first, then, when that finds fewer than ``k``
  notes, any of its 8 rarest words (leaving out words in more than a tenth of the notes);
  stopwords count only when the query has nothing else (the rules of the FTS5 index).
  Scores are ``ts_rank(tsv, query, 1)`` (term frequency over 1 + log of the note's length;
  PostgreSQL has no IDF), only comparable within one index. The GIN index has
  ``fastupdate`` off: a pending list makes every query scan it, and the planner then
  prefers a sequential scan (12× slower at 10k notes, docs/benchmarks.md).
- :class:`PgVectorIndex` (:mod:`agent_memory.search.pg_vectors`):
  ``<name>_entries(record_id, version, text_hash, embedding vector(d))`` with an HNSW index
  (cosine), needing the ``vector`` extension (pgvector) in the database.

Invariants: one row per record id (the latest version given); :meth:`inputs` is derived from
exactly the rows held; no text is stored but lexemes, and :meth:`purge` rewrites the tables
(``VACUUM FULL``) so that no byte of a removed note stays in their files (DESIGN.md §9; what
PostgreSQL may still hold is :data:`~agent_memory.stores.postgres.ERASURE_LIMITATIONS`).
psycopg is imported on first use: without the ``postgres`` extra the module still imports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from agent_memory.records.record import MemoryRecord
from agent_memory.search.base import Hit, Recipe, document_text, version_digest
from agent_memory.search.fts_query import STOPWORDS_NAME, Term, content_terms, or_terms
from agent_memory.search.pg_base import PgIndexBase
from agent_memory.search.pg_vectors import PgVectorIndex
from agent_memory.search.postgres_text import (
    MAX_WORD,
    and_query,
    document_words,
    or_query,
    query_words,
    quote_lexeme,
    tsvector_literal,
)

__all__ = ["PgTextIndex", "PgVectorIndex"]

_TAG = "agent-memory-pg-fulltext/1"
_BATCH = 500
_MAX_AND_TERMS = 64
_OR_CAP = 8
_OR_MAX_SHARE = 0.1
_STEM_CACHE = 100_000
_DDL = """
CREATE TABLE IF NOT EXISTS {docs} (
    record_id text COLLATE "C" PRIMARY KEY,
    version text NOT NULL,
    tsv tsvector NOT NULL
);
CREATE INDEX IF NOT EXISTS {gin} ON {docs} USING gin (tsv) WITH (fastupdate = off);
-- No planner statistics on lexemes: pg_statistic would keep samples of removed notes.
ALTER TABLE {docs} ALTER tsv SET STATISTICS 0;
"""
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
    _suffixes = ("docs",)

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "agent_memory",
        name: str = "fulltext",
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._stems: dict[str, str] = {}
        # Document frequencies counted at one (generation, note count, built_at) of the index: every
        # write bumps the generation (:meth:`_stamp`), so a count is reused only while exact.
        self._df_at: tuple[str, str, str] | None = None
        self._df: dict[str, int] = {}
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
        with self._lock:
            stems = self._stem(found)
            terms = content_terms([Term(word, stems[word]) for word in found])
            hits: list[Hit] = []
            if len(terms) <= _MAX_AND_TERMS:
                hits = self._match(and_query(t.stem for t in terms), k)
                if len(hits) >= k or len(terms) == 1:
                    return hits
            considered = terms[:_MAX_AND_TERMS]
            df, total = self._document_frequencies([t.stem for t in considered])
            chosen = or_terms(considered, df, total, cap=_OR_CAP, max_share=_OR_MAX_SHARE)
            if not chosen:
                return hits
            return _merge(hits, self._match(or_query(t.stem for t in chosen), k), k)

    # ------------------------------------------------------------------ internals

    def _create(self, cur: Any, existing: set[str]) -> None:
        if f"{self.name}_docs" in existing:
            return
        cur.execute(self._sql(_DDL, docs=self._table("docs"), gin=self._ident("docs_tsv")))

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
            rows = [
                (r.id, versions[r.id], tsvector_literal([stems[w] for w in per_record[r.id]]))
                for r in changed
            ]
            with self._transaction() as cur:
                cur.executemany(
                    self._sql(
                        "INSERT INTO {docs} (record_id, version, tsv) VALUES (%s, %s, %s::tsvector)"
                        " ON CONFLICT (record_id)"
                        " DO UPDATE SET version = EXCLUDED.version, tsv = EXCLUDED.tsv",
                        docs=self._table("docs"),
                    ),
                    rows,
                )
                self._stamp(cur)

    def _stem(self, found: list[str]) -> dict[str, str]:
        """Return each word's lexeme by the server's ``english_stem`` (a stopword stays itself), cached."""
        missing = sorted({word for word in found if word not in self._stems})
        if missing:
            if len(self._stems) + len(missing) > _STEM_CACHE:
                self._stems.clear()
                missing = sorted(set(found))
            with self._transaction() as cur:
                cur.execute(_STEMS, (missing,))
                self._stems.update({str(w): str(s) for w, s in cur.fetchall()})
        return {word: self._stems[word] for word in found}

    def _match(self, tsquery: str, k: int) -> list[Hit]:
        statement = self._sql(
            "SELECT record_id, ts_rank(tsv, %(q)s::tsquery, 1) AS score FROM {docs}"
            " WHERE tsv @@ %(q)s::tsquery ORDER BY score DESC, record_id LIMIT %(k)s",
            docs=self._table("docs"),
        )
        with self._transaction() as cur:
            cur.execute(statement, {"q": tsquery, "k": k})
            return [Hit(str(record_id), float(score)) for record_id, score in cur.fetchall()]

    def _stamp(self, cur: Any) -> None:
        super()._stamp(cur)
        # Every write moves the generation: cached document frequencies are then counted again.
        cur.execute(
            self._sql(
                "INSERT INTO {m} (key, value) VALUES ('generation', '1')"
                " ON CONFLICT (key) DO UPDATE SET value = ({m}.value::bigint + 1)::text",
                m=self._table("meta"),
            )
        )
        # The note count for the OR rule. Concurrent writers may leave it off by a batch until
        # the next write: it only decides which words count as too common.
        cur.execute(
            self._sql(
                "INSERT INTO {m} (key, value) SELECT 'count', count(*)::text FROM {docs}"
                " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                m=self._table("meta"),
                docs=self._table("docs"),
            )
        )

    def _document_frequencies(self, lexemes: list[str]) -> tuple[dict[str, int], int]:
        """Return how many notes hold each lexeme, and how many notes there are.

        Counts go through the GIN index and stop past a tenth of the notes: a word that
        common is left out of OR queries whatever its exact count. Each count visits a heap
        page per note (most of a query's time at 100,000 notes, issue 10), so counts are
        kept until the index's generation or note count moves (any write by any process).
        """
        with self._transaction() as cur:
            cur.execute(
                self._sql(
                    "SELECT key, value FROM {m} WHERE key IN ('count', 'generation', 'built_at')",
                    m=self._table("meta"),
                )
            )
            meta = {str(key): str(value) for key, value in cur.fetchall()}
            total = int(meta.get("count", 0))
            at = (meta["generation"], meta["count"], meta["built_at"]) if len(meta) == 3 else None
            if at is None or at != self._df_at or len(self._df) > _STEM_CACHE:
                self._df_at, self._df = at, {}
            wanted = sorted({lexeme for lexeme in lexemes if lexeme not in self._df})
            if wanted:
                cur.execute(
                    self._sql(
                        "SELECT l, (SELECT count(*) FROM (SELECT 1 FROM {docs} WHERE tsv @@ q::tsquery"
                        " LIMIT %s) AS capped) FROM unnest(%s::text[], %s::text[]) AS t(l, q)",
                        docs=self._table("docs"),
                    ),
                    (int(_OR_MAX_SHARE * total) + 1, wanted, [quote_lexeme(lexeme) for lexeme in wanted]),
                )
                self._df.update({str(lexeme): int(count) for lexeme, count in cur.fetchall()})
            df = {lexeme: self._df[lexeme] for lexeme in lexemes}
            if at is None:
                self._df = {}
        return df, total


def _merge(first: list[Hit], rest: list[Hit], k: int) -> list[Hit]:
    """Return ``first`` then the other hits of ``rest``, lifted so that scores stay descending."""
    held = {hit.record_id for hit in first}
    others = [hit for hit in rest if hit.record_id not in held][: k - len(first)]
    if not first or not others:
        return first + others
    lift = others[0].score
    return [Hit(h.record_id, h.score + lift) for h in first] + others

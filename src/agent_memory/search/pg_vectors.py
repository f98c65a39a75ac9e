"""`PgVectorIndex`: cosine search with pgvector's HNSW index (issue 4 item 8, DESIGN.md §6).

Table ``<name>_entries(record_id, version, text_hash, embedding vector(d))`` in the index's
schema, with an HNSW index (``vector_cosine_ops``) for up to 2,000 dimensions (pgvector's
limit for ``vector``; above it the search is an exact scan). Needs the ``vector`` extension
in the database: the index creates it when the role may, and otherwise says what to run.

Invariants:

- **No text is stored**, only the ``sha256:`` hash of :func:`document_text` and the vector.
  A text already held by any row is not embedded again: its vector is copied.
- Rows are unit vectors, so a score is the cosine ``1 − (embedding <=> query)``, in (0, 1];
  hits with cosine ≤ 0 (and notes whose vector is zero) are never returned.
- Scores are computed here in float64 from the stored float32 vectors; the server's own
  float32 distances only choose and order candidates, and rows are fetched past the cut
  until it is clear by more than their rounding error, so equal cosines tie exactly.
- A query for ``k`` hits sets ``hnsw.ef_search`` to at least ``k + 1`` (at most 1,000) and,
  from pgvector 0.8, ``hnsw.iterative_scan = strict_order``, so the HNSW scan can return
  ``k`` rows for any ``k``; before 0.8 a ``k`` over 999 is served by an exact scan.
- Opening the tables with another embedder (name, version or dimensions) empties them.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from agent_memory.errors import StoreError
from agent_memory.records.record import MemoryRecord
from agent_memory.search.base import (
    EMBED_BATCH,
    Embedder,
    Hit,
    Recipe,
    document_text,
    embedder_cold,
    version_digest,
)
from agent_memory.search.embedders import EmbeddingError, normalise_rows
from agent_memory.search.pg_base import PgIndexBase
from agent_memory.search.vectors import text_hash

if TYPE_CHECKING:
    from agent_memory.search.base import Vectors

__all__ = ["HNSW_MAX_DIMENSIONS", "PgVectorIndex"]

HNSW_MAX_DIMENSIONS = 2000
_TAG = "agent-memory-pg-vectors/1"
_BATCH = 500
_EF_SEARCH_MAX = 1000
_BULK = 2000
_BUILD_MEMORY = "512MB"
_SERVER_ERROR = 1e-4  # bound on pgvector's float32 rounding of a cosine distance (d ≤ 16,000)
_DDL = """
CREATE TABLE IF NOT EXISTS {entries} (
    record_id text COLLATE "C" PRIMARY KEY,
    version text NOT NULL,
    text_hash text NOT NULL,
    embedding {ext}.vector({dims}) NOT NULL
);
CREATE INDEX IF NOT EXISTS {by_text} ON {entries} (text_hash);
"""
_HNSW = "CREATE INDEX IF NOT EXISTS {hnsw} ON {entries} USING hnsw (embedding {ext}.vector_cosine_ops)"
_INSTALL_HINT = (
    "install pgvector on the database server (Debian 13: postgresql-NN-pgvector; Debian 12:"
    " scripts/install-pgvector.sh in the agent-memory repository), then run CREATE EXTENSION vector"
)


class _Embedding:
    """A float32 vector on its way to a ``vector`` parameter (pgvector's binary format)."""

    __slots__ = ("values",)

    def __init__(self, values: Vectors) -> None:
        self.values = values


def _decode(data: bytes, dimensions: int) -> Vectors:
    """Return the float32 vector of pgvector's binary format (see :func:`_vector_dumper`)."""
    count, _ = struct.unpack_from(">HH", data)
    if count != dimensions or len(data) != 4 + 4 * count:
        raise StoreError(f"a stored vector has {count} values, not {dimensions}")
    return np.frombuffer(data, dtype=">f4", offset=4).astype(np.float32)


def _vector_dumper(oid: int) -> type:
    """Return a psycopg binary dumper of :class:`_Embedding` for the ``vector`` type ``oid``."""
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    class EmbeddingDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj: _Embedding) -> bytes:
            # pgvector's recv format: uint16 dimensions, uint16 unused, float32 × d, big-endian.
            return struct.pack(">HH", len(obj.values), 0) + obj.values.astype(">f4").tobytes()

    EmbeddingDumper.oid = oid
    return EmbeddingDumper


def _bytes_loader() -> type:
    from psycopg.adapt import Loader
    from psycopg.pq import Format

    class BytesLoader(Loader):
        format = Format.BINARY

        def load(self, data: Any) -> bytes:
            return bytes(data)

    return BytesLoader


class PgVectorIndex(PgIndexBase):
    """Cosine search over one embedder's vectors with pgvector (a ``SearchIndex``).

    Embedding runs outside any transaction, so a slow model does not hold the database.

    Args:
        dsn: A libpq connection string (see :func:`agent_memory.stores.postgres.connect`).
        embedder: Turns texts into unit vectors; its name, version and dimensions are the
            index's (another embedder empties the tables on open).
        schema: The schema of the tables, created when absent.
        name: The index's name: its recipe name and its tables' prefix.
        batch_size: Texts per call to ``embedder.embed`` (:data:`~.base.EMBED_BATCH`).
        clock: Returns the current aware UTC time; stamps ``built_at``.

    Raises:
        StoreError: A refused schema or name, psycopg missing, the server unreachable, or the
            ``vector`` extension neither enabled in the database nor creatable by this role
            (the hint says what to install or run).
    """

    _tag = _TAG
    _suffixes = ("entries",)

    def __init__(
        self,
        dsn: str,
        embedder: Embedder,
        *,
        schema: str = "agent_memory",
        name: str = "vectors",
        batch_size: int = EMBED_BATCH,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.embedder = embedder
        self._dimensions = embedder.dimensions
        self._key = f"{embedder.name}/{embedder.version}/{self._dimensions}"
        self._batch_size = max(1, batch_size)
        self._ext_schema = ""
        self._iterative = False
        # The connection the session settings below were made on, and those settings.
        self._session: tuple[object, dict[str, str]] = (None, {})
        super().__init__(dsn, schema=schema, name=name, clock=clock)

    @property
    def cold(self) -> bool:
        """Whether indexing now would first load the embedder's model (:func:`.base.embedder_cold`)."""
        return embedder_cold(self.embedder)

    # ------------------------------------------------------------------ the port

    @property
    def recipe(self) -> Recipe:
        """How this index is built (``recipe.json``, seed 003)."""
        return Recipe(
            kind="vector",
            name=self.name,
            params={
                "embedder": self.embedder.name,
                "embedder_version": self.embedder.version,
                "dimensions": self._dimensions,
                "metric": "cosine",
                "search": "hnsw" if self._dimensions <= HNSW_MAX_DIMENSIONS else "exact",
                "engine": "postgresql+pgvector",
                "fields": ["body", "tags"],
                "schema": _TAG,
            },
        )

    def index(self, records: Iterable[MemoryRecord]) -> None:
        """Add records, replacing any version of the same id (last one wins within a call).

        Only texts that no row holds yet are embedded, each distinct text once. Work is
        committed in one transaction per 500 records. Loading 2,000 or more records into an
        empty index drops the HNSW index first and builds it again at the end, which is
        several times faster than growing it row by row; queries meanwhile scan exactly.

        Raises:
            EmbeddingError: The embedder failed or returned vectors of the wrong shape;
                batches before the failing one stay committed (the HNSW index is rebuilt).
            StoreError: The server failed.
        """
        items = self._latest_per_id(records)
        bulk = len(items) >= _BULK and self._dimensions <= HNSW_MAX_DIMENSIONS and self._empty()
        if bulk:
            with self._transaction() as cur:
                cur.execute(self._sql("DROP INDEX IF EXISTS {i}", i=self._index_name()))
        try:
            for start in range(0, len(items), _BATCH):
                self._write_batch(items[start : start + _BATCH])
        finally:
            if bulk:
                with self._transaction() as cur:
                    # pgvector builds fast while the graph fits in memory; the 64 MB default soon does not.
                    cur.execute("SELECT set_config('maintenance_work_mem', %s, true)", (_BUILD_MEMORY,))
                    cur.execute(self._sql(_HNSW, **self._parts()))

    def query(self, text: str, *, k: int = 32) -> list[Hit]:
        """Return up to ``k`` hits with cosine > 0, best first, ties by record id.

        Blank text, and text the embedder maps to the zero vector, gives ``[]``.

        Raises:
            EmbeddingError: The embedder failed on the query text.
            StoreError: The server failed.
        """
        if k <= 0 or not text.strip():
            return []
        vector = self._embed([text])[0]
        if not vector.any():
            return []
        query = vector.astype(np.float64)
        limit = k + 1
        while True:
            rows = self._nearest(vector, limit)
            # Scores in float64 from the stored float32 values: the server's float32 sums can
            # differ in the last bit for equal cosines, which would break ties by id.
            scored = (
                (record_id, float(embedding.astype(np.float64) @ query)) for record_id, embedding in rows
            )
            hits = sorted(
                (Hit(record_id, min(score, 1.0)) for record_id, score in scored if score > 0),
                key=lambda hit: (-hit.score, hit.record_id),
            )
            # The server orders by its float32 distances: a row within their rounding error of
            # the cut may hide better or tied rows (ties go by id), so fetch more.
            if len(rows) < limit or len(hits) <= k or hits[-1].score < hits[k - 1].score - _SERVER_ERROR:
                return hits[:k]
            limit *= 2

    def explain(self, text: str, *, k: int = 32) -> str:
        """Return the server's plan for :meth:`query` of ``text`` and ``k``, for diagnosing speed.

        Raises:
            EmbeddingError: The embedder failed on the query text.
            StoreError: The server failed.
        """
        with self._transaction() as cur:
            statement = self._sql("EXPLAIN {q}", q=self._nearest_sql(cur, k + 1))
            cur.execute(statement, self._params(self._embed([text])[0], k + 1))
            return "\n".join(str(row[0]) for row in cur.fetchall())

    # ------------------------------------------------------------------ internals

    def _empty(self) -> bool:
        with self._transaction() as cur:
            cur.execute(self._sql("SELECT NOT EXISTS (SELECT 1 FROM {t})", t=self._table("entries")))
            return bool((cur.fetchone() or (True,))[0])

    def _index_name(self) -> Any:
        return self._sqlmod.SQL("{}.{}").format(
            self._sqlmod.Identifier(self.schema), self._ident("entries_hnsw")
        )

    def _parts(self) -> dict[str, Any]:
        return {
            "entries": self._table("entries"),
            "ext": self._sqlmod.Identifier(self._ext_schema),
            "dims": self._sqlmod.Literal(self._dimensions),
            "by_text": self._ident("entries_text"),
            "hnsw": self._ident("entries_hnsw"),
        }

    def _create(self, cur: Any, existing: set[str]) -> None:
        self._ensure_extension(cur)
        meta = self._table("meta")
        cur.execute(self._sql("SELECT value FROM {m} WHERE key = 'embedder'", m=meta))
        row = cur.fetchone()
        if f"{self.name}_entries" in existing and row is not None and row[0] == self._key:
            return
        cur.execute(self._sql("DROP TABLE IF EXISTS {t}", t=self._table("entries")))
        parts = self._parts()
        cur.execute(self._sql(_DDL, **parts))
        if self._dimensions <= HNSW_MAX_DIMENSIONS:
            cur.execute(self._sql(_HNSW, **parts))
        cur.execute(
            self._sql(
                "INSERT INTO {m} (key, value) VALUES ('embedder', %s)"
                " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                m=meta,
            ),
            (self._key,),
        )

    def _ensure_extension(self, cur: Any) -> None:
        """Find the ``vector`` extension, creating it when the role may; raise with a hint otherwise."""
        found = self._extension(cur)
        if found is None:
            cur.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
            if cur.fetchone() is None:
                raise StoreError(
                    "the PostgreSQL server has no pgvector extension (CREATE EXTENSION vector fails)",
                    path=self._where,
                    hint=_INSTALL_HINT,
                )
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (_EXTENSION_LOCK,))
            cur.execute("SAVEPOINT create_vector")
            try:
                cur.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except self._psycopg.errors.InsufficientPrivilege:
                cur.execute("ROLLBACK TO SAVEPOINT create_vector")
                cur.execute("SELECT current_database(), current_user")
                database, user = cur.fetchone()
                raise StoreError(
                    f"the vector extension is not enabled in database {database}"
                    f" and role {user} may not create it",
                    path=self._where,
                    hint=f"connect to database {database} as a superuser and run: CREATE EXTENSION vector;",
                ) from None
            found = self._extension(cur)
            if found is None:  # pragma: no cover - CREATE EXTENSION succeeded
                raise StoreError("CREATE EXTENSION vector left no extension", path=self._where)
        self._ext_schema, version = found
        self._iterative = tuple(int(p) for p in version.split(".")[:2] if p.isdigit()) >= (0, 8)
        self._register(cur.connection)

    @staticmethod
    def _extension(cur: Any) -> tuple[str, str] | None:
        cur.execute(
            "SELECT n.nspname, e.extversion FROM pg_extension e"
            " JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
        )
        row = cur.fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def _on_connect(self, conn: Any) -> None:
        if self._ext_schema:
            self._register(conn)

    def _register(self, conn: Any) -> None:
        row = conn.execute(
            "SELECT t.oid FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace"
            " WHERE t.typname = 'vector' AND n.nspname = %s",
            (self._ext_schema,),
        ).fetchone()
        oid = int(row[0])
        conn.adapters.register_dumper(_Embedding, _vector_dumper(oid))
        # Stored vectors come back as pgvector's binary bytes, decoded by _decode.
        conn.adapters.register_loader(oid, _bytes_loader())

    def _nearest_sql(self, cur: Any, limit: int) -> Any:
        """Set this transaction's HNSW parameters for ``limit`` rows; return the nearest-rows query."""
        cur.execute(
            "SELECT set_config('hnsw.ef_search', %s, true)", (str(min(max(40, limit), _EF_SEARCH_MAX)),)
        )
        if self._iterative:
            cur.execute("SELECT set_config('hnsw.iterative_scan', 'strict_order', true)")
        elif limit > _EF_SEARCH_MAX:
            cur.execute("SELECT set_config('enable_indexscan', 'off', true)")
        return self._sql(
            "SELECT record_id, embedding FROM {entries}"
            " ORDER BY embedding OPERATOR({ext}.<=>) %(q)s LIMIT %(limit)s",
            ext=self._sqlmod.Identifier(self._ext_schema),
            entries=self._table("entries"),
        )

    @staticmethod
    def _params(vector: Vectors, limit: int) -> dict[str, Any]:
        return {"q": _Embedding(vector), "limit": limit}

    def _nearest(self, vector: Vectors, limit: int) -> list[tuple[str, Vectors]]:
        """Return ``(record_id, stored vector)`` of the ``limit`` rows nearest ``vector``, nearest first.

        The HNSW parameters are set on this index's own connection for the session, and only
        when they change, so a query is one round trip (:meth:`_nearest_sql` sets them for one
        transaction instead, for :meth:`explain`).
        """
        wanted = {"hnsw.ef_search": str(min(max(40, limit), _EF_SEARCH_MAX))}
        if self._iterative:
            wanted["hnsw.iterative_scan"] = "strict_order"
        else:  # before pgvector 0.8 a search list that long is served by an exact scan
            wanted["enable_indexscan"] = "off" if limit > _EF_SEARCH_MAX else ""
        with self._lock:
            conn = self._connection()
            if self._session[0] is not conn:
                self._session = (conn, {})
            settings = self._session[1]
            changed = {name: value for name, value in wanted.items() if settings.get(name) != value}
            if changed:
                # "" puts a setting back to the session's default (the server's configuration).
                calls = self._sqlmod.SQL(", ").join(
                    self._sqlmod.SQL(
                        "set_config({n}, coalesce(nullif({v}, ''),"
                        " (SELECT reset_val FROM pg_settings WHERE name = {n})), false)"
                    ).format(n=self._sqlmod.Literal(name), v=self._sqlmod.Literal(value))
                    for name, value in changed.items()
                )
                self._fetch(self._sql("SELECT {calls}", calls=calls))
                settings.update(changed)
            statement = self._sql(
                "SELECT record_id, embedding FROM {entries}"
                " ORDER BY embedding OPERATOR({ext}.<=>) %(q)s LIMIT %(limit)s",
                ext=self._sqlmod.Identifier(self._ext_schema),
                entries=self._table("entries"),
            )
            rows = self._fetch(statement, self._params(vector, limit), binary=True)
        return [(str(record_id), _decode(data, self._dimensions)) for record_id, data in rows]

    def _write_batch(self, records: list[MemoryRecord]) -> None:
        texts = {r.id: document_text(r) for r in records}
        rows = [(r.id, version_digest(r), text_hash(texts[r.id])) for r in records]
        statement = self._sql(
            "SELECT record_id, version, text_hash FROM {t} WHERE record_id = ANY(%s)",
            t=self._table("entries"),
        )
        with self._transaction() as cur:
            cur.execute(statement, ([record_id for record_id, _, _ in rows],))
            held = {str(a): (str(b), str(c)) for a, b, c in cur.fetchall()}
        changed = [row for row in rows if held.get(row[0]) != row[1:]]
        if not changed:
            self._stamp_only()
            return
        vectors = self._stored({digest for _, _, digest in changed})
        missing = {digest: texts[record_id] for record_id, _, digest in changed if digest not in vectors}
        vectors.update(zip(missing, self._embed(list(missing.values())), strict=True))
        upsert = self._sql(
            "INSERT INTO {t} (record_id, version, text_hash, embedding) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (record_id) DO UPDATE SET version = EXCLUDED.version,"
            " text_hash = EXCLUDED.text_hash, embedding = EXCLUDED.embedding",
            t=self._table("entries"),
        )
        params = [(rid, version, digest, _Embedding(vectors[digest])) for rid, version, digest in changed]
        with self._transaction() as cur:
            cur.executemany(upsert, params)
            self._stamp(cur)

    def _stored(self, digests: set[str]) -> dict[str, Vectors]:
        """Return the vector some row already holds for each of these text hashes."""
        statement = self._sql(
            "SELECT DISTINCT ON (text_hash) text_hash, embedding FROM {t} WHERE text_hash = ANY(%s)",
            t=self._table("entries"),
        )
        with self._transaction() as cur:
            cur.execute(statement, (sorted(digests),), binary=True)
            return {str(digest): _decode(bytes(data), self._dimensions) for digest, data in cur.fetchall()}

    def _embed(self, texts: list[str]) -> list[Vectors]:
        out: list[Vectors] = []
        for start in range(0, len(texts), self._batch_size):
            batch = texts[start : start + self._batch_size]
            vectors = np.asarray(self.embedder.embed(batch))
            if vectors.shape != (len(batch), self._dimensions) or not np.isfinite(vectors).all():
                raise EmbeddingError(
                    f"embedder {self._key} returned shape {vectors.shape} for {len(batch)} texts"
                    f" (expected ({len(batch)}, {self._dimensions}), finite)",
                    path=self._where,
                )
            out.extend(normalise_rows(vectors))
        return out


# One advisory lock for creating the extension, whichever index asks first.
_EXTENSION_LOCK = 0x616D5F766563746F

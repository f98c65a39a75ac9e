"""`VectorIndex`: exact cosine search over embeddings kept in SQLite (stdlib ``sqlite3``, numpy).

The vector index of issue 4 item 4, for machines whose ``sqlite3`` cannot load extensions.
Schema::

    meta(key, value)                        schema tag, embedder key, built_at
    vectors(text_hash, embedder, vector)    float32 little-endian blobs, one per distinct text
    entries(record_id, version, text_hash,  which text each record's latest version has,
            thread)                         and its conversation thread (:mod:`.threads`)

Invariants:

- **No text is stored**, only ``sha256:`` hashes of :func:`document_text` and the vectors.
  A vector is keyed by (text hash, embedder name/version/dimensions), so a text is embedded
  once: re-indexing an unchanged record, a new version whose text did not change, or another
  record with the same text reuses the stored vector (seed 001 style, llm ``embeddings.py``).
- Search is exact: numpy computes every held row's cosine (a dot product of unit vectors)
  over a matrix read on the first query, updated in place by this object's writes, and
  read again once another connection has written (``PRAGMA data_version``). The matrix is
  column-major, so a sparse query reads only its non-zero dimensions' columns.
- :meth:`VectorIndex.remove` drops the record at once; its vector stays, unreachable, until
  :meth:`VectorIndex.purge` deletes every vector no record uses and leaves none of their
  bytes in the file, its ``-wal`` or ``-shm`` (DESIGN.md §9 erasure).
- Opening a file with another embedder empties ``entries`` (``inputs().count`` is 0: the
  caller rebuilds); the other embedder's vectors stay until :meth:`VectorIndex.purge`.
- With ``thread_weight`` > 0 a note scores ``(cosine + w × cosine to its thread's mean
  vector) / (1 + w)`` (:mod:`.thread_means`, kept in step with every write). A file written
  before the ``thread`` column existed gains it empty; opened with ``thread_weight`` > 0 it
  is emptied like a file of another embedder (its vectors stay, so nothing is embedded again).
- ``floor = "best"`` applies ``min_similarity`` to the question instead of to each note: a
  question whose best cosine with any note is below it finds nothing (an off-topic
  question), any other finds every note with a positive score.
- Opening the file, :meth:`VectorIndex.inputs` and :meth:`VectorIndex.remove` before the
  first query import no numpy (the methods that compute import it): a CLI ``remember``,
  which leaves its vectors to the next query, pays neither for numpy nor for the model.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from agent_memory.records.record import MemoryRecord
from agent_memory.records.wire import format_timestamp, parse_timestamp, utc_now
from agent_memory.search.base import (
    EMBED_BATCH,
    Embedder,
    Hit,
    IndexInputs,
    Recipe,
    document_text,
    embedder_cold,
    inputs_digest,
    version_digest,
)
from agent_memory.search.embedders import EmbeddingError, normalise_rows
from agent_memory.search.threads import place_of
from agent_memory.stores.sqlite_file import SharedConnection, connect, use_wal

if TYPE_CHECKING:
    from agent_memory.search.base import Vectors
    from agent_memory.search.thread_means import ThreadMeans

__all__ = ["FLOORS", "Floor", "VectorIndex", "scoring_options", "text_hash"]

Floor = Literal["each", "best"]
FLOORS: tuple[Floor, ...] = ("each", "best")

_SCHEMA_TAG = "agent-memory-vectors/1"
_BATCH = 500
_LOAD_CHUNK = 4096
"""Rows read at a time when the matrix is loaded (about 6 MB of 384-d vectors)."""


def _capacity(rows: int) -> int:
    """Rows to allocate for ``rows`` vectors: a sixteenth more (at least 64), so writes rarely grow it.

    Growing copies the matrix (both are held for a moment), so it must be rare; doubling would
    leave up to half of a 154 MB matrix (100k rows of 384 float32s) unused (issue 23).
    """
    return rows + max(64, rows // 16)


_BUSY_TIMEOUT_MS = 5000
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS vectors (
    text_hash TEXT NOT NULL,
    embedder TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (text_hash, embedder)
) STRICT;
CREATE TABLE IF NOT EXISTS entries (
    record_id TEXT PRIMARY KEY,
    version TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    thread TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS entries_text ON entries (text_hash);
"""


def scoring_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Return the :class:`VectorIndex` keyword arguments a vector recipe's options give.

    ``min_similarity`` [0.0], ``floor`` [``each``] and ``thread_weight`` [0.0] (the recipe
    options of :mod:`.recipes`), so every opener builds the index the recipe describes.
    """
    return {
        "min_similarity": float(options.get("min_similarity", 0.0)),
        "floor": options.get("floor", "each"),
        "thread_weight": float(options.get("thread_weight", 0.0)),
    }


def text_hash(text: str) -> str:
    """Return ``sha256:<64 hex>`` of the UTF-8 text (lone surrogates passed through): its vector's key."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class VectorIndex(SharedConnection):
    """Exact cosine search over one embedder's vectors (a :class:`~agent_memory.search.base.SearchIndex`).

    One connection is shared by all threads under a lock. Embedding runs before the write
    transaction opens, so a slow model never holds the database's write lock.

    Args:
        path: The database file, created if absent, or ``":memory:"``.
        embedder: Turns texts into unit vectors; its name, version and dimensions key the
            stored vectors.
        name: The index's name in its recipe (its folder under ``.cache/indexes/``).
        batch_size: Texts per call to ``embedder.embed`` (:data:`~.base.EMBED_BATCH`).
        min_similarity: The cosine floor in [0, 1).
        floor: ``each`` (a note below the floor is no hit) or ``best`` (a question whose best
            cosine is below it finds nothing; module docstring).
        thread_weight: The weight of the thread-mean cosine, finite and ≥ 0 (0: off).
        clock: Returns the current aware UTC time; stamps ``built_at``. Defaults to the wall clock.

    Raises:
        ValueError: ``min_similarity`` outside [0, 1), an unknown ``floor``, or a negative,
            infinite or NaN ``thread_weight``.
        sqlite3.Error: The file cannot be opened or is not a database.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        embedder: Embedder,
        *,
        name: str = "vectors",
        batch_size: int = EMBED_BATCH,
        min_similarity: float = 0.0,
        floor: Floor = "each",
        thread_weight: float = 0.0,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if not 0.0 <= min_similarity < 1.0:
            raise ValueError(f"min_similarity must be in [0, 1), got {min_similarity!r}")
        if floor not in FLOORS:
            raise ValueError(f"unknown floor {floor!r} (one of: {', '.join(FLOORS)})")
        if not 0.0 <= thread_weight < float("inf"):
            raise ValueError(f"thread_weight must be finite and non-negative, got {thread_weight!r}")
        self.path = os.fspath(path)
        self.embedder = embedder
        self.min_similarity = min_similarity
        self.floor: Floor = floor
        self.thread_weight = float(thread_weight)
        self._name = name
        self._batch_size = max(1, batch_size)
        self._clock = clock or utc_now
        self._dimensions = embedder.dimensions
        self._key = f"{embedder.name}/{embedder.version}/{self._dimensions}"
        self._lock = threading.RLock()
        # The in-memory matrix: row i holds the vector of _ids[i]; None until the first query.
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}
        self._matrix: Vectors | None = None
        self._means: ThreadMeans | None = None  # made with the matrix (thread_weight > 0)
        self._data_version = -1
        self._conn = connect(self.path, timeout_seconds=_BUSY_TIMEOUT_MS / 1000)
        try:
            self._conn.execute("PRAGMA secure_delete = ON")
            if self.path != ":memory:":
                use_wal(self._conn, synchronous="NORMAL", timeout_seconds=_BUSY_TIMEOUT_MS / 1000)
            self._transaction(self._open_schema, stamp=False)
        except BaseException:
            self._conn.close()
            raise

    def __repr__(self) -> str:
        return f"VectorIndex({self.path!r}, embedder={self._key!r}, name={self._name!r})"

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
            name=self._name,
            params={
                "embedder": self.embedder.name,
                "embedder_version": self.embedder.version,
                "dimensions": self._dimensions,
                "metric": "cosine",
                "min_similarity": f"{self.min_similarity:.2f}",
                "search": "exact",
                "fields": ["body", "tags"],
                "storage": "float32-le",
                "schema": _SCHEMA_TAG,
                # Written only when not the default, so recipes from before they existed still match.
                **({"floor": self.floor} if self.floor != "each" else {}),
                **({"thread_weight": f"{self.thread_weight:.2f}"} if self.thread_weight else {}),
            },
        )

    def index(self, records: Iterable[MemoryRecord]) -> None:
        """Add records, replacing any version of the same id (last one wins within a call).

        Only texts without a stored vector for this embedder are embedded, each distinct
        text once. Work is committed in one transaction per 500 records.

        Raises:
            EmbeddingError: The embedder failed or returned vectors of the wrong shape;
                batches before the failing one stay committed.
        """
        items = list({record.id: record for record in records}.values())  # the last version wins
        with self._lock:
            for start in range(0, len(items), _BATCH):
                self._write_batch(items[start : start + _BATCH])
            if not items:
                self._transaction(lambda: None)

    def remove(self, record_ids: Iterable[str]) -> None:
        """Forget these ids (unknown ids are ignored); they never match again.

        Their vectors stay in the file, unreachable, until :meth:`purge`.
        """
        ids = list(dict.fromkeys(record_ids))
        with self._lock:
            self._transaction(
                lambda: self._conn.executemany("DELETE FROM entries WHERE record_id = ?", [(i,) for i in ids])
            )
            self._drop_rows(ids)

    def query(self, text: str, *, k: int = 32) -> list[Hit]:
        """Return up to ``k`` hits with a score above the floor (and > 0), best first, ties by id.

        Scores are cosines in (0, 1], mixed with the thread-mean cosine when
        ``thread_weight`` > 0 (module docstring). A floor keeps a dense model from offering
        every note as a weak match (all-MiniLM-L6-v2 gives unrelated text cosines up to
        about 0.2): ``each`` drops notes scoring below ``min_similarity``, ``best`` finds
        nothing when the question's best plain cosine is below it. Blank text, and text the
        embedder maps to the zero vector (no tokens for the hash embedder), gives ``[]``.

        Raises:
            EmbeddingError: The embedder failed on the query text.
        """
        if k <= 0 or not text.strip():
            return []
        import numpy as np

        query = normalise_rows(self.embedder.embed([text]))[0]
        if not query.any():
            return []
        with self._lock:
            scores = self._scores(self._loaded(), query)
            floor = self.min_similarity
            if self.floor == "best":
                if not len(scores) or float(scores.max()) < floor:
                    return []
                floor = 0.0
            if self._means is not None:
                scores = self._means.mix(scores, query, self.thread_weight)
            candidates = np.flatnonzero(scores > floor)
            if len(candidates) > k:
                # Keep everything tied with the k-th score, so ties are cut by id below.
                kth = np.partition(scores[candidates], -k)[-k]
                candidates = candidates[scores[candidates] >= kth]
            ranked = sorted((-float(scores[i]), self._ids[i]) for i in candidates)
        return [Hit(record_id, min(-negative, 1.0)) for negative, record_id in ranked[:k]]

    def inputs(self) -> IndexInputs:
        """Return the count and digest of the (record id, version digest) pairs held, and ``built_at``."""
        with self._lock:
            pairs = self._conn.execute("SELECT record_id, version FROM entries").fetchall()
            row = self._conn.execute("SELECT value FROM meta WHERE key = 'built_at'").fetchone()
        built_at = parse_timestamp(row[0], "built_at") if row else None
        return IndexInputs(count=len(pairs), digest=inputs_digest(pairs), built_at=built_at)

    # ------------------------------------------------------------------ erasure

    def purge(self) -> int:
        """Delete every vector no record uses, then leave none of their bytes in the files.

        ``secure_delete`` is on, ``VACUUM`` rebuilds the file, and a TRUNCATE checkpoint
        empties the ``-wal`` (DESIGN.md §9 erasure).

        Returns:
            How many vectors were deleted.

        Raises:
            sqlite3.OperationalError: Another connection keeps the database busy.
        """
        with self._lock:
            before = self._conn.total_changes
            self._transaction(
                lambda: self._conn.execute(
                    "DELETE FROM vectors WHERE embedder != ?"
                    " OR text_hash NOT IN (SELECT text_hash FROM entries)",
                    (self._key,),
                ),
                stamp=False,
            )
            deleted = self._conn.total_changes - before
            self._conn.execute("VACUUM")
            if self.path != ":memory:":
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return deleted

    # ------------------------------------------------------------------ internals

    def _open_schema(self) -> None:
        tables = {r[0] for r in self._conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
        if "meta" in tables:
            row = self._conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is None or row[0] != _SCHEMA_TAG:
                for table in ("entries", "vectors", "meta"):
                    self._conn.execute(f"DROP TABLE IF EXISTS {table}")
                tables = set()
        if "entries" in tables and "thread" not in {
            r[1] for r in self._conn.execute("PRAGMA table_info(entries)")
        }:
            # A file from before threads were kept: its rows' threads are unknown.
            self._conn.execute("ALTER TABLE entries ADD COLUMN thread TEXT")
            if self._conn.execute("SELECT 1 FROM entries LIMIT 1").fetchone():
                self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('threads', 'unknown')")
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                self._conn.execute(statement)
        self._conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (_SCHEMA_TAG,))
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
        unknown = self._conn.execute("SELECT 1 FROM meta WHERE key = 'threads'").fetchone()
        if (row is not None and row[0] != self._key) or (unknown and self.thread_weight):
            self._conn.execute("DELETE FROM entries")
            self._conn.execute("DELETE FROM meta WHERE key = 'threads'")
        if row is None or row[0] != self._key:  # only then: an open that changes nothing writes nothing
            self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('embedder', ?)", (self._key,))

    def _transaction(self, body: Callable[[], object], *, stamp: bool = True) -> None:
        """Run ``body`` in one write transaction, then stamp ``built_at``."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            body()
            if stamp:
                self._conn.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('built_at', ?)", (format_timestamp(self._clock()),)
                )
            self._conn.execute("COMMIT")
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise

    def _write_batch(self, records: list[MemoryRecord]) -> None:
        texts = {r.id: document_text(r) for r in records}
        threads = {r.id: place[0] if (place := place_of(r)) else None for r in records}
        rows = [(r.id, version_digest(r), text_hash(texts[r.id])) for r in records]
        held = {
            record_id: (version, digest)
            for record_id, version, digest in self._conn.execute(
                "SELECT record_id, version, text_hash FROM entries"
                " WHERE record_id IN (SELECT value FROM json_each(?))",
                (json.dumps([record_id for record_id, _, _ in rows]),),
            )
        }
        changed = [row for row in rows if held.get(row[0]) != row[1:]]
        if not changed:
            self._transaction(lambda: None)  # up to date: only built_at moves
            return
        found = self._conn.execute(
            "SELECT text_hash, vector FROM vectors"
            " WHERE embedder = ? AND text_hash IN (SELECT value FROM json_each(?))",
            (self._key, json.dumps(sorted({digest for _, _, digest in changed}))),
        )
        vectors = {digest: self._decode(blob)[0] for digest, blob in found}
        missing = {digest: texts[record_id] for record_id, _, digest in changed if digest not in vectors}
        fresh = self._embed(list(missing.values()))
        vectors.update(zip(missing, fresh, strict=True))

        def write() -> None:
            self._conn.executemany(
                "INSERT OR IGNORE INTO vectors VALUES (?, ?, ?)",
                [(digest, self._key, vectors[digest].astype("<f4").tobytes()) for digest in missing],
            )
            self._conn.executemany(
                "INSERT INTO entries VALUES (?, ?, ?, ?) ON CONFLICT (record_id) DO UPDATE SET"
                " version = excluded.version, text_hash = excluded.text_hash, thread = excluded.thread",
                [(*row, threads[row[0]]) for row in changed],
            )

        self._transaction(write)
        self._set_rows([(record_id, vectors[digest], threads[record_id]) for record_id, _, digest in changed])

    def _embed(self, texts: list[str]) -> list[Vectors]:
        import numpy as np

        out: list[Vectors] = []
        for start in range(0, len(texts), self._batch_size):
            batch = texts[start : start + self._batch_size]
            vectors = np.asarray(self.embedder.embed(batch))
            if vectors.shape != (len(batch), self._dimensions) or not np.isfinite(vectors).all():
                detail = f"embedder {self._key} returned shape {vectors.shape} (or non-finite values)"
                raise EmbeddingError(f"{detail} for {len(batch)} texts", path=self.path)
            out.extend(normalise_rows(vectors))
        return out

    def _decode(self, blob: bytes) -> Vectors:
        """Return float32 × (n, dimensions) from n stored blobs joined."""
        import numpy as np

        if len(blob) % (4 * self._dimensions):
            raise EmbeddingError(f"stored vectors are not of {self._dimensions} float32s", path=self.path)
        return np.frombuffer(blob, dtype="<f4").astype(np.float32).reshape(-1, self._dimensions)

    def _loaded(self) -> Vectors:
        """Return the matrix, read on first use and again after another connection wrote."""
        # data_version moves only when another connection commits, so our own writes (which
        # update the matrix in place) do not force a reload.
        import numpy as np

        version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        if self._matrix is None or version != self._data_version:
            self._data_version = version
            # Read in chunks straight into the matrix: the stored vectors are never all held
            # twice (100k rows of 384 float32s are 154 MB; issue 23's memory aim).
            (count,) = self._conn.execute("SELECT count(*) FROM entries").fetchone()
            matrix = np.zeros((_capacity(count), self._dimensions), dtype=np.float32, order="F")
            ids: list[str] = []
            threads: list[str | None] = []
            rows = self._conn.execute(
                "SELECT e.record_id, v.vector, e.thread FROM entries e"
                " JOIN vectors v ON v.text_hash = e.text_hash AND v.embedder = ? ORDER BY e.record_id",
                (self._key,),
            )
            while chunk := rows.fetchmany(_LOAD_CHUNK):
                start = len(ids)
                if start + len(chunk) > len(matrix):  # rows added since the count: grow
                    matrix = self._grown(matrix, start + len(chunk))
                matrix[start : start + len(chunk)] = self._decode(b"".join(blob for _, blob, _ in chunk))
                ids.extend(sys.intern(record_id) for record_id, _, _ in chunk)  # shared with the ledger
                threads.extend(thread for _, _, thread in chunk)
            self._ids, self._matrix = ids, matrix
            self._rows = {record_id: i for i, record_id in enumerate(ids)}
            if self.thread_weight:
                from agent_memory.search.thread_means import ThreadMeans

                self._means = ThreadMeans(self._dimensions)
                self._means.load(threads, self._matrix)
        return self._matrix

    def _scores(self, matrix: Vectors, query: Vectors) -> Vectors:
        """Return the cosine of every held row with the unit vector ``query``.

        The matrix is column-major, so a query with few non-zero dimensions (the hash
        embedder's: a handful of words) reads only those columns, summed in float64: a
        few milliseconds at 100,000 rows instead of a pass over every vector (issue 10), and
        scores that are equal in exact arithmetic come out equal, so ties go by id. The sum
        is ``np.einsum``'s own loop, not BLAS: OpenBLAS splits so small a product across
        threads, which on a loaded machine took 5x longer at 100,000 rows (issue 10).
        A dense query (a neural model's) is one matrix-vector product on one BLAS thread
        (:mod:`.blas`: on two, OpenBLAS's threads took the core a hybrid query's BM25 part
        runs on).
        """
        import numpy as np

        from agent_memory.search.blas import one_blas_thread

        rows = matrix[: len(self._ids)]
        used = np.flatnonzero(query)
        if len(used) * 4 <= self._dimensions:
            columns = rows.T[used].astype(np.float64)  # rows.T is row-major: each column is contiguous
            summed = np.einsum("i,ij->j", query[used].astype(np.float64), columns)
            return np.asarray(summed, dtype=np.float32)
        with one_blas_thread():
            return rows @ query

    @staticmethod
    def _grown(matrix: Vectors, needed: int) -> Vectors:
        """Return a column-major copy of ``matrix`` with room for ``needed`` (> its length) rows and more."""
        import numpy as np

        grown = np.zeros((_capacity(needed), matrix.shape[1]), dtype=np.float32, order="F")
        grown[: len(matrix)] = matrix
        return grown

    def _set_rows(self, items: list[tuple[str, Vectors, str | None]]) -> None:
        if self._matrix is None:
            return
        for record_id, vector, thread in items:
            row = self._rows.get(record_id)
            old = None if row is None else self._matrix[row].copy()
            if row is None:
                row = len(self._ids)
                if row == len(self._matrix):
                    self._matrix = self._grown(self._matrix, row + 1)
                self._ids.append(record_id)
                self._rows[record_id] = row
            self._matrix[row] = vector
            if self._means is not None:
                self._means.assign(row, thread, self._matrix[row], old)

    def _drop_rows(self, record_ids: list[str]) -> None:
        """Remove rows by moving the last row into each hole."""
        if self._matrix is None:
            return
        for record_id in record_ids:
            row = self._rows.pop(record_id, None)
            if row is None:
                continue
            last = len(self._ids) - 1
            if self._means is not None:
                self._means.release(row, self._matrix[row], last)
            if row != last:
                moved = self._ids[last]
                self._matrix[row] = self._matrix[last]
                self._ids[row] = moved
                self._rows[moved] = row
            self._matrix[last] = 0
            self._ids.pop()

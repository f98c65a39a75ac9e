"""What the PostgreSQL search indexes share: connection, tables, inputs and purge.

:class:`PgIndexBase` keeps one connection (reopened after it breaks) behind a lock, creates
an index's tables under an advisory lock, records the format tag and ``built_at`` in the
index's ``<name>_meta`` table, derives :meth:`PgIndexBase.inputs` from the rows held and
rewrites the tables on :meth:`PgIndexBase.purge`. Server errors become :class:`StoreError`
naming the schema and index, never the DSN's password. psycopg is imported on first use.
"""

from __future__ import annotations

import hashlib
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Self

from agent_memory.errors import StoreError
from agent_memory.records.record import MemoryRecord
from agent_memory.records.wire import format_timestamp, parse_timestamp, utc_now
from agent_memory.search.base import IndexInputs, inputs_digest

if TYPE_CHECKING:
    import psycopg
    from psycopg import sql

__all__ = ["PgIndexBase", "psycopg_modules"]

_SCHEMA_NAME = re.compile(r"\A[a-z_][a-z0-9_]{0,62}\Z")
_INDEX_NAME = re.compile(r"\A[a-z][a-z0-9_-]{0,39}\Z")
_META = "CREATE TABLE IF NOT EXISTS {meta} (key text PRIMARY KEY, value text NOT NULL)"


def psycopg_modules() -> tuple[Any, Any]:
    """Return the ``psycopg`` and ``psycopg.sql`` modules, imported now.

    Raises:
        StoreError: psycopg 3 is not installed (the ``postgres`` extra).
    """
    try:
        import psycopg
        from psycopg import sql
    except ImportError:
        raise StoreError(
            "the PostgreSQL search indexes need psycopg 3, which is not installed",
            hint="pip install 'agent-memory[postgres]'",
        ) from None
    return psycopg, sql


class PgIndexBase(ABC):
    """Connection, tables, ``inputs`` and ``purge`` of one index's tables in one schema.

    Subclasses set :attr:`_tag` (the format written to ``meta``), :attr:`_suffixes` (their
    tables besides ``meta``, the first one holding ``record_id`` and ``version``) and
    implement :meth:`_create`.
    """

    _tag: ClassVar[str]
    _suffixes: ClassVar[tuple[str, ...]]

    def __init__(
        self, dsn: str, *, schema: str, name: str, clock: Callable[[], datetime] | None = None
    ) -> None:
        if not _SCHEMA_NAME.match(schema):
            raise StoreError(f"refused schema name {schema!r}: lower-case letters, digits and _ only")
        if not _INDEX_NAME.match(name):
            raise StoreError(
                f"refused index name {name!r}: a lower-case letter, then letters, digits, _ or -,"
                " at most 40 characters"
            )
        self._psycopg, self._sqlmod = psycopg_modules()
        self._dsn = dsn
        self.schema = schema
        self.name = name
        self._where = f"postgresql:{schema}/{name}"
        self._clock = clock or utc_now
        self._lock = threading.RLock()
        self._conn: psycopg.Connection[tuple[Any, ...]] | None = None
        try:
            self._open_tables()
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"{type(self).__name__}(schema={self.schema!r}, name={self.name!r})"

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection; a later call reopens it."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # ------------------------------------------------------------------ the port, shared part

    def remove(self, record_ids: Iterable[str]) -> None:
        """Forget these ids (unknown ids are ignored); they never match again.

        Their rows' bytes stay in the table files until :meth:`purge`.

        Raises:
            StoreError: The server failed; nothing is removed.
        """
        ids = list(dict.fromkeys(record_ids))
        main = self._table(self._suffixes[0])
        with self._transaction() as cur:
            if ids:
                cur.execute(self._sql("DELETE FROM {t} WHERE record_id = ANY(%s)", t=main), (ids,))
            self._stamp(cur)

    def inputs(self) -> IndexInputs:
        """Return the count and digest of the (record id, version digest) pairs held, and ``built_at``.

        Raises:
            StoreError: The server failed.
        """
        with self._transaction() as cur:
            cur.execute(self._sql("SELECT record_id, version FROM {t}", t=self._table(self._suffixes[0])))
            pairs = [(str(a), str(b)) for a, b in cur.fetchall()]
            cur.execute(self._sql("SELECT value FROM {m} WHERE key = 'built_at'", m=self._table("meta")))
            row = cur.fetchone()
        built_at = parse_timestamp(str(row[0]), "built_at") if row else None
        return IndexInputs(count=len(pairs), digest=inputs_digest(pairs), built_at=built_at)

    def purge(self) -> None:
        """Rewrite this index's tables with ``VACUUM FULL``, so no removed row stays in their files.

        Rows are deleted by :meth:`remove` and by re-indexing; ``VACUUM FULL`` writes new
        files for the tables and their indexes (DESIGN.md §9 erasure). What the server may
        still hold (WAL, freed blocks, backups) is
        :data:`~agent_memory.stores.postgres.ERASURE_LIMITATIONS`.

        Raises:
            StoreError: The server failed, or ``VACUUM FULL`` did not rewrite the tables (the
                role does not own them).
        """
        names = ["meta", *self._suffixes]
        tables = self._sqlmod.SQL(", ").join(self._table(n) for n in names)
        nodes = self._sql(
            "SELECT pg_relation_filenode(c.oid) FROM pg_class c"
            " WHERE c.relnamespace = %s::regnamespace AND c.relname = ANY(%s)"
        )
        relnames = [f"{self.name}_{n}" for n in names]
        with self._lock:
            conn = self._connection()
            try:
                before = conn.execute(nodes, (self.schema, relnames)).fetchall()
                conn.execute(self._sql("VACUUM FULL {tables}", tables=tables))
                after = conn.execute(nodes, (self.schema, relnames)).fetchall()
            except self._psycopg.Error as exc:
                raise self._error(exc) from None
        if set(before) & set(after):
            # VACUUM only warns when it skips a table it does not own.
            raise StoreError(
                "VACUUM FULL did not rewrite the index tables; removed rows may remain in their files",
                path=self._where,
                hint=f"run VACUUM FULL on the {self.name}_* tables of schema {self.schema} as their owner",
            )

    # ------------------------------------------------------------------ for subclasses

    @abstractmethod
    def _create(self, cur: Any, existing: set[str]) -> None:
        """Create the subclass's tables that are not in ``existing`` inside the open transaction."""

    def _on_connect(self, conn: Any) -> None:  # noqa: B027 - an optional hook, not abstract
        """Prepare a new connection (e.g. register type adapters); nothing by default."""

    def _ident(self, suffix: str) -> sql.Identifier:
        return self._sqlmod.Identifier(f"{self.name}_{suffix}")  # type: ignore[no-any-return]

    def _table(self, suffix: str) -> sql.Composed:
        return self._sqlmod.SQL("{}.{}").format(  # type: ignore[no-any-return]
            self._sqlmod.Identifier(self.schema), self._ident(suffix)
        )

    def _sql(self, text: str, **parts: Any) -> sql.Composed:
        return self._sqlmod.SQL(text).format(**parts)  # type: ignore[no-any-return]

    @staticmethod
    def _latest_per_id(records: Iterable[MemoryRecord]) -> list[MemoryRecord]:
        latest: dict[str, MemoryRecord] = {}
        for record in records:
            latest.pop(record.id, None)
            latest[record.id] = record
        return list(latest.values())

    def _held(self, record_ids: list[str]) -> dict[str, str]:
        """Return the version digest held for each of these ids that has a row."""
        statement = self._sql(
            "SELECT record_id, version FROM {t} WHERE record_id = ANY(%s)", t=self._table(self._suffixes[0])
        )
        return {str(a): str(b) for a, b in self._fetch(statement, (record_ids,))}

    def _fetch(self, statement: Any, params: Any = None, *, binary: bool = False) -> list[tuple[Any, ...]]:
        """Return the rows of one read-only statement, run alone: one round trip, no ``BEGIN``/``COMMIT``.

        On the autocommit connection a single statement is its own transaction, so it reads
        one snapshot, as it would inside an explicit one.

        Raises:
            StoreError: The server failed.
        """
        with self._lock:
            conn = self._connection()
            try:
                with conn.cursor() as cur:
                    cur.execute(statement, params, binary=binary)
                    return cur.fetchall()
            except self._psycopg.Error as exc:
                raise self._error(exc) from None

    def _stamp(self, cur: Any) -> None:
        cur.execute(
            self._sql(
                "INSERT INTO {m} (key, value) VALUES ('built_at', %s)"
                " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                m=self._table("meta"),
            ),
            (format_timestamp(self._clock()),),
        )

    def _stamp_only(self) -> None:
        with self._transaction() as cur:
            self._stamp(cur)

    def _connection(self) -> psycopg.Connection[tuple[Any, ...]]:
        if self._conn is None or self._conn.closed or self._conn.broken:
            from agent_memory.stores.postgres import connect

            conn = connect(self._dsn)
            conn.isolation_level = self._psycopg.IsolationLevel.READ_COMMITTED
            try:
                self._on_connect(conn)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Cursor[tuple[Any, ...]]]:
        with self._lock:
            conn = self._connection()
            try:
                with conn.transaction(), conn.cursor() as cur:
                    yield cur
            except self._psycopg.Error as exc:
                raise self._error(exc) from None

    def _error(self, exc: Exception) -> StoreError:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        return StoreError(f"PostgreSQL failed: {detail}", path=self._where)

    def _lock_key(self) -> int:
        digest = hashlib.blake2b(f"{self.schema}\0{self.name}\0index".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big", signed=True)

    def _open_tables(self) -> None:
        """Create what is missing under an advisory lock; empty the tables when they hold another format.

        Tables that exist in this format are left alone, so a role with only table privileges
        (no ``CREATE`` on the database or schema, not the owner) can open the index.
        """
        meta = self._table("meta")
        with self._transaction() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key(),))
            cur.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (self.schema,))
            if cur.fetchone() is None:
                cur.execute(
                    self._sql("CREATE SCHEMA IF NOT EXISTS {s}", s=self._sqlmod.Identifier(self.schema))
                )
            existing = self._existing(cur)
            if f"{self.name}_meta" not in existing:
                cur.execute(self._sql(_META, meta=meta))
            cur.execute(self._sql("SELECT value FROM {m} WHERE key = 'format'", m=meta))
            row = cur.fetchone()
            if row is not None and row[0] != self._tag:
                for suffix in self._suffixes:
                    cur.execute(self._sql("DROP TABLE IF EXISTS {t}", t=self._table(suffix)))
                cur.execute(self._sql("DELETE FROM {m}", m=meta))
                existing = self._existing(cur)
            self._create(cur, existing)
            if row is None or row[0] != self._tag:
                cur.execute(
                    self._sql("INSERT INTO {m} (key, value) VALUES ('format', %s)", m=meta), (self._tag,)
                )

    def _existing(self, cur: Any) -> set[str]:
        """Return the names of this index's tables that exist."""
        names = [f"{self.name}_{suffix}" for suffix in ("meta", *self._suffixes)]
        cur.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relname = ANY(%s)",
            (self.schema, names),
        )
        return {str(row[0]) for row in cur.fetchall()}

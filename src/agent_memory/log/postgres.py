"""`PostgresLog`: the operation log as a table of a PostgreSQL schema, for memory on a server.

Schema: ``<schema>.oplog(seq bigint PRIMARY KEY, line bytea NOT NULL)``, beside the tables of a
:class:`~agent_memory.stores.postgres.PostgresStore` in the same schema (DESIGN.md §4 "log and
controls": "a table in the SQL stores"). ``line`` holds exactly the bytes
:class:`~agent_memory.log.jsonl.JsonlLog` writes to a month file and
:class:`~agent_memory.log.sqlite.SQLiteLog` to its table, so the same events give the same
lines and the same hash chain in every adapter (:mod:`agent_memory.log.chain` builds and
checks them).

Invariants:

- An append is one transaction that first takes a transaction-scoped advisory lock on the
  log (``pg_advisory_xact_lock``), then reads the head and inserts the next row. Under READ
  COMMITTED the head read after the lock sees every append committed before it, so writers
  in any number of processes and machines never fork the chain; the primary key on ``seq``
  backs this up. A lock not granted within ``timeout`` seconds is a ``LogError``.
- :meth:`PostgresLog.verify` reads the whole table in one REPEATABLE READ, READ ONLY
  transaction through a server-side cursor: one consistent snapshot, constant memory.
- Reading never repairs; a row that is not an entry, or whose key is not its entry's
  ``seq``, is a ``LogError`` naming ``postgresql:<schema>`` and ``oplog seq N``.
- The table and schema are created on open (under an advisory lock); an ``oplog`` table of
  another shape is refused before anything is written.

This adapter needs the ``postgres`` extra (psycopg 3), so :mod:`agent_memory.log` does not
import it: ``from agent_memory.log.postgres import PostgresLog``.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

try:
    import psycopg
    from psycopg import sql
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ImportError("PostgresLog needs psycopg 3: pip install 'agent-memory[postgres]'") from exc

from agent_memory.errors import LogError, StoreError
from agent_memory.log.base import LogEntry
from agent_memory.log.chain import PAGE, ChainCheck, ChainedLog, paged_entries, read_entry
from agent_memory.stores.postgres import connect

__all__ = ["PostgresLog"]

_Connection = psycopg.Connection[tuple[Any, ...]]
_Cursor = psycopg.Cursor[tuple[Any, ...]]
_SCHEMA_NAME = re.compile(r"\A[a-z_][a-z0-9_]{0,62}\Z")
_SHAPE = [("seq", "bigint"), ("line", "bytea")]
_STATEMENTS = {
    "ddl": "CREATE SCHEMA IF NOT EXISTS {s};"
    " CREATE TABLE IF NOT EXISTS {s}.oplog (seq bigint PRIMARY KEY CHECK (seq >= 1), line bytea NOT NULL)",
    "lock": "SELECT pg_advisory_xact_lock(%s)",
    "head": "SELECT seq, line FROM {s}.oplog ORDER BY seq DESC LIMIT 1",
    "insert": "INSERT INTO {s}.oplog (seq, line) VALUES (%s, %s)",
    "page": "SELECT seq, line FROM {s}.oplog WHERE seq >= %s ORDER BY seq LIMIT %s",
    "all": "SELECT seq, line FROM {s}.oplog ORDER BY seq",
}


class PostgresLog(ChainedLog):
    """An operation log in the ``oplog`` table of a PostgreSQL schema; safe with concurrent writers.

    Implements :class:`~agent_memory.log.base.OperationLog`. One connection per object, used by
    one thread at a time (a lock serialises them); it is reopened after it breaks. Use it as a
    context manager, or call :meth:`close`.

    Args:
        dsn: A libpq connection string (see :func:`agent_memory.stores.postgres.connect`).
        schema: The schema holding the table (created when absent): lower-case letters,
            digits and ``_``, at most 63 characters; by default the store's.
        timeout: Seconds an append waits for another writer's lock before giving up.

    Raises:
        LogError: The schema name is refused, the server cannot be reached (the message names
            host, port, database and user, never a password), or the schema holds an
            ``oplog`` table of another shape.
    """

    def __init__(self, dsn: str, *, schema: str = "agent_memory", timeout: float = 30.0) -> None:
        if not isinstance(schema, str) or not _SCHEMA_NAME.match(schema):
            raise LogError(f"refused schema name {schema!r}: lower-case letters, digits and _ only")
        self._dsn = dsn
        self.schema = schema
        self.path = f"postgresql:{schema}"
        self._timeout_ms = max(1, int(timeout * 1000))
        self._lock = threading.RLock()
        self._conn: _Connection | None = None
        self._q = {name: sql.SQL(text).format(s=sql.Identifier(schema)) for name, text in _STATEMENTS.items()}
        digest = hashlib.blake2b(f"{schema}\0oplog".encode(), digest_size=8).digest()
        self._lock_key = int.from_bytes(digest, "big", signed=True)
        try:
            self._create_table()
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"<PostgresLog {self.path!r}>"

    def __enter__(self) -> PostgresLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection; a later call reopens it."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _append_after(self, make: Callable[[LogEntry | None], LogEntry]) -> LogEntry:
        """Store the entry after the head as the next row (:class:`.ChainedLog`).

        Raises:
            LogError: A malformed argument, record content in ``details``, an unreadable head
                row, a lock not granted within the timeout, or a server failure; the
                transaction is rolled back and nothing is appended.
        """
        with self._transaction("cannot append") as cur:
            cur.execute(sql.SQL("SET LOCAL lock_timeout = {}").format(sql.Literal(f"{self._timeout_ms}ms")))
            cur.execute(self._q["lock"], (self._lock_key,))
            head = self._head(cur)
            entry = make(head)
            cur.execute(self._q["insert"], (entry.seq, entry.line))
        return entry

    def entries(self, *, since_seq: int = 0) -> Iterator[LogEntry]:
        """Yield the entries with ``seq > since_seq``, oldest first, a page of rows at a time.

        The lock is not held between pages, so the caller may append while iterating.

        Raises:
            LogError: A row is not an entry, its key is not its seq, or a seq is missing.
        """
        yield from paged_entries(self._page, self._entry, since_seq, path=self.path)

    def _page(self, start: int) -> list[tuple[int, Any]]:
        return self._fetch(self._q["page"], (start, PAGE))

    def last(self) -> LogEntry | None:
        """Return the entry of the highest seq, or ``None`` for an empty log (one round trip).

        Raises:
            LogError: That row is not an entry, or the server failed.
        """
        rows = self._fetch(self._q["head"])
        return None if not rows else self._entry(rows[0][0], rows[0][1])

    def verify(self, *, expect_head: tuple[int, str] | None = None) -> int:
        """Check every row and the whole chain in one snapshot; return the entry count.

        Raises:
            LogError: Naming ``postgresql:<schema>`` and the row's seq: damage, a broken
                chain, a row stored under another seq, or a head that differs from
                ``expect_head``; or the server failed.
        """
        check = ChainCheck(expect_head)
        with self._transaction("cannot read") as cur:
            cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            conn = cur.connection
            with conn.cursor(name="agent_memory_oplog_verify") as rows:
                rows.execute(self._q["all"])
                for row_seq, line in rows:
                    where = f"oplog seq {row_seq}"
                    check.add(_blob(line, self.path, row_seq), path=self.path, where=where, row_seq=row_seq)
        return check.finish(path=self.path)

    # ------------------------------------------------------------------ internals

    def _connection(self) -> _Connection:
        if self._conn is None or self._conn.closed or self._conn.broken:
            try:
                self._conn = connect(self._dsn)
            except StoreError as exc:
                raise LogError(exc.detail, path=self.path, hint=exc.hint) from None
            # The head read after the advisory lock must see what committed before it.
            self._conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
        return self._conn

    @contextmanager
    def _transaction(self, what: str) -> Iterator[_Cursor]:
        with self._lock:
            conn = self._connection()
            try:
                with conn.transaction(), conn.cursor() as cur:
                    yield cur
            except psycopg.Error as exc:
                detail = " ".join(str(exc).split()) or type(exc).__name__
                raise LogError(f"{what}: {detail}", path=self.path) from None

    def _fetch(self, statement: Any, params: Any = None) -> list[tuple[Any, ...]]:
        """Return the rows of one read-only statement, run alone: one round trip, no ``BEGIN``/``COMMIT``."""
        with self._lock:
            conn = self._connection()
            try:
                with conn.cursor() as cur:
                    cur.execute(statement, params)
                    return cur.fetchall()
            except psycopg.Error as exc:
                detail = " ".join(str(exc).split()) or type(exc).__name__
                raise LogError(f"cannot read: {detail}", path=self.path) from None

    def _create_table(self) -> None:
        with self._transaction("cannot prepare the oplog table") as cur:
            cur.execute(self._q["lock"], (self._lock_key,))
            cur.execute("SELECT to_regclass(%s)", (f"{self.schema}.oplog",))
            if (cur.fetchone() or (None,))[0] is None:
                cur.execute(self._q["ddl"])
            cur.execute(
                "SELECT column_name, data_type FROM information_schema.columns"
                " WHERE table_schema = %s AND table_name = 'oplog' ORDER BY ordinal_position",
                (self.schema,),
            )
            columns = [(str(name), str(kind)) for name, kind in cur.fetchall()]
        if columns != _SHAPE:
            raise LogError(
                f"the oplog table has columns {columns}, not (seq bigint, line bytea)", path=self.path
            )

    def _head(self, cur: _Cursor) -> LogEntry | None:
        cur.execute(self._q["head"])
        row = cur.fetchone()
        return None if row is None else self._entry(row[0], row[1])

    def _entry(self, row_seq: int, line: Any) -> LogEntry:
        where = f"oplog seq {row_seq}"
        entry = read_entry(_blob(line, self.path, row_seq), path=self.path, where=where)
        if entry.seq != row_seq:
            raise LogError(
                f"row key {row_seq} holds the entry of seq {entry.seq}", path=self.path, field=where
            )
        return entry


def _blob(line: Any, path: str, row_seq: int) -> bytes:
    if isinstance(line, memoryview):
        line = line.tobytes()
    if not isinstance(line, bytes):
        raise LogError(f"line is a {type(line).__name__}, not bytea", path=path, field=f"oplog seq {row_seq}")
    return line

"""`SQLiteLog`: the operation log as a table, for SQL-backed Homes (DESIGN.md §4 "log and controls").

Schema: ``oplog(seq INTEGER PRIMARY KEY, line BLOB NOT NULL)``. ``line`` holds exactly the
bytes :class:`~agent_memory.log.jsonl.JsonlLog` writes to a month file (without the
newline), so the same events give the same lines and the same hash chain in both adapters,
and a log can move between them line by line.

Invariants:

- An append runs in one ``BEGIN IMMEDIATE`` transaction: it reads the head and inserts the
  next row while holding SQLite's write lock, so processes and threads never fork the
  chain; a busy database is waited for (``timeout``), then reported as a ``LogError``.
- WAL journal with ``synchronous=FULL``: a committed append survives a power cut, and
  readers never block the writer.
- One connection per ``SQLiteLog``, shared by threads under a lock; open one ``SQLiteLog``
  per process (a connection must not cross ``fork``).
- Reading never repairs; a row that is not an entry, or whose key is not its entry's
  ``seq``, is a ``LogError`` naming the database and the row's seq.

The table can live in its own file or beside other tables of a store's database; this
module opens its own connection either way and touches no other table.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from typing import Any

from agent_memory.errors import LogError
from agent_memory.log.base import LogEntry
from agent_memory.log.chain import PAGE, ChainCheck, ChainedLog, paged_entries, read_entry
from agent_memory.stores.sqlite_file import SharedConnection, connect, use_wal

__all__ = ["SCHEMA", "SQLiteLog"]

SCHEMA = "CREATE TABLE IF NOT EXISTS oplog (seq INTEGER PRIMARY KEY, line BLOB NOT NULL)"


class SQLiteLog(SharedConnection, ChainedLog):
    """An operation log in the ``oplog`` table of a SQLite database; thread- and process-safe.

    Implements :class:`~agent_memory.log.base.OperationLog`. Use it as a context manager,
    or call :meth:`close`.

    Args:
        path: The database file (created if missing), or ``":memory:"``.
        timeout: Seconds to wait for another writer's lock before giving up.

    Raises:
        LogError: The database cannot be opened, or holds an ``oplog`` table of another shape.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        self.path = os.fspath(path)
        self._lock = threading.RLock()
        self._known: LogEntry | None = None  # the head as last read or appended
        try:
            self._conn = connect(self.path, timeout_seconds=timeout)
        except sqlite3.Error as exc:
            raise LogError(f"cannot open the database: {exc}", path=self.path) from None
        try:
            use_wal(self._conn, synchronous="FULL", timeout_seconds=timeout)
            self._conn.execute(SCHEMA)
            columns = [(row[1], row[2].upper()) for row in self._conn.execute("PRAGMA table_info(oplog)")]
        except sqlite3.Error as exc:
            self._conn.close()
            raise LogError(f"cannot prepare the oplog table: {exc}", path=self.path) from None
        if columns != [("seq", "INTEGER"), ("line", "BLOB")]:
            self._conn.close()
            raise LogError(
                f"the oplog table has columns {columns}, not (seq INTEGER, line BLOB)", path=self.path
            )

    def __repr__(self) -> str:
        return f"<SQLiteLog {self.path!r}>"

    def _append_after(self, make: Callable[[LogEntry | None], LogEntry]) -> LogEntry:
        """Store the entry after the head as the next row (:class:`.ChainedLog`).

        Raises:
            LogError: A malformed argument, record content in ``details``, an unreadable
                head row, or a database failure (busy past the timeout, disk full); the
                transaction is rolled back and nothing is appended.
        """
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    head = self._head()
                    entry = make(head)
                    self._conn.execute("INSERT INTO oplog (seq, line) VALUES (?, ?)", (entry.seq, entry.line))
                    self._conn.execute("COMMIT")
                    self._known = entry
                except BaseException:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise LogError(f"cannot append: {exc}", path=self.path) from None
        return entry

    def entries(self, *, since_seq: int = 0) -> Iterator[LogEntry]:
        """Yield the entries with ``seq > since_seq``, oldest first, a page of rows at a time.

        The lock is not held between pages, so the caller may append while iterating.

        Raises:
            LogError: A row is not an entry, its key is not its seq, or a seq is missing.
        """
        sql = "SELECT seq, line FROM oplog WHERE seq >= ? ORDER BY seq LIMIT ?"
        yield from paged_entries(
            lambda start: self._select(sql, start), self._entry, since_seq, path=self.path
        )

    def last(self) -> LogEntry | None:
        """Return the entry of the highest seq, or ``None`` for an empty log.

        Raises:
            LogError: That row is not an entry, or the database cannot be read.
        """
        with self._lock:
            try:
                return self._head()
            except sqlite3.Error as exc:
                raise LogError(f"cannot read: {exc}", path=self.path) from None

    def verify(self, *, expect_head: tuple[int, str] | None = None) -> int:
        """Check every row and the whole chain in one read transaction; return the entry count.

        Raises:
            LogError: Naming the database and the row's seq: damage, a broken chain, a row
                stored under another seq, or a head that differs from ``expect_head``.
        """
        check = ChainCheck(expect_head)
        with self._lock:
            try:
                self._conn.execute("BEGIN")
                try:
                    for row_seq, line in self._conn.execute("SELECT seq, line FROM oplog ORDER BY seq"):
                        check.add(
                            _blob(line, self.path, row_seq),
                            path=self.path,
                            where=f"oplog seq {row_seq}",
                            row_seq=row_seq,
                        )
                finally:
                    self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise LogError(f"cannot read: {exc}", path=self.path) from None
        return check.finish(path=self.path)

    # ------------------------------------------------------------------ internals

    def _select(self, sql: str, start: int) -> list[tuple[int, Any]]:
        with self._lock:
            try:
                return list(self._conn.execute(sql, (start, PAGE)))
            except sqlite3.Error as exc:
                raise LogError(f"cannot read: {exc}", path=self.path) from None

    def _head(self) -> LogEntry | None:
        row = self._conn.execute("SELECT seq, line FROM oplog ORDER BY seq DESC LIMIT 1").fetchone()
        if row is None:
            return None
        known = self._known
        if known is not None and known.seq == row[0] and known.line == row[1]:
            return known  # the same bytes under the same key: parsed already (a batch's line is long)
        self._known = self._entry(row[0], row[1])
        return self._known

    def _entry(self, row_seq: int, line: Any) -> LogEntry:
        where = f"oplog seq {row_seq}"
        entry = read_entry(_blob(line, self.path, row_seq), path=self.path, where=where)
        if entry.seq != row_seq:
            raise LogError(
                f"row key {row_seq} holds the entry of seq {entry.seq}", path=self.path, field=where
            )
        return entry


def _blob(line: Any, path: str, row_seq: int) -> bytes:
    if not isinstance(line, bytes):
        raise LogError(
            f"line is a {type(line).__name__}, not a BLOB", path=path, field=f"oplog seq {row_seq}"
        )
    return line

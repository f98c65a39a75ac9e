"""One SQLite connection shared by every thread of an object, and how such objects close.

The SQLite store, the SQLite operation log and the FTS5 and vector indexes each hold one
connection in autocommit mode (they issue ``BEGIN IMMEDIATE`` themselves), guarded by a
re-entrant lock so threads never interleave statements. This module keeps that shape in
one place.
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Self

__all__ = ["SharedConnection", "connect", "is_busy", "rolled_back", "use_wal"]


def connect(path: str, *, timeout_seconds: float) -> sqlite3.Connection:
    """Open ``path`` (or ``":memory:"``) for use from any thread, in autocommit mode.

    Args:
        path: The database file, created if absent.
        timeout_seconds: How long a statement waits for another process's lock.

    Raises:
        sqlite3.Error: The file cannot be opened.
    """
    return sqlite3.connect(path, timeout=timeout_seconds, isolation_level=None, check_same_thread=False)


def is_busy(exc: sqlite3.DatabaseError) -> bool:
    """Whether ``exc`` says another connection holds a lock (``SQLITE_BUSY`` or ``SQLITE_LOCKED``)."""
    return getattr(exc, "sqlite_errorname", "") in {"SQLITE_BUSY", "SQLITE_LOCKED"}


def use_wal(conn: sqlite3.Connection, *, synchronous: str, timeout_seconds: float) -> None:
    """Put the database of ``conn`` in WAL mode and set its ``synchronous`` level (``NORMAL``, ``FULL``).

    Turning a new file to WAL takes an exclusive lock, and SQLite answers "database is locked"
    at once, without waiting out the busy timeout, when another process is opening the same
    new file (each holds a shared lock and wants the exclusive one). So the switch is tried
    again after a short random pause, for up to ``timeout_seconds`` seconds; a file already in
    WAL mode needs no exclusive lock and passes at the first try.

    Raises:
        sqlite3.OperationalError: Still locked after ``timeout_seconds``, or any other error.
    """
    deadline = time.monotonic() + timeout_seconds
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
            break
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(random.uniform(0.001, 0.02))  # noqa: S311 - jitter, not secrecy
    conn.execute(f"PRAGMA synchronous = {synchronous}")


@contextmanager
def rolled_back(conn: sqlite3.Connection, name: str) -> Iterator[None]:
    """Run the block inside the savepoint ``name``, then undo everything it wrote, even on error.

    For scratch work in ``temp`` tables (FTS5 cutting a text into tokens, a query's candidates
    copied for a closer look): the tables are empty again when the block ends, and nothing
    reaches a file.
    """
    conn.execute(f"SAVEPOINT {name}")
    try:
        yield
    finally:
        conn.execute(f"ROLLBACK TO {name}")
        conn.execute(f"RELEASE {name}")


class SharedConnection:
    """Mixin for an object holding one connection in ``_conn`` under the lock ``_lock``.

    Gives it ``close()`` and use as a context manager; after ``close()`` the object cannot be
    used.
    """

    _conn: sqlite3.Connection
    _lock: threading.RLock

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection; the object cannot be used afterwards."""
        with self._lock:
            self._conn.close()

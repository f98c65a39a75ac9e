"""One SQLite connection shared by every thread of an object, and how such objects close.

The SQLite store, the SQLite operation log and the FTS5 and vector indexes each hold one
connection in autocommit mode (they issue ``BEGIN IMMEDIATE`` themselves), guarded by a
re-entrant lock so threads never interleave statements. This module keeps that shape in
one place.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Self

__all__ = ["SharedConnection", "connect", "rolled_back"]


def connect(path: str, *, timeout_seconds: float) -> sqlite3.Connection:
    """Open ``path`` (or ``":memory:"``) for use from any thread, in autocommit mode.

    Args:
        path: The database file, created if absent.
        timeout_seconds: How long a statement waits for another process's lock.

    Raises:
        sqlite3.Error: The file cannot be opened.
    """
    return sqlite3.connect(path, timeout=timeout_seconds, isolation_level=None, check_same_thread=False)


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

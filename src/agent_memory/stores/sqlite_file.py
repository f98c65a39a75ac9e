"""One SQLite connection shared by every thread of an object, and how such objects close.

The SQLite store, the SQLite operation log and the FTS5 and vector indexes each hold one
connection in autocommit mode (they issue ``BEGIN IMMEDIATE`` themselves), guarded by a
re-entrant lock so threads never interleave statements. This module keeps that shape in
one place.
"""

from __future__ import annotations

import sqlite3
import threading
from types import TracebackType
from typing import Self

__all__ = ["SharedConnection", "connect"]


def connect(path: str, *, timeout_seconds: float) -> sqlite3.Connection:
    """Open ``path`` (or ``":memory:"``) for use from any thread, in autocommit mode.

    Args:
        path: The database file, created if absent.
        timeout_seconds: How long a statement waits for another process's lock.

    Raises:
        sqlite3.Error: The file cannot be opened.
    """
    return sqlite3.connect(path, timeout=timeout_seconds, isolation_level=None, check_same_thread=False)


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

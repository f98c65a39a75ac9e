"""`Ledger`: what each index of a Home holds, and the files that describe an index folder.

The ledger is ``.cache/indexes/state.sqlite`` (one table, WAL), beside the index folders.
For every index that holds data and every record it has seen it keeps:

- ``token``: the store's cheap version token when the record was last read (for a file
  store the latest note file's name, size and change time: a ``stat``, not a read);
- ``version``: the version digest the index holds for it, or ``NULL`` when the record was
  read but is not indexed (unreadable, or an erasure tombstone).

Invariant: a row is written after the index holds what it says, so a crash in between
only makes a record look changed (it is read again), never fresh when it is not. Rows are
updated per batch in one transaction, so several processes sharing a Home see each other's
work without rewriting a large file. Everything here is a cache: a damaged ledger is
replaced by an empty one, which means "read every record again".

The folder helpers write ``recipe.json`` and ``inputs.json`` atomically (temp file and
``os.replace``) and empty a folder for a rebuild.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["Held", "Ledger", "empty_folder", "read_json", "write_json"]

Held = dict[str, tuple[str, str | None]]
"""``{record id: (version token, version digest or None)}`` for one index."""

_log = logging.getLogger(__name__)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS held (
    leaf TEXT NOT NULL,
    record_id TEXT NOT NULL,
    token TEXT NOT NULL,
    version TEXT,
    PRIMARY KEY (leaf, record_id)
) STRICT, WITHOUT ROWID
"""


class Ledger:
    """The per-index record of tokens and versions (module docstring), in SQLite or in memory.

    Args:
        path: ``state.sqlite``, created if absent; ``None`` keeps nothing (in-memory catalogs).
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        if path is not None:
            self._conn = self._connect(path)

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        for attempt in (1, 2):
            conn = sqlite3.connect(path, timeout=5.0, isolation_level=None, check_same_thread=False)
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute(_SCHEMA)
                return conn
            except sqlite3.DatabaseError as exc:
                conn.close()
                if attempt == 2 or isinstance(exc, sqlite3.OperationalError):
                    raise
                # A derived file: any damage means "read every record again".
                _log.warning("index ledger %s is damaged (%s); starting a new one", path, exc)
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
        raise AssertionError("unreachable")  # pragma: no cover

    def load(self, leaf: str) -> Held:
        """Return what ``leaf`` holds, by record id (empty for a new index)."""
        if self._conn is None:
            return {}
        rows = self._conn.execute("SELECT record_id, token, version FROM held WHERE leaf = ?", (leaf,))
        return {record_id: (token, version) for record_id, token, version in rows}

    def update(self, leaf: str, held: Mapping[str, tuple[str, str | None]], dropped: Iterable[str]) -> None:
        """Record new ``(token, version)`` pairs of ``leaf`` and forget ``dropped``, in one transaction."""
        if self._conn is None:
            return
        gone = [(leaf, record_id) for record_id in dropped]
        rows = [(leaf, record_id, token, version) for record_id, (token, version) in held.items()]
        if not gone and not rows:
            return
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.executemany("DELETE FROM held WHERE leaf = ? AND record_id = ?", gone)
            self._conn.executemany("INSERT OR REPLACE INTO held VALUES (?, ?, ?, ?)", rows)
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    def forget(self, leaf: str) -> None:
        """Forget everything ``leaf`` held (its index is being rebuilt)."""
        if self._conn is not None:
            self._conn.execute("DELETE FROM held WHERE leaf = ?", (leaf,))

    def close(self) -> None:
        """Close the database."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def read_json(path: Path) -> Any:
    """Return the JSON in ``path``, or ``None`` when it is absent or unreadable (a cache file)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_json(path: Path, value: Any) -> None:
    """Write ``value`` as indented JSON to ``path`` atomically (temp file, then ``os.replace``)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temp, path)


def empty_folder(folder: Path) -> None:
    """Delete every file in ``folder`` (an index being rebuilt); sub-folders are left alone."""
    if not folder.is_dir():
        return
    for entry in folder.iterdir():
        if entry.is_file() or entry.is_symlink():
            entry.unlink(missing_ok=True)

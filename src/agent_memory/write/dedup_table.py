"""`KeyTable`: the SQLite table behind :class:`~agent_memory.write.dedup.WriteKeys`, a derived cache.

One row per record id the table knows: the SHA-256 digests of its dedup key and subject key
(``NULL`` unless the record is live), its creation time in microseconds (latest wins), the
store's version token when it was read (change-feed stores only) and whether it could not be
read. ``meta`` holds the XOR of every id the table knows, kept in step by each change in the
same transaction, so the set can be compared with a store's listing without loading it.

Invariants:

- Every change is one ``BEGIN IMMEDIATE`` transaction: processes sharing a Home's
  ``.cache/write-keys.sqlite`` never see half an update, and the id XOR always matches the rows.
- A file that is not this format's database (damaged, truncated, another program's, made for
  another store) is deleted and made again, empty; a file that stays locked or cannot be made
  gives way to a table in memory. Nothing here is ever truth: an empty table only costs a read.
- ``secure_delete`` is on and an erasure checkpoints the WAL, so a digest dropped from a row
  leaves no copy in free pages.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from agent_memory.stores.sqlite_file import connect, is_busy, use_wal

__all__ = ["FORMAT", "KeyTable", "Row"]

FORMAT = 1
"""``PRAGMA user_version`` of the file; any other value means "make it again"."""

Row = tuple[str, str | None, str | None, int, str | None, int]
"""``(record id, body digest, subject digest, created µs, version token, unread 0/1)``."""

_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE keys (id TEXT PRIMARY KEY, body TEXT, subject TEXT, created INTEGER NOT NULL,"
    " token TEXT, unread INTEGER NOT NULL DEFAULT 0)",
    "CREATE INDEX keys_body ON keys (body) WHERE body IS NOT NULL",
    "CREATE INDEX keys_subject ON keys (subject) WHERE subject IS NOT NULL",
    "CREATE INDEX keys_unread ON keys (unread) WHERE unread = 1",
)
_FIND = {
    "body": "SELECT id FROM keys WHERE body = ? ORDER BY created DESC, id DESC",
    "subject": "SELECT id FROM keys WHERE subject = ? ORDER BY created DESC, id DESC",
}
_log = logging.getLogger(__name__)


class KeyTable:
    """The rows of :class:`~agent_memory.write.dedup.WriteKeys` (module docstring); not thread-safe.

    Args:
        path: The cache file, created if absent; ``None`` keeps the table in memory.
        identity: Names what the rows derive from (the store's kind and place); a file made
            for another identity is made again.

    Attributes:
        path: The file in use, or ``None`` once the table lives in memory.
    """

    def __init__(self, path: Path | None, identity: str) -> None:
        self.path = path
        self._identity = identity
        self._conn = self._open()

    # ------------------------------------------------------------------ reads

    def find(self, column: str, digest: str) -> list[str]:
        """Return the ids whose ``column`` (``body`` or ``subject``) is ``digest``, latest first."""
        return [record_id for (record_id,) in self._conn.execute(_FIND[column], (digest,)).fetchall()]

    def ids(self, *, unread: bool = False) -> set[str]:
        """Return every id the table knows (only those marked unreadable, if ``unread``)."""
        query = "SELECT id FROM keys WHERE unread = 1" if unread else "SELECT id FROM keys"
        return {record_id for (record_id,) in self._conn.execute(query)}

    def tokens(self) -> dict[str, str | None]:
        """Return the version token of every id the table knows (``None`` when not known)."""
        return dict(self._conn.execute("SELECT id, token FROM keys").fetchall())

    def token(self, record_id: str) -> str | None:
        """Return the version token held for ``record_id``, or ``None``."""
        row = self._conn.execute("SELECT token FROM keys WHERE id = ?", (record_id,)).fetchone()
        return str(row[0]) if row and row[0] is not None else None

    def xor(self) -> int:
        """Return the XOR of every id the table knows, as an integer of the ids' hex digits."""
        return int(self.meta("ids") or "0", 16)

    def meta(self, key: str) -> str | None:
        """Return a bookkeeping value (``mark``, ``removals``), or ``None``."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    # ------------------------------------------------------------------ changes

    def store(self, rows: Sequence[Row], unread: Sequence[str] = (), gone: Sequence[str] = ()) -> None:
        """Upsert ``rows``, mark ``unread`` (no digests), drop ``gone``: one transaction, XOR kept."""
        if not (rows or unread or gone):
            return
        with _Transaction(self._conn):
            delta = 0
            for record_id in [row[0] for row in rows] + list(unread):
                if self._conn.execute("SELECT 1 FROM keys WHERE id = ?", (record_id,)).fetchone() is None:
                    delta ^= id_int(record_id)
            for record_id in gone:
                if self._conn.execute("DELETE FROM keys WHERE id = ?", (record_id,)).rowcount:
                    delta ^= id_int(record_id)
            self._conn.executemany("INSERT OR REPLACE INTO keys VALUES (?, ?, ?, ?, ?, ?)", rows)
            self._conn.executemany(
                "INSERT INTO keys VALUES (?, NULL, NULL, 0, NULL, 1) ON CONFLICT(id) DO UPDATE SET"
                " body = NULL, subject = NULL, token = NULL, unread = 1",
                [(record_id,) for record_id in unread],
            )
            if delta:
                self._set_meta({"ids": format(self.xor() ^ delta, "x")})

    def replace(self, rows: Iterable[Row]) -> None:
        """Make ``rows`` the whole table, in one transaction."""
        rows = list(rows)
        with _Transaction(self._conn):
            self._conn.execute("DELETE FROM keys")
            self._conn.executemany("INSERT INTO keys VALUES (?, ?, ?, ?, ?, ?)", rows)
            total = 0
            for row in rows:
                total ^= id_int(row[0])
            self._set_meta({"ids": format(total, "x")})

    def set_meta(self, values: dict[str, str]) -> None:
        """Set bookkeeping values, in one transaction."""
        with _Transaction(self._conn):
            self._set_meta(values)

    def checkpoint(self) -> None:
        """Move the WAL into the file and empty it (after an erasure: no old page stays behind)."""
        if self.path is not None:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def reset(self, exc: sqlite3.DatabaseError) -> None:
        """Throw the table away after ``exc`` (unless the file was only locked) and start empty."""
        _log.warning("write keys: %s failed (%s); starting again", self.path or "the table in memory", exc)
        self._conn.close()
        if self.path is not None and not is_busy(exc) and not isinstance(exc, sqlite3.ProgrammingError):
            _unlink(self.path)  # damaged; a closed connection or a lock is no damage
        self._conn = self._open()

    def close(self) -> None:
        """Close the database."""
        self._conn.close()

    # ------------------------------------------------------------------ internals

    def _set_meta(self, values: dict[str, str]) -> None:
        self._conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(values.items()))

    def _open(self) -> sqlite3.Connection:
        if self.path is None:
            memory = _connect(":memory:")
            with _Transaction(memory):
                self._create(memory)
            return memory
        for attempt in (1, 2):
            conn: sqlite3.Connection | None = None
            try:
                conn = _connect(str(self.path))
                with _Transaction(conn):
                    self._check(conn)
                return conn
            except sqlite3.DatabaseError as exc:
                if conn is not None:
                    conn.close()
                if is_busy(exc) or attempt == 2:
                    _log.warning("write keys: cannot use %s (%s); keeping them in memory", self.path, exc)
                    self.path = None
                    return self._open()
                _log.warning("write keys: %s is damaged or outdated (%s); making it again", self.path, exc)
                _unlink(self.path)
        raise AssertionError("unreachable")  # pragma: no cover

    def _check(self, conn: sqlite3.Connection) -> None:
        """Create the schema in a new file, or check an existing file's format and identity."""
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
            self._create(conn)
        elif version != FORMAT:
            raise sqlite3.DatabaseError(f"format {version}, not {FORMAT}")
        conn.execute("SELECT id, body, subject, created, token, unread FROM keys LIMIT 1").fetchall()
        identity = conn.execute("SELECT value FROM meta WHERE key = 'identity'").fetchone()
        if identity is None or identity[0] != self._identity:
            raise sqlite3.DatabaseError("made for another store")

    def _create(self, conn: sqlite3.Connection) -> None:
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute("INSERT INTO meta VALUES ('identity', ?)", (self._identity,))
        conn.execute(f"PRAGMA user_version = {FORMAT}")


class _Transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, or ``ROLLBACK`` on any error (autocommit connections)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is None:
            self.conn.execute("COMMIT")
        elif self.conn.in_transaction:
            self.conn.execute("ROLLBACK")


def id_int(record_id: str) -> int:
    """Return a record id's 32 hex digits as an integer (ids are content addresses, so XOR mixes well)."""
    return int(record_id.removeprefix("mem:"), 16)


def _connect(path: str) -> sqlite3.Connection:
    conn = connect(path, timeout_seconds=30.0)
    conn.execute("PRAGMA secure_delete = ON")
    if path != ":memory:":
        # A cache: a commit need not reach the disk (a lost one is found again by the next listing).
        use_wal(conn, synchronous="NORMAL", timeout_seconds=30.0)
    return conn


def _unlink(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)

"""`SQLiteStore`: record versions in one SQLite database (stdlib ``sqlite3``, WAL).

Schema (seed 001 stores, origin-notes §1.16, DESIGN.md §4)::

    versions(record_id, version, payload)      every version; payload = the canonical JSON bytes
    records(record_id, version, state, type,   the latest version's number and the list filters;
            kind, subject, namespace,          kind and namespace hold the effective values,
            created_at)                        created_at in integer milliseconds since the epoch
    record_tags(record_id, tag)                the latest version's tags
    changes(counter, removals)                 one row: the change counter (schema 2)

Schema 2 adds ``records.change`` (the counter value of the record's last write) and the
triggers that keep it: every insert or update of a ``records`` row and every update of a
``versions`` row (an erasure, or a tool editing the file) takes the next counter value in
the same transaction; a deleted row bumps ``removals``. A schema-1 file is upgraded on open.

Invariants:

- A payload is exactly ``record.canonical_bytes()``, so a signed record reads back to the
  bytes its signature covers. ``versions`` rows are appended and never updated, except by
  :meth:`erase`; ``records`` and ``record_tags`` are an index of the latest versions.
- Every write is one ``BEGIN IMMEDIATE`` transaction that re-reads the latest version and
  runs :func:`check_next_version` inside it, so concurrent writers (threads or processes)
  serialise and none loses a version; a busy database is waited for (``busy_timeout``) and
  retried.
- :meth:`list` filters in SQL and agrees with :func:`filter_records`, in its order
  ``(created_at, id)``.
- Writers serialise (``BEGIN IMMEDIATE``), so change numbers commit in order and
  :meth:`changes_since` never misses a write of any process.
- After :meth:`erase` no erased byte remains in the database, its ``-wal`` or ``-shm``:
  ``secure_delete`` zeroes freed content, then a WAL checkpoint (TRUNCATE) and ``VACUUM``.
- Decoded versions are kept in a :class:`~agent_memory.stores.base.RecordCache` keyed by
  their exact bytes, so a row is parsed once per process while it is unchanged.
"""

from __future__ import annotations

import builtins
import json
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar, Unpack

from agent_memory.errors import AgentMemoryError, RecordNotFound, StoreError
from agent_memory.records.record import MemoryRecord
from agent_memory.records.wire import loads_json, utc_now
from agent_memory.stores.base import (
    Changes,
    ListFilters,
    RecordCache,
    chain_batch,
    check_erased_history,
    check_record_id,
    prepare_batch,
)
from agent_memory.stores.sqlite_file import SharedConnection, connect, use_wal
from agent_memory.stores.sqlite_sql import LATEST_OF_MANY, LIST_SELECT, SCHEMA, SCHEMA_VERSION, TRIGGERS

__all__ = ["SQLiteStore"]

_HINT = "run agent-memory doctor"
_BUSY_TIMEOUT_MS = 5000
_ATTEMPTS = 16  # each after a full busy_timeout wait, like the origin's store

_T = TypeVar("_T")
# Spelled here because inside the class body ``list`` names the port's method.
_Records = list[MemoryRecord]
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class SQLiteStore(SharedConnection):
    """Append-only record versions in a SQLite database (a :class:`RecordStore`).

    One connection is shared by all threads under a lock; other processes may open the same
    file at the same time. Close the store (or use it as a context manager) when done.

    Args:
        path: The database file, created if absent, or ``":memory:"`` (one private database
            per store).

    Raises:
        StoreError: The file cannot be opened as a database of this schema.
    """

    def __init__(self, path: str | os.PathLike[str] = ":memory:") -> None:
        self.path = os.fspath(path)
        self._lock = threading.RLock()
        self._cache = RecordCache()
        try:
            self._conn = connect(self.path, timeout_seconds=_BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the database: {exc}", path=self.path) from exc
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            self._conn.execute("PRAGMA secure_delete = ON")
            self._retrying(lambda: self._check_schema(self._conn))
            if self.path != ":memory:":  # waits out another process creating the file (use_wal)
                self._retrying(
                    lambda: use_wal(self._conn, synchronous="FULL", timeout_seconds=_BUSY_TIMEOUT_MS / 1000)
                )
            self._transaction(self._create_schema)
        except BaseException:
            self._conn.close()
            raise

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

    # ------------------------------------------------------------------ the port

    def put(self, record: MemoryRecord) -> int:
        """Append ``record`` as the next version of its id; return the version number (1-based).

        Raises:
            StoreError: The id is refused, the database stayed locked, or a stored version is unreadable.
            RecordError: An immutable field differs from the previous version.
            LifecycleError: The state change is not one of the seven legal moves.
        """
        return self.put_many([record])[0]

    def put_many(self, records: Iterable[MemoryRecord]) -> builtins.list[int]:
        """Append several versions in one transaction (all or none); return their version numbers.

        Every record gets the checks of :meth:`put`, in order, so a batch may hold several
        versions of one id. Faster than separate puts: one transaction, one fsync.

        Raises:
            StoreError, RecordError, LifecycleError: As for :meth:`put`; nothing is written.
        """
        batch = prepare_batch(records)  # a bad id or a tombstone fails before the lock

        def write(conn: sqlite3.Connection) -> builtins.list[int]:
            versions, heads = chain_batch(batch, self._latest_of(conn, {record.id for record, _ in batch}))
            conn.executemany(
                "INSERT INTO versions VALUES (?, ?, ?)", [(r.id, n, data) for r, n, data in versions]
            )
            self._index(conn, heads.values())
            return [number for _, number, _ in versions]

        return self._transaction(write)

    def get(self, record_id: str) -> MemoryRecord:
        """Return the latest version.

        Raises:
            RecordNotFound: No such record.
            StoreError: The id is refused, or the stored row is unreadable (database and version named).
        """
        _, record = self._latest(check_record_id(record_id))
        if record is None:
            raise RecordNotFound("no such record", record_id=record_id)
        return record

    def get_many(self, record_ids: Iterable[str]) -> dict[str, MemoryRecord]:
        """Return ``{id: latest version}`` of the stored ids among ``record_ids``, in one query.

        Ids not stored are left out; recall reads its candidates this way (issue 10).

        Raises:
            StoreError: An id is malformed, or a stored row is unreadable (record and version named).
        """
        ids = json.dumps(sorted({check_record_id(record_id) for record_id in record_ids}))
        return {row[0]: self._decode(*row) for row in self._query(LATEST_OF_MANY, (ids,))}

    def history(self, record_id: str) -> _Records:
        """Return every version, oldest first.

        Raises:
            RecordNotFound: No such record.
            StoreError: The id is refused, or a stored row is unreadable.
        """
        rows = self._query(
            "SELECT record_id, version, payload FROM versions WHERE record_id = ? ORDER BY version",
            (check_record_id(record_id),),
        )
        if not rows:
            raise RecordNotFound("no such record", record_id=record_id)
        return [self._decode(*row) for row in rows]

    def list(self, **filters: Unpack[ListFilters]) -> _Records:
        """Return the latest version of every matching record, by ``(created_at, id)``.

        Raises:
            StoreError: A stored row is unreadable.
        """
        where: builtins.list[str] = []
        params: builtins.list[str] = []
        for column, value in (
            ("state", filters.get("state")),
            ("type", filters.get("type")),
            ("kind", filters.get("kind")),
            ("subject", filters.get("subject")),
            ("namespace", filters.get("namespace")),
        ):
            if value is not None:
                where.append(f"r.{column} = ?")
                params.append(str(value))
        if (tag := filters.get("tag")) is not None:
            where.append("EXISTS (SELECT 1 FROM record_tags t WHERE t.record_id = r.record_id AND t.tag = ?)")
            params.append(tag)
        # Only fixed column names are spliced into the SQL; every value is bound.
        clause = "WHERE " + " AND ".join(where) if where else ""
        sql = " ".join((LIST_SELECT, clause, "ORDER BY r.created_at, r.record_id"))
        return [self._decode(*row) for row in self._query(sql, tuple(params))]

    def contains(self, record_id: str) -> bool:
        """Return whether the store holds any version of ``record_id``.

        Raises:
            StoreError: The id is refused.
        """
        rows = self._query("SELECT 1 FROM records WHERE record_id = ?", (check_record_id(record_id),))
        return bool(rows)

    # ------------------------------------------------------------------ beyond the port

    def erase(self, record_id: str, reason: str, *, now: datetime | None = None) -> MemoryRecord:
        """Replace every version's payload by the tombstone, then :meth:`purge`; return the tombstone.

        The tombstone is built from the latest version (seed 001 redaction, DESIGN.md §9);
        the version count is kept.

        Raises:
            RecordNotFound: No such record.
            RecordError: The record is already a tombstone, or ``reason`` is empty.
            StoreError: The id is refused, or the purge could not finish (the tombstone is
                written; call :meth:`purge` again once other connections are idle).
        """
        check_record_id(record_id)

        def write(conn: sqlite3.Connection) -> MemoryRecord:
            number, latest = self._latest(record_id)
            if latest is None:
                raise RecordNotFound("no such record", record_id=record_id)
            tombstone = latest.tombstone(reason, now=now if now is not None else utc_now())
            payload = tombstone.canonical_bytes()
            conn.execute("UPDATE versions SET payload = ? WHERE record_id = ?", (payload, record_id))
            self._index(conn, [(number, tombstone)])
            return tombstone

        tombstone = self._transaction(write)
        self._cache.clear()  # no erased content stays in this process's memory
        self.purge()
        return tombstone

    def restore_erased(self, history: Sequence[MemoryRecord]) -> int:
        """Store an erased record's history (copies of one tombstone) under an id not held yet.

        The counterpart of :meth:`erase` for ``agent-memory migrate``: a tombstone cannot be
        ``put``, yet an erasure must follow the records to their new store. One
        ``BEGIN IMMEDIATE`` transaction writes every version or none.

        Returns:
            The number of versions stored (``len(history)``).

        Raises:
            StoreError: ``history`` is not an erased history
                (:func:`~agent_memory.stores.base.check_erased_history`), the store already
                holds a version of that id, or the database failed; nothing is written.
        """
        tombstone = check_erased_history(history)
        payload = tombstone.canonical_bytes()

        def write(conn: sqlite3.Connection) -> int:
            if conn.execute("SELECT 1 FROM records WHERE record_id = ?", (tombstone.id,)).fetchone():
                raise StoreError("already holds this record; nothing restored", record_id=tombstone.id)
            rows = [(tombstone.id, number, payload) for number in range(1, len(history) + 1)]
            conn.executemany("INSERT INTO versions VALUES (?, ?, ?)", rows)
            self._index(conn, [(len(rows), tombstone)])
            return len(rows)

        return self._transaction(write)

    def version_tokens(self, record_ids: Iterable[str] | None = None) -> dict[str, str]:
        """Return ``"<version>:<change number>"`` per record (of ``record_ids``; absent ids left out).

        One query over ``records`` (no payload is read); the token moves with every write to
        the record, an erasure included (DESIGN.md §9 "Freshness").
        """
        if record_ids is None:
            rows = self._query("SELECT record_id, version, change FROM records", ())
        else:
            ids = json.dumps(sorted(set(record_ids)))
            rows = self._query(
                "SELECT record_id, version, change FROM records"
                " WHERE record_id IN (SELECT value FROM json_each(?))",
                (ids,),
            )
        return {record_id: f"{version}:{change}" for record_id, version, change in rows}

    def changes_since(self, mark: int) -> Changes:
        """Return the records written after ``mark`` (``-1``: every record) and the counter now.

        An unchanged store costs one read of the one-row counter, however many records it
        holds (issue 10); otherwise the records come from the index on ``records.change``.
        The counter is read first: a write committed between the two reads is reported now
        and again next time (its token unchanged, so nobody reads it twice), never missed.
        """
        counter, removals = self._query("SELECT counter, removals FROM changes", ())[0]
        if counter <= mark:  # unchanged (or restored from an older copy: the caller compares all)
            return Changes(counter, {}, removals)
        rows = self._query("SELECT record_id, version, change FROM records WHERE change > ?", (mark,))
        tokens = {record_id: f"{version}:{change}" for record_id, version, change in rows}
        return Changes(max([counter, *(change for _, _, change in rows)]), tokens, removals)

    def purge(self) -> None:
        """Leave no freed byte in the database files: WAL checkpoint (TRUNCATE), ``VACUUM``, checkpoint.

        Raises:
            StoreError: Another connection kept the WAL busy through every retry.
        """

        def run() -> None:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._conn.execute("VACUUM")
            busy, _, _ = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if busy:
                raise sqlite3.OperationalError("database is locked (WAL checkpoint)")

        with self._lock:
            self._retrying(run)

    # ------------------------------------------------------------------ internals

    @staticmethod
    def _check_schema(conn: sqlite3.Connection) -> None:
        """Refuse a database this store did not create, before anything is written to it."""
        found = conn.execute("PRAGMA user_version").fetchone()[0]
        if found not in (0, 1, SCHEMA_VERSION):
            raise StoreError(f"unknown schema version {found} (this library writes {SCHEMA_VERSION})")
        if found == 0 and conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'").fetchone():
            # e.g. fg-agent-memory 0.1's own SQLite store, whose ``records`` table differs.
            raise StoreError("the database holds tables of another program; open an empty file")

    @classmethod
    def _create_schema(cls, conn: sqlite3.Connection) -> None:
        cls._check_schema(conn)  # again: another process may have created it meanwhile
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return
        columns = {row[1] for row in conn.execute("PRAGMA table_info(records)")}
        if columns and "change" not in columns:  # schema 1: every record reads as changed once
            conn.execute("ALTER TABLE records ADD COLUMN change INTEGER NOT NULL DEFAULT 0")
        for statement in SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        for trigger in TRIGGERS:
            conn.execute(trigger)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @staticmethod
    def _index(conn: sqlite3.Connection, latest: Iterable[tuple[int, MemoryRecord]]) -> None:
        """Point the ``records`` and ``record_tags`` rows at each record's new latest version."""
        rows, tags = [], []
        for number, record in latest:
            created_ms = (record.created_at - _EPOCH) // timedelta(milliseconds=1)
            kind, namespace = record.effective_kind.value, record.effective_namespace
            state, type_ = record.state.value, record.type.value
            rows.append((record.id, number, state, type_, kind, record.subject, namespace, created_ms))
            tags += [(record.id, tag) for tag in record.tags]
        conn.executemany("INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)", rows)
        conn.executemany("DELETE FROM record_tags WHERE record_id = ?", [row[:1] for row in rows])
        conn.executemany("INSERT OR IGNORE INTO record_tags VALUES (?, ?)", tags)

    def _latest(self, record_id: str) -> tuple[int, MemoryRecord | None]:
        rows = self._query(LIST_SELECT + " WHERE r.record_id = ?", (record_id,))
        return (rows[0][1], self._decode(*rows[0])) if rows else (0, None)

    def _latest_of(
        self, conn: sqlite3.Connection, record_ids: Iterable[str]
    ) -> dict[str, tuple[int, MemoryRecord | None]]:
        """Return ``{id: (version, latest)}`` for the stored ids among ``record_ids``, in one query."""
        ids = json.dumps(sorted(record_ids))
        return {row[0]: (row[1], self._decode(*row)) for row in conn.execute(LATEST_OF_MANY, (ids,))}

    def _decode(self, record_id: str, version: int, payload: bytes) -> MemoryRecord:
        key = (record_id, version, bytes(payload))  # the bytes themselves: any change is a miss
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        record = self._parse(record_id, version, payload)
        self._cache.put(key, record)
        return record

    def _parse(self, record_id: str, version: int, payload: bytes) -> MemoryRecord:
        where = f"{self.path}#versions[{version}]"
        try:
            record = MemoryRecord.from_wire(loads_json(payload))
        except (AgentMemoryError, ValueError, TypeError) as exc:
            detail = exc.detail if isinstance(exc, AgentMemoryError) else str(exc)
            raise StoreError(
                f"unreadable row: {detail}", path=where, record_id=record_id, hint=_HINT
            ) from exc
        if record.id != record_id:
            raise StoreError(f"the row holds {record.id}", path=where, record_id=record_id, hint=_HINT)
        return record

    def _query(self, sql: str, params: tuple[Any, ...]) -> builtins.list[Any]:
        with self._lock:
            return self._retrying(lambda: self._conn.execute(sql, params).fetchall())

    def _transaction(self, body: Callable[[sqlite3.Connection], _T]) -> _T:
        def attempt() -> _T:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                result = body(self._conn)
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            return result

        with self._lock:
            return self._retrying(attempt)

    def _retrying(self, operation: Callable[[], _T]) -> _T:
        for attempt in range(_ATTEMPTS):
            try:
                return operation()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise StoreError(f"database error: {exc}", path=self.path) from exc
                if attempt == _ATTEMPTS - 1:
                    raise StoreError(
                        f"the database stayed locked through {_ATTEMPTS} attempts", path=self.path
                    ) from exc
                time.sleep(random.uniform(0, 0.01 * (attempt + 1)))  # noqa: S311 - jitter, not secrecy
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"database error: {exc}", path=self.path, hint=_HINT) from exc
        raise AssertionError("unreachable")  # pragma: no cover

"""`PostgresStore`: the `RecordStore` port on a PostgreSQL server, for memory shared by many agents.

Role (DESIGN.md §4, §6; seed 001 stores): the same append-only contract as the in-memory reference
adapter, behind a real server so that several processes and machines can write one memory.

Invariants kept here:

- A row of ``versions`` holds the canonical JSON bytes of one version (``bytea``), so every read
  gives back the exact signed bytes; a row that does not is reported, never repaired.
- ``records`` holds one row per record: its latest version number and the filter columns of that
  version (state, type, kind, subject, namespace, tags, created_at) that ``list`` queries.
- ``put`` runs in one transaction under an advisory lock on the record id's bucket (one of
  :data:`RECORD_LOCKS`; ``put_many``: on every bucket of the batch, taken in key order), so
  writers in any number of processes never lose a version nor share a version number (the
  primary key ``(record_id, version)`` backs this up). Tables are created on open, under an advisory lock.
- ``erase`` replaces every version by the tombstone and then rewrites the tables with
  ``VACUUM FULL``; what PostgreSQL may still hold afterwards is :data:`ERASURE_LIMITATIONS`.
- Change numbers (the :class:`~agent_memory.stores.base.ChangeFeed`): triggers give every
  insert or update of a ``records`` row, and every update or delete of a ``versions`` row,
  the next value of the one-row ``changes`` counter, in the writer's transaction. The row
  lock on the counter is held to commit, so numbers commit in order across every process and
  machine, and :meth:`PostgresStore.changes_since` never misses a write. A schema made
  before the counter existed gets it on open.
- Decoded versions are kept in a :class:`~agent_memory.stores.base.RecordCache` keyed by
  their exact bytes, so a row is parsed and checked once per process while it is unchanged.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Unpack

try:
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ImportError("PostgresStore needs psycopg 3: pip install 'agent-memory[postgres]'") from exc

from agent_memory.errors import RecordError, RecordNotFound, StoreError
from agent_memory.records.record import MemoryRecord
from agent_memory.records.wire import loads_json, utc_now
from agent_memory.stores.base import (
    Changes,
    ListFilters,
    RecordCache,
    chain_batch,
    check_erased_history,
    check_next_version,
    check_record_id,
    prepare_batch,
)
from agent_memory.stores.postgres_sql import CHANGES_DDL, DDL, STATEMENTS

__all__ = ["ERASURE_LIMITATIONS", "RECORD_LOCKS", "SCHEMA_FORMAT", "PostgresStore", "connect"]

SCHEMA_FORMAT = "agent-memory-postgres/1"

# What an erasure cannot reach inside PostgreSQL; the erasure receipt reports these (DESIGN.md §9).
ERASURE_LIMITATIONS: tuple[str, ...] = (
    "the write-ahead log (pg_wal) keeps the erased row versions until its segments are recycled, "
    "and so do WAL archives, base backups and replicas made before the erasure",
    "VACUUM FULL writes new table files; the file system frees the old blocks without overwriting them",
    "a transaction open elsewhere in the database during the erasure can keep old row versions "
    "through VACUUM FULL until the next VACUUM",
    "server logs hold statement text where logging is configured to (log_statement)",
)

_Connection = psycopg.Connection[tuple[Any, ...]]
_Cursor = psycopg.Cursor[tuple[Any, ...]]
RECORD_LOCKS = 32
"""Advisory locks that serialise the writers of a record (by the id's bucket, ``_record_lock``)."""
_SCHEMA_NAME = re.compile(r"\A[a-z_][a-z0-9_]{0,62}\Z")
_CONNECT_TIMEOUT_S = 10


def connect(dsn: str) -> _Connection:
    """Open an autocommit connection to the server ``dsn`` names.

    ``dsn`` is a libpq connection string, ``postgresql://user[:password]@host:port/dbname`` or
    ``host=… port=… dbname=… user=…``. A connection attempt gives up after 10 s unless the
    DSN sets ``connect_timeout``.

    Raises:
        StoreError: The DSN cannot be parsed, or the server cannot be reached or refuses the
            login; the message names host, port, database and user, never the password.
    """
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.Error:
        # libpq's message quotes the whole DSN, password included: say nothing of it.
        raise StoreError(
            "not a valid PostgreSQL DSN",
            hint="use postgresql://USER@HOST:PORT/DBNAME or 'host=… port=… dbname=… user=…'",
        ) from None
    password = str(params.get("password") or "")
    host = str(params.get("host") or os.environ.get("PGHOST") or "the local socket")
    port = str(params.get("port") or os.environ.get("PGPORT") or "5432")
    dbname = str(params.get("dbname") or os.environ.get("PGDATABASE") or "(default)")
    user = str(params.get("user") or os.environ.get("PGUSER") or "(default)")
    try:
        timeout = params.get("connect_timeout") or _CONNECT_TIMEOUT_S
        return psycopg.connect(dsn, autocommit=True, connect_timeout=timeout)
    except psycopg.Error as exc:
        reason = " ".join(str(exc).split())
        if password:
            reason = reason.replace(password, "***")
        raise StoreError(
            f"cannot connect to PostgreSQL at {host}:{port} (database {dbname}, user {user}): {reason}",
            hint=f"check that the server runs and accepts TCP connections on {host}:{port}",
        ) from None


class PostgresStore:
    """Record versions in two tables of one PostgreSQL schema (seed 001 stores, DESIGN.md §6).

    One connection per store object, used by one thread at a time (a lock serialises them);
    open one store per process. The connection is reopened after it breaks.

    Args:
        dsn: A libpq connection string (see :func:`connect`).
        schema: The schema that holds the tables; created when absent. Lower-case letters,
            digits and ``_``, at most 63 characters.

    Raises:
        StoreError: The schema name is refused, the server is unreachable, or the schema holds
            tables of another format.
    """

    erasure_limitations: tuple[str, ...] = ERASURE_LIMITATIONS

    def __init__(self, dsn: str, *, schema: str = "agent_memory") -> None:
        if not _SCHEMA_NAME.match(schema):
            raise StoreError(f"refused schema name {schema!r}: lower-case letters, digits and _ only")
        self._dsn = dsn
        self.schema = schema
        self._path = f"postgresql:{schema}"
        self._lock = threading.RLock()
        self._cache = RecordCache()
        self._conn: _Connection | None = None
        self._ident = sql.Identifier(schema)
        self._q = {n: sql.SQL(text).format(s=self._ident) for n, text in STATEMENTS.items() if n != "list"}
        try:
            self._create_tables()
        except BaseException:
            self.close()
            raise

    def put(self, record: MemoryRecord) -> int:
        """Append ``record`` as the next version of its id; return that version number (1-based).

        Raises:
            StoreError: The id is refused, a stored version is unreadable, or the server failed;
                nothing is written.
            RecordError: An immutable field differs from the previous version.
            LifecycleError: The state change is not one of the seven legal moves.
        """
        if not isinstance(record, MemoryRecord):
            raise StoreError(f"can only store a MemoryRecord, not {type(record).__name__}")
        check_record_id(record.id)
        data = record.canonical_bytes()
        with self._transaction(record.id) as cur:
            cur.execute(self._q["lock"], (self._record_lock(record.id),))
            version, previous = self._latest(cur, record.id)
            check_next_version(previous, record)
            version += 1
            cur.execute(self._q["upsert_head"], (record.id, version, *_filter_columns(record)))
            cur.execute(self._q["insert_version"], (record.id, version, record.updated_at, data))
        return version

    def put_many(self, records: Iterable[MemoryRecord]) -> list[int]:
        """Append several versions in one transaction (all or none); return their version numbers.

        Every record gets the checks of :meth:`put`, in order, so a batch may hold several
        versions of one id (:class:`~agent_memory.stores.base.BatchPut`, issue 23). The
        batch's advisory locks (one per bucket of its ids, at most :data:`RECORD_LOCKS`) are
        taken in one statement, in key order, and its latest versions read in one query; the
        rows go in through psycopg's pipelined ``executemany``, so a batch costs a few round
        trips instead of six per version.

        Raises:
            StoreError, RecordError, LifecycleError: As for :meth:`put`; nothing is written.
        """
        batch = prepare_batch(records)  # a bad id or a tombstone fails before the locks
        if not batch:
            return []
        ids = sorted({record.id for record, _ in batch})
        with self._transaction() as cur:
            cur.execute(self._q["lock_many"], (sorted({self._record_lock(record_id) for record_id in ids}),))
            cur.execute(self._q["latest_many"], (ids,))
            latest = {rid: (int(n), self._decode(rid, n, data)) for rid, n, data in cur.fetchall()}
            versions, heads = chain_batch(batch, latest)
            cur.executemany(
                self._q["upsert_head"], [(rid, n, *_filter_columns(r)) for rid, (n, r) in heads.items()]
            )
            cur.executemany(
                self._q["insert_version"], [(r.id, n, r.updated_at, data) for r, n, data in versions]
            )
        return [number for _, number, _ in versions]

    def get(self, record_id: str) -> MemoryRecord:
        """Return the latest version.

        Raises:
            RecordNotFound: No such record.
            StoreError: The id is refused or the stored row is not a canonical record (named).
        """
        check_record_id(record_id)
        rows = self._fetch(self._q["latest"], (record_id,), record_id)
        if not rows:
            raise RecordNotFound("the store holds no such record", record_id=record_id)
        return self._decode(record_id, rows[0][0], rows[0][1])

    def history(self, record_id: str) -> list[MemoryRecord]:
        """Return every version, oldest first.

        Raises:
            RecordNotFound: No such record.
            StoreError: The id is refused or a stored row is not a canonical record (named).
        """
        check_record_id(record_id)
        rows = self._fetch(self._q["history"], (record_id,), record_id)
        if not rows:
            raise RecordNotFound("the store holds no such record", record_id=record_id)
        return [self._decode(record_id, version, data) for version, data in rows]

    def list(self, **filters: Unpack[ListFilters]) -> list[MemoryRecord]:
        """Return the latest version of every record matching all given filters, by ``(created_at, id)``.

        Filters run in SQL, with the semantics of :func:`~agent_memory.stores.base.filter_records`.

        Raises:
            StoreError: The server failed or a stored row is not a canonical record.
        """
        columns = {name: filters.get(name) for name in ("state", "type", "kind", "subject", "namespace")}
        conditions: list[sql.Composable] = [
            sql.SQL("r.{} = %s").format(sql.Identifier(c)) for c, v in columns.items() if v is not None
        ]
        params: list[Any] = [str(v) for v in columns.values() if v is not None]
        if (tag := filters.get("tag")) is not None:
            conditions.append(sql.SQL("%s = ANY(r.tags)"))
            params.append(tag)
        where = sql.SQL(" AND ").join([sql.SQL("TRUE"), *conditions])
        rows = self._fetch(sql.SQL(STATEMENTS["list"]).format(s=self._ident, where=where), params)
        return [self._decode(record_id, version, data) for record_id, version, data in rows]

    def contains(self, record_id: str) -> bool:
        """Return whether the store holds any version of ``record_id`` (a tombstone counts).

        Raises:
            StoreError: The id is malformed or the server failed.
        """
        check_record_id(record_id)
        return bool(self._fetch(self._q["contains"], (record_id,), record_id))

    def erase(self, record_id: str, reason: str, *, now: datetime | None = None) -> MemoryRecord:
        """Replace every version of ``record_id`` by its tombstone, then ``VACUUM FULL`` the tables.

        The version count is kept; id, ``birth_digest`` and the links survive as seed 001 requires
        (DESIGN.md §9). What PostgreSQL may still hold afterwards is listed in
        :attr:`erasure_limitations` for the erasure receipt.

        Args:
            record_id: The record to erase.
            reason: Why; stored in the tombstone's ``redaction_reason``.
            now: The tombstone's ``updated_at``; defaults to the current UTC time.

        Returns:
            The tombstone that now stands in every version.

        Raises:
            RecordNotFound: No such record.
            RecordError: The record is already erased, or ``reason`` is empty.
            StoreError: The server failed (nothing is changed), or ``VACUUM FULL`` did not
                rewrite the tables (the tombstones are written; old row versions may remain).
        """
        check_record_id(record_id)
        with self._transaction(record_id) as cur:
            cur.execute(self._q["lock"], (self._record_lock(record_id),))
            version, latest = self._latest(cur, record_id)
            if latest is None:
                raise RecordNotFound("the store holds no such record", record_id=record_id)
            tombstone = latest.tombstone(reason, now=now or utc_now())
            data = tombstone.canonical_bytes()
            cur.execute(self._q["erase_versions"], (tombstone.updated_at, data, record_id))
            cur.execute(self._q["upsert_head"], (record_id, version, *_filter_columns(tombstone)))
        self._cache.clear()  # no erased content stays in this process's memory
        self._vacuum_full(record_id)
        return tombstone

    def restore_erased(self, history: Sequence[MemoryRecord]) -> int:
        """Store an erased record's history (copies of one tombstone) under an id not held yet.

        The counterpart of :meth:`erase` for ``agent-memory migrate``: a tombstone cannot be
        ``put``, yet an erasure must follow the records to their new store. One transaction
        under the record's advisory lock writes every version or none.

        Returns:
            The number of versions stored (``len(history)``).

        Raises:
            StoreError: ``history`` is not an erased history
                (:func:`~agent_memory.stores.base.check_erased_history`), the store already
                holds a version of that id, or the server failed; nothing is written.
        """
        tombstone = check_erased_history(history)
        data = tombstone.canonical_bytes()
        with self._transaction(tombstone.id) as cur:
            cur.execute(self._q["lock"], (self._record_lock(tombstone.id),))
            cur.execute(self._q["contains"], (tombstone.id,))
            if cur.fetchone() is not None:
                raise StoreError("already holds this record; nothing restored", record_id=tombstone.id)
            cur.execute(self._q["upsert_head"], (tombstone.id, len(history), *_filter_columns(tombstone)))
            for number in range(1, len(history) + 1):
                cur.execute(self._q["insert_version"], (tombstone.id, number, tombstone.updated_at, data))
        return len(history)

    def version_tokens(self, record_ids: Iterable[str] | None = None) -> dict[str, str]:
        """Return ``"<version>:<change number>"`` per record (of ``record_ids``; absent ids left out).

        One query over ``records`` (no version bytes are read); the token moves with every
        write to the record, an erasure included (DESIGN.md §9 "Freshness").

        Raises:
            StoreError: The server failed.
        """
        if record_ids is None:
            rows = self._fetch(self._q["tokens"])
        else:
            rows = self._fetch(self._q["tokens_of"], (sorted(set(record_ids)),))
        return {record_id: f"{version}:{change}" for record_id, version, change in rows}

    def changes_since(self, mark: int) -> Changes:
        """Return the records written after ``mark`` (``-1``: every record) and the counter now.

        An unchanged store costs one read of the one-row counter (one round trip), however
        many records it holds (issue 10); otherwise the records come from the index on
        ``records.change``. The counter is read first: a write committed between the two
        reads is reported now and again next time (its token unchanged, so nobody reads it
        twice), never missed.

        Raises:
            StoreError: The server failed.
        """
        counter, removals = (self._fetch(self._q["counter"]) or [(0, 0)])[0]
        if counter <= mark:  # unchanged (or restored from an older copy: the caller compares all)
            return Changes(int(counter), {}, int(removals))
        with self._transaction() as cur:
            if mark < 0:
                cur.execute(self._q["tokens"])
            else:
                cur.execute(self._q["plan_news"])
                cur.execute(self._q["news"], (mark,))
            rows = cur.fetchall()
        tokens = {rid: f"{version}:{change}" for rid, version, change in rows}
        return Changes(max([int(counter), *(int(change) for _, _, change in rows)]), tokens, int(removals))

    def _vacuum_full(self, record_id: str) -> None:
        with self._lock:
            conn = self._connection()
            try:
                before = conn.execute(self._q["filenodes"], (self.schema,)).fetchall()
                conn.execute(self._q["vacuum"])
                after = conn.execute(self._q["filenodes"], (self.schema,)).fetchall()
            except psycopg.Error as exc:
                raise self._error(exc, record_id) from None
        if set(before) & set(after):
            # VACUUM only warns when it skips a table it does not own.
            raise StoreError(
                "VACUUM FULL did not rewrite the tables; old row versions may remain",
                record_id=record_id,
                hint=f"run VACUUM FULL on the tables of schema {self.schema} as their owner",
            )

    def close(self) -> None:
        """Close the connection; a later call reopens it."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connection(self) -> _Connection:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = connect(self._dsn)
            # Statements must see what committed before the advisory lock, whatever the server default.
            self._conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
        return self._conn

    @contextmanager
    def _transaction(self, record_id: str | None = None) -> Iterator[_Cursor]:
        with self._lock:
            conn = self._connection()
            try:
                with conn.transaction(), conn.cursor() as cur:
                    yield cur
            except psycopg.Error as exc:
                raise self._error(exc, record_id) from None

    def _fetch(
        self, statement: Any, params: Any = None, record_id: str | None = None
    ) -> Sequence[tuple[Any, ...]]:
        """Return the rows of one read-only statement, run alone: one round trip, no ``BEGIN``/``COMMIT``.

        On the autocommit connection a single statement is its own transaction: it reads one
        snapshot, as it would inside an explicit one.
        """
        with self._lock:
            conn = self._connection()
            try:
                with conn.cursor() as cur:
                    cur.execute(statement, params)
                    return cur.fetchall()
            except psycopg.Error as exc:
                raise self._error(exc, record_id) from None

    def _error(self, exc: psycopg.Error, record_id: str | None) -> StoreError:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        return StoreError(f"PostgreSQL failed: {detail}", path=self._path, record_id=record_id)

    def _create_tables(self) -> None:
        with self._transaction() as cur:
            cur.execute(self._q["lock"], (self._lock_key("schema"),))
            cur.execute("SELECT to_regclass(%s)", (f"{self.schema}.versions",))
            if (cur.fetchone() or (None,))[0] is None:
                cur.execute(sql.SQL(DDL).format(s=self._ident, format=sql.Literal(SCHEMA_FORMAT)))
            cur.execute(self._q["format"])
            found = cur.fetchone()
            if found is not None and found[0] == SCHEMA_FORMAT:
                cur.execute(self._q["has_counter"], (f"{self.schema}.records",))
                if cur.fetchone() is None:
                    cur.execute(sql.SQL(CHANGES_DDL).format(s=self._ident))
        if found is None or found[0] != SCHEMA_FORMAT:
            raise StoreError(
                f"holds tables of format {found[0] if found else None!r}, expected {SCHEMA_FORMAT!r}",
                path=self._path,
                hint="open another schema with PostgresStore(dsn, schema=…)",
            )

    def _record_lock(self, record_id: str) -> int:
        """Return the advisory lock key of the bucket ``record_id`` falls in (one of :data:`RECORD_LOCKS`).

        Writers of one id always meet on its bucket; a batch takes each of its buckets once,
        so however many ids it writes it holds at most :data:`RECORD_LOCKS` entries of the
        server's lock table (``max_locks_per_transaction``, 64 by default, times the
        connections), where a lock per id would run it out of shared memory.
        """
        return self._lock_key(f"records/{int(record_id[4:12], 16) % RECORD_LOCKS}")

    def _lock_key(self, name: str) -> int:
        digest = hashlib.blake2b(f"{self.schema}\0{name}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big", signed=True)

    def _latest(self, cur: _Cursor, record_id: str) -> tuple[int, MemoryRecord | None]:
        """Return the latest version number and record, ``(0, None)`` when there is none."""
        cur.execute(self._q["latest"], (record_id,))
        row = cur.fetchone()
        return (0, None) if row is None else (int(row[0]), self._decode(record_id, row[0], row[1]))

    def _decode(self, record_id: str, version: int, data: bytes) -> MemoryRecord:
        key = (record_id, version, bytes(data))  # the bytes themselves: any change is a miss
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        record = self._parse(record_id, version, data)
        self._cache.put(key, record)
        return record

    def _parse(self, record_id: str, version: int, data: bytes) -> MemoryRecord:
        where = f"{self._path}.versions[{record_id} v{version}]"
        hint = "the row was changed outside agent-memory; restore it from a backup or an export"
        try:
            record = MemoryRecord.from_wire(loads_json(bytes(data), path=where), path=where)
        except RecordError as exc:
            raise StoreError(f"not a valid record: {exc.detail}", path=where, hint=hint) from None
        if record.id != record_id or record.canonical_bytes() != bytes(data):
            raise StoreError("the row does not hold this record's canonical bytes", path=where, hint=hint)
        return record

    def get_many(self, record_ids: Iterable[str]) -> dict[str, MemoryRecord]:
        """Return ``{id: latest version}`` of the stored ids among ``record_ids``, in one query.

        What :meth:`get` returns for each id, read in one snapshot (recall reads its ~64
        candidates at once instead of one round trip each, issue 10); unknown ids are left out.

        Raises:
            StoreError: An id is refused, the server failed, or a row is not a canonical record.
        """
        ids = sorted({check_record_id(record_id) for record_id in record_ids})
        rows = self._fetch(self._q["latest_many"], (ids,))
        return {record_id: self._decode(record_id, version, data) for record_id, version, data in rows}


def _filter_columns(r: MemoryRecord) -> tuple[Any, ...]:
    kind, namespace = r.effective_kind.value, r.effective_namespace
    return (r.created_at, r.state.value, r.type.value, kind, r.subject, namespace, list(r.tags))

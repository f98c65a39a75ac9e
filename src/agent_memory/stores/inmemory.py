"""`InMemoryStore`: the reference adapter of the `RecordStore` port (seed 001 §stores, origin-notes §1.16).

It keeps a dict from record id to the list of its versions, oldest first, behind one lock.
Every other adapter (file, SQLite, PostgreSQL) must behave exactly like it: the shared
contract suite in ``tests/stores/test_contract.py`` runs against all of them, and tests of
the core use it as the fake store (STYLE.md "fakes, not mocks").

Invariants:

- ``put`` only appends, after :func:`~agent_memory.stores.base.check_next_version` accepted
  the version; a refused put changes nothing.
- Stored versions are private deep copies: neither the record a caller passed to ``put``
  nor one returned by ``get``/``history``/``list`` shares a mutable part (``slots``,
  ``extra``) with the stored state, so callers cannot change history behind the store's back.
- :meth:`InMemoryStore.erase` is the one operation that replaces versions; it is not on the
  port, so operators and jobs cannot reach it (DESIGN.md §4).
- Every write takes the next number of one change counter under the lock, so
  :meth:`InMemoryStore.changes_since` (the :class:`~agent_memory.stores.base.ChangeFeed`)
  never misses a write.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Unpack

from agent_memory.errors import RecordNotFound, StoreError
from agent_memory.records.record import MemoryRecord
from agent_memory.records.wire import utc_now
from agent_memory.stores.base import (
    Changes,
    ListFilters,
    check_erased_history,
    check_next_version,
    check_record_id,
    filter_records,
)

__all__ = ["InMemoryStore"]

# Spelled here because inside the class body ``list`` names the port's method.
_Versions = list[MemoryRecord]


class InMemoryStore:
    """Append-only versions of records in process memory; thread-safe, lost at exit.

    Implements :class:`~agent_memory.stores.base.RecordStore` and
    :class:`~agent_memory.stores.base.ChangeFeed`, plus :meth:`erase`.

    Example:
        >>> store = InMemoryStore()
        >>> store.contains("mem:" + "0" * 32)
        False
    """

    def __init__(self) -> None:
        self._versions: dict[str, _Versions] = {}
        # One lock for every read and write: a put must see the latest version it
        # checks against, and a reader must never see a half-applied erase.
        self._lock = threading.Lock()
        self._changed: dict[str, int] = {}  # record id -> the change number of its last write
        self._counter = 0

    def __repr__(self) -> str:
        with self._lock:
            count = len(self._versions)
        return f"<InMemoryStore records={count}>"

    # ------------------------------------------------------------------ the port

    def put(self, record: MemoryRecord) -> int:
        """Append ``record`` as the next version of its id (seed 001: put never overwrites).

        Returns:
            The version number written, 1 for a new record.

        Raises:
            StoreError: Not a record, a refused id, a tombstone, or the record was erased.
            RecordError: An immutable field differs from the previous version.
            LifecycleError: The state change is not one of the seven legal moves.
        """
        if not isinstance(record, MemoryRecord):
            raise StoreError(f"can only store a MemoryRecord, not {type(record).__name__}")
        record_id = check_record_id(record.id)
        stored = copy.deepcopy(record)
        with self._lock:
            versions = self._versions.get(record_id)
            check_next_version(versions[-1] if versions else None, stored)
            if versions is None:
                versions = self._versions[record_id] = []
            versions.append(stored)
            self._note_change(record_id)
            return len(versions)

    def get(self, record_id: str) -> MemoryRecord:
        """Return a copy of the latest version of ``record_id``.

        Raises:
            StoreError: The id is malformed.
            RecordNotFound: The store holds no such record.
        """
        with self._lock:
            latest = self._versions_of(record_id)[-1]
        return copy.deepcopy(latest)

    def history(self, record_id: str) -> list[MemoryRecord]:
        """Return copies of every version of ``record_id``, oldest first.

        Raises:
            StoreError: The id is malformed.
            RecordNotFound: The store holds no such record.
        """
        with self._lock:
            versions = list(self._versions_of(record_id))
        return copy.deepcopy(versions)

    def list(self, **filters: Unpack[ListFilters]) -> list[MemoryRecord]:
        """Return copies of the latest version of every matching record, by ``(created_at, id)``.

        The filters are those of :func:`~agent_memory.stores.base.filter_records`; ``kind``
        and ``namespace`` match effective values (``knowledge``, ``default``).
        """
        with self._lock:
            latest = [versions[-1] for versions in self._versions.values()]
        selected = filter_records(latest, **filters)
        return copy.deepcopy(selected)

    def contains(self, record_id: str) -> bool:
        """Return whether any version of ``record_id`` is stored (a tombstone counts).

        Raises:
            StoreError: The id is malformed.
        """
        check_record_id(record_id)
        with self._lock:
            return record_id in self._versions

    # ------------------------------------------------------------------ beyond the port

    def erase(self, record_id: str, reason: str, *, now: datetime | None = None) -> MemoryRecord:
        """Replace every version of ``record_id`` by its tombstone (origin-notes §1.15, DESIGN.md §9).

        The version count is kept, so version numbers stay stable; the tombstone keeps the
        id, ``birth_digest`` and link graph and holds no content. Later puts are refused.

        Args:
            record_id: The record to erase.
            reason: Why, non-empty; stored as ``redaction_reason``.
            now: The tombstone's ``updated_at``; defaults to the current UTC time.

        Returns:
            A copy of the tombstone now stored in place of every version.

        Raises:
            StoreError: The id is malformed.
            RecordNotFound: The store holds no such record.
            RecordError: The record is already erased, or ``reason`` is empty.
        """
        stamp = now if now is not None else utc_now()
        with self._lock:
            versions = self._versions_of(record_id)
            tombstone = versions[-1].tombstone(reason, now=stamp)
            self._versions[record_id] = [tombstone] * len(versions)
            self._note_change(record_id)
        return copy.deepcopy(tombstone)

    def restore_erased(self, history: Sequence[MemoryRecord]) -> int:
        """Store an erased record's history (copies of one tombstone) under an id not held yet.

        The counterpart of :meth:`erase` for ``agent-memory migrate``: a tombstone cannot be
        ``put``, yet an erasure must follow the records to their new store, or the erased
        content could be written again there. Not on the port, like :meth:`erase`.

        Returns:
            The number of versions stored (``len(history)``).

        Raises:
            StoreError: ``history`` is not an erased history
                (:func:`~agent_memory.stores.base.check_erased_history`), or the store
                already holds a version of that id; nothing is written.
        """
        tombstone = copy.deepcopy(check_erased_history(history))
        with self._lock:
            if tombstone.id in self._versions:
                raise StoreError("already holds this record; nothing restored", record_id=tombstone.id)
            self._versions[tombstone.id] = [tombstone] * len(history)
            self._note_change(tombstone.id)
        return len(history)

    def version_tokens(self, record_ids: Iterable[str] | None = None) -> dict[str, str]:
        """Return ``"<versions>:<change number>"`` per record (of ``record_ids``; absent ids left out)."""
        with self._lock:
            wanted = self._changed if record_ids is None else record_ids
            return {rid: self._token(rid) for rid in wanted if rid in self._changed}

    def changes_since(self, mark: int) -> Changes:
        """Return the records written after ``mark`` (``-1``: all) and the counter now.

        A walk over every record id (this store is for tests and notebooks); nothing is
        ever removed, so ``removals`` is always 0.
        """
        with self._lock:
            tokens = {rid: self._token(rid) for rid, change in self._changed.items() if change > mark}
            return Changes(self._counter, tokens, 0)

    # ------------------------------------------------------------------ helpers

    def _note_change(self, record_id: str) -> None:
        # Caller holds the lock.
        self._counter += 1
        self._changed[record_id] = self._counter

    def _token(self, record_id: str) -> str:
        # Caller holds the lock.
        return f"{len(self._versions[record_id])}:{self._changed[record_id]}"

    def _versions_of(self, record_id: str) -> _Versions:
        # Caller holds the lock.
        check_record_id(record_id)
        versions = self._versions.get(record_id)
        if not versions:
            raise RecordNotFound("the store holds no such record", record_id=record_id)
        return versions

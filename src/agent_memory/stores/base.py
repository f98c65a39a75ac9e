"""The `RecordStore` port: append-only versions of records, and the checks every adapter shares.

Contract (seed 001 §stores, DESIGN.md §4):

- ``put`` appends a version and never overwrites; ``get`` returns the latest version;
  ``history`` returns every version oldest first; ``list`` returns the latest version of
  each record, filtered, ordered by ``(created_at, id)`` so that every adapter and every
  migration gives the same order.
- A new version must be a legal successor of the previous one (:func:`check_next_version`):
  same birth (the id guarantees it), the immutable extension fields unchanged, and any
  state change one of the seven legal moves.
- Erasure (every version replaced by the tombstone) is a method of each adapter, deliberately
  not part of the port, so no generic caller (an operator, a job) can reach it. So is
  ``restore_erased`` (write an erased history, checked by :func:`check_erased_history`, under
  an id the store does not hold), which only ``migrate`` calls to carry an erasure over.

Optional beyond the port, :class:`ChangeFeed`: a store that counts its writes (SQLite,
PostgreSQL, in-memory) tells an index catalog what changed since it last looked in one cheap
query, so a recall over an unchanged store reads nothing (DESIGN.md §9 "Freshness", issue 10).

This module imports no adapter.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypedDict, Unpack, runtime_checkable

from agent_memory.errors import LifecycleError, RecordError, RecordNotFound, StoreError
from agent_memory.records.proofs import Proof
from agent_memory.records.proofs import forget as forget_proofs
from agent_memory.records.record import RECORD_ID_PATTERN, Kind, MemoryRecord, RecordType, State, copy_record

__all__ = [
    "IMMUTABLE_FIELDS",
    "BatchPut",
    "ChangeFeed",
    "Changes",
    "RecordCache",
    "RecordStore",
    "batch_get",
    "chain_batch",
    "check_erased_history",
    "check_next_version",
    "check_record_id",
    "filter_records",
    "prepare_batch",
]

# Fields that may never change after birth (besides the birth itself, which the id pins).
IMMUTABLE_FIELDS: tuple[str, ...] = (
    "occurred_at", "kind", "subject", "namespace", "scope", "valid_from", "taint", "sources",
)  # fmt: skip


class ListFilters(TypedDict, total=False):
    """The filters of :meth:`RecordStore.list`, all optional; ``None`` or absent filters nothing.

    ``kind`` and ``namespace`` match the effective values (``knowledge``, ``default`` when
    the field is absent).
    """

    state: State | None
    type: RecordType | None
    tag: str | None
    kind: Kind | None
    subject: str | None
    namespace: str | None


@runtime_checkable
class RecordStore(Protocol):
    """Append-only storage of record versions (the port every store adapter implements)."""

    def put(self, record: MemoryRecord) -> int:
        """Append ``record`` as the next version of its id; return that version number (1-based).

        Raises:
            StoreError: The id is refused or the write failed; nothing is written.
            RecordError: An immutable field differs from the previous version.
            LifecycleError: The state change is not one of the seven legal moves.
        """
        ...

    def get(self, record_id: str) -> MemoryRecord:
        """Return the latest version.

        Raises:
            RecordNotFound: No such record.
            StoreError: The stored version cannot be read (the path or row is named).
        """
        ...

    def history(self, record_id: str) -> list[MemoryRecord]:
        """Return every version, oldest first.

        Raises:
            RecordNotFound: No such record.
        """
        ...

    def list(self, **filters: Unpack[ListFilters]) -> list[MemoryRecord]:
        """Return the latest version of every record matching all given filters, by ``(created_at, id)``.

        ``kind`` and ``namespace`` match the effective values (``knowledge``, ``default``
        when the field is absent).
        """
        ...

    def contains(self, record_id: str) -> bool:
        """Return whether the store holds any version of ``record_id``."""
        ...


@dataclass(frozen=True)
class Changes:
    """What a :class:`ChangeFeed` changed after a mark.

    Attributes:
        mark: The store's change counter now (pass it to the next ``changes_since``).
        tokens: ``{record id: version token}`` of every record written (put, erased,
            restored, or edited in place by another tool) after the mark asked for.
        removals: How many records were ever deleted from the store (outside this library,
            which never deletes); when it moves, the caller must compare every token again.
    """

    mark: int
    tokens: dict[str, str]
    removals: int


@runtime_checkable
class BatchPut(Protocol):
    """A store that appends many versions in one transaction (optional, beside :class:`RecordStore`).

    ``put_many`` gives every version the checks of ``put``, in order (a batch may hold several
    versions of one id), and writes all of them or none, with one commit: SQLite's one fsync
    for the batch instead of one per version, PostgreSQL's few round trips instead of six
    per version (issue 23).
    """

    def put_many(self, records: Sequence[MemoryRecord]) -> list[int]:
        """Append ``records`` in order, all or none; return their version numbers.

        Raises:
            StoreError, RecordError, LifecycleError: As for ``put``; nothing is written.
        """
        ...


@runtime_checkable
class ChangeFeed(Protocol):
    """A store that numbers its writes, across processes (optional, beside :class:`RecordStore`).

    Every write, by any process or connection, takes the next number of one counter in the
    same transaction as the write, and readers see counters only of committed writes, in
    order: a reader that saw mark ``m`` sees every write numbered ``<= m``. A version token
    is a short string that changes whenever the record's latest version (or its bytes) does.
    """

    def version_tokens(self, record_ids: Iterable[str] | None = None) -> dict[str, str]:
        """Return the version token of every record (of ``record_ids``; absent ids left out)."""
        ...

    def changes_since(self, mark: int) -> Changes:
        """Return the records written after ``mark`` (``-1``: every record), in one snapshot."""
        ...


class RecordCache:
    """A bounded, thread-safe LRU of parsed records, for adapters whose reads parse bytes.

    Parsing and checking a version (YAML or JSON, the id recomputed, the invariants) costs
    far more than finding it; recall reads the same few hundred records again and again
    (issue 10). An adapter keys each entry by something that changes whenever the stored
    bytes do (a file's inode, size and times; a row's version and bytes), so a hit is
    always the record those bytes hold. Each hit is a copy whose ``slots`` and ``extra``
    are the caller's own, as a fresh parse would give. Every copy of one entry (and the
    record it was made from) shares the entry's :class:`~agent_memory.records.proofs.Proof`:
    once one of them verifies, the others are not checked again.

    Args:
        size: Records kept; the least recently used go first.
    """

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._items: OrderedDict[Hashable, Proof] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> MemoryRecord | None:
        """Return a copy of the record cached under ``key``, or ``None``."""
        with self._lock:
            proof = self._items.get(key)
            if proof is None:
                return None
            self._items.move_to_end(key)
        copy = copy_record(proof.record, own_maps=True)
        proof.register(copy)
        return copy

    def put(self, key: Hashable, record: MemoryRecord) -> None:
        """Keep a private copy of ``record`` (just parsed from the bytes ``key`` names) under ``key``."""
        proof = Proof(copy_record(record, own_maps=True))
        proof.register(record)
        with self._lock:
            self._items[key] = proof
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        """Forget every record (erasure: no erased content stays in memory)."""
        with self._lock:
            self._items.clear()
        forget_proofs()


def check_record_id(record_id: str) -> str:
    """Return ``record_id`` if it is a well-formed ``mem:<32 lowercase hex>`` id.

    Stores use it before touching a path or row, so ids like ``mem:../x``, absolute paths,
    NUL bytes or uppercase hex never reach the file system.

    Raises:
        StoreError: The id is malformed.
    """
    if not isinstance(record_id, str) or not RECORD_ID_PATTERN.match(record_id):
        raise StoreError(f"refused record id {record_id!r}: expected mem: and 32 lowercase hex digits")
    return record_id


def batch_get(store: RecordStore, record_ids: Sequence[str]) -> Callable[[str], MemoryRecord]:
    """Return ``store.get``, with the latest versions of ``record_ids`` read at once where it can.

    For a caller about to ``get`` each of many ids (a batch's gate, an index catching up;
    issue 23: a query and, for a new id, a ``RecordNotFound`` each). A store with
    ``get_many`` (the SQL stores) answers them in one query; the answers are ``get``'s: the
    latest version, or ``RecordNotFound`` for an id it does not hold. Any other id, or every
    id when the batch read fails (one unreadable row), is read by ``get`` itself, so a bad
    row fails only its own id.
    """
    many: Callable[[Sequence[str]], dict[str, MemoryRecord]] | None = getattr(store, "get_many", None)
    if many is None or not record_ids:
        return store.get
    try:
        found = many(record_ids)
    except StoreError:
        return store.get
    asked = frozenset(record_ids)

    def get(record_id: str) -> MemoryRecord:
        if record_id not in asked:
            return store.get(record_id)
        record = found.get(record_id)
        if record is None:
            raise RecordNotFound("no such record", record_id=record_id)
        return record

    return get


def prepare_batch(records: Iterable[MemoryRecord]) -> list[tuple[MemoryRecord, bytes]]:
    """Return each version of a ``put_many`` batch with its canonical bytes, checked before any lock.

    Raises:
        StoreError: An item is not a :class:`MemoryRecord`, its id is malformed, or it is a
            tombstone (written only by ``erase``); nothing is written.
    """
    batch = []
    for record in records:
        if not isinstance(record, MemoryRecord):
            raise StoreError(f"can only store a MemoryRecord, not {type(record).__name__}")
        check_next_version(None, record)
        batch.append((record, record.canonical_bytes()))
    return batch


def chain_batch(
    batch: Sequence[tuple[MemoryRecord, bytes]], latest: Mapping[str, tuple[int, MemoryRecord | None]]
) -> tuple[list[tuple[MemoryRecord, int, bytes]], dict[str, tuple[int, MemoryRecord]]]:
    """Number a ``put_many`` batch after the latest versions held, checking each in order.

    Args:
        batch: :func:`prepare_batch`'s ``(record, canonical bytes)``, in write order.
        latest: ``{id: (version number, latest version)}`` the store holds for the batch's
            ids (ids it does not hold left out).

    Returns:
        ``(record, its version number, its bytes)`` per version, in order, and each id's new
        latest ``(version number, record)``.

    Raises:
        StoreError, RecordError, LifecycleError: As :func:`check_next_version`, for the
            first version of the batch that may not follow the one before it.
    """
    held: dict[str, tuple[int, MemoryRecord | None]] = dict(latest)
    versions, heads = [], {}
    for record, data in batch:
        number, previous = held.get(record.id, (0, None))
        check_next_version(previous, record)
        held[record.id] = heads[record.id] = (number + 1, record)
        versions.append((record, number + 1, data))
    return versions, heads


def check_next_version(previous: MemoryRecord | None, record: MemoryRecord) -> None:
    """Check that ``record`` may be appended after ``previous`` (``None`` for a first version).

    Raises:
        StoreError: ``previous`` is a tombstone (erasure is final) or ``record`` is one
            (tombstones are written only by an adapter's ``erase``).
        RecordError: An immutable field changed, or ``valid_to`` changed once set.
        LifecycleError: The state change is not a legal move.
    """
    check_record_id(record.id)
    if record.redacted:
        raise StoreError("a tombstone is written only by erase()", record_id=record.id)
    if previous is None:
        return
    if previous.redacted:
        raise StoreError("the record was erased; no version can follow its tombstone", record_id=record.id)
    for name in IMMUTABLE_FIELDS:
        if getattr(previous, name) != getattr(record, name):
            raise RecordError("may not change after birth", record_id=record.id, field=name)
    if previous.valid_to is not None and record.valid_to != previous.valid_to:
        raise RecordError("is set once and may not change", record_id=record.id, field="valid_to")
    if previous.state is not record.state:
        from agent_memory.records.lifecycle import is_legal

        if not is_legal(previous.state, record.state):
            raise LifecycleError(
                f"illegal move {previous.state.value} -> {record.state.value}",
                record_id=record.id,
                field="state",
            )


def check_erased_history(history: Sequence[MemoryRecord]) -> MemoryRecord:
    """Check that ``history`` is an erased record's history as ``erase`` leaves it; return the tombstone.

    An adapter's ``erase`` replaces every version by one tombstone and keeps the version
    count (origin-notes §1.15), so an erased history is one or more copies of a single
    tombstone. Adapters check this in ``restore_erased``, the one way (besides ``erase``)
    to write a tombstone: ``migrate`` uses it to carry an erasure over to another store.

    Raises:
        StoreError: ``history`` is empty, holds something other than records, mixes ids,
            holds a version that is not a tombstone (an erasure that did not finish: run
            ``erase`` again on the source), or holds tombstones that differ.
    """
    if not history:
        raise StoreError("an erased history needs at least one version")
    for record in history:
        if not isinstance(record, MemoryRecord):
            raise StoreError(f"can only store a MemoryRecord, not {type(record).__name__}")
    tombstone = history[0]
    check_record_id(tombstone.id)
    if not any(record.redacted for record in history):
        raise StoreError(
            "not an erased record: no version is a tombstone (write it with put)", record_id=tombstone.id
        )
    expected = tombstone.canonical_bytes()
    for number, record in enumerate(history, start=1):
        if record.id != tombstone.id:
            raise StoreError(f"version {number} belongs to {record.id}", record_id=tombstone.id)
        if not record.redacted:
            raise StoreError(
                f"version {number} is not a tombstone: the erasure did not finish",
                record_id=tombstone.id,
                hint="run the erasure again on the store it came from",
            )
        if record.canonical_bytes() != expected:
            raise StoreError(f"version {number} is another tombstone than version 1", record_id=tombstone.id)
    return tombstone


def filter_records(records: Iterable[MemoryRecord], **filters: Unpack[ListFilters]) -> list[MemoryRecord]:
    """Apply the ``list`` filters to latest versions and sort by ``(created_at, id)``.

    The reference semantics of :meth:`RecordStore.list`; adapters that filter in SQL must
    agree with it (the contract suite checks).
    """
    state, type, tag = filters.get("state"), filters.get("type"), filters.get("tag")
    kind, subject, namespace = filters.get("kind"), filters.get("subject"), filters.get("namespace")
    selected = [
        r
        for r in records
        if (state is None or r.state is state)
        and (type is None or r.type is type)
        and (tag is None or tag in r.tags)
        and (kind is None or r.effective_kind is kind)
        and (subject is None or r.subject == subject)
        and (namespace is None or r.effective_namespace == namespace)
    ]
    selected.sort(key=lambda r: (r.created_at, r.id))
    return selected

"""Reading the version of each record a recall asks for: once per id, in one batch where the store can.

A recall (:func:`agent_memory.recall.select.select`) asks for each candidate, then for the
transition partners and predecessors of the units it builds. :func:`lookup_versions` reads
each id at most once per recall; :func:`asking` tells it which ids the recall is about to
ask for, so a store with ``get_many`` (SQL stores: one query instead of a round trip per
candidate, issue 10) reads them all at once. Invariant: a lookup answers exactly what the
store's ``get`` (or ``history`` read ``as_of``) would: the latest version, or ``None`` for an
unknown, refused or unreadable id; a batch never hides or shows a record that ``get`` would not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime

from agent_memory.errors import StoreError
from agent_memory.records.record import MemoryRecord

__all__ = ["ManyLookup", "VersionLookup", "asking", "lookup_versions", "version_as_of"]

VersionLookup = Callable[[str], MemoryRecord | None]
ManyLookup = Callable[[list[str]], dict[str, MemoryRecord]]
_ASKING: ContextVar[frozenset[str]] = ContextVar("agent_memory_recall_asking", default=frozenset())


@contextmanager
def asking(record_ids: Iterable[str]) -> Iterator[None]:
    """Within this block, lookups know the ids about to be asked for (a recall's candidates)."""
    token = _ASKING.set(frozenset(record_ids))
    try:
        yield
    finally:
        _ASKING.reset(token)


def version_as_of(history: Sequence[MemoryRecord], as_of: datetime | None) -> MemoryRecord | None:
    """Return the last version written at or before ``as_of`` (the latest when ``as_of`` is None)."""
    if not history:
        return None
    if as_of is None:
        return history[-1]
    eligible = [v for v in history if v.updated_at is not None and v.updated_at <= as_of]
    return eligible[-1] if eligible else None


def lookup_versions(
    get: Callable[[str], MemoryRecord],
    history_of: Callable[[str], list[MemoryRecord]],
    as_of: datetime | None,
) -> VersionLookup:
    """Build a :data:`VersionLookup`: the store's ``get``, or its ``history`` read ``as_of`` a record time.

    Each id is read at most once per lookup (a recall asks for partners and predecessors
    that may already be candidates); an unknown or unreadable id reads as ``None``.

    When ``get`` is a bound method of a store that also has ``get_many(ids) -> {id: latest}``
    (unknown ids left out; a :class:`StoreError` when any row is unreadable), the first id
    asked inside :func:`asking` reads every candidate of that recall in one call (one query
    instead of one round trip per candidate, issue 10). Results are those of ``get``: when
    ``get_many`` fails, each id is read alone, so one bad row hides only itself.
    """
    cache: dict[str, MemoryRecord | None] = {}
    many: ManyLookup | None = getattr(getattr(get, "__self__", None), "get_many", None)
    batched: list[frozenset[str]] = []  # the candidate sets already read in one batch

    def prefetch(record_id: str) -> None:
        asked = _ASKING.get()
        if many is None or as_of is not None or record_id not in asked or asked in batched:
            return
        batched.append(asked)  # once, even when it fails
        wanted = sorted(i for i in asked if i not in cache)
        try:
            found = many(wanted)
        except StoreError:  # a bad id or row: each is read alone below, as get would
            return
        for wanted_id in wanted:
            cache[wanted_id] = found.get(wanted_id)

    def version_of(record_id: str) -> MemoryRecord | None:
        if record_id not in cache:
            prefetch(record_id)
        if record_id not in cache:
            try:
                cache[record_id] = (
                    get(record_id) if as_of is None else version_as_of(history_of(record_id), as_of)
                )
            except StoreError:  # unknown, or a note that cannot be read: not recallable
                cache[record_id] = None
        return cache[record_id]

    return version_of

"""``Memory.erase`` and the write-keys cache: read again once on success, and again after a failure.

A successful erase reads its records' write keys again inside the erase, so that the receipt
can report the cache as a holder; ``Memory.erase`` reads them again only when the erase failed
part way (closing note 3, "work done twice").
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import pytest

from agent_memory.errors import StoreError
from agent_memory.log.inmemory import MemoryLog
from agent_memory.memory import Memory
from agent_memory.records.record import MemoryRecord
from agent_memory.search.catalog import IndexCatalog
from agent_memory.stores.inmemory import InMemoryStore
from agent_memory.write.dedup import WriteKeys, body_digest
from memory.conftest import T0, at


class CountingKeys(WriteKeys):
    """A write-keys cache that records each refresh's ids."""

    refreshed: list[list[str]]

    def refresh(self, record_ids: Iterable[str]) -> None:
        ids = sorted(record_ids)
        self.refreshed = [*getattr(self, "refreshed", []), ids]
        super().refresh(ids)


class FailingStore(InMemoryStore):
    """Erases the first record asked, then fails: an erase that stops part way."""

    def erase(self, record_id: str, reason: str, *, now: datetime | None = None) -> MemoryRecord:
        if getattr(self, "erased_one", False):
            raise StoreError("disk full", record_id=record_id)
        self.erased_one = True
        return super().erase(record_id, reason, now=now)


def build(store: InMemoryStore) -> Memory:
    catalog = IndexCatalog.in_memory(store)
    return Memory(
        store, MemoryLog(), catalog, write_keys=CountingKeys(store, read_all=catalog.readable_records)
    )


def test_a_successful_erase_reads_the_write_keys_once() -> None:
    with build(InMemoryStore()) as memory:
        keys = memory.write_keys
        assert isinstance(keys, CountingKeys)
        gone = memory.remember("Quokka-5521 naps under the porch.", source="s", now=T0).record_id
        digest = body_digest(memory.get(gone))
        assert digest is not None and keys.table.find("body", digest) == [gone]
        receipt = memory.erase([gone], reason="user request", authority="ada", now=at(1))
        assert receipt.complete
        assert keys.refreshed == [[gone]]
        assert keys.table.find("body", digest) == []


def test_an_erase_that_fails_part_way_reads_the_write_keys_again() -> None:
    with build(FailingStore()) as memory:
        keys = memory.write_keys
        assert isinstance(keys, CountingKeys)
        first = memory.remember("Quokka-5521 naps under the porch.", source="s", now=T0).record_id
        second = memory.remember("Wombat-8812 digs by the gate.", source="s", now=T0).record_id
        digests = {rid: body_digest(memory.get(rid)) for rid in (first, second)}
        with pytest.raises(StoreError, match="disk full"):
            memory.erase([first, second], reason="user request", authority="ada", now=at(1))
        assert keys.refreshed == [sorted([first, second])]
        erased = next(rid for rid in (first, second) if memory.get(rid).redacted)
        kept = first if erased == second else second
        assert keys.table.find("body", str(digests[erased])) == []
        assert keys.table.find("body", str(digests[kept])) == [kept]

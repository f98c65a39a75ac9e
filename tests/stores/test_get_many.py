"""Batched reads: a store's ``get_many`` and the recall lookup that uses it (version_lookup.py, issue 10)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent_memory.errors import StoreError
from agent_memory.log.inmemory import MemoryLog
from agent_memory.memory import Memory
from agent_memory.recall.version_lookup import asking, lookup_versions
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.catalog import IndexCatalog
from agent_memory.stores.inmemory import InMemoryStore
from agent_memory.stores.sqlite import SQLiteStore
from pg import postgres_store

T0 = datetime(2026, 7, 1, tzinfo=UTC)
NOW = datetime(2026, 7, 20, tzinfo=UTC)


def record(text: str, **fields: Any) -> MemoryRecord:
    return MemoryRecord.create(
        type="fact", body=text, provenance=Provenance(kind="test", ref="test:batch"), created_at=T0, **fields
    )


@contextmanager
def sqlite_store(tmp_path: Path) -> Iterator[SQLiteStore]:
    with SQLiteStore(tmp_path / "memory.sqlite") as store:
        yield store


def batching_factories() -> list[Any]:
    """The stores that read many records in one query."""
    return [pytest.param(sqlite_store, id="sqlite"), pytest.param(postgres_store, id="postgres")]


@pytest.fixture(params=batching_factories())
def batching(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    factory: Callable[[Path], AbstractContextManager[Any]] = request.param
    with factory(tmp_path) as made:
        yield made


def test_get_many_returns_what_get_returns_for_each_stored_id_and_leaves_out_unknown_ones(
    batching: Any,
) -> None:
    one, two, gone = record("The boiler is serviced in May."), record("Ada likes rye."), record("pin 4321")
    for each in (one, two, gone):
        batching.put(each)
    newer = one.evolve(confidence=0.4, updated_at=datetime(2026, 7, 2, tzinfo=UTC))
    batching.put(newer)
    batching.erase(gone.id, "a secret")
    unknown = record("never stored").id
    found = batching.get_many([one.id, two.id, gone.id, unknown])
    assert set(found) == {one.id, two.id, gone.id}
    for record_id, latest in found.items():
        assert latest == batching.get(record_id)
    assert found[one.id].confidence == 0.4 and found[gone.id].redacted
    assert batching.get_many([]) == {}


def test_get_many_refuses_a_malformed_id_by_name(batching: Any) -> None:
    with pytest.raises(StoreError, match=r"mem:\.\./x"):
        batching.get_many(["mem:../x"])


class BatchingStore(InMemoryStore):
    """An in-memory store with ``get_many``, counting its calls; ``fail`` makes every batch fail."""

    def __init__(self, *, fail: bool = False) -> None:
        super().__init__()
        self.fail, self.gets = fail, 0
        self.batches: list[list[str]] = []

    def get(self, record_id: str) -> MemoryRecord:
        self.gets += 1
        return super().get(record_id)

    def get_many(self, record_ids: list[str]) -> dict[str, MemoryRecord]:
        self.batches.append(list(record_ids))
        if self.fail:
            raise StoreError("a row is unreadable", record_id=record_ids[0])
        return {i: InMemoryStore.get(self, i) for i in record_ids if self.contains(i)}


TEXTS = [f"The team met on day {n} to plan the garden shed, the fence and the pond." for n in range(12)]


def filled(store: InMemoryStore) -> Memory:
    for number, text in enumerate(TEXTS):
        store.put(record(text, confidence=0.5 + number / 40))
    memory = Memory(store, MemoryLog(), IndexCatalog.in_memory(store))
    memory.catalog.refresh()  # the indexes read the store first: those reads are not recall's
    if isinstance(store, BatchingStore):
        store.gets = 0
    return memory


def test_a_recall_reads_its_candidates_in_one_batch_and_answers_as_reading_each_would() -> None:
    batching = BatchingStore()
    expected = filled(InMemoryStore()).recall("garden shed fence", now=NOW, touch=False)
    got = filled(batching).recall("garden shed fence", now=NOW, touch=False)
    assert len(batching.batches) == 1 and sorted(batching.batches[0]) == batching.batches[0]
    assert len(batching.batches[0]) == len(TEXTS) and batching.gets == 0
    assert got == expected and len(got.records) == len(TEXTS)


def test_a_failed_batch_is_tried_once_and_each_candidate_is_then_read_alone() -> None:
    failing = BatchingStore(fail=True)
    expected = filled(InMemoryStore()).recall("garden shed fence", now=NOW, touch=False)
    got = filled(failing).recall("garden shed fence", now=NOW, touch=False)
    assert len(failing.batches) == 1 and failing.gets == len(TEXTS)
    assert got == expected


def test_a_lookup_outside_a_recall_or_as_of_a_time_reads_one_record_at_a_time() -> None:
    store = BatchingStore()
    one, two = record("first note"), record("second note")
    store.put(one)
    store.put(two)
    plain = lookup_versions(store.get, store.history, None)
    assert plain(one.id) == one and store.batches == []
    with asking([one.id, two.id]):
        dated = lookup_versions(store.get, store.history, T0)
        assert dated(two.id) == two and store.batches == []
        batched = lookup_versions(store.get, store.history, None)
        assert batched(two.id) == two and batched(one.id) == one
    assert store.batches == [sorted([one.id, two.id])] and store.gets == 1

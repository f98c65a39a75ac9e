"""``restore_erased``: every adapter can take in an erased history under a new id, and only that.

Runs once per adapter through the ``store`` fixture (tests/stores/conftest.py). Migration uses
it to carry an erasure over to another store (agent_memory.transfer.migrate).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory.errors import StoreError
from agent_memory.records.lifecycle import archive
from agent_memory.records.record import MemoryRecord, Provenance, State
from agent_memory.stores.files import FileStore
from agent_memory.stores.inmemory import InMemoryStore
from agent_memory.stores.urls import AdapterStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def record(body: str) -> MemoryRecord:
    return MemoryRecord.create(
        type="fact",
        body=body,
        provenance=Provenance(kind="conversation", ref="s-1"),
        created_at=T0,
        tags=("ops",),
    )


def erased_history(body: str, versions: int = 2) -> list[MemoryRecord]:
    """The history an erasure leaves: ``versions`` copies of one tombstone (made by the reference store)."""
    reference = InMemoryStore()
    first = record(body)
    reference.put(first)
    if versions > 1:
        reference.put(archive(first, "retired", now=T0 + timedelta(days=1)))
    reference.erase(first.id, "asked to forget", now=T0 + timedelta(days=2))
    return reference.history(first.id)


def test_an_erased_history_is_stored_whole_under_a_new_id(store: AdapterStore) -> None:
    history = erased_history("The door code is 4711.")
    assert store.restore_erased(history) == 2
    assert [v.canonical_bytes() for v in store.history(history[0].id)] == [
        v.canonical_bytes() for v in history
    ]
    tombstone = store.get(history[0].id)
    assert tombstone.redacted and tombstone.body == "[redacted]" and tombstone.state is State.ARCHIVED
    assert store.contains(tombstone.id)
    assert [r.id for r in store.list(state=State.ARCHIVED)] == [tombstone.id]
    assert store.list(tag="ops") == []  # the tombstone keeps no tags


def test_nothing_can_follow_a_restored_tombstone(store: AdapterStore) -> None:
    history = erased_history("The door code is 4711.", versions=1)
    store.restore_erased(history)
    with pytest.raises(StoreError, match="erased"):
        store.put(record("The door code is 4711."))
    assert len(store.history(history[0].id)) == 1


def test_an_id_the_store_holds_is_refused_and_left_alone(store: AdapterStore) -> None:
    live = record("The door code is 4711.")
    store.put(live)
    with pytest.raises(StoreError, match="already holds this record") as info:
        store.restore_erased(erased_history("The door code is 4711."))
    assert info.value.record_id == live.id
    assert [v.canonical_bytes() for v in store.history(live.id)] == [live.canonical_bytes()]


def _mixed() -> list[MemoryRecord]:
    history = erased_history("x")
    return [record("x"), history[1]]


def _two_tombstones() -> list[MemoryRecord]:
    first = erased_history("x")[0]
    later = InMemoryStore()
    later.put(record("x"))
    return [first, later.erase(first.id, "another reason", now=T0)]


def _two_ids() -> list[MemoryRecord]:
    return [erased_history("x")[0], erased_history("y")[0]]


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (list, "at least one version"),
        (lambda: [record("x")], "no version is a tombstone"),
        (_mixed, "version 1 is not a tombstone: the erasure did not finish"),
        (_two_tombstones, "version 2 is another tombstone"),
        (_two_ids, "version 2 belongs to"),
    ],
    ids=["empty", "live", "unfinished-erasure", "two-tombstones", "two-ids"],
)
def test_anything_but_an_erased_history_is_refused_and_nothing_is_written(
    store: AdapterStore, make: object, match: str
) -> None:
    history: list[MemoryRecord] = make()  # type: ignore[operator]
    with pytest.raises(StoreError, match=match):
        store.restore_erased(history)
    assert store.list() == []


def test_a_file_store_refuses_when_a_writer_is_creating_the_record_and_leaves_no_temp_folder(
    tmp_path: Path,
) -> None:
    store = FileStore(tmp_path / "notes")
    history = erased_history("The door code is 4711.")
    record_dir = tmp_path / "notes" / history[0].id.removeprefix("mem:")
    record_dir.mkdir(parents=True)
    (record_dir / ".tmp-0123").write_bytes(b"a writer's version, not linked yet")
    with pytest.raises(StoreError, match="another writer created this record meanwhile"):
        store.restore_erased(history)
    assert sorted(p.name for p in record_dir.iterdir()) == [".tmp-0123"]
    assert sorted(p.name for p in (tmp_path / "notes").iterdir()) == [record_dir.name]


def test_a_file_store_takes_over_an_empty_record_folder(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "records", codec="json")
    history = erased_history("The door code is 4711.")
    record_dir = tmp_path / "records" / history[0].id.removeprefix("mem:")
    record_dir.mkdir(parents=True)  # a writer made it and has not written yet
    assert store.restore_erased(history) == 2
    assert sorted(p.name for p in record_dir.iterdir()) == ["000001.json", "000002.json"]
    assert (record_dir / "000002.json").read_bytes() == history[1].canonical_bytes()
    assert sorted(p.name for p in (tmp_path / "records").iterdir()) == [record_dir.name]

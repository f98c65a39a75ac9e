"""SQLiteStore beyond the contract: WAL, threads and processes, batches, SQL filters, erasure on disk."""

from __future__ import annotations

import itertools
import multiprocessing
import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

import pytest
from fg_agent_id import KeyPair

from agent_memory.errors import RecordNotFound, StoreError
from agent_memory.records.lifecycle import archive
from agent_memory.records.record import Kind, MemoryRecord, Provenance, RecordType, State
from agent_memory.records.signing import sign_record, verify_record
from agent_memory.stores.base import filter_records
from agent_memory.stores.sqlite import SQLiteStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)
FORK = multiprocessing.get_context("fork")


def make_record(body: str, **fields: Any) -> MemoryRecord:
    fields.setdefault("created_at", T0)
    return MemoryRecord.create(
        type=fields.pop("type", "fact"),
        body=body,
        provenance=Provenance(kind="conversation", ref="t"),
        **fields,
    )


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "memory.sqlite"


def database_files(db: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in db.parent.glob(db.name + "*")}


def test_a_file_database_runs_in_wal_mode_with_its_schema_marked(db: Path) -> None:
    with SQLiteStore(db):
        raw = sqlite3.connect(db)
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert raw.execute("PRAGMA user_version").fetchone() == (2,)
        raw.close()


def test_a_database_of_an_unknown_schema_version_is_refused(db: Path) -> None:
    raw = sqlite3.connect(db)
    raw.execute("PRAGMA user_version = 99")
    raw.close()
    with pytest.raises(StoreError, match="unknown schema version 99"):
        SQLiteStore(db)


def test_a_database_of_another_program_is_refused_and_left_alone(db: Path) -> None:
    raw = sqlite3.connect(db)
    raw.execute("CREATE TABLE records (record_id TEXT PRIMARY KEY, seq INTEGER, payload TEXT)")
    raw.commit()
    raw.close()
    before = db.read_bytes()
    with pytest.raises(StoreError, match="tables of another program"):
        SQLiteStore(db)
    assert db.read_bytes() == before


def test_in_memory_databases_are_private_to_their_store() -> None:
    record = make_record("Only in the first.")
    with SQLiteStore() as first, SQLiteStore(":memory:") as second:
        first.put(record)
        assert first.contains(record.id)
        assert not second.contains(record.id)


def test_a_signed_record_reads_back_to_the_bytes_its_signature_covers(db: Path, seed_keys: KeyPair) -> None:
    record = sign_record(make_record("Signed and stored.", tags=("x",), slots={"n": 1}), seed_keys)
    with SQLiteStore(db) as store:
        store.put(record)
        got = store.get(record.id)
    raw = sqlite3.connect(db)
    (payload,) = raw.execute("SELECT payload FROM versions").fetchone()
    raw.close()
    assert payload == record.canonical_bytes() == got.canonical_bytes()
    verify_record(got)


def test_a_corrupt_row_is_named_and_other_records_stay_readable(db: Path) -> None:
    bad, good = make_record("Row to break."), make_record("Row to keep.")
    with SQLiteStore(db) as store:
        store.put_many([bad, good])
        raw = sqlite3.connect(db)
        raw.execute("UPDATE versions SET payload = ? WHERE record_id = ?", (b"{not json", bad.id))
        raw.commit()
        raw.close()
        with pytest.raises(StoreError, match=r"memory\.sqlite#versions\[1\]") as caught:
            store.get(bad.id)
        assert caught.value.record_id == bad.id
        assert store.get(good.id) == good


@pytest.mark.parametrize("record_id", ["mem:../x", "/etc/passwd", "mem:" + "A" * 32, "mem:" + "0" * 31 + "'"])
def test_malformed_ids_are_refused_not_looked_up(record_id: str) -> None:
    with SQLiteStore() as store:
        for call in (store.get, store.history, store.contains, lambda i: store.erase(i, "why")):
            with pytest.raises(StoreError, match="refused record id") as caught:
                call(record_id)
            assert not isinstance(caught.value, RecordNotFound)


def varied_records() -> list[MemoryRecord]:
    records = []
    kinds = itertools.cycle([None, Kind.KNOWLEDGE, Kind.STATE])
    for i in range(36):
        kind = next(kinds)
        records.append(
            make_record(
                f"Varied record {i}.",
                type=[RecordType.FACT, RecordType.EPISODE, RecordType.PROCEDURE][i % 3],
                created_at=T0 + timedelta(minutes=i % 5),  # ties, broken by id
                tags=[("a",), ("a", "b"), (), ("b",)][i % 4],
                kind=kind,
                subject=f"host:{i % 2}" if kind is Kind.STATE else None,
                namespace=[None, "default", "user:ann"][i % 3],
            )
        )
    return records


def test_list_filters_in_sql_agree_with_the_reference_filter() -> None:
    records = varied_records()
    latest = [archive(r, "old", now=T0) if i % 4 == 0 else r for i, r in enumerate(records)]
    with SQLiteStore() as store:
        store.put_many(records)
        store.put_many([r for r in latest if r.state is State.ARCHIVED])
        filters: list[dict[str, Any]] = [
            {},
            {"state": State.ACTIVE},
            {"state": State.ARCHIVED, "tag": "a"},
            {"type": RecordType.EPISODE},
            {"tag": "b"},
            {"tag": "missing"},
            {"kind": Kind.KNOWLEDGE},
            {"kind": Kind.STATE, "subject": "host:1"},
            {"namespace": "default"},
            {"namespace": "user:ann", "type": RecordType.PROCEDURE, "state": State.ACTIVE},
        ]
        for selection in filters:
            expected = filter_records(latest, **selection)
            assert [r.id for r in store.list(**selection)] == [r.id for r in expected], selection
        assert store.list() == filter_records(latest)


def test_threads_sharing_a_store_lose_no_version(db: Path) -> None:
    shared = make_record("Every thread appends here.")
    with SQLiteStore(db) as store:
        store.put(shared)

        def work(n: int) -> None:
            for i in range(15):
                store.put(make_record(f"Thread {n}, record {i}."))
                store.put(shared.evolve(tags=(f"{n}-{i}",)))

        threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert len(store.list()) == 1 + 6 * 15
        assert len(store.history(shared.id)) == 1 + 6 * 15


def write_from_process(db: Path, wire: dict[str, Any], label: str, go: Event) -> None:
    shared = MemoryRecord.from_wire(wire)
    with SQLiteStore(db) as store:
        go.wait()
        for i in range(40):
            store.put(make_record(f"Process {label}, record {i}."))
            store.put(shared.evolve(tags=(f"{label}-{i}",)))


def test_two_processes_writing_one_database_lose_nothing(db: Path) -> None:
    shared = make_record("Both processes append here.")
    with SQLiteStore(db) as store:
        store.put(shared)
    go = FORK.Event()
    writers = [
        FORK.Process(target=write_from_process, args=(db, shared.to_wire(), label, go)) for label in "ab"
    ]
    for writer in writers:
        writer.start()
    go.set()
    for writer in writers:
        writer.join(timeout=60)

    assert [w.exitcode for w in writers] == [0, 0]
    with SQLiteStore(db) as store:
        history = store.history(shared.id)
        assert len(store.list()) == 81
    assert sorted(t for v in history for t in v.tags) == sorted(f"{x}-{i}" for x in "ab" for i in range(40))


def test_erasure_leaves_no_erased_byte_in_the_database_its_wal_or_shm(db: Path) -> None:
    secret = make_record(
        "The vault code is quartz-7351.", tags=("quartz-tag",), kind=Kind.STATE, subject="vault:quartz"
    )
    others = [make_record(f"Unrelated note {i}. " + "padding " * 40) for i in range(200)]
    with SQLiteStore(db) as store, SQLiteStore(db) as idle_reader:
        store.put_many([*others[:100], secret, *others[100:]])
        store.put(archive(secret, "rotated", now=T0))
        idle_reader.get(others[0].id)
        assert any(b"quartz" in data for data in database_files(db).values())

        tombstone = store.erase(secret.id, "asked to forget", now=T0)

        # Checked while both connections are open: closing the last one would checkpoint
        # and delete the WAL on its own and hide whether erase() cleaned it.
        files = database_files(db)
        assert set(files) == {"memory.sqlite", "memory.sqlite-wal", "memory.sqlite-shm"}
        for name, data in files.items():
            assert b"quartz" not in data, name
        assert store.history(secret.id) == [tombstone, tombstone]
        assert store.list(tag="quartz-tag") == []
        assert idle_reader.get(secret.id) == tombstone

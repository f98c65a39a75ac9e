"""Parsed records are cached per store (stores/base.py `RecordCache`): parsed once, never stale or shared."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_memory.errors import StoreError
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.stores import files
from agent_memory.stores.base import RecordCache
from agent_memory.stores.files import FileStore
from agent_memory.stores.sqlite import SQLiteStore

T0 = datetime(2026, 7, 1, tzinfo=UTC)


def record(text: str, **fields: object) -> MemoryRecord:
    return MemoryRecord.create(
        type="fact",
        body=text,
        provenance=Provenance(kind="test", ref="test:cache"),
        created_at=T0,
        **fields,  # type: ignore[arg-type]
    )


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cache notes however recently changed (the store waits 2 s; tests do not sleep)."""
    monkeypatch.setattr(files, "_SETTLED_NS", -1)


class CountingLoad:
    """Wraps a FileStore's parser and counts the files it parses."""

    def __init__(self, load: Callable[[bytes, str], MemoryRecord]) -> None:
        self.load, self.calls = load, 0

    def __call__(self, data: bytes, path: str) -> MemoryRecord:
        self.calls += 1
        return self.load(data, path)


def note_path(store: FileStore, one: MemoryRecord) -> Path:
    return store.root / one.id.removeprefix("mem:") / "000001.md"


@pytest.mark.usefixtures("settled")
def test_an_unchanged_note_is_parsed_once_and_each_read_gets_its_own_copy(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "notes")
    one = record("The staging host is db-2.", slots={"host": "db-2"})
    store.put(one)
    counting = CountingLoad(store._load)
    store._load = counting
    first, second = store.get(one.id), store.get(one.id)
    assert first == second == one and counting.calls == 1
    first.slots["host"] = "changed by a caller"
    assert store.get(one.id).slots == {"host": "db-2"}


def test_a_note_written_just_now_is_not_cached(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "notes")
    one = record("Ada drinks green tea.")
    store.put(one)
    counting = CountingLoad(store._load)
    store._load = counting
    store.get(one.id)
    store.get(one.id)
    assert counting.calls == 2


@pytest.mark.usefixtures("settled")
def test_an_edit_in_place_is_read_again_even_with_its_old_mtime_put_back(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "notes")
    one = record("The office closes at six.")
    store.put(one)
    path = note_path(store, one)
    assert store.get(one.id) == one
    before = os.stat(path)
    path.write_bytes(path.read_bytes().replace(b"six", b"seven"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(StoreError, match="unreadable version file"):
        store.get(one.id)  # the id no longer matches the text: read, not served from the cache


@pytest.mark.usefixtures("settled")
def test_an_erased_note_reads_as_its_tombstone_and_the_cache_is_emptied(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "notes")
    one = record("The wifi password is hunter2.")
    store.put(one)
    store.get(one.id)
    assert store._cache._items
    store.erase(one.id, "secret")
    assert not store._cache._items
    assert store.get(one.id).redacted


def test_a_sqlite_row_changed_by_another_tool_is_decoded_again(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    one, two = record("Backups run nightly."), record("Backups run weekly.")
    with SQLiteStore(path) as store:
        store.put(one)
        assert store.get(one.id) == one
        raw = sqlite3.connect(path)
        raw.execute("UPDATE versions SET payload = ? WHERE record_id = ?", (two.canonical_bytes(), one.id))
        raw.commit()
        raw.close()
        with pytest.raises(StoreError, match="the row holds"):
            store.get(one.id)


def test_the_cache_keeps_the_most_recently_used_records_only() -> None:
    cache = RecordCache(size=2)
    a, b, c = record("a note"), record("b note"), record("c note")
    cache.put("a", a)
    cache.put("b", b)
    assert cache.get("a") == a  # a is now the most recent
    cache.put("c", c)
    assert cache.get("b") is None and cache.get("a") == a and cache.get("c") == c
    cache.clear()
    assert cache.get("a") is None


class CountingScandir:
    """Wraps ``os.scandir`` and counts the directories listed."""

    def __init__(self, scandir: Callable[[str], object]) -> None:
        self.scandir, self.calls = scandir, 0

    def __call__(self, path: str) -> object:
        self.calls += 1
        return self.scandir(path)


@pytest.mark.usefixtures("settled")
def test_an_unchanged_record_directory_is_listed_once_and_its_note_opened_on_every_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileStore(tmp_path / "notes")
    one = record("The printer is on the second floor.")
    store.put(one)
    counting = CountingScandir(os.scandir)
    monkeypatch.setattr(os, "scandir", counting)
    assert store.get(one.id) == store.get(one.id) == store.get(one.id) == one
    assert counting.calls == 1
    note_path(store, one).write_bytes(b"not a note")  # same name, same directory: still caught
    with pytest.raises(StoreError, match="unreadable version file"):
        store.get(one.id)


@pytest.mark.usefixtures("settled")
def test_a_version_added_by_another_writer_is_read_at_once_even_with_the_directory_mtime_put_back(
    tmp_path: Path,
) -> None:
    reader, writer = FileStore(tmp_path / "notes"), FileStore(tmp_path / "notes")
    one = record("The gym opens at seven.")
    writer.put(one)
    assert reader.get(one.id) == one
    folder = note_path(writer, one).parent
    before = os.stat(folder)
    newer = one.evolve(confidence=0.3, updated_at=datetime(2026, 7, 2, tzinfo=UTC))
    writer.put(newer)
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))  # the change time still moves
    assert reader.get(one.id) == newer


@pytest.mark.usefixtures("settled")
def test_a_latest_version_removed_by_hand_reads_the_one_before_and_a_linked_directory_is_refused(
    tmp_path: Path,
) -> None:
    store = FileStore(tmp_path / "notes")
    one = record("Lunch is at noon.")
    store.put(one)
    newer = one.evolve(confidence=0.3, updated_at=datetime(2026, 7, 2, tzinfo=UTC))
    store.put(newer)
    assert store.get(one.id) == newer
    folder = note_path(store, one).parent
    (folder / "000002.md").unlink()
    assert store.get(one.id) == one
    os.rename(folder, tmp_path / "elsewhere")
    os.symlink(tmp_path / "elsewhere", folder)
    with pytest.raises(StoreError, match="symbolic link"):
        store.get(one.id)

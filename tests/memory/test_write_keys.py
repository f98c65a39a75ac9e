"""The write keys: a fresh process's first write reads what it must, and the cache is never trusted.

Store reads are counted by fakes (a FileStore and an InMemoryStore that count ``get`` and
``list``), never timed.
"""

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_memory.home import Home
from agent_memory.log.base import LogEntry
from agent_memory.log.inmemory import MemoryLog
from agent_memory.log.jsonl import JsonlLog
from agent_memory.memory import Memory
from agent_memory.records.note import dump_note
from agent_memory.records.record import Kind, MemoryRecord, Provenance, State
from agent_memory.search.catalog import IndexCatalog
from agent_memory.search.recipes import SearchSettings, splice_search
from agent_memory.stores.files import FileStore
from agent_memory.stores.inmemory import InMemoryStore
from agent_memory.stores.sqlite import SQLiteStore
from agent_memory.sync.run import sync
from agent_memory.write.dedup import FILE_NAME, WriteKeys, body_digest
from agent_memory.write.dedup_table import FORMAT
from memory.conftest import T0, at

SUBJECT = "host:staging"


class CountingFiles(FileStore):
    """A Home's note store that counts whole-store reads and single-record reads."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.gets = 0
        self.lists = 0

    def get(self, record_id: str) -> MemoryRecord:
        self.gets += 1
        return super().get(record_id)

    def list(self, **filters: Any) -> list[MemoryRecord]:
        self.lists += 1
        return super().list(**filters)


class CountingMemory(InMemoryStore):
    """The in-memory store, counting single-record reads."""

    def __init__(self) -> None:
        super().__init__()
        self.gets = 0

    def get(self, record_id: str) -> MemoryRecord:
        self.gets += 1
        return super().get(record_id)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    Home.init(path, git=False, now=T0)
    toml = path / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
    return path


def fresh(home: Path) -> tuple[Memory, CountingFiles]:
    """A Memory over ``home`` as a new process opens it, its write keys reading through a counter."""
    store = CountingFiles(home / "notes")
    return Memory.open(home, write_keys=WriteKeys.for_home(home / ".cache", store)), store


def fill(home: Path, count: int = 30) -> list[str]:
    texts = [f"Fact number {n} about the build." for n in range(count)]
    with Memory.open(home) as memory:
        for n, text in enumerate(texts):
            memory.remember(text, source="s", now=at(hours=n))
        memory.remember("Staging runs on db-1.", source="s", kind="state", subject=SUBJECT, now=at(2))
    return texts


def actives(store: Any) -> list[str]:
    return [r.id for r in store.list(kind=Kind.STATE, subject=SUBJECT, state=State.ACTIVE)]


def test_a_fresh_process_writes_first_without_reading_the_home(home: Path) -> None:
    texts = fill(home)
    memory, store = fresh(home)
    with memory:
        assert not memory.remember("A new fact.", source="s", now=at(3)).deduped
        assert (store.lists, store.gets) == (0, 0)  # nothing to check: no row carries these keys
        assert memory.remember(texts[3], source="s", now=at(3)).deduped
        newer = memory.remember("Staging runs on db-2.", source="s", kind="state", subject=SUBJECT, now=at(3))
        assert newer.superseded is not None
        assert (store.lists, store.gets) == (0, 2)  # one duplicate and one live subject, each read once
        assert actives(memory.store) == [newer.record_id]


def test_two_memories_on_one_home_see_each_others_writes(home: Path) -> None:
    with Memory.open(home) as one, Memory.open(home) as two:
        first = one.remember("Deploys happen on Fridays.", source="s", now=T0)
        assert (
            two.remember(" Deploys happen on Fridays.\n", source="s", now=at(1)).record_id == first.record_id
        )
        values = []
        for day, memory in enumerate([two, one, two, one], start=1):
            text = f"Staging runs on db-{day}."
            values.append(memory.remember(text, source="s", kind="state", subject=SUBJECT, now=at(day)))
        assert [v.superseded for v in values[1:]] == [v.record_id for v in values[:-1]]
        assert actives(one.store) == [values[-1].record_id]


def test_dedup_and_supersede_hold_across_two_memories_on_one_store(memory: Memory) -> None:
    other = Memory(memory.store, memory.log, IndexCatalog.in_memory(memory.store))
    first = memory.remember("Lunch is at noon.", source="s", now=T0)
    old = other.remember("Staging runs on db-1.", source="s", kind="state", subject=SUBJECT, now=T0)
    assert other.remember("Lunch is at noon.", source="s", now=at(1)).record_id == first.record_id
    new = memory.remember("Staging runs on db-2.", source="s", kind="state", subject=SUBJECT, now=at(1))
    assert new.superseded == old.record_id
    newest = other.remember("Staging runs on db-3.", source="s", kind="state", subject=SUBJECT, now=at(2))
    assert newest.superseded == new.record_id
    assert actives(memory.store) == [newest.record_id]


def test_notes_added_by_hand_are_found_by_the_next_process(home: Path) -> None:
    fill(home, 5)
    source = Provenance(kind="file", ref="notes/copied.md")
    copied = MemoryRecord.create(type="fact", body="Copied from a clone.", provenance=source, created_at=T0)
    state = MemoryRecord.create(
        type="fact", body="Staging runs on db-9.", provenance=source, created_at=at(5), valid_from=at(5),
        kind=Kind.STATE, subject=SUBJECT,
    )  # fmt: skip
    for record in (copied, state):  # as a copy or a git pull leaves them: no log entry
        folder = home / "notes" / record.id.removeprefix("mem:")
        folder.mkdir()
        (folder / "000001.md").write_bytes(dump_note(record))
    memory, store = fresh(home)
    with memory:
        assert memory.remember("Copied from a clone.", source="s", now=at(6)).record_id == copied.id
        newer = memory.remember(
            "Staging runs on db-10.", source="s", kind="state", subject=SUBJECT, now=at(6)
        )
        assert newer.superseded == state.id
        assert store.lists == 0 and store.gets == 2 + 2  # the two new notes, then the two answers


def test_a_stale_cache_file_is_caught_up_from_the_notes(home: Path) -> None:
    fill(home, 5)
    cache = home / ".cache" / FILE_NAME
    saved = cache.read_bytes()
    with Memory.open(home) as memory:
        later = memory.remember("Written after the copy.", source="s", now=at(3))
        value = memory.remember("Staging runs on db-2.", source="s", kind="state", subject=SUBJECT, now=at(3))
    cache.write_bytes(saved)  # the cache as it was before those two writes
    memory, store = fresh(home)
    with memory:
        assert memory.remember("Written after the copy.", source="s", now=at(4)).record_id == later.record_id
        newest = memory.remember(
            "Staging runs on db-3.", source="s", kind="state", subject=SUBJECT, now=at(4)
        )
        assert newest.superseded == value.record_id
        assert actives(memory.store) == [newest.record_id]
        assert store.lists == 0


@pytest.mark.parametrize("damage", ["missing", "garbage", "truncated", "another format", "another store"])
def test_a_missing_or_damaged_cache_file_is_made_again_from_the_notes(home: Path, damage: str) -> None:
    texts = fill(home, 8)
    cache = home / ".cache" / FILE_NAME
    if damage == "missing":
        cache.unlink()
    elif damage == "garbage":
        cache.write_bytes(b"not a database at all" * 100)
    elif damage == "truncated":
        cache.write_bytes(cache.read_bytes()[:1000])
    else:
        with sqlite3.connect(cache) as conn:
            if damage == "another format":
                conn.execute(f"PRAGMA user_version = {FORMAT + 1}")
            else:
                conn.execute("UPDATE meta SET value = 'feed:SQLiteStore(elsewhere)' WHERE key = 'identity'")
        conn.close()
    memory, store = fresh(home)
    with memory:
        assert memory.remember(texts[2], source="s", now=at(3)).deduped
        newer = memory.remember("Staging runs on db-2.", source="s", kind="state", subject=SUBJECT, now=at(3))
        assert newer.superseded is not None and actives(memory.store) == [newer.record_id]
        # Made again in chunks, each note read once (the texts and the state value), never listed
        # whole; then the two answers.
        assert store.lists == 0 and store.gets == len(texts) + 1 + 2
    with sqlite3.connect(cache) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == FORMAT
        assert (
            conn.execute("SELECT count(*) FROM keys").fetchone()[0] == len(texts) + 2
        )  # the old and the new state value
    conn.close()


def test_a_row_that_no_longer_holds_is_checked_against_the_store_and_corrected(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "notes")
    keys = WriteKeys(store, tmp_path / FILE_NAME)
    source = Provenance(kind="test", ref="s")
    record = MemoryRecord.create(type="fact", body="Soon archived.", provenance=source, created_at=T0)
    store.put(record)
    assert keys.lookup(record, head=1)[0] == record
    from agent_memory.records.lifecycle import archive

    store.put(archive(record, "retired", now=at(1)))  # by another tool: no log entry, no row update
    assert keys.lookup(record, head=1) == (None, None)
    assert keys.table.find("body", body_digest(record)) == []  # corrected: no digest kept
    keys.close()


def test_an_erased_record_leaves_no_digest_in_the_cache(home: Path) -> None:
    with Memory.open(home) as memory:
        gone = memory.remember("The old door code was 4711.", source="s", now=T0)
        record = memory.get(gone.record_id)
        memory.erase([gone.record_id], reason="asked to forget", authority="owner")
        with sqlite3.connect(home / ".cache" / FILE_NAME) as conn:
            held = conn.execute("SELECT count(*) FROM keys WHERE body = ?", (body_digest(record),))
            assert held.fetchone()[0] == 0
        conn.close()
        again = memory.remember("The old door code was 4711.", source="s", now=at(1))
        assert not again.deduped and again.record_id != gone.record_id


class CountingSQLite(SQLiteStore):
    """The SQLite store, counting single-record reads."""

    gets = 0

    def get(self, record_id: str) -> MemoryRecord:
        self.gets += 1
        return super().get(record_id)


@pytest.fixture(params=["inmemory", "sqlite"])
def feed_store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    store = CountingMemory() if request.param == "inmemory" else CountingSQLite(tmp_path / "store.sqlite")
    if not callable(getattr(store, "changes_since", None)):
        pytest.skip(f"{type(store).__name__} has no change feed (changes_since) yet")
    return store


def test_a_change_feed_store_is_read_again_only_where_it_changed(feed_store: Any, tmp_path: Path) -> None:
    keys = WriteKeys(feed_store, tmp_path / FILE_NAME)
    assert keys.mode == "feed"
    source = Provenance(kind="test", ref="s")
    made = [
        MemoryRecord.create(type="fact", body=f"Fact {n}.", provenance=source, created_at=at(hours=n))
        for n in range(12)
    ]
    for record in made[:10]:
        feed_store.put(record)
    assert keys.lookup(made[3], head=1)[0] == made[3]
    feed_store.gets = 0
    for record in made[10:]:
        feed_store.put(record)  # another writer
    assert keys.lookup(made[11], head=2)[0] == made[11]
    assert feed_store.gets == 2 + 1  # the two new records, then the answer
    from agent_memory.records.lifecycle import archive

    feed_store.put(archive(made[11], "retired", now=at(1)))  # another writer again
    assert keys.lookup(made[11], head=3) == (None, None)
    keys.close()


def test_the_scan_baseline_reads_the_whole_store_when_the_log_moves() -> None:
    store, log = InMemoryStore(), MemoryLog()
    memory = Memory(store, log, IndexCatalog.in_memory(store), write_keys=WriteKeys(store, scan=True))
    other = Memory(store, log, IndexCatalog.in_memory(store))
    first = other.remember("Seen by the scan.", source="s", now=T0)
    assert memory.remember("Seen by the scan.", source="s", now=at(1)).record_id == first.record_id
    assert memory.write_keys.mode == "scan"


class CountingLog(JsonlLog):
    """A Home's log that counts reads (``entries``) and keeps the seq each read started after."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.reads = 0
        self.since: list[int] = []

    def entries(self, *, since_seq: int = 0) -> Iterator[LogEntry]:
        self.reads += 1
        self.since.append(since_seq)
        return super().entries(since_seq=since_seq)


class FailingFiles(FileStore):
    """A note store whose puts fail once ``fail_after`` of them went through (a crash mid-write)."""

    def __init__(self, root: Path, fail_after: int) -> None:
        super().__init__(root)
        self.left = fail_after

    def put(self, record: MemoryRecord) -> int:
        if self.left == 0:
            raise OSError("the disk went away")
        self.left -= 1
        return super().put(record)


def over(home: Path, store: FileStore, log: JsonlLog) -> Memory:
    """A Memory over ``home`` built by hand from ``store`` and ``log``, as Memory.open builds one."""
    opened = Home.open(home)
    return Memory(
        store,
        log,
        IndexCatalog.in_memory(store),
        identity=opened.identity(),
        write_keys=WriteKeys.for_home(opened.cache_dir, store),
        writer_lock=opened.writer_lock,
    )


def test_opening_a_settled_home_does_not_read_its_log(home: Path) -> None:
    fill(home, 5)
    log = CountingLog(home / "log")
    with over(home, FileStore(home / "notes"), log) as memory:
        assert memory.roll_forward(now=at(3)) == 0 and log.reads == 0
        settled = log.last()
        assert settled is not None
        memory.log.append("put", actor="someone", record_ids=(), details={}, now=at(3))  # not through Memory
        assert memory.roll_forward(now=at(3)) == 0 and log.reads > 0
        # Only what came after the settled head is read: the log is not read from its start.
        assert log.since and min(log.since) >= settled.seq - 1
        reads = log.reads
        assert memory.roll_forward(now=at(3)) == 0 and log.reads == reads


def test_an_intent_left_open_after_the_settled_head_is_still_rolled_forward(home: Path) -> None:
    fill(home, 3)
    log = CountingLog(home / "log")
    with over(home, FileStore(home / "notes"), log) as memory:
        memory.roll_forward(now=at(3))
        settled = log.last()
        assert settled is not None
        # An intent whose new record never reached the store: a crash right after logging it.
        memory.log.append(
            "intent",
            actor="someone",
            record_ids=(f"mem:{'a' * 32}", f"mem:{'b' * 32}"),
            details={"op": "supersede", "reason": "r", "subject": SUBJECT},
            now=at(3),
        )
        assert memory.roll_forward(now=at(3)) == 1  # closed as abandoned
        assert min(log.since) >= settled.seq - 1


def test_a_write_interrupted_inside_memory_is_still_rolled_forward_on_open(home: Path) -> None:
    fill(home, 2)
    crashing = over(home, FailingFiles(home / "notes", fail_after=1), JsonlLog(home / "log"))
    with pytest.raises(Exception, match="disk went away"):  # after the intent and the new record
        crashing.remember("Staging runs on db-2.", source="s", kind="state", subject=SUBJECT, now=at(3))
    crashing.close()
    assert len(actives(FileStore(home / "notes"))) == 2  # the torn moment
    with Memory.open(home) as memory:
        (live,) = actives(memory.store)
        assert memory.get(live).body == "Staging runs on db-2."


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_note_edited_by_hand_is_seen_by_an_open_memory_once_sync_made_it_a_correction(
    tmp_path: Path,
) -> None:
    path = tmp_path / "home"
    Home.init(path, git=True, now=T0)
    toml = path / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
    with Memory.open(path) as memory:  # closing commits the note
        old = memory.remember("Likes green tea.", source="s", now=T0)
    with Memory.open(path) as early:
        early.remember("Something else.", source="s", now=at(1))  # its keys are now in step
        note = path / "notes" / old.record_id.removeprefix("mem:") / "000001.md"
        note.write_bytes(note.read_bytes().replace(b"green", b"black"))
        opened = sync(Home.open(path), open_memory=lambda: Memory.open(path, source_kind="file"), now=at(2))
        (item,) = opened.items
        assert item.action == "correct" and item.new_record_id is not None
        again = early.remember("Likes black tea.", source="s", now=at(3))
        assert again.deduped and again.record_id == item.new_record_id
        assert not early.remember("Likes green tea.", source="s", now=at(3)).deduped  # superseded now

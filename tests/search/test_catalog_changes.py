"""IndexCatalog over a store with a change feed: an unchanged store is not read, any writer is seen.

Reads are counted by :class:`CountingStore`, a fake that passes every call to a real store
(STYLE.md: fakes, not mocks); no test here measures time.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from search_kit import ids, record

from agent_memory.connect import connect
from agent_memory.memory import Memory
from agent_memory.records.record import MemoryRecord
from agent_memory.search.catalog import FULL_CHECK_SECONDS, IndexCatalog
from agent_memory.search.fts import FtsIndex
from agent_memory.search.recipes import SearchSettings
from agent_memory.stores.base import ChangeFeed, Changes
from agent_memory.stores.files import FileStore
from agent_memory.stores.inmemory import InMemoryStore
from agent_memory.stores.sqlite import SQLiteStore
from pg import PgSchema, postgres_cluster, postgres_schema  # noqa: F401 - fixtures

TEXTS = [
    "The staging host is db-2 in Frankfurt.",
    "Ada drinks green tea every morning.",
    "Deploys run from the release branch on Fridays.",
]


class CountingStore:
    """A store that passes every call to ``inner`` and counts the record reads (get, history, list)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.reads = 0
        self.lists = 0
        self.polls = 0

    def put(self, record: MemoryRecord) -> int:
        return int(self.inner.put(record))

    def get(self, record_id: str) -> MemoryRecord:
        self.reads += 1
        result: MemoryRecord = self.inner.get(record_id)
        return result

    def history(self, record_id: str) -> list[MemoryRecord]:
        self.reads += 1
        result: list[MemoryRecord] = self.inner.history(record_id)
        return result

    def list(self, **filters: Any) -> list[MemoryRecord]:
        self.reads += 1
        self.lists += 1
        result: list[MemoryRecord] = self.inner.list(**filters)
        return result

    def contains(self, record_id: str) -> bool:
        return bool(self.inner.contains(record_id))

    def version_tokens(self, record_ids: Iterable[str] | None = None) -> dict[str, str]:
        result: dict[str, str] = self.inner.version_tokens(record_ids)
        return result

    def changes_since(self, mark: int) -> Changes:
        self.polls += 1
        result: Changes = self.inner.changes_since(mark)
        return result


@pytest.fixture
def db(tmp_path: Path) -> Iterator[tuple[SQLiteStore, CountingStore, IndexCatalog]]:
    """A SQLite store with three records, the counting wrapper, and a catalog over the wrapper."""
    inner = SQLiteStore(tmp_path / "memory.sqlite")
    for i, text in enumerate(TEXTS):
        inner.put(record(text, i))
    counting = CountingStore(inner)
    catalog = IndexCatalog(counting, {"bm25": FtsIndex(":memory:")})
    assert isinstance(counting, ChangeFeed)
    yield inner, counting, catalog
    catalog.close()
    inner.close()


def test_refreshes_of_an_unchanged_store_read_no_record(
    db: tuple[SQLiteStore, CountingStore, IndexCatalog],
) -> None:
    _, counting, catalog = db
    assert catalog.refresh() == 3
    assert counting.reads == 3  # the first refresh reads each record once
    for _ in range(20):
        assert catalog.refresh() == 0
    assert counting.reads == 3 and counting.polls == 21


def test_a_write_by_another_connection_is_read_alone_at_the_next_refresh(
    tmp_path: Path, db: tuple[SQLiteStore, CountingStore, IndexCatalog]
) -> None:
    _, counting, catalog = db
    catalog.refresh()
    before = counting.reads
    with SQLiteStore(tmp_path / "memory.sqlite") as other:
        theirs = record("The fire drill is on Monday at ten.", 9)
        other.put(theirs)
    assert catalog.refresh() == 1
    assert counting.reads == before + 1
    assert ids(catalog.query("fire drill")[0]) == [theirs.id]


def test_this_process_writes_are_not_read_again_but_anothers_written_meanwhile_are(
    tmp_path: Path, db: tuple[SQLiteStore, CountingStore, IndexCatalog]
) -> None:
    inner, counting, catalog = db
    catalog.refresh()
    with SQLiteStore(tmp_path / "memory.sqlite") as other:
        theirs = record("Another process noted the fire drill on Monday.", 20)
        other.put(theirs)  # just before this process writes
    mine = record("This process noted the canteen menu.", 21)
    inner.put(mine)
    catalog.written([mine])
    before = counting.reads
    assert catalog.refresh() == 1  # theirs only: mine was indexed when written
    assert counting.reads == before + 1
    assert ids(catalog.query("fire drill")[0]) == [theirs.id]
    assert ids(catalog.query("canteen menu")[0]) == [mine.id]


def test_an_erasure_by_another_connection_stops_the_record_matching(
    tmp_path: Path, db: tuple[SQLiteStore, CountingStore, IndexCatalog]
) -> None:
    inner, _, catalog = db
    catalog.refresh()
    target = inner.list()[0]
    with SQLiteStore(tmp_path / "memory.sqlite") as other:
        other.erase(target.id, "test")
    assert catalog.refresh() == 1
    assert catalog.query("staging host db-2") == [[]]


def test_a_row_deleted_by_another_tool_brings_a_full_comparison(
    tmp_path: Path, db: tuple[SQLiteStore, CountingStore, IndexCatalog]
) -> None:
    inner, counting, catalog = db
    catalog.refresh()
    gone = inner.list()[1]
    raw = sqlite3.connect(tmp_path / "memory.sqlite")
    for table in ("record_tags", "versions", "records"):
        raw.execute(f"DELETE FROM {table} WHERE record_id = ?", (gone.id,))  # noqa: S608 - fixed names
    raw.commit()
    raw.close()
    polls = counting.polls
    assert catalog.refresh() == 1
    assert counting.polls == polls + 2  # the news, then every token
    assert catalog.query("green tea") == [[]]
    assert catalog.status()[0]["dirty"] is False


def test_a_store_put_back_to_an_older_copy_brings_a_full_comparison() -> None:
    made = [record(text, i) for i, text in enumerate(TEXTS)]
    counting = CountingStore(InMemoryStore())
    for one in made:
        counting.put(one)
    catalog = IndexCatalog(counting, {"bm25": FtsIndex(":memory:")})
    assert catalog.refresh() == 3
    older = InMemoryStore()  # a backup taken before the third write, restored
    for one in made[:2]:
        older.put(one)
    counting.inner = older
    assert catalog.refresh() == 1  # its counter went back: every token compared, the third is gone
    assert catalog.query("release branch Fridays") == [[]]
    assert catalog.status()[0]["dirty"] is False
    catalog.close()


def test_in_memory_recall_never_lists_the_store_once_indexed() -> None:
    from agent_memory.log.inmemory import MemoryLog

    counting = CountingStore(InMemoryStore())
    memory = Memory(counting, MemoryLog(), IndexCatalog.in_memory(counting))
    memory.remember("Ada drinks green tea every morning.", source="test:1")
    memory.recall("green tea")
    lists, polls = counting.lists, counting.polls
    for _ in range(5):
        assert memory.recall("what does Ada drink").records
    assert counting.lists == lists
    assert counting.polls == polls + 5


# ------------------------------------------------------------ connect(): two Memories, two processes


def _url(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if kind == "sqlite":
        return f"sqlite:{tmp_path / 'shared.sqlite'}"
    schema: PgSchema = request.getfixturevalue("postgres_schema")
    return f"{schema.dsn}?schema={schema.schema}"


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return _url(request.param, tmp_path, request)


def test_two_connected_memories_see_each_others_writes_at_the_next_recall(url: str) -> None:
    with connect(url) as first, connect(url) as second:
        first.remember("The staging host is db-2 in Frankfurt.", source="t-1")
        assert second.recall("staging host", k=3).records  # fills its index
        added = first.remember("The fire drill is on Monday at ten.", source="t-2")
        assert [r.record.id for r in second.recall("fire drill", k=3).records] == [added.record_id]
        second.erase([added.record_id], reason="wrong date", authority="owner")
        assert not first.recall("fire drill", k=3).records


def test_a_write_by_another_process_is_seen_by_the_next_recall(url: str) -> None:
    script = textwrap.dedent(
        """
        import sys
        from agent_memory.connect import connect
        with connect(sys.argv[1]) as memory:
            print(memory.remember("The canteen serves soup on Thursdays.", source="t-9").record_id)
        """
    )
    with connect(url) as memory:
        memory.remember("Ada drinks green tea every morning.", source="t-1")
        assert memory.recall("green tea", k=3).records
        done = subprocess.run(
            [sys.executable, "-c", script, url], capture_output=True, text=True, check=True, timeout=120
        )
        theirs = done.stdout.strip()
        assert [r.record.id for r in memory.recall("canteen soup", k=3).records] == [theirs]


# ---------------------------------------------------------------------- a file Home: slow full checks


class SlowWalk:
    """A file store whose full token walk takes ``cost`` seconds of a fake clock (counted)."""

    def __init__(self, inner: FileStore, clock: list[float], cost: float) -> None:
        self.inner, self.clock, self.cost = inner, clock, cost
        self.root = inner.root
        self.walks = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def version_tokens(self, record_ids: Iterable[str] | None = None) -> dict[str, str]:
        if record_ids is None:
            self.walks += 1
            self.clock[0] += self.cost
        result: dict[str, str] = self.inner.version_tokens(record_ids)
        return result


def test_a_slow_full_check_waits_nine_times_its_cost_before_the_next(tmp_path: Path) -> None:
    now = [0.0]
    inner = FileStore(tmp_path / "notes")
    for i, text in enumerate(TEXTS):
        inner.put(record(text, i))
    store = SlowWalk(inner, now, cost=20.0)
    catalog = IndexCatalog.for_home(
        tmp_path / ".cache", store, search=SearchSettings(("bm25",)), clock=lambda: now[0]
    )
    catalog.refresh()
    assert store.walks == 1
    now[0] += 9 * 20.0 - 1
    catalog.refresh()
    assert store.walks == 1  # FULL_CHECK_SECONDS passed long ago, but the last walk cost 20 s
    now[0] += 1
    catalog.refresh()
    assert store.walks == 2
    store.cost = 0.0
    now[0] += 9 * 20.0
    catalog.refresh()
    now[0] += FULL_CHECK_SECONDS
    catalog.refresh()
    assert store.walks == 4  # a quick walk brings the interval back to FULL_CHECK_SECONDS
    catalog.close()

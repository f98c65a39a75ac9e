"""The change feed (stores/base.py `ChangeFeed`): every write of every connection is numbered, in order.

Run against every store that numbers its writes (in-memory, SQLite, PostgreSQL). The
catalog's use of the feed is tested in tests/search/test_catalog_changes.py.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

import psycopg
import pytest
from psycopg import sql

from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.stores.base import ChangeFeed, Changes, RecordStore
from agent_memory.stores.files import FileStore
from agent_memory.stores.inmemory import InMemoryStore
from agent_memory.stores.postgres import PostgresStore
from agent_memory.stores.sqlite import SQLiteStore
from pg import shared_cluster

T0 = datetime(2026, 5, 1, tzinfo=UTC)


class FeedStore(RecordStore, ChangeFeed, Protocol):
    """A store with a change feed and ``erase``."""

    def erase(self, record_id: str, reason: str, *, now: datetime | None = None) -> MemoryRecord:
        """Replace every version of ``record_id`` by its tombstone."""
        ...


# A factory yields (a store, a callable opening a second connection to the same data).
Pair = tuple[FeedStore, Callable[[], FeedStore]]


@contextmanager
def in_memory(tmp_path: Path) -> Iterator[Pair]:
    store = InMemoryStore()
    yield store, lambda: store  # one process, one object: its own "other connection"


@contextmanager
def sqlite(tmp_path: Path) -> Iterator[Pair]:
    opened: list[SQLiteStore] = []

    def open_one() -> SQLiteStore:
        opened.append(SQLiteStore(tmp_path / "memory.sqlite"))
        return opened[-1]

    try:
        yield open_one(), open_one
    finally:
        for store in opened:
            store.close()


@contextmanager
def postgres(tmp_path: Path) -> Iterator[Pair]:
    cluster = shared_cluster()
    schema = f"t_{uuid.uuid4().hex}"
    opened: list[PostgresStore] = []

    def open_one() -> PostgresStore:
        opened.append(PostgresStore(cluster.dsn, schema=schema))
        return opened[-1]

    try:
        yield open_one(), open_one
    finally:
        for store in opened:
            store.close()
        with psycopg.connect(cluster.dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture(
    params=[
        pytest.param(in_memory, id="inmemory"),
        pytest.param(sqlite, id="sqlite"),
        pytest.param(postgres, id="postgres"),
    ]
)
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Pair]:
    factory: Callable[[Path], AbstractContextManager[Pair]] = request.param
    with factory(tmp_path) as made:
        yield made


def record(text: str, minutes: int = 0) -> MemoryRecord:
    return MemoryRecord.create(
        type="fact",
        body=text,
        provenance=Provenance(kind="test", ref="test:changes"),
        created_at=T0 + timedelta(minutes=minutes),
    )


def test_an_unchanged_store_reports_nothing_new_and_the_same_mark(pair: Pair) -> None:
    store, _ = pair
    store.put(record("The staging host is db-2."))
    first = store.changes_since(-1)
    again = store.changes_since(first.mark)
    assert again == Changes(first.mark, {}, first.removals)


def test_every_record_is_reported_from_minus_one_with_its_version_token(pair: Pair) -> None:
    store, _ = pair
    assert store.changes_since(-1).tokens == {}
    made = [record(f"Note number {i} about the garden.", i) for i in range(3)]
    for one in made:
        store.put(one)
    changes = store.changes_since(-1)
    assert set(changes.tokens) == {one.id for one in made}
    assert changes.tokens == store.version_tokens()
    assert changes.mark >= 3


def test_a_write_of_another_connection_is_reported_after_the_mark_and_moves_its_token(pair: Pair) -> None:
    store, open_other = pair
    kept, changed = record("Ada drinks green tea."), record("Deploys run on Fridays.", 1)
    store.put(kept)
    store.put(changed)
    mark = store.changes_since(-1).mark
    before = store.version_tokens([changed.id])
    other = open_other()
    other.put(changed.evolve(confidence=0.5))
    added = record("The printer is on floor three.", 2)
    other.put(added)
    news = store.changes_since(mark)
    assert set(news.tokens) == {changed.id, added.id}
    assert news.mark > mark
    assert news.tokens[changed.id] != before[changed.id]
    assert store.version_tokens([changed.id, added.id]) == news.tokens


def test_an_erasure_moves_the_token(pair: Pair) -> None:
    store, _ = pair
    one = record("The wifi password is hunter2.")
    store.put(one)
    mark = store.changes_since(-1).mark
    before = store.version_tokens()[one.id]
    store.erase(one.id, "secret")
    news = store.changes_since(mark)
    assert list(news.tokens) == [one.id]
    assert news.tokens[one.id] != before


def test_version_tokens_of_named_ids_leave_out_the_absent_ones(pair: Pair) -> None:
    store, _ = pair
    one = record("Lunch is at noon.")
    store.put(one)
    assert set(store.version_tokens([one.id, "mem:" + "0" * 32])) == {one.id}
    assert store.version_tokens([]) == {}


def test_marks_only_grow_and_each_write_is_reported_once_after_its_mark(pair: Pair) -> None:
    store, open_other = pair
    other = open_other()
    marks, seen = [store.changes_since(-1).mark], []
    for i in range(4):
        (store if i % 2 else other).put(record(f"Fact {i} of the week.", i))
        news = store.changes_since(marks[-1])
        marks.append(news.mark)
        seen.append(set(news.tokens))
    assert marks == sorted(set(marks))
    assert all(len(ids) == 1 for ids in seen) and len(set().union(*seen)) == 4


def test_the_file_store_has_no_feed_and_the_others_do(tmp_path: Path) -> None:
    assert not isinstance(FileStore(tmp_path / "notes"), ChangeFeed)
    assert isinstance(InMemoryStore(), ChangeFeed)
    with SQLiteStore(":memory:") as store:
        assert isinstance(store, ChangeFeed)


# ---------------------------------------------------------------------- edits outside the library


def test_a_sqlite_row_edited_or_deleted_by_another_tool_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    one, two = record("The office closes at six."), record("Backups run nightly.", 1)
    with SQLiteStore(path) as store:
        store.put(one)
        store.put(two)
        mark = store.changes_since(-1)
        raw = sqlite3.connect(path)
        raw.execute("UPDATE versions SET payload = payload || ' ' WHERE record_id = ?", (one.id,))
        raw.commit()
        edited = store.changes_since(mark.mark)
        assert list(edited.tokens) == [one.id] and edited.removals == mark.removals
        for table in ("record_tags", "versions", "records"):
            raw.execute(f"DELETE FROM {table} WHERE record_id = ?", (two.id,))  # noqa: S608 - fixed names
        raw.commit()
        raw.close()
        assert store.changes_since(edited.mark).removals > mark.removals


def test_a_schema_1_sqlite_file_gets_the_counter_on_open_and_keeps_its_records(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    one = record("Ada's birthday is in May.")
    with SQLiteStore(path) as store:
        store.put(one)
    raw = sqlite3.connect(path)
    for name in (
        "records_inserted",
        "records_updated",
        "records_deleted",
        "versions_updated",
        "versions_deleted",
    ):
        raw.execute(f"DROP TRIGGER {name}")
    raw.execute("DROP INDEX records_change")
    raw.execute("DROP TABLE changes")
    raw.execute("ALTER TABLE records DROP COLUMN change")
    raw.execute("PRAGMA user_version = 1")
    raw.commit()
    raw.close()
    with SQLiteStore(path) as store:
        assert store.get(one.id) == one
        assert set(store.changes_since(-1).tokens) == {one.id}
        mark = store.changes_since(-1).mark
        two = record("Bob's birthday is in June.", 1)
        store.put(two)
        assert list(store.changes_since(mark).tokens) == [two.id]
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone() == (2,)
    raw.close()


def test_a_postgres_schema_made_before_the_counter_gets_it_on_open(tmp_path: Path) -> None:
    with postgres(tmp_path) as (store, open_other):
        one = record("The VPN gateway is vpn-2.")
        store.put(one)
        assert isinstance(store, PostgresStore)
        s = sql.Identifier(store.schema)
        with psycopg.connect(shared_cluster().dsn, autocommit=True) as conn:
            for statement in (
                "DROP TRIGGER records_changed ON {s}.records",
                "DROP TRIGGER versions_changed ON {s}.versions",
                "DROP FUNCTION {s}.records_changed()",
                "DROP FUNCTION {s}.versions_changed()",
                "DROP TABLE {s}.changes",
                "ALTER TABLE {s}.records DROP COLUMN change",
            ):
                conn.execute(sql.SQL(statement).format(s=s))
        reopened = open_other()
        assert reopened.get(one.id) == one
        assert set(reopened.changes_since(-1).tokens) == {one.id}
        mark = reopened.changes_since(-1).mark
        two = record("The backup VPN gateway is vpn-3.", 1)
        store.put(two)  # the first connection writes: the trigger numbers it too
        assert list(reopened.changes_since(mark).tokens) == [two.id]


def test_a_postgres_row_edited_or_deleted_by_another_tool_is_reported(tmp_path: Path) -> None:
    with postgres(tmp_path) as (store, _):
        assert isinstance(store, PostgresStore)
        one, two = record("The canteen opens at eight."), record("Parking is in lot C.", 1)
        store.put(one)
        store.put(two)
        mark = store.changes_since(-1)
        s = sql.Identifier(store.schema)
        with psycopg.connect(shared_cluster().dsn, autocommit=True) as conn:
            conn.execute(
                sql.SQL("UPDATE {s}.versions SET updated_at = updated_at WHERE record_id = %s").format(s=s),
                (one.id,),
            )
            edited = store.changes_since(mark.mark)
            assert list(edited.tokens) == [one.id] and edited.removals == mark.removals
            conn.execute(sql.SQL("DELETE FROM {s}.versions WHERE record_id = %s").format(s=s), (two.id,))
            conn.execute(sql.SQL("DELETE FROM {s}.records WHERE record_id = %s").format(s=s), (two.id,))
        assert store.changes_since(edited.mark).removals > mark.removals

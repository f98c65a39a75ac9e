"""remember_many: each text gets what remember would give it, and the new records go in batches (issue 23)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_memory.errors import AgentMemoryError, StoreError
from agent_memory.home import Home
from agent_memory.log.inmemory import MemoryLog
from agent_memory.memory import Memory
from agent_memory.records.signing import KeyPair
from agent_memory.search.catalog import IndexCatalog
from agent_memory.search.recipes import SearchSettings, splice_search
from agent_memory.stores.sqlite import SQLiteStore
from memory.conftest import T0, at

KEYS = KeyPair.generate()
KINDS = ("inmemory", "home", "sqlite")


def opener(kind: str, folder: Path) -> Callable[[], Memory]:
    """Return a function that makes a fresh Memory of ``kind`` under ``folder`` (signed by KEYS)."""

    def make() -> Memory:
        folder.mkdir(parents=True)
        if kind == "inmemory":
            return Memory.in_memory(identity=KEYS)
        if kind == "home":
            (folder / "home.key").write_bytes(KEYS.to_bytes())
            Home.init(folder / "home", git=False, now=T0, key_file=folder / "home.key")
            toml = folder / "home" / "memory.toml"
            toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
            return Memory.open(folder / "home")
        store = SQLiteStore(folder / "memory.sqlite")
        return Memory(store, MemoryLog(), IndexCatalog.in_memory(store), identity=KEYS)

    return make


@pytest.fixture(params=KINDS)
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Memory, Memory]]:
    """Two fresh Memories of one kind: one fed text by text, one in batches."""
    one, many = opener(request.param, tmp_path / "one")(), opener(request.param, tmp_path / "many")()
    with one, many:
        yield one, many


def mixed_items(first_id: str) -> list[dict[str, Any]]:
    """Texts that meet every plan remember has, in and across batches of three."""
    return [
        {"text": "The staging host is db-2.", "source": "s:1", "tags": ["ops"]},
        {"text": "The staging host is db-2.", "source": "s:1"},  # the same record again
        {"text": "  The staging host is db-2.\n", "source": "s:2", "tags": ["infra"]},  # seen again
        {"text": "Host a runs Postgres 15.", "source": "s:3", "kind": "state", "subject": "host:a"},
        {"text": "Host a runs Postgres 16.", "source": "s:4", "kind": "state", "subject": "host:a"},
        {
            "text": "Host a runs Postgres 14.",
            "source": "s:5",
            "kind": "state",
            "subject": "host:a",
            "valid_from": at(days=-30),
        },  # older: a dispute
        {
            "text": "Host a runs Postgres 17.",
            "source": "s:6",
            "kind": "state",
            "subject": "host:a",
        },  # pending
        {"text": "bell\x07", "source": "s:7"},  # a control character: refused
        {"text": "Deploys need a review.", "source": "s:8", "type": "rule"},  # a rule without evidence
        {"text": "Deploys need a review.", "source": "s:9", "type": "rule", "evidence": [first_id]},
        {"text": "A tainted note.", "source": "s:10", "taint": ["external"]},
        {"text": "", "source": "s:11"},
        {"text": "No source at all."},
        {"text": "Tea at four.", "source": "s:12", "occurred_at": at(hours=-2), "type": "episode"},
    ]


def outcome(result: object) -> object:
    """What a result says, comparable between two Memories (an error by its type and message)."""
    if isinstance(result, AgentMemoryError):
        return (type(result).__name__, str(result))
    return result


def test_each_text_gets_what_remember_would_give_it_and_the_stores_end_equal(
    pair: tuple[Memory, Memory],
) -> None:
    one, many = pair
    first = {"text": "The first note, written before.", "source": "s:0"}
    first_id = one.remember(**first, now=at()).record_id
    assert many.remember(**first, now=at()).record_id == first_id
    items = mixed_items(first_id)
    expected = []
    for item in items:
        fields = {"source": None, **item}
        try:
            expected.append(one.remember(fields.pop("text"), **fields, now=at(hours=1)))
        except AgentMemoryError as exc:
            expected.append(exc)  # type: ignore[arg-type]

    got = many.remember_many(items, now=at(hours=1), batch=3)

    assert [outcome(r) for r in got] == [outcome(r) for r in expected]
    assert [type(r).__name__ for r in got if isinstance(r, AgentMemoryError)] == [
        "ScreenError",  # the control character
        "RecordError",  # the rule without evidence
        "ScreenError",  # the empty text
        "RecordError",  # no source
    ]
    assert {r.id: r for r in many.store.list()} == {r.id: r for r in one.store.list()}
    assert many.controls() == one.controls()
    held = {r.record_id for r in got if not isinstance(r, AgentMemoryError)}
    assert {r.record.id for r in many.recall("staging host db-2").records} <= held | {first_id}


def test_the_new_records_of_a_batch_are_one_put_event(pair: tuple[Memory, Memory]) -> None:
    _, many = pair
    before = len(list(many.log.entries()))
    items = [{"text": f"Note {i} on the batch path.", "source": f"b:{i}"} for i in range(25)]
    results = many.remember_many(items, now=at(), batch=10)
    assert all(not isinstance(r, AgentMemoryError) and not r.deduped for r in results)
    events = list(many.log.entries())[before:]
    assert [(e.action, len(e.record_ids)) for e in events] == [("put", 10), ("put", 10), ("put", 5)]
    assert [e.record_ids for e in events] == [
        tuple(r.record_id for r in results[i : i + 10])  # type: ignore[union-attr]
        for i in (0, 10, 20)
    ]
    assert len(many.store.list()) == 25
    hits = many.recall("Note 17 on the batch path").records
    assert hits and hits[0].record.id == results[17].record_id  # type: ignore[union-attr]
    assert all(r.signature for r in many.store.list()) == (many.identity is not None)


def test_a_refused_item_names_what_is_wrong_and_writes_nothing(pair: tuple[Memory, Memory]) -> None:
    _, many = pair
    items: list[Any] = [
        {"text": "Kept.", "source": "r:1"},
        {"text": "Nope.", "source": "r:2", "colour": "red"},
        "not a mapping",
        {"source": "r:3"},
        {
            "text": "aws key AKIAIOSFODNN7EXAMPLE and secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "source": "r:4",
        },
        {"text": "Also kept.", "source": "r:5"},
    ]
    results = many.remember_many(items, now=at())
    errors = [r for r in results if isinstance(r, AgentMemoryError)]
    assert [getattr(e, "field", None) for e in errors[:3]] == ["colour", None, "text"]
    assert "colour" in str(errors[0]) and "mapping" in str(errors[1])
    assert len(errors) == 4
    assert sorted(r.body for r in many.store.list()) == ["Also kept.", "Kept."]


def test_a_batch_below_one_is_refused() -> None:
    with Memory.in_memory() as memory, pytest.raises(ValueError, match="batch"):
        memory.remember_many([{"text": "x", "source": "y"}], batch=0)


def test_remember_many_of_nothing_writes_nothing() -> None:
    with Memory.in_memory() as memory:
        assert memory.remember_many([], now=at()) == []
        assert list(memory.log.entries()) == []


def test_a_record_refused_by_the_gate_is_reported_and_its_batch_goes_on(tmp_path: Path) -> None:
    with opener("sqlite", tmp_path / "m")() as memory:
        kept = memory.remember("Kept before.", source="g:0", now=at()).record_id
        memory.supersede(kept, "Kept, corrected.", source="g:1", reason="typo", now=at(hours=1))
        # The same text, source and time as the superseded record: its content address, no longer live.
        with pytest.raises(AgentMemoryError) as alone:
            memory.remember("Kept before.", source="g:0", now=at())
        results = memory.remember_many(
            [{"text": "Kept before.", "source": "g:0"}, {"text": "Another.", "source": "g:2"}], now=at()
        )
        assert outcome(results[0]) == outcome(alone.value)
        assert kept in str(results[0])
        assert not isinstance(results[1], AgentMemoryError)
        assert memory.store.get(results[1].record_id).body == "Another."


def test_a_batch_asks_the_store_about_its_new_ids_in_one_query_and_one_by_one_when_that_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The gate asks whether each new id is stored already; a SQL store answers a batch's ids
    # at once (issue 23), and a batch read that fails (one unreadable row) falls back to
    # reading each id alone, so a bad row refuses only its own record.
    with opener("sqlite", tmp_path / "m")() as memory:
        store = memory.store
        calls: dict[str, int] = {"get": 0, "get_many": 0}
        real_get, real_many = store.get, store.get_many

        def get(record_id: str) -> Any:
            calls["get"] += 1
            return real_get(record_id)

        def get_many(record_ids: Any) -> Any:
            calls["get_many"] += 1
            return real_many(record_ids)

        monkeypatch.setattr(store, "get", get)
        monkeypatch.setattr(store, "get_many", get_many)
        items = [{"text": f"Batch note number {n}.", "source": f"b:{n}"} for n in range(20)]
        first = memory.remember_many(items[:10], now=at())
        assert calls == {"get": 0, "get_many": 1}

        def failing(record_ids: Any) -> Any:
            raise StoreError("unreadable row")

        monkeypatch.setattr(store, "get_many", failing)
        second = memory.remember_many(items[10:], now=at())
        assert calls["get"] == 10
        for result in [*first, *second]:
            assert not isinstance(result, AgentMemoryError), result
        assert [real_get(r.record_id).body for r in second] == [i["text"] for i in items[10:]]

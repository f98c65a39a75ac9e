"""Recall ranks on the cards its index keeps and reads only what it returns (issue 23).

Every result here is compared with the one recall gives when it reads every candidate
(``IndexCatalog.cards`` answering ``None``, as for an index that keeps no cards), so ranking
on cards can never change what a recall returns, including when the index is behind.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory.connect import connect
from agent_memory.home import Home
from agent_memory.log.inmemory import MemoryLog
from agent_memory.memory import Memory
from agent_memory.records.card import Card
from agent_memory.records.record import State
from agent_memory.search.catalog import IndexCatalog
from agent_memory.search.recipes import SearchSettings, splice_search
from agent_memory.stores.sqlite import SQLiteStore
from pg import PgSchema, postgres_cluster, postgres_schema  # noqa: F401 - fixtures

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def at(days: float) -> datetime:
    return T0 + timedelta(days=days)


@pytest.fixture
def memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Memory]:
    """A Home of Markdown notes searched by BM25 (the index that keeps cards)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    Home.init(tmp_path / "home", git=False, now=T0)
    toml = tmp_path / "home" / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
    with Memory.open(tmp_path / "home") as made:
        yield made


def fill(memory: Memory) -> dict[str, str]:
    """Records of every shape recall treats apart: states, chains, a dispute, taint, namespaces, times."""
    ids: dict[str, str] = {}
    for n in range(40):
        ids[f"plain{n}"] = memory.remember(
            f"The harbour crane {n} lifts {'heavy ' * (n % 7)}containers at dawn.",
            source="s",
            confidence=0.5 + (n % 5) / 10,
            occurred_at=at(-n * 3),
            now=at(-n),
        ).record_id
    first = memory.remember(
        "The harbour crane limit is 40 tonnes.", source="s", kind="state", subject="crane:limit"
    )
    memory.remember("The harbour crane limit is 45 tonnes.", source="s", kind="state", subject="crane:limit")
    memory.remember("The harbour crane limit is 50 tonnes.", source="s", kind="state", subject="crane:limit")
    ids["chain-start"] = first.record_id
    ids["disputed"] = memory.remember(
        "The harbour crane operator is Ana.", source="s", kind="state", subject="crane:operator"
    ).record_id
    memory.remember(
        "The harbour crane operator is Bo.",
        source="web",
        kind="state",
        subject="crane:operator",
        taint=["web"],
    )
    retired = memory.remember("The harbour crane paint is blue.", source="s")
    memory.archive(retired.record_id, "repainted")
    ids["other-namespace"] = memory.remember(
        "The harbour crane in the north yard is new.", source="s", namespace="north"
    ).record_id
    ids["tainted"] = memory.remember("The harbour crane is unsafe.", source="web", taint=["web"]).record_id
    return ids


QUESTIONS = [
    {"query": "harbour crane"},
    {"query": "harbour crane", "budget_tokens": 60},
    {"query": "harbour crane containers", "k": 3},
    {"query": "crane limit", "include_history": True},
    {"query": "crane limit tonnes", "include_history": True, "budget_tokens": 25},
    {"query": "crane operator"},
    {"query": "crane paint", "include_archived": True},
    {"query": "crane north yard", "namespace": "north"},
    {"query": "harbour crane", "valid_at": at(-30)},
    {"query": "unsafe crane"},
]


def reading_every_record(memory: Memory, **question: object) -> dict[str, object]:
    kept = memory.catalog.cards
    memory.catalog.cards = lambda ids: None  # type: ignore[method-assign]
    try:
        return memory.recall(now=at(1), touch=False, **question).to_json()  # type: ignore[arg-type]
    finally:
        memory.catalog.cards = kept  # type: ignore[method-assign]


@pytest.mark.parametrize("question", QUESTIONS, ids=[str(q) for q in QUESTIONS])
def test_ranking_on_cards_returns_what_reading_every_record_returns(memory: Memory, question: dict) -> None:
    fill(memory)
    on_cards = memory.recall(now=at(1), touch=False, **question).to_json()
    assert on_cards["records"], question
    assert on_cards == reading_every_record(memory, **question)


def test_recall_reads_only_the_records_it_returns(memory: Memory) -> None:
    fill(memory)
    read: list[str] = []
    get = memory.store.get

    def counting(record_id: str):  # type: ignore[no-untyped-def]
        read.append(record_id)
        return get(record_id)

    memory.store.get = counting  # type: ignore[method-assign]
    result = memory.recall("harbour crane containers", budget_tokens=60, now=at(1), touch=False)
    memory.store.get = get  # type: ignore[method-assign]
    candidates = {
        hit.record_id for hits in memory.catalog.query("harbour crane containers", k=100) for hit in hits
    }
    assert len(candidates) > 2 * len(result.records)  # most candidates do not fit 60 tokens
    assert set(read) == set(result.ids)


def test_a_sql_store_reads_the_records_returned_in_one_batch(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.sqlite")
    with Memory(store, MemoryLog(), IndexCatalog.in_memory(store)) as memory:
        fill(memory)
        batches: list[list[str]] = []
        get_many = store.get_many

        def counting(record_ids: list[str]):  # type: ignore[no-untyped-def]
            batches.append(list(record_ids))
            return get_many(record_ids)

        store.get_many = counting  # type: ignore[method-assign]
        result = memory.recall("harbour crane containers", budget_tokens=60, now=at(1), touch=False)
        store.get_many = get_many  # type: ignore[method-assign]
        assert result.records
        assert [sorted(batch) for batch in batches] == [sorted(result.ids)]
        assert result.to_json() == reading_every_record(
            memory, query="harbour crane containers", budget_tokens=60
        )


def card_rows(memory: Memory) -> sqlite3.Connection:
    return sqlite3.connect(memory.home.cache_dir / "indexes" / "bm25" / "index.sqlite")  # type: ignore[union-attr]


def other_confidence(card: list) -> list:
    return [*card[:2], 1.0 if card[2] != 1.0 else 0.5, *card[3:]]


def active(card: list) -> list:
    return ["active" if card[0] == "superseded" else card[0], *card[1:]]


@pytest.mark.parametrize("change", [other_confidence, active, None], ids=["confidence", "state", "damaged"])
def test_a_card_that_differs_from_its_record_changes_nothing(memory: Memory, change: object) -> None:
    fill(memory)
    question = {"query": "crane limit tonnes", "include_history": True}
    expected = reading_every_record(memory, **question)
    with card_rows(memory) as db:
        for record_id, card in db.execute("SELECT record_id, card FROM docs").fetchall():
            changed = json.dumps(change(json.loads(card))) if callable(change) else "not a card"
            db.execute("UPDATE docs SET card = ? WHERE record_id = ?", (changed, record_id))
    kept = memory.catalog.cards([r.id for r in memory.store.list()])
    assert kept is not None
    assert any(card != Card.of(memory.get(record_id)) for record_id, card in kept.items()) or change is None
    assert memory.recall(now=at(1), touch=False, **question).to_json() == expected


def test_a_card_round_trips_through_its_json(memory: Memory) -> None:
    fill(memory)
    records = memory.store.list()
    assert {record.state for record in records} >= {
        State.ACTIVE,
        State.SUPERSEDED,
        State.ARCHIVED,
        State.TRANSITIONAL,
    }
    for record in records:
        card = Card.of(record)
        assert Card.loads(record.id, card.dumps()) == card
    with pytest.raises(ValueError, match="not a card for mem:x"):
        Card.loads("mem:x", '["active"]')


@pytest.fixture(params=["sqlite", "postgresql"])
def shared(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Memory]:
    """A memory shared over a SQLite file or a PostgreSQL schema (its own indexes keep the cards)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    if request.param == "sqlite":
        url = f"sqlite:{tmp_path / 'shared.sqlite'}"
    else:
        schema: PgSchema = request.getfixturevalue("postgres_schema")
        url = f"{schema.dsn}?schema={schema.schema}"
    with connect(url) as made:
        yield made


def test_a_shared_memory_ranks_on_the_cards_of_its_own_index(shared: Memory) -> None:
    fill(shared)
    every = [record.id for record in shared.store.list()]
    kept = shared.catalog.cards(every)
    assert kept is not None
    assert sorted(kept) == sorted(every)
    assert all(card == Card.of(shared.get(record_id)) for record_id, card in kept.items())
    for question in QUESTIONS[:6]:
        assert shared.recall(now=at(1), touch=False, **question).to_json() == reading_every_record(
            shared, **question
        )

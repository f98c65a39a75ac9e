"""The ``[recall]`` recency knob: a mild recency from valid time by default, seed 001's rule, or off.

Expected scores are computed here from each record's own fields (relevance × state weight ×
recency × salience × confidence, origin-notes §1.13), with the recency the setting asks for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_memory.connect import connect
from agent_memory.errors import ConfigError
from agent_memory.home import Home
from agent_memory.log.inmemory import MemoryLog
from agent_memory.memory import Memory
from agent_memory.search.catalog import IndexCatalog
from agent_memory.search.recipes import SearchSettings, splice_search
from agent_memory.settings import RecallSettings
from agent_memory.stores.sqlite import SQLiteStore
from memory.conftest import T0, at

OLD = "Narwhal tusks spiral: a narwhal tusk is a narwhal tooth."
NEW = "Someone mentioned a narwhal today."

Opener = Callable[[RecallSettings | None], Memory]


def set_recall(toml: Path, settings: RecallSettings) -> None:
    """Rewrite the ``[recall]`` section ``init`` wrote with ``settings``'s."""
    text = toml.read_text("utf-8")
    start = text.index("[recall]\n")
    end = text.index("\n[", start + 1) + 1
    toml.write_text(text[:start] + settings.to_toml() + text[end:], "utf-8")


@pytest.fixture(params=["inmemory", "home", "sqlite", "connect"])
def open_memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Open a Memory with the given recall settings (``None``: the default) on one kind of store."""
    opened: list[Memory] = []

    def make(settings: RecallSettings | None) -> Memory:
        options: dict[str, Any] = {} if settings is None else {"recall_settings": settings}
        if request.param == "inmemory":
            made = Memory.in_memory(**options)
        elif request.param == "home":
            root = tmp_path / "home"
            Home.init(root, git=False, now=T0)
            toml = root / "memory.toml"
            toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
            if settings is not None:
                set_recall(toml, settings)
            made = Memory.open(root)
        elif request.param == "sqlite":
            store = SQLiteStore(tmp_path / "memory.sqlite")
            made = Memory(store, MemoryLog(), IndexCatalog.in_memory(store), **options)
        else:
            made = connect(f"sqlite:{tmp_path / 'shared.sqlite'}", **options)
        opened.append(made)
        return made

    yield make
    for made in opened:
        made.close()


def relevance_of(memory: Memory, query: str) -> dict[str, float]:
    best: dict[str, float] = {}
    for hits in memory.catalog.query(query, k=32):
        positive = [h for h in hits if h.score > 0]
        for hit in positive:
            best[hit.record_id] = max(
                best.get(hit.record_id, 0.0), hit.score / max(h.score for h in positive)
            )
    return best


def old_and_new(memory: Memory) -> tuple[str, str]:
    old = memory.remember(OLD, source="s", now=at(-400)).record_id
    new = memory.remember(NEW, source="s", now=at(0)).record_id
    relevance = relevance_of(memory, "narwhal")
    assert relevance[old] > relevance[new]  # the old record answers better: only recency can rank it lower
    return old, new


def test_by_default_an_old_better_match_outranks_a_recent_weaker_one(open_memory: Opener) -> None:
    memory = open_memory(None)
    assert memory.recall_settings == RecallSettings()
    old, new = old_and_new(memory)
    result = memory.recall("narwhal", now=at(0), touch=False)
    assert result.ids == (old, new)
    relevance = relevance_of(memory, "narwhal")
    taken = 1 - 0.1 * (1 - max(0.1, 0.5 ** (400 / 30)))  # recency takes at most 0.1 of the score
    assert result.records[0].score == pytest.approx(relevance[old] * taken * memory.get(old).confidence)


def test_seed_001_recency_lets_a_recent_weaker_match_outrank_an_old_better_one(open_memory: Opener) -> None:
    memory = open_memory(RecallSettings(recency="updated", recency_weight=1.0))
    old, new = old_and_new(memory)
    result = memory.recall("narwhal", now=at(0), touch=False)
    assert result.ids == (new, old)
    relevance = relevance_of(memory, "narwhal")
    floor = max(0.1, 0.5 ** (400 / 30))
    assert result.records[1].score == pytest.approx(relevance[old] * floor * memory.get(old).confidence)


def test_the_default_age_counts_from_valid_time_not_from_when_the_note_was_written(
    open_memory: Opener,
) -> None:
    memory = open_memory(None)
    rid = memory.remember("Walrus hauls out on ice.", source="s", occurred_at=at(-60), now=at(0)).record_id
    confidence = memory.get(rid).confidence
    score = memory.recall("walrus", now=at(0), touch=False).records[0].score
    assert score == pytest.approx(confidence * (1 - 0.1 * (1 - 0.25)))  # two half-lives old


def test_with_recency_off_records_of_any_age_rank_by_relevance_alone(open_memory: Opener) -> None:
    memory = open_memory(RecallSettings(recency="off"))
    assert memory.recall_settings.half_life_days is None
    old, new = old_and_new(memory)
    result = memory.recall("narwhal", now=at(0), touch=False)
    assert result.ids == (old, new)
    relevance = relevance_of(memory, "narwhal")
    for item in result.records:
        assert item.score == pytest.approx(relevance[item.record.id] * item.record.confidence)


def test_the_half_life_is_the_number_of_days_after_which_recency_halves(open_memory: Opener) -> None:
    memory = open_memory(RecallSettings(recency_half_life_days=7.5, recency_weight=1.0))
    rid = memory.remember("Walrus hauls out on ice.", source="s", now=T0).record_id
    confidence = memory.get(rid).confidence
    assert memory.recall("walrus", now=at(7.5), touch=False).records[0].score == pytest.approx(
        confidence * 0.5
    )
    assert memory.recall("walrus", now=at(15), touch=False).records[0].score == pytest.approx(
        confidence * 0.25
    )
    assert memory.recall("walrus", now=at(3000), touch=False).records[0].score == pytest.approx(
        confidence * 0.1
    )


def test_a_bad_recall_table_stops_the_home_opening_and_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "home"
    Home.init(root, git=False, now=T0)
    with Memory.open(root) as memory:
        memory.remember(OLD, source="s", now=T0)
    toml = root / "memory.toml"
    toml.write_text(toml.read_text("utf-8").replace('recency = "valid"', 'recency = "never"'), "utf-8")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    with pytest.raises(ConfigError) as info:
        Memory.open(root)
    assert info.value.field == "recall.recency"
    assert info.value.path == str(toml)
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before

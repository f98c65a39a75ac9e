"""Recall reads the dates a question names ("yesterday") on the Home's local days, not UTC's."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

from agent_memory.home import Home
from agent_memory.log.inmemory import MemoryLog
from agent_memory.memory import Memory
from agent_memory.search.catalog import IndexCatalog
from agent_memory.search.recipes import BUILTIN_RECIPES, RecipeSpec, SearchSettings, splice_search
from agent_memory.stores.inmemory import InMemoryStore

LOS_ANGELES = ZoneInfo("America/Los_Angeles")
# 05:00 UTC on 30 November is still 21:00 on 29 November in Los Angeles (UTC-8):
# "yesterday" is 29 November in UTC but 28 November on the Home's local days.
ASKED = datetime(2026, 11, 30, 5, 0, tzinfo=UTC)
LOCAL_YESTERDAY = datetime(2026, 11, 28, 12, 0, tzinfo=LOS_ANGELES)  # 20:00 UTC on the 28th
UTC_YESTERDAY = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)  # 02:00 on the 29th in Los Angeles
QUESTION = "Who did I go to the pottery class with yesterday?"
HYBRID = RecipeSpec(
    "hybrid-hash",
    "hybrid",
    {"fusion": "weighted", "weights": [2.0, 1.0], "normalise": "minmax"},
    (BUILTIN_RECIPES["bm25"], BUILTIN_RECIPES["vectors-hash"]),
)
SEARCH = SearchSettings(("hybrid-hash",), (HYBRID,))


def home_memory(root: Path, zone: str) -> Memory:
    """A Home in ``zone`` whose recall reads a hybrid (the date boost is the hybrid's)."""
    Home.init(root, timezone=zone, git=False, now=datetime(2026, 11, 1, tzinfo=UTC))
    toml = root / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SEARCH), "utf-8")
    return Memory.open(root)


def first_answer(memory: Memory) -> str:
    """Write two pottery classes, one on each candidate "yesterday", and return the body recalled first."""
    with memory:
        for body, session, when in (
            ("I went to the pottery class with Dana", "s1", LOCAL_YESTERDAY),
            ("I went to the pottery class with Sam", "s2", UTC_YESTERDAY),
        ):
            memory.remember(
                body, source=f"chat.json#{session}/1", type="episode", occurred_at=when, now=ASKED
            )
        result = memory.recall(QUESTION, now=ASKED, touch=False)
        return result.records[0].record.body


def test_a_home_in_los_angeles_reads_yesterday_as_its_local_yesterday(tmp_path: Path) -> None:
    assert first_answer(home_memory(tmp_path / "la", "America/Los_Angeles")).endswith("Dana")


def test_the_same_question_in_a_utc_home_reads_the_utc_yesterday(tmp_path: Path) -> None:
    assert first_answer(home_memory(tmp_path / "utc", "UTC")).endswith("Sam")


def bare_memory(zone: tzinfo | None = None) -> Memory:
    """A Memory over an in-memory store and no Home, in ``zone`` when given."""
    store = InMemoryStore()
    return Memory(store, MemoryLog(), IndexCatalog.in_memory(store, search=SEARCH), timezone=zone)


def test_a_memory_without_a_home_reads_dates_in_utc_unless_given_a_zone() -> None:
    assert bare_memory().zone is UTC
    assert Memory.in_memory().zone is UTC
    assert first_answer(bare_memory()).endswith("Sam")
    assert first_answer(bare_memory(LOS_ANGELES)).endswith("Dana")

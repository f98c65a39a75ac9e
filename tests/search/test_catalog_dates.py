"""The catalog passes the time a question is asked to a hybrid, which reads the dates it names."""

from __future__ import annotations

from datetime import UTC, datetime

from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.catalog import IndexCatalog
from agent_memory.search.recipes import BUILTIN_RECIPES, RecipeSpec, SearchSettings
from agent_memory.stores.inmemory import InMemoryStore

NOW = datetime(2023, 4, 1, 15, 30, tzinfo=UTC)
HYBRID = RecipeSpec(
    "hybrid-hash",
    "hybrid",
    {"fusion": "weighted", "weights": [2.0, 1.0], "normalise": "minmax"},
    (BUILTIN_RECIPES["bm25"], BUILTIN_RECIPES["vectors-hash"]),
)


def turn(body: str, session: str, when: datetime) -> MemoryRecord:
    return MemoryRecord.create(
        type="episode",
        body=body,
        provenance=Provenance(kind="import", ref=f"chat.json#{session}/1"),
        created_at=when,
        occurred_at=when,
    )


def test_a_question_naming_a_relative_date_ranks_by_the_time_it_is_asked() -> None:
    old = turn("I bought a new blender for smoothies", "s1", datetime(2023, 1, 2, tzinfo=UTC))
    recent = turn("I bought a toaster, my new kitchen toy", "s2", datetime(2023, 3, 22, tzinfo=UTC))
    # A third, weaker match, so that neither of the two is its parts' weakest candidate.
    other = turn("I bought stamps", "s3", datetime(2023, 2, 1, tzinfo=UTC))
    store = InMemoryStore()
    for record in (old, recent, other):
        store.put(record)
    catalog = IndexCatalog.in_memory(store, search=SearchSettings(("hybrid-hash",), (HYBRID,)))
    catalog.refresh()
    question = "I bought a new blender. What kitchen appliance did I buy 10 days ago?"
    asked_then = catalog.query(question, k=5, now=NOW)
    asked_a_year_later = catalog.query(question, k=5, now=NOW.replace(year=2024))
    assert [hit.record_id for hit in asked_then[0]][:2] == [recent.id, old.id]
    assert [hit.record_id for hit in asked_a_year_later[0]][:2] == [old.id, recent.id]

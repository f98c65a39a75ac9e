"""Near-duplicate detection knows facts from wording (issue 21): differing facts never merge.

``"Invoice 1041 was paid on March 3."`` and ``"Invoice 1047 was paid on March 3."`` share most
trigrams (0.82) but state two facts; merging them would drop one from active memory.
"""

from __future__ import annotations

import pytest
from jobkit import make

from agent_memory.jobs.consolidate import consolidate
from agent_memory.jobs.text import fact_difference
from agent_memory.records.record import MemoryRecord
from agent_memory.stores.inmemory import InMemoryStore
from jobs.test_consolidate import SOON, passes, proposed


def merges(*records: MemoryRecord) -> list[tuple[str, str]]:
    """The near-duplicate proposals a pass over ``records`` makes (other passes may still dispute)."""
    store = InMemoryStore()
    for record in records:
        store.put(record)
    return [p for p in passes(consolidate(store, now=SOON)) if p[0] == "dedup.near"]


@pytest.mark.parametrize(
    ("first", "second", "why"),
    [
        ("Invoice 1041 was paid on March 3.", "Invoice 1047 was paid on March 3.", "numbers"),
        ("Invoice 1041 was paid on March 3.", "Invoice 1041 was paid on March 4.", "numbers"),
        ("Invoice 1041 was paid on March 3.", "Invoice 1041 was paid on April 3.", "dates"),
        (
            "The weekly sync with the team is on Tuesday.",
            "The weekly sync with the team is on Thursday.",
            "dates",
        ),
        ("Alice approved the budget for the offsite.", "Bob approved the budget for the offsite.", "names"),
        (
            "The ticket goes to Priya for the final review.",
            "The ticket goes to Marco for the final review.",
            "names",
        ),
        ("The staging database runs on host db-3.", "The staging database runs on host db-4.", "numbers"),
        (
            "The release branch is rel/2.14 for the mobile app.",
            "The release branch is rel/2.15 for the mobile app.",
            "numbers",
        ),
    ],
)
def test_texts_that_differ_in_a_fact_are_never_proposed_for_a_merge(
    first: str, second: str, why: str
) -> None:
    a, b = make(first, ref="s:1"), make(second, ref="s:2", confidence=0.8)
    assert merges(a, b) == []
    reason = fact_difference(first, second)
    assert reason is not None and reason.startswith(why)


def test_texts_that_differ_only_in_wording_still_merge() -> None:
    a = make("Ada pays invoice 1041 for the Acme order on March 3 every year", ref="s:1")
    b = make("Ada pays invoice 1041 for the Acme order on March 3 each year", ref="s:2", confidence=0.8)
    assert fact_difference(a.body, b.body) is None
    assert merges(a, b) == [("dedup.near", "merge")]


def test_a_capitalised_word_the_other_text_holds_in_lower_case_is_not_a_different_name() -> None:
    assert (
        fact_difference(
            "The API limit is strict for every client.", "The api limit is strict for each client."
        )
        is None
    )


def test_a_tainted_near_duplicate_is_never_merged_with_an_untainted_record() -> None:
    trusted = make("Ada prefers green tea in the morning with lemon", ref="s:1", confidence=0.5)
    tainted = make(
        "Ada prefers green tea in the morning with honey", ref="web:1", confidence=0.99, taint=["external"]
    )
    store = InMemoryStore()
    for record in (trusted, tainted):
        store.put(record)
    assert not proposed(consolidate(store, now=SOON), "dedup.near")

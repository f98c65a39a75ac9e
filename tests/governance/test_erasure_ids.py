"""Erasure ids count per local day from the log's recent tail, even after the clock ran back (§12.3)."""

from __future__ import annotations

from agent_memory.memory import Memory
from memory.conftest import T0, at


def test_an_erasure_stamped_before_the_head_still_counts_on_from_its_day(memory: Memory) -> None:
    ids = [
        memory.remember(f"Note number {n} to erase later.", source="s", now=T0).record_id for n in range(4)
    ]
    first = memory.erase([ids[0]], reason="user request", authority="ada", now=at(1))
    for n in range(30):
        memory.remember(f"Later note {n} about tea.", source="s", now=at(3, hours=n / 10))
    # A clock behind the log's head: the event is logged at the head's time, the id keeps its day.
    behind = memory.erase([ids[1]], reason="user request", authority="ada", now=at(1, hours=3))
    today = memory.erase([ids[2]], reason="user request", authority="ada", now=at(5))
    again = memory.erase([ids[3]], reason="user request", authority="ada", now=at(5, hours=1))
    assert [r.erasure_id for r in (first, behind, today, again)] == [
        "memerase-2026-11-02-001",
        "memerase-2026-11-02-002",
        "memerase-2026-11-06-001",
        "memerase-2026-11-06-002",
    ]
    logged = [e.details["erasure_id"] for e in memory.log.entries() if e.action == "erase"]
    assert logged == [first.erasure_id, behind.erasure_id, today.erasure_id, again.erasure_id]

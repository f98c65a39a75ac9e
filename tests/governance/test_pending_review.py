"""Pending records are decided: accept writes one through the write path, decline drops it (DESIGN.md §9)."""

from __future__ import annotations

import pytest

from agent_memory.errors import LifecycleError, ProposalError, StoreError
from agent_memory.governance.actors import AuthorityError
from agent_memory.memory import Memory
from agent_memory.records.record import MemoryRecord, State
from agent_memory.write.held import PendingRecords
from memory.conftest import T0, at

SUBJECT = "host:staging"


def _disputed(memory: Memory) -> tuple[str, str, str]:
    """Return ``(first, tainted rival, pending)``: a dispute on SUBJECT and a value held back by it."""
    first = memory.remember("Staging is db-2.", source="s", kind="state", subject=SUBJECT, now=T0).record_id
    rival = memory.remember(
        "Staging is db-3.", source="web", kind="state", subject=SUBJECT, taint=["external"], now=at(1)
    )
    assert rival.disputed_with == first
    held = memory.remember("Staging is db-4.", source="s", kind="state", subject=SUBJECT, now=at(2))
    assert held.pending
    return first, rival.record_id, held.record_id


def _picture(memory: Memory) -> tuple[list[str], int, list[tuple[str, str, int]]]:
    """Pending ids, log length, and every stored record's (id, state, versions): what must not change."""
    stored = [(r.id, r.state.value, len(memory.history(r.id))) for r in memory.store.list()]
    return [r.id for r in memory.pending.list()], len(list(memory.log.entries())), sorted(stored)


def _verdicts(memory: Memory, record_id: str) -> list[dict[str, object]]:
    return [
        dict(e.details) for e in memory.log.entries() if e.action == "review" and e.record_ids == (record_id,)
    ]


def test_accepting_while_the_subject_is_disputed_is_refused_and_changes_nothing(memory: Memory) -> None:
    first, rival, held = _disputed(memory)
    before = _picture(memory)
    with pytest.raises(LifecycleError, match="still disputed") as caught:
        memory.reviews.accept_pending(held, now=at(3))
    assert caught.value.field == "subject"
    assert first in str(caught.value) and rival in str(caught.value)
    assert "resolve" in (caught.value.hint or "")
    assert _picture(memory) == before
    assert memory.reviews.pending_plan(held).kind.value == "pending"


def test_after_resolve_accept_supersedes_the_winner_and_leaves_review(memory: Memory) -> None:
    first, rival, held = _disputed(memory)
    memory.resolve(first, rival, "checked the host", now=at(3))
    assert memory.reviews.pending_plan(held).kind.value == "supersede"
    result = memory.reviews.accept_pending(held, "confirmed on the box", now=at(4))
    assert (result.record_id, result.superseded, result.pending) == (held, first, False)
    assert memory.get(held).state is State.ACTIVE and memory.get(held).supersedes == first
    assert memory.get(first).state is State.SUPERSEDED and memory.get(first).superseded_by == held
    assert memory.pending.list() == []
    assert [i.record.id for i in memory.reviews.queue().items if i.queue == "pending"] == []
    assert _verdicts(memory, held)[-1] == {
        "verdict": "pending-accepted",
        "reason": "confirmed on the box",
        "outcome": "supersede",
    }
    live = [r for r in memory.store.list() if r.subject == SUBJECT and r.state is State.ACTIVE]
    assert [r.id for r in live] == [held]


def test_an_accepted_value_older_than_the_live_one_opens_a_dispute_by_the_usual_rules(memory: Memory) -> None:
    first, rival, _ = _disputed(memory)
    older = memory.remember(
        "Staging is db-1.", source="s", kind="state", subject=SUBJECT, valid_from=at(-5), now=at(2, 1)
    ).record_id
    memory.resolve(first, rival, "checked the host", now=at(3))
    result = memory.reviews.accept_pending(older, now=at(4))
    assert result.disputed_with == first
    assert memory.get(older).state is State.TRANSITIONAL and memory.get(first).state is State.TRANSITIONAL
    assert _verdicts(memory, older)[-1]["outcome"] == "dispute"


def test_decline_drops_the_pending_record_with_a_logged_reason_and_writes_none(memory: Memory) -> None:
    _, _, held = _disputed(memory)
    stored_before = _picture(memory)[2]
    memory.reviews.decline_pending(held, "db-4 was never used", now=at(3))
    assert memory.pending.list() == []
    assert not memory.store.contains(held)
    assert _picture(memory)[2] == stored_before
    assert _verdicts(memory, held)[-1] == {
        "verdict": "pending-declined",
        "reason": "db-4 was never used",
        "subject": SUBJECT,
    }
    with pytest.raises(ProposalError, match="no pending record"):
        memory.reviews.accept_pending(held, now=at(4))


@pytest.mark.parametrize("bad", ["mem:00000000000000000000000000000000", "../x", "mem:nope", ""])
def test_bad_ids_are_refused_by_accept_and_decline_and_change_nothing(memory: Memory, bad: str) -> None:
    first, _, _ = _disputed(memory)
    before = _picture(memory)
    for verdict in (memory.reviews.accept_pending, memory.reviews.decline_pending):
        with pytest.raises(ProposalError, match="no pending record"):
            verdict(bad, now=at(3))
    with pytest.raises(ProposalError, match="no pending record"):
        memory.reviews.decline_pending(first, now=at(3))  # a stored record is not pending
    assert _picture(memory) == before


def test_an_actor_without_the_approve_grant_may_neither_accept_nor_decline(memory: Memory) -> None:
    first, rival, held = _disputed(memory)
    memory.resolve(first, rival, "checked the host", now=at(3))
    before = _picture(memory)
    memory.actor = "agent:helper"
    for verdict in (memory.reviews.accept_pending, memory.reviews.decline_pending):
        with pytest.raises(AuthorityError, match="approve"):
            verdict(held, now=at(4))
    assert _picture(memory) == before


class _RemoveFailsOnce(PendingRecords):
    """Pending records kept in memory whose first removal fails, as a crash after the write would."""

    def __init__(self) -> None:
        super().__init__()
        self.failures = 1

    def remove(self, record_id: str) -> None:
        if self.failures:
            self.failures -= 1
            raise StoreError("disk went away", path="proposals/pending")
        super().remove(record_id)


def test_an_accept_interrupted_after_its_write_is_finished_by_the_next_accept() -> None:
    memory = Memory.in_memory(pending=_RemoveFailsOnce())
    first, rival, held = _disputed(memory)
    memory.resolve(first, rival, "checked the host", now=at(3))
    with pytest.raises(StoreError):
        memory.reviews.accept_pending(held, now=at(4))
    assert memory.get(held).state is State.ACTIVE and [r.id for r in memory.pending.list()] == [held]
    versions = len(memory.history(held))
    result = memory.reviews.accept_pending(held, now=at(5))
    assert result.record_id == held and memory.pending.list() == []
    assert len(memory.history(held)) == versions  # nothing written twice
    assert _verdicts(memory, held)[-1]["outcome"] == "already-written"


def test_a_pending_record_is_found_by_its_id_only(memory: Memory) -> None:
    _, _, held = _disputed(memory)
    found = memory.pending.find(held)
    assert isinstance(found, MemoryRecord) and found.body == "Staging is db-4."
    other = held[:-1] + ("1" if held.endswith("0") else "0")  # another well-formed id
    assert memory.pending.find(other) is None
    assert memory.pending.get(held) == found

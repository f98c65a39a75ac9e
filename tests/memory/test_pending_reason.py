"""``review`` shows a pending record's reason as things stand now, not only as it was held back."""

from __future__ import annotations

from agent_memory.memory import Memory
from memory.conftest import at

SUBJECT = "host:staging"
DISPUTED = f"subject {SUBJECT} is already disputed"  # the reason logged when a value is held back
HELD = f"held back while subject {SUBJECT} was disputed; accept would"


def pending_why(memory: Memory) -> dict[str, str]:
    return {item.record.id: item.why for item in memory.reviews.queue().items if item.queue == "pending"}


def state(memory: Memory, text: str, day: int, *taint: str) -> str:
    return memory.remember(
        text, source="s", kind="state", subject=SUBJECT, taint=taint, now=at(day)
    ).record_id


def test_a_pending_reason_says_what_accept_would_do_once_the_dispute_is_resolved(memory: Memory) -> None:
    first = state(memory, "Staging is db-2.", 0)
    rival = state(memory, "Staging is db-3.", 1, "external")
    held, other, tainted = (
        state(memory, f"Staging is db-{n}.", 2, *t) for n, t in ((4, ()), (5, ()), (6, ("x",)))
    )
    assert pending_why(memory) == {held: DISPUTED, other: DISPUTED, tainted: DISPUTED}

    memory.resolve(first, rival, "checked the host", now=at(3))
    assert pending_why(memory) == {
        held: f"{HELD} supersede {first} now, decline drops it",
        other: f"{HELD} supersede {first} now, decline drops it",
        tainted: f"{HELD} dispute {first} now, decline drops it",
    }
    memory.reviews.accept_pending(tainted, "a rival value", now=at(4))
    assert pending_why(memory) == {held: DISPUTED, other: DISPUTED}  # disputed again: accept is refused

    memory.resolve(first, tainted, "checked again", now=at(5))
    memory.reviews.accept_pending(held, "checked", now=at(6))
    assert pending_why(memory) == {other: f"{HELD} supersede {held} now, decline drops it"}
    again = state(memory, "Staging is db-5.", 7)
    assert again != other and memory.get(held).superseded_by == again
    assert pending_why(memory) == {other: f"{HELD} join the identical record {again} now, decline drops it"}

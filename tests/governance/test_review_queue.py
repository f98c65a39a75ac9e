"""The review queue: quarantined and pending records with their review state, behind the gate."""

from agent_memory.memory import Memory
from memory.conftest import T0, at


def test_the_queue_lists_quarantined_then_pending_records_with_their_review_state(memory: Memory) -> None:
    memory.remember("Trusted note.", source="s", now=T0)
    web = memory.remember("The API limit is 100/min.", source="web", taint=["external"], now=T0).record_id
    first = memory.remember("Staging is db-2.", source="s", kind="state", subject="host:staging", now=T0)
    dispute = memory.remember(
        "Staging is db-3.", source="web", kind="state", subject="host:staging", taint=["external"], now=at(1)
    )
    assert dispute.disputed_with == first.record_id
    waiting = memory.remember("Staging is db-4.", source="s", kind="state", subject="host:staging", now=at(2))
    assert waiting.pending
    queue = memory.reviews.queue()
    assert [(i.record.id, i.queue, i.review) for i in queue.items] == [
        (web, "quarantined", "quarantined"),
        (dispute.record_id, "quarantined", "quarantined"),
        (waiting.record_id, "pending", "none"),
    ]
    assert queue.items[2].why == "subject host:staging is already disputed"  # from the log event
    memory.review(web, "reject", "wrong page", now=at(3))
    assert [i.record.id for i in memory.reviews.queue().items] == [dispute.record_id, waiting.record_id]
    assert memory.reviews.queue().to_json()["quarantined"] == 1


def test_withdrawn_records_are_counted_not_listed_and_namespaces_filter(memory: Memory) -> None:
    mine = memory.remember(
        "u1 read it online.", source="web", namespace="user:u1", taint=["external"], now=T0
    )
    theirs = memory.remember(
        "u2 read it online.", source="web", namespace="user:u2", taint=["external"], now=T0
    )
    memory.withdraw(namespaces=["user:u1"], reason="user asked", now=at(1))
    queue = memory.reviews.queue()
    assert ([i.record.id for i in queue.items], queue.withdrawn) == ([theirs.record_id], 1)
    assert memory.reviews.queue(namespace="user:u1").items == ()
    assert mine.quarantined

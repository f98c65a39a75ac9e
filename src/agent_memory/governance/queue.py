"""The review queue: quarantined records and pending records, each with its review state.

Seed 003 (trust): a tainted record is quarantined until an attributable approval; issue 6
item 5: ``review`` lists quarantined records and pending proposals. DESIGN.md §9: review
state is computed from ``review`` events in the log
(:class:`~agent_memory.governance.review_book.ReviewBook`), never read from a record field, so a
``reviewed: true`` arriving in an imported record's
``extra`` changes nothing.

Invariants:

- a quarantined entry is a live (active or transitional) record whose review state is
  ``quarantined``; a pending entry is a record waiting in ``proposals/pending`` because its
  subject was already disputed (DESIGN.md §9 "Write-time supersede");
- the gate applies first (seed 000 §12.2: "review does not mistake a withdrawn … segment"):
  a withdrawn record is never listed, only counted;
- a pending entry's reason is the current one: the reason logged when it was held back while
  ``accept`` would still be refused (its subject disputed), else what ``accept`` would do now
  (closing note 3: the old "already disputed" text stayed after the dispute was resolved).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent_memory.errors import AgentMemoryError
from agent_memory.records.record import MemoryRecord, State
from agent_memory.records.wire import format_timestamp
from agent_memory.write.plan import Plan, PlanKind

if TYPE_CHECKING:
    from agent_memory.governance.gate import Gate
    from agent_memory.governance.review_book import ReviewBook
    from agent_memory.log.base import OperationLog
    from agent_memory.write.held import PendingRecords

__all__ = ["ReviewItem", "ReviewQueue", "review_queue"]

_LIVE = (State.ACTIVE, State.TRANSITIONAL)


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """One record waiting for a person.

    Attributes:
        record: The record (latest version; for a pending one, the record as proposed).
        queue: ``quarantined`` (tainted, not approved) or ``pending`` (its subject is disputed).
        review: Its review state from log events: ``quarantined``, ``rejected``, ``stale``,
            ``approved`` or ``none``.
        why: Why it waits: the taint labels; for a pending record, the reason logged when it
            was kept pending while its subject is still disputed, else what ``accept`` would do.
    """

    record: MemoryRecord
    queue: str
    review: str
    why: str

    def to_json(self) -> dict[str, Any]:
        """Return ``{"id", "queue", "review", "why", "body", "state", "taint", "namespace", "source", …}``."""
        record = self.record
        return {
            "id": record.id,
            "queue": self.queue,
            "review": str(self.review),
            "why": self.why,
            "body": record.body,
            "state": record.state.value,
            "taint": list(record.taint or ()),
            "namespace": record.effective_namespace,
            "source": record.provenance.ref,
            "created_at": format_timestamp(record.created_at),
        }


@dataclass(frozen=True, slots=True)
class ReviewQueue:
    """The records waiting for review, quarantined first, each group by ``(created_at, id)``.

    Attributes:
        items: The entries.
        withdrawn: How many waiting records a withdrawal in force keeps out of this list.
    """

    items: tuple[ReviewItem, ...]
    withdrawn: int = 0

    def to_json(self) -> dict[str, Any]:
        """Return ``{"items": [...], "quarantined": n, "pending": n, "withdrawn": n}``."""
        return {
            "items": [item.to_json() for item in self.items],
            "quarantined": sum(1 for item in self.items if item.queue == "quarantined"),
            "pending": sum(1 for item in self.items if item.queue == "pending"),
            "withdrawn": self.withdrawn,
        }


def review_queue(
    records: Iterable[MemoryRecord],
    *,
    log: OperationLog,
    gate: Gate,
    book: ReviewBook,
    pending: PendingRecords,
    plan_of: Callable[[str], Plan],
    namespace: str | None = None,
) -> ReviewQueue:
    """Return the quarantined and pending records that the gate lets through (``memory.reviews.queue``).

    Args:
        records: The latest version of every record (the catalog's readable records, or
            the review page's, kept in step).
        log: The operation log (the reasons pending records were held back).
        gate: The withdrawal gate.
        book: Review states.
        pending: The records waiting for review.
        plan_of: What accepting a pending record would do now (``Reviews.pending_plan``).
        namespace: Only records of this namespace.

    Raises:
        LogError: The log cannot be read (review events or withdrawal controls).
    """
    view = gate.view()
    pending_reasons = {
        entry.record_ids[0]: str(entry.details.get("reason", ""))
        for entry in log.entries()
        if entry.action == "review" and entry.record_ids and entry.details.get("verdict") == "pending"
    }
    candidates: list[tuple[MemoryRecord, str, str]] = []
    for record in records:
        if record.state in _LIVE and book.state_of(record) == "quarantined":
            candidates.append((record, "quarantined", f"tainted: {', '.join(record.taint or ())}"))
    for record in sorted(pending.list(), key=lambda r: (r.created_at, r.id)):
        why = pending_reasons.get(record.id) or "its subject is already disputed"
        candidates.append((record, "pending", _pending_now(plan_of, record, why)))
    items: list[ReviewItem] = []
    withdrawn = 0
    for record, queue, why in candidates:
        if namespace is not None and record.effective_namespace != namespace:
            continue
        if not view.is_exposed(record):
            withdrawn += 1
            continue
        items.append(ReviewItem(record, queue, book.state_of(record), why))
    return ReviewQueue(tuple(items), withdrawn)


_ACCEPT_WOULD = {
    PlanKind.SUPERSEDE: "supersede {other}",
    PlanKind.DISPUTE: "dispute {other}",
    PlanKind.DEDUP: "join the identical record {other}",
    PlanKind.CREATE: "write it as the subject's only value",
}


def _pending_now(plan_of: Callable[[str], Plan], record: MemoryRecord, logged: str) -> str:
    """Return why ``record`` waits: ``logged`` while accept would be refused, else what accept would do."""
    try:
        plan = plan_of(record.id)
    except AgentMemoryError:  # unreadable now: the reason it was held back is all there is to say
        return logged
    if plan.kind is PlanKind.PENDING:
        return logged
    would = _ACCEPT_WOULD[plan.kind].format(other=plan.other.id if plan.other is not None else "")
    return (
        f"held back while subject {record.subject} was disputed; accept would {would} now, decline drops it"
    )

"""What the review page shows: everything that waits for a person's decision, with what it would do.

The same sources as ``agent-memory review``, ``proposals`` and ``promotions``: the review
queue (``memory.reviews.queue``: quarantined and pending records), open disputes, the
maintenance proposals still pending with the diff each would write
(re-validated against the records now, a stale one marked with its reason, as ``proposals``
does), the accepted ones a person may still revert, the regret rate
(:func:`agent_memory.jobs.review_flow.review_stats`) and promotion proposals to
``conventions.md``. Reads only; a Memory over a database (no Home) has no proposals folder,
so those parts are empty and the page says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_memory.errors import AgentMemoryError

if TYPE_CHECKING:
    from agent_memory.governance.promotion import PromotionProposal
    from agent_memory.governance.queue import ReviewQueue
    from agent_memory.governance.review_book import ReviewBook
    from agent_memory.jobs.pending import PendingProposal
    from agent_memory.memory import Memory
    from agent_memory.ui.browse import Dispute
    from agent_memory.ui.latest import LatestRecords
    from agent_memory.ui.trust import Trust

__all__ = ["Proposal", "ReviewPage", "review_page"]


@dataclass(frozen=True, slots=True)
class Proposal:
    """One maintenance proposal as the page shows it.

    Attributes:
        pending: The proposal as filed.
        problem: Why accepting it now would be refused (stale, illegal), or ``""``.
        diff: The unified diff of the versions it would write (``""`` when stale).
    """

    pending: PendingProposal
    problem: str = ""
    diff: str = ""


@dataclass(frozen=True, slots=True)
class ReviewPage:
    """Everything the review page lists.

    Attributes:
        queue: Quarantined and pending records.
        disputes: Open disputes.
        branches: Pending maintenance proposals grouped by the run that made them (its
            time stamp, which also names its ``maintenance/<stamp>`` branch when the run
            committed one), each with its diff.
        accepted: ``(proposal id, pass, when)`` of accepted proposals not yet reverted.
        stats: ``{"accepted", "declined", "reverted", "regret_rate"}``.
        promotions: Pending promotion proposals.
        unavailable: Why proposals cannot be listed here (no Home, unreadable file), or ``""``.
        trust: Why each listed record (queue items, dispute sides) is believed or not, by id.
    """

    queue: ReviewQueue
    disputes: tuple[Dispute, ...]
    branches: tuple[tuple[str, tuple[Proposal, ...]], ...] = ()
    accepted: tuple[tuple[str, str, str], ...] = ()
    stats: dict[str, Any] = field(default_factory=dict)
    promotions: tuple[PromotionProposal, ...] = ()
    unavailable: str = ""
    trust: dict[str, Trust] = field(default_factory=dict)

    def backlog(self) -> list[tuple[str, int]]:
        """Return ``(what, how many)`` of everything that waits for a person, for the backlog chart."""
        items = self.queue.items
        return [
            ("quarantined", sum(1 for item in items if item.queue == "quarantined")),
            ("disputes", len(self.disputes)),
            ("pending values", sum(1 for item in items if item.queue == "pending")),
            ("proposals", sum(len(found) for _, found in self.branches)),
            ("promotions", len(self.promotions)),
        ]


def review_page(memory: Memory, reviews: ReviewBook, latest: LatestRecords) -> ReviewPage:
    """Return what waits for review in ``memory`` (module docstring).

    Raises:
        LogError: The log cannot be read.
    """
    from agent_memory.jobs.review_flow import review_stats
    from agent_memory.ui.browse import disputes

    queue = memory.reviews.queue(records=latest.current())
    open_disputes = tuple(disputes(latest.current(), reviews))
    stats = review_stats(memory.log)
    trust = _trust(memory, reviews, queue, open_disputes)
    if memory.home is None:
        why = "maintenance proposals and promotions live in a Home's files; this memory is a database"
        return ReviewPage(queue, open_disputes, stats=stats, unavailable=why, trust=trust)
    try:
        branches = _proposals(memory)
        promotions = tuple(memory.promotions(status="pending-review"))
    except AgentMemoryError as exc:
        return ReviewPage(queue, open_disputes, stats=stats, unavailable=str(exc), trust=trust)
    return ReviewPage(queue, open_disputes, branches, _accepted(memory), stats, promotions, trust=trust)


def _trust(
    memory: Memory, reviews: ReviewBook, queue: ReviewQueue, open_disputes: tuple[Dispute, ...]
) -> dict[str, Trust]:
    from agent_memory.ui.trust import trust_of

    view, signers = memory.gate.view(), memory.catalog.signers
    found = {
        item.record.id: trust_of(
            item.record, "pending" if item.queue == "pending" else item.review, signers=signers
        )
        for item in queue.items
    }
    for dispute in open_disputes:
        for side in dispute.sides:
            exposure = view.check(side)
            withdrawn = "" if exposure.exposed else exposure.reason
            found[side.id] = trust_of(side, reviews.state_of(side), withdrawn, signers=signers)
    return found


def _proposals(memory: Memory) -> tuple[tuple[str, tuple[Proposal, ...]], ...]:
    from agent_memory.jobs.pending import revalidate
    from agent_memory.jobs.review_flow import diff_versions

    groups: dict[str, list[Proposal]] = {}
    for pending in memory.proposals.pending():
        try:
            shown = Proposal(pending, diff=diff_versions(memory.store, revalidate(memory.store, pending)))
        except AgentMemoryError as exc:
            shown = Proposal(pending, problem=str(exc))
        groups.setdefault(_run_of(pending), []).append(shown)
    return tuple((name, tuple(found)) for name, found in sorted(groups.items()))


def _run_of(pending: PendingProposal) -> str:
    """Return the run a proposal came from (one ``consolidate`` or ``distill`` run stamps all alike)."""
    from agent_memory.records.wire import format_timestamp

    return f"run of {format_timestamp(pending.made_at)}"


def _accepted(memory: Memory) -> tuple[tuple[str, str, str], ...]:
    """Return ``(proposal id, pass, when)`` of each accepted proposal no revert names, oldest first."""
    from agent_memory.jobs.review_flow import ACCEPTED, REVERTED

    accepted: dict[str, tuple[str, str, str]] = {}
    for entry in memory.log.entries():
        if str(entry.action) != "review":
            continue
        verdict, proposal_id = entry.details.get("verdict"), str(entry.details.get("proposal_id", ""))
        if verdict == ACCEPTED and proposal_id:
            accepted[proposal_id] = (proposal_id, str(entry.details.get("pass", "")), entry.time.isoformat())
        elif verdict == REVERTED:
            accepted.pop(proposal_id, None)
    return tuple(accepted.values())

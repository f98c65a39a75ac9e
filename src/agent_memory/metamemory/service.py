"""``memory.metamemory`` (seed 000 §23, memory:L5): retrievals, outcomes, feedback, policy.

A service built on the Memory's :class:`~agent_memory.write.writer.Writer`; every verb takes the
Writer's lock and delegates to :class:`agent_memory.metamemory.book.Metamemory` over the Memory's
own log. Feedback never rewrites a record or its source.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from agent_memory.metamemory.book import (
    FeedbackEvent,
    Metamemory,
    OutcomeRecord,
    PolicyProposal,
    RetrievalRecord,
)
from agent_memory.recall.select import RecallResult

if TYPE_CHECKING:
    from agent_memory.write.writer import Writer

__all__ = ["MetamemoryService"]


class MetamemoryService:
    """Seed 000 §23's binding operations over one Memory (``memory.metamemory``).

    Args:
        writer: The Memory's Writer: its lock, clock, actor, log and store.
    """

    def __init__(self, writer: Writer) -> None:
        self._writer = writer
        self._book: Metamemory | None = None

    @property
    def book(self) -> Metamemory:
        """The metamemory book over the Memory's log (built on first use; see :mod:`.book`)."""
        if self._book is None:
            self._book = Metamemory.for_log(self._writer.log, self._writer.store.contains)
        return self._book

    def retrieval(self, retrieval_id: str) -> RetrievalRecord:
        """Return a logged retrieval record by its ``memret-…`` id (see :meth:`.Metamemory.retrieval`)."""
        return self.book.retrieval(retrieval_id)

    def record_retrieval(
        self,
        retrieved: RecallResult | Sequence[str],
        *,
        task_id: str | None = None,
        use_role: str = "background",
        query: str | None = None,
        now: datetime | None = None,
    ) -> RetrievalRecord:
        """Log a ``retrieval_record`` ``memret-…``: a recall's ids and its query's digest (never its text).

        ``retrieved`` is a :class:`RecallResult` or record ids (then ``query`` may be given);
        ``use_role`` is one of seed 000 §23.2's roles (:data:`.feedback.USE_ROLES`).

        Raises:
            RecordNotFound: An id the store does not hold.
            RecordError: A bad role, task id or time (named).
        """
        stamp = self._writer.clock(now)
        ids = retrieved.ids if isinstance(retrieved, RecallResult) else retrieved
        query = retrieved.query if isinstance(retrieved, RecallResult) else query
        with self._writer.writing():
            return self.book.record_retrieval(
                ids, query=query, task_id=task_id, use_role=use_role, actor=self._writer.actor, now=stamp
            )

    def record_outcome(
        self,
        task_id: str,
        outcome: str,
        evidence_refs: Iterable[str] = (),
        *,
        retrieval_ref: str | None = None,
        observed_at: datetime | None = None,
        now: datetime | None = None,
    ) -> OutcomeRecord:
        """Log a task's outcome ``memout-…``: succeeded, failed, partial, abandoned or unknown.

        Raises:
            RecordError: A bad task id, outcome, ref, ``retrieval_ref`` or time (named).
        """
        stamp = self._writer.clock(now)
        with self._writer.writing():
            return self.book.record_outcome(
                task_id,
                outcome,
                evidence_refs,
                retrieval_ref=retrieval_ref,
                observed_at=observed_at,
                actor=self._writer.actor,
                now=stamp,
            )

    def attribute_feedback(
        self,
        memory_item_ids: Sequence[str] = (),
        *,
        verdict: str,
        attribution_confidence: str,
        use_role: str | None = None,
        task_id: str | None = None,
        retrieval_ref: str | None = None,
        outcome_ref: str | None = None,
        evidence_refs: Iterable[str] = (),
        observed_at: datetime | None = None,
        now: datetime | None = None,
    ) -> FeedbackEvent:
        """Log feedback ``memfb-…`` on retrieved records; never rewrites a record or its source.

        The verdict is ``helpful``, ``misleading``, ``neutral`` or ``unknown``; the attribution
        confidence ``low``, ``medium`` or ``high``; the ids and use role default to
        ``retrieval_ref``'s (see :meth:`.Metamemory.attribute_feedback`).

        Raises:
            RecordNotFound: An id the store does not hold.
            RecordError: A bad verdict, confidence, role, ref or time, or an id outside
                ``retrieval_ref`` (named).
        """
        stamp = self._writer.clock(now)
        with self._writer.writing():
            return self.book.attribute_feedback(
                memory_item_ids,
                verdict=verdict,
                attribution_confidence=attribution_confidence,
                use_role=use_role,
                task_id=task_id,
                retrieval_ref=retrieval_ref,
                outcome_ref=outcome_ref,
                evidence_refs=evidence_refs,
                observed_at=observed_at,
                actor=self._writer.actor,
                now=stamp,
            )

    def list_feedback(self, record_id: str) -> list[FeedbackEvent]:
        """Return the feedback events naming ``record_id``, oldest first (``RecordNotFound`` if unknown)."""
        with self._writer.lock:
            return self.book.list_feedback(record_id)

    def propose_policy_change(
        self,
        target: str,
        proposed_change: str,
        supporting_refs: Iterable[str],
        *,
        expected_benefit: str,
        risk: str,
        now: datetime | None = None,
    ) -> PolicyProposal:
        """Write a pending ``mempolicy-…`` proposal (``proposals/`` of a Home); it is never applied by itself.

        Raises:
            RecordError: A bad target, empty prose, no refs, or an unknown event ref (named).
            RecordNotFound: A ``mem:`` ref the store does not hold.
            ProposalError: The proposal file cannot be written.
        """
        stamp = self._writer.clock(now)
        with self._writer.writing():
            return self.book.propose_policy_change(
                target,
                proposed_change,
                supporting_refs,
                expected_benefit=expected_benefit,
                risk=risk,
                actor=self._writer.actor,
                now=stamp,
            )

    def policy_proposals(self) -> list[PolicyProposal]:
        """Return the policy proposals waiting for review, by id."""
        with self._writer.lock:
            return self.book.proposals.list()

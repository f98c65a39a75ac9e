"""`Reviews` (``memory.reviews``): marks on records, verdicts on pending ones, and the review queue.

Review marks (``approve``, ``reject``, ``stale``, ``clear``) are attributable ``review``
events in the log, never record fields: :mod:`agent_memory.governance.review_book` reads them back to decide
quarantine and down-weighting. Invariants: a mark the actor may not make writes nothing, and
neither does an ``approve`` that would lift nothing (the record is not quarantined or rejected).

Pending records (DESIGN.md §9 "Write-time supersede": a state value kept for review because
its subject was already disputed) get a proposal verdict instead: ``accept_pending`` writes
one now through the normal write path (:func:`~agent_memory.write.plan.plan_write`, then
supersede or dispute by the usual rules; refused while the subject is still disputed), and
``decline_pending`` drops it. Each logs a ``review`` event (verdict ``pending-accepted`` or
``pending-declined``, which no review state reads) and then removes the pending file; an
accept interrupted after its write is finished by the next ``accept_pending`` of that id.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import KW_ONLY, dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from agent_memory.errors import LifecycleError
from agent_memory.governance.actors import require_review
from agent_memory.governance.queue import ReviewQueue, review_queue
from agent_memory.write.plan import Plan, PlanKind, RememberResult, plan_write

if TYPE_CHECKING:
    from agent_memory.governance.gate import Gate
    from agent_memory.governance.review_book import ReviewBook
    from agent_memory.records.record import MemoryRecord
    from agent_memory.write.held import PendingRecords
    from agent_memory.write.remember import Remember
    from agent_memory.write.writer import Writer

__all__ = ["PENDING_ACCEPTED", "PENDING_DECLINED", "Reviews"]

PENDING_ACCEPTED = "pending-accepted"
PENDING_DECLINED = "pending-declined"


@dataclass(eq=False)
class Reviews:
    """The review verbs over one Memory's parts (seed 003: quarantine lifts only by an attributable approval).

    ``Memory.review`` delegates to :meth:`review`; the rest are ``memory.reviews.…``.

    Args:
        writer: The Memory's Writer: lock, clock, store, log, who acts and the lookup.
        book: Review states folded from the log.
        pending: The records waiting for review.
        remember: The remember verb, whose plan an accepted pending record is written by.
        gate: Withdrawal controls (the queue shows only what they expose).
    """

    writer: Writer
    _: KW_ONLY
    book: ReviewBook
    pending: PendingRecords
    remember: Remember
    gate: Gate

    def review(self, record_id: str, verdict: str, reason: str = "", *, now: datetime | None = None) -> None:
        """Log a person's review of a record: ``approve``, ``reject``, ``stale`` or ``clear``.

        Review marks are attributable events, never record fields (DESIGN.md §9). Each
        changes what is exposed, so each needs a grant: ``approve``/``reject`` the ``approve``
        grant, ``stale``/``clear`` ``mark`` or ``approve``; a tainted session may make none
        (:func:`~agent_memory.governance.actors.require_review`).

        ``approve`` lifts a quarantine or a rejection; on a record that has neither (untainted,
        or already approved) it would log an event that changes nothing, so it is refused.

        Raises:
            RecordNotFound: Unknown id.
            RecordError: Unknown verdict.
            AuthorityError: The actor holds no grant for the verdict, or the session is
                tainted (``TaintedDecisionError``); nothing is written.
            LifecycleError: ``approve`` of a record that is neither quarantined nor rejected
                (field ``verdict``); nothing is written.
        """
        self.review_many((record_id,), verdict, reason, now=now)

    def review_many(
        self, record_ids: Sequence[str], verdict: str, reason: str = "", *, now: datetime | None = None
    ) -> None:
        """Log the same review of several records, all or none, under one writer lock.

        Every id is checked (grant, existence, and for ``approve`` that it lifts something)
        before any event is written; one ``review`` event per record, as :meth:`review` logs.

        Raises:
            As :meth:`review`, for the first id refused; then nothing is written.
        """
        stamp = self.writer.clock(now)
        self.book.check_verdict(verdict)
        for record_id in record_ids:
            require_review(
                self.writer.actors, self.writer.actor, verdict, record_id=record_id, taint=self.writer.taint
            )
        with self.writer.writing():
            records = [self.writer.store.get(record_id) for record_id in record_ids]
            if verdict == "approve":
                for record in records:
                    _check_approvable(record, self.book.state_of(record))
            for record in records:
                self.writer.log.append(
                    "review",
                    actor=self.writer.actor,
                    record_ids=(record.id,),
                    details={"verdict": verdict, "reason": reason},
                    now=stamp,
                )

    def pending_plan(self, record_id: str) -> Plan:
        """Return what accepting the pending record ``record_id`` would do now (writes nothing).

        The plan is :func:`~agent_memory.write.plan.plan_write`'s for the record against the live
        records of this moment: ``supersede``, ``dispute``, ``create``, ``dedup``, or
        ``pending`` while its subject is still disputed.

        Raises:
            ProposalError: No record waits under that id (naming it).
            RecordError: A pending note file is malformed (naming it).
        """
        record = self.pending.get(record_id)
        duplicate, live_subject = self.writer.write_keys.lookup(record, self.writer.head())
        return plan_write(record, duplicate, live_subject)

    def accept_pending(
        self, record_id: str, reason: str = "", *, now: datetime | None = None
    ) -> RememberResult:
        """Write the pending record ``record_id`` now, as ``remember`` would, and drop it from review.

        Goes through the normal write path (DESIGN.md §9 "Write-time supersede"): an untainted
        value no older than the live one supersedes it; a tainted or older one opens a dispute
        with it; with no live value it is created; an identical live record takes it as a
        duplicate. Then a ``review`` event ``{"verdict": "pending-accepted", "reason",
        "outcome": <plan kind>}`` names the record, and its pending file is removed. Needs the
        ``approve`` grant, as accepting a maintenance proposal does.

        Args:
            record_id: The pending record's id (``mem:…``), as ``review`` lists it.
            reason: Why, in the reviewer's words (logged, so quote no record content).
            now: The clock (aware).

        Returns:
            What was written, as :meth:`~agent_memory.memory.Memory.remember` reports it.

        Raises:
            AuthorityError: The actor lacks the ``approve`` grant; nothing written.
            ProposalError: No record waits under that id; nothing written.
            LifecycleError: Its subject is still disputed (field ``subject``; resolve the
                dispute first), or the gate refuses the write; nothing written.
            RecordError: The pending note file is malformed (naming it); nothing written.
            SignatureError: The pending file, or the live record it meets, does not verify
                (edited by hand); nothing written.
            ScreenError: Its body fails the screen; nothing written.
        """
        stamp = self.writer.clock(now)
        self._require_approve(record_id, f"accept {record_id}")
        with self.writer.writing():
            record = self.pending.get(record_id)
            if self.writer.store.contains(record.id):
                # An earlier accept wrote it and stopped before removing the file: finish that.
                result = RememberResult(record.id, quarantined=bool(record.taint))
                outcome = "already-written"
            else:
                # The gate (issue 18): the pending file must verify (one whose taint line was
                # deleted is refused, never signed by the Home), its body passes the screen,
                # and the live record it supersedes or disputes must verify.
                self.writer.check(record)
                plan = self.pending_plan(record_id)
                if plan.kind is PlanKind.PENDING:
                    raise _still_disputed(record, plan.other)
                self.writer.admit([plan.record, *([plan.other] if plan.other is not None else [])])
                result = self.remember.apply_plan(plan, stamp)
                outcome = plan.kind.value
            self.writer.log.append(
                "review",
                actor=self.writer.actor,
                record_ids=(record.id,),
                details={"verdict": PENDING_ACCEPTED, "reason": reason, "outcome": outcome},
                now=stamp,
            )
            self.pending.remove(record.id)
            return result

    def decline_pending(self, record_id: str, reason: str = "", *, now: datetime | None = None) -> None:
        """Drop the pending record ``record_id`` without writing it; log why.

        Logs a ``review`` event ``{"verdict": "pending-declined", "reason", "subject"}`` naming
        the record (ids and the subject key only: the log never holds record content), then
        removes its pending file. Needs the ``approve`` grant.

        Args:
            record_id: The pending record's id (``mem:…``).
            reason: Why, in the reviewer's words (logged, so quote no record content).
            now: The clock (aware).

        Raises:
            AuthorityError: The actor lacks the ``approve`` grant; nothing changed.
            ProposalError: No record waits under that id; nothing changed.
            RecordError: The pending note file is malformed (naming it); nothing changed.
        """
        stamp = self.writer.clock(now)
        self._require_approve(record_id, f"decline {record_id}")
        with self.writer.writing():
            record = self.pending.get(record_id)
            self.writer.log.append(
                "review",
                actor=self.writer.actor,
                record_ids=(record.id,),
                details={"verdict": PENDING_DECLINED, "reason": reason, "subject": record.subject or ""},
                now=stamp,
            )
            self.pending.remove(record.id)

    def queue(
        self, *, namespace: str | None = None, records: Iterable[MemoryRecord] | None = None
    ) -> ReviewQueue:
        """Return the quarantined and pending records the gate lets through (:mod:`.queue`).

        Args:
            namespace: Only records of this namespace.
            records: The latest version of every record, when the caller holds them already (the
                review page keeps them in step); the catalog's readable records when omitted.

        Raises:
            LogError: The log cannot be read (review events or withdrawal controls).
        """
        return review_queue(
            self.writer.catalog.readable_records() if records is None else records,
            log=self.writer.log,
            gate=self.gate,
            book=self.book,
            pending=self.pending,
            plan_of=self.pending_plan,
            namespace=namespace,
        )

    def _require_approve(self, record_id: str, action: str) -> None:
        """Refuse unless the actor holds the ``approve`` grant (AuthorityError naming ``action``)."""
        self.writer.actors.require(self.writer.actor, "approve", record_id=record_id, action=action)


def _still_disputed(record: MemoryRecord, live: MemoryRecord | None) -> LifecycleError:
    sides = list(live.transition.sides) if live is not None and live.transition is not None else []
    between = f" between {' and '.join(sides)}" if sides else ""
    return LifecycleError(
        f"{record.subject} is still disputed{between}: resolve the dispute before accepting",
        record_id=record.id,
        field="subject",
        hint="`agent-memory resolve WINNER_ID LOSER_ID --reason …` settles it; then accept again",
    )


def _check_approvable(record: MemoryRecord, state: str) -> None:
    if state in ("quarantined", "rejected"):
        return
    if record.taint:
        why = "it is already approved"
    else:
        why = "it is not tainted, so it was never quarantined and needs no approval"
    raise LifecycleError(
        f"nothing to approve: {why}",
        record_id=record.id,
        field="verdict",
        hint="`agent-memory review` lists the quarantined records",
    )

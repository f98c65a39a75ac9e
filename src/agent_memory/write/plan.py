"""The write path of `remember`: normalise, dedup, write-time state supersede or dispute, intents.

Rules (seed 000 §4, §9, §14.2; seed 001 write stage; DESIGN.md §2 and §9 "Write-time supersede"):

- Text is NFC-normalised and stripped, so the same words in another normal form or with
  other surrounding whitespace are the same record; empty text is refused.
- An exact live duplicate (same namespace, kind, subject and body; active or transitional)
  is not copied: its tags are merged and it is touched (``deduped``).
- A ``state`` record whose ``namespace`` + ``subject`` has a live record: if the new one is
  untainted, the live one is active, and the new valid time starts no earlier, it
  supersedes the live one at once through :func:`apply_proposal`; otherwise it opens a
  transition pair with it, or, when the live one is already disputed, it is kept as a
  pending proposal for review. Never across kinds; never on similarity.
- A two-step write logs an ``intent`` first and ``intent-done`` after; an intent left
  unfinished by a crash is rolled forward on open (:func:`roll_forward`), never back.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from agent_memory.errors import RecordError
from agent_memory.log.base import LogEntry, OperationLog
from agent_memory.records.record import Kind, MemoryRecord, State, check_plain_text
from agent_memory.stores.base import RecordStore
from agent_memory.write.proposals import Proposal, ProposalKind, validate_proposals

__all__ = [
    "Plan",
    "PlanKind",
    "RememberResult",
    "live_key",
    "normalize_text",
    "plan_write",
    "roll_forward",
    "subject_key",
]

LIVE_STATES = (State.ACTIVE, State.TRANSITIONAL)


class PlanKind(StrEnum):
    """What ``remember`` decided to do with a new record."""

    CREATE = "create"
    DEDUP = "dedup"
    SUPERSEDE = "supersede"
    DISPUTE = "dispute"
    PENDING = "pending"


@dataclass(frozen=True, slots=True)
class Plan:
    """The decision for one new record: the kind of write and the live record it concerns."""

    kind: PlanKind
    record: MemoryRecord
    other: MemoryRecord | None = None
    reason: str = ""


def normalize_text(text: str, field: str = "body") -> str:
    """Return ``text`` NFC-normalised with surrounding whitespace removed.

    Raises:
        RecordError: Not a string, nothing left after stripping, or a control character
            other than tab and line breaks (:func:`~agent_memory.records.record.check_plain_text`;
            field ``body``).
    """
    if not isinstance(text, str):
        raise RecordError(f"must be text, got {type(text).__name__}", field=field)
    cleaned = unicodedata.normalize("NFC", text).strip()
    if not cleaned:
        raise RecordError("is empty: there is nothing to remember", field=field)
    return check_plain_text(cleaned, field)


def live_key(record: MemoryRecord) -> tuple[str, str, str, str]:
    """Key under which exact duplicates collide: namespace, kind, subject and the NFC body."""
    body = unicodedata.normalize("NFC", record.body).strip()
    return (record.effective_namespace, record.effective_kind.value, record.subject or "", body)


def subject_key(record: MemoryRecord) -> tuple[str, str] | None:
    """Key of the one-current-value rule: ``(namespace, subject)`` for a state record, else None."""
    if record.effective_kind is not Kind.STATE or not record.subject:
        return None
    return (record.effective_namespace, record.subject)


def plan_write(
    record: MemoryRecord, duplicate: MemoryRecord | None, live_subject: MemoryRecord | None
) -> Plan:
    """Decide how to write ``record`` given the live duplicate and the live record of its subject.

    Args:
        record: The new record, built and validated.
        duplicate: A live record with the same :func:`live_key`, if any.
        live_subject: The live (active or transitional) state record with the same
            :func:`subject_key`, if any and if it is not ``duplicate``.
    """
    if duplicate is not None:
        return Plan(PlanKind.DEDUP, record, duplicate)
    if live_subject is None:
        return Plan(PlanKind.CREATE, record)
    subject = record.subject
    newer = record.effective_valid_from >= live_subject.effective_valid_from
    if live_subject.state is State.TRANSITIONAL:
        return Plan(PlanKind.PENDING, record, live_subject, f"subject {subject} is already disputed")
    if not record.taint and newer:
        return Plan(
            PlanKind.SUPERSEDE,
            record.evolve(supersedes=live_subject.id),
            live_subject,
            f"newer value for subject {subject}",
        )
    why = "a tainted value" if record.taint else "an older value"
    return Plan(
        PlanKind.DISPUTE, record, live_subject, f"{why} for subject {subject} disagrees with the current one"
    )


def execute(
    plan: Plan,
    store: RecordStore,
    log: OperationLog,
    *,
    actor: str,
    now: datetime,
    sign: Callable[[MemoryRecord], MemoryRecord] | None = None,
) -> list[MemoryRecord]:
    """Carry out a create, supersede or dispute plan with a logged intent; return versions written.

    The plan is validated against the store first (a refused one raises and logs nothing);
    then the intent, naming both records and the plan, is logged before the first put and
    closed with ``intent-done`` after the last, so :func:`roll_forward` can finish the job
    if the process dies in between.

    Raises:
        ProposalError, LifecycleError: The gate refuses the plan (e.g. the live record was
            superseded meanwhile); nothing is written, not even the intent.
    """
    record, other = plan.record, plan.other
    if plan.kind is PlanKind.CREATE or other is None:
        written = _put(
            store, validate_proposals(store, [Proposal(ProposalKind.CREATE, record=record)], now=now), sign
        )
        log.append("put", actor=actor, record_ids=(record.id,), details={"versions": [1]}, now=now)
        return written
    details = {"op": plan.kind.value, "reason": plan.reason, "subject": record.subject or ""}
    supersede = Proposal(ProposalKind.SUPERSEDE, record=record, target_id=other.id, reason=plan.reason)
    dispute = [
        Proposal(ProposalKind.CREATE, record=record),
        Proposal(ProposalKind.TRANSITION, target_id=other.id, other_id=record.id, reason=plan.reason),
    ]
    # Checked once, before the intent is logged: a write the gate refuses leaves no trace in the
    # log; the versions it returns are what is put (a dispute's new record first, then the pair).
    versions = validate_proposals(store, [supersede] if plan.kind is PlanKind.SUPERSEDE else dispute, now=now)
    intent = log.append("intent", actor=actor, record_ids=(other.id, record.id), details=details, now=now)
    written = _put(store, versions, sign)
    _close(log, intent, plan.kind.value, actor=actor, now=now)
    return written


def _open_dispute(
    store: RecordStore,
    old_id: str,
    new_id: str,
    reason: str,
    now: datetime,
    sign: Callable[[MemoryRecord], MemoryRecord] | None = None,
) -> list[MemoryRecord]:
    proposal = Proposal(ProposalKind.TRANSITION, target_id=old_id, other_id=new_id, reason=reason)
    return _put(store, validate_proposals(store, [proposal], now=now), sign)


def _put(
    store: RecordStore,
    versions: list[MemoryRecord],
    sign: Callable[[MemoryRecord], MemoryRecord] | None,
) -> list[MemoryRecord]:
    """Sign each unsigned version the gate returned with ``sign`` and put them, in order."""
    if sign is not None:
        versions = [v if v.signature else sign(v) for v in versions]
    for version in versions:
        store.put(version)
    return versions


def _close(
    log: OperationLog, intent: LogEntry, op: str, *, actor: str, now: datetime, outcome: str = "done"
) -> None:
    log.append(
        "intent-done",
        actor=actor,
        record_ids=intent.record_ids,
        details={"intent": intent.seq, "op": op, "outcome": outcome},
        now=now,
    )
    action = "supersede" if op == PlanKind.SUPERSEDE else "transition"
    if outcome != "abandoned":
        log.append(action, actor=actor, record_ids=intent.record_ids, details=dict(intent.details), now=now)


def open_intents(entries: Iterable[LogEntry]) -> list[LogEntry]:
    """Return the ``intent`` entries that no ``intent-done`` closes, oldest first."""
    pending: dict[int, LogEntry] = {}
    for entry in entries:
        if entry.action == "intent":
            pending[entry.seq] = entry
        elif entry.action == "intent-done":
            pending.pop(int(entry.details.get("intent", 0)), None)
    return list(pending.values())


def roll_forward(
    store: RecordStore,
    log: OperationLog,
    *,
    actor: str,
    now: datetime,
    since_seq: int = 0,
    sign: Callable[[MemoryRecord], MemoryRecord] | None = None,
) -> int:
    """Finish every unfinished write intent in the log; return how many were closed.

    The new record's content is never in the log, so an intent whose new record was not
    stored before the crash is closed as ``abandoned`` (nothing was acknowledged and nothing
    half-done remains). Otherwise the missing second step is applied: retire the old record
    for a supersede, or open the transition for a dispute. Never rolled back. ``sign`` signs
    each version written, as the interrupted write would have (a Home that signs refuses an
    unsigned version of its own record on the verified read path).
    """

    def put(record: MemoryRecord) -> None:
        store.put(sign(record) if sign is not None else record)

    closed = 0
    for intent in open_intents(log.entries(since_seq=since_seq)):
        op = str(intent.details.get("op", ""))
        old_id, new_id = intent.record_ids
        if not store.contains(new_id):
            _close(log, intent, op, actor=actor, now=now, outcome="abandoned")
            closed += 1
            continue
        old, new = store.get(old_id), store.get(new_id)
        reason = str(intent.details.get("reason", "")) or "rolled forward after an interrupted write"
        if op == PlanKind.SUPERSEDE and old.state is State.ACTIVE:
            from agent_memory.records.lifecycle import supersede

            put(supersede(old, new, reason, now=now))
        elif op == PlanKind.DISPUTE and old.state is State.ACTIVE and new.state is State.ACTIVE:
            _open_dispute(store, old_id, new_id, reason, now, sign)
        elif op == PlanKind.DISPUTE and old.state is State.TRANSITIONAL and new.state is State.ACTIVE:
            # The crash fell between the two puts of the transition: give the new side the same block.
            block = old.transition
            if block is not None and set(block.sides) == {old_id, new_id}:
                put(
                    new.evolve(
                        state=State.TRANSITIONAL,
                        transition=block,
                        state_reason=old.state_reason,
                        updated_at=now,
                    )
                )
        _close(log, intent, op, actor=actor, now=now, outcome="rolled-forward")
        closed += 1
    return closed


@dataclass(frozen=True, slots=True)
class RememberResult:
    """What ``remember`` did.

    Attributes:
        record_id: The record now holding the text (the existing one when deduped).
        deduped: An identical live record existed; it was touched and its tags merged.
        superseded: The id of the state record this one replaced at once, if any.
        disputed_with: The id of the record this one now disputes (both transitional), if any.
        pending: The subject was already disputed: the record waits as a pending proposal.
        quarantined: The record is tainted: recallable, never autoloaded until approved.
        cleaned: What the screen cleaned in the text (an importer's write), one line each.
    """

    record_id: str
    deduped: bool = False
    superseded: str | None = None
    disputed_with: str | None = None
    pending: bool = False
    quarantined: bool = False
    cleaned: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Return the CLI/MCP shape (``record_id`` and ``deduped`` first, as the origin's)."""
        return {
            "record_id": self.record_id,
            "deduped": self.deduped,
            "superseded": self.superseded,
            "disputed_with": self.disputed_with,
            "pending": self.pending,
            "quarantined": self.quarantined,
            **({"cleaned": list(self.cleaned)} if self.cleaned else {}),
        }

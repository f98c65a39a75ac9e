"""Metamemory (seed 000 §23, ``memory:L5``): how memory performed, recorded beside memory, never in it.

Four kinds of event, each an attributable entry of the operation log (action, then the
event id and the memory record ids it concerns, then its details):

- ``retrieval`` ``memret-YYYY-MM-DD-NNN`` (§23.2 ``retrieval_record``): the records a recall
  returned, their ``use_role``, an optional ``task_id`` and the query's **digest**;
- ``outcome`` ``memout-YYYY-MM-DD-NNN`` (§23.6 ``record_outcome``): what became of a task, a
  word of :data:`OUTCOMES`, with the refs of the evidence;
- ``feedback`` ``memfb-YYYY-MM-DD-NNN`` (§23.2): a verdict of ``intervention-outcome-v1``
  on the records it names, the attribution confidence (``ordinal-confidence-v1``), the use
  role, and its ``basis``: ``observed`` when evidence or an outcome is cited, else
  ``self-rated`` (§23.3 rule 4: self-rating is weak evidence);
- ``policy-proposal`` ``mempolicy-YYYY-MM-DD-NNN`` (§23.5): a pending proposal
  (:mod:`agent_memory.metamemory.policy`) whose prose lives in ``proposals/<id>.yaml`` of a Home; the
  log names its target, supporting refs and the file's digest.

Decisions and invariants:

- **The log never holds free text** (DESIGN.md §9): a query or an outcome narrative could
  quote a memory, and the hash-chained log cannot be rewritten by erasure. So the query is
  kept as ``sha256:<hex>`` of its NFC-normalised, stripped text (enough to match it later
  by someone who has it), outcomes are words from a closed set, task ids and refs are
  single tokens, and a narrative belongs in the evidence the refs point at. A proposal's
  prose goes to its file, which is part of the Home and reviewable like any note.
- Nothing here writes a record, a source, ``conventions.md``, the settings or the salience
  sidecar; a single event changes nothing but the log (§23.3 rule 5, checklist items
  13-15). A proposal stays ``pending-review``; no code path applies it.
- Ids: the day is the UTC day of the event time; ``NNN`` is one more than the highest
  ordinal of that kind on that day (three digits or more), read from the log under the
  Home's writer lock, so two writers never mint the same id.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent_memory.errors import RecordError, RecordNotFound
from agent_memory.log.base import LogEntry, OperationLog
from agent_memory.log.fold import LogFold
from agent_memory.metamemory.events import (
    ATTRIBUTION_CONFIDENCES,
    OUTCOMES,
    USE_ROLES,
    VERDICTS,
    FeedbackEvent,
    OutcomeRecord,
    RetrievalRecord,
    check_aware,
    check_choice,
    check_optional_token,
    check_prose,
    check_token,
    check_tokens,
    feedback_from,
    outcome_from,
    query_digest,
    retrieval_from,
    utc_day,
)
from agent_memory.metamemory.policy import PolicyBox, PolicyProposal, proposals_folder
from agent_memory.records.wire import format_timestamp

# The event and proposal values are re-exported: callers of the porcelain import them from here.
__all__ = ["FeedbackEvent", "Metamemory", "OutcomeRecord", "PolicyProposal", "RetrievalRecord"]

_ACTIONS = {"retrieval": "memret", "outcome": "memout", "feedback": "memfb", "policy-proposal": "mempolicy"}
_EVENT_ID = re.compile(r"\A(memret|memout|memfb|mempolicy)-(\d{4}-\d{2}-\d{2})-(\d{3,})\Z")


@dataclass
class _Index:
    retrievals: dict[str, RetrievalRecord] = field(default_factory=dict)
    outcomes: dict[str, OutcomeRecord] = field(default_factory=dict)
    feedback: dict[str, FeedbackEvent] = field(default_factory=dict)
    by_record: dict[str, list[FeedbackEvent]] = field(default_factory=dict)
    ordinals: Counter[tuple[str, str]] = field(default_factory=Counter)


class Metamemory:
    """Record retrievals, outcomes and feedback in the log; keep policy proposals for review.

    Callers hold the Home's writer lock around the writing calls (the
    :class:`~agent_memory.memory.Memory` methods do). Reads catch up with the log
    incrementally, so events another process wrote are seen.

    Args:
        log: The operation log the events go to and are read from.
        exists: Whether the store holds a record id (``store.contains``).
        proposals: Where proposals wait (:class:`~agent_memory.metamemory.policy.PolicyBox`).
    """

    def __init__(self, log: OperationLog, exists: Callable[[str], bool], proposals: PolicyBox) -> None:
        self._log = log
        self._exists = exists
        self.proposals = proposals
        self._lock = threading.RLock()
        self._index = _Index()
        self._fold = LogFold(log, self._step, restart=self._start_over, in_pass=False)

    @classmethod
    def for_log(cls, log: OperationLog, exists: Callable[[str], bool]) -> Metamemory:
        """Build one over ``log``: proposals go to ``<home>/proposals`` for a Home's log, else memory."""
        return cls(log, exists, PolicyBox(proposals_folder(log)))

    def record_retrieval(
        self,
        memory_item_ids: Sequence[str],
        *,
        actor: str,
        now: datetime,
        query: str | None = None,
        task_id: str | None = None,
        use_role: str = "background",
    ) -> RetrievalRecord:
        """Log a ``retrieval_record``: the ids a recall returned (none is a miss, also worth logging).

        Raises:
            RecordNotFound: An id the store does not hold.
            RecordError: A bad ``use_role``, ``task_id`` or ``query`` (named).
        """
        ids = self._known_records(memory_item_ids, allow_empty=True)
        role = check_choice(use_role, USE_ROLES, "use_role")
        task = check_optional_token(task_id, "task_id")
        if query is not None and not isinstance(query, str):
            raise RecordError(f"must be text, got {type(query).__name__}", field="query")
        details = {"use_role": role, "task_id": task, "query_digest": query_digest(query) if query else None}
        with self._lock:
            event_id = self._append("retrieval", ids, details, actor, now)
            return self._index.retrievals[event_id]

    def record_outcome(
        self,
        task_id: str,
        outcome: str,
        evidence_refs: Iterable[str] = (),
        *,
        actor: str,
        now: datetime,
        retrieval_ref: str | None = None,
        observed_at: datetime | None = None,
    ) -> OutcomeRecord:
        """Log what became of a task: a word of :data:`OUTCOMES` and the refs of its evidence.

        Raises:
            RecordError: A bad task id, outcome word, ref, ``retrieval_ref`` or time (named).
        """
        details: dict[str, Any] = {
            "task_id": check_token(task_id, "task_id"),
            "outcome": check_choice(outcome, OUTCOMES, "outcome"),
            "evidence_refs": list(check_tokens(evidence_refs, "evidence_refs")),
            "observed_at": format_timestamp(check_aware(observed_at or now, "observed_at")),
        }
        with self._lock:
            self._catch_up()
            details["retrieval_ref"] = self._known_event(retrieval_ref, "memret", "retrieval_ref")
            event_id = self._append("outcome", (), details, actor, now)
            return self._index.outcomes[event_id]

    def attribute_feedback(
        self,
        memory_item_ids: Sequence[str] = (),
        *,
        verdict: str,
        attribution_confidence: str,
        actor: str,
        now: datetime,
        use_role: str | None = None,
        task_id: str | None = None,
        retrieval_ref: str | None = None,
        outcome_ref: str | None = None,
        evidence_refs: Iterable[str] = (),
        observed_at: datetime | None = None,
    ) -> FeedbackEvent:
        """Log a verdict on how retrieved records took part in an action; the records stay as they are.

        With ``retrieval_ref`` the ids and the use role default to that retrieval's, and every
        id given must be one of them (feedback on a record the task never saw would be
        misattribution). Without it the use role defaults to ``background``.

        Raises:
            RecordNotFound: An id the store does not hold.
            RecordError: No ids, a bad verdict, confidence, role, ref or time, an unknown
                ``retrieval_ref``/``outcome_ref``, or an id outside the retrieval (named).
        """
        refs = check_tokens(evidence_refs, "evidence_refs")
        details: dict[str, Any] = {
            "verdict": check_choice(verdict, VERDICTS, "verdict"),
            "attribution_confidence": check_choice(
                attribution_confidence, ATTRIBUTION_CONFIDENCES, "attribution_confidence"
            ),
            "task_id": check_optional_token(task_id, "task_id"),
            "evidence_refs": list(refs),
            "observed_at": format_timestamp(check_aware(observed_at or now, "observed_at")),
        }
        with self._lock:
            self._catch_up()
            retrieval = self._known_event(retrieval_ref, "memret", "retrieval_ref")
            outcome = self._known_event(outcome_ref, "memout", "outcome_ref")
            ids = self._known_records(memory_item_ids, allow_empty=retrieval is not None)
            if use_role is not None:
                check_choice(use_role, USE_ROLES, "use_role")
            role = use_role or "background"
            if retrieval is not None:
                retrieved = self._index.retrievals[retrieval].memory_item_ids
                role = use_role or self._index.retrievals[retrieval].use_role
                ids = ids or retrieved
                outside = [i for i in ids if i not in retrieved]
                if outside or not ids:
                    raise RecordError(
                        f"{', '.join(outside)} not among the records of {retrieval}"
                        if outside
                        else f"{retrieval} returned no records to judge",
                        field="memory_item_ids",
                    )
            details.update(
                use_role=role,
                retrieval_ref=retrieval,
                outcome_ref=outcome,
                basis="observed" if refs or outcome else "self-rated",
            )
            event_id = self._append("feedback", ids, details, actor, now)
            return self._index.feedback[event_id]

    def propose_policy_change(
        self,
        target: str,
        proposed_change: str,
        supporting_refs: Iterable[str],
        *,
        expected_benefit: str,
        risk: str,
        actor: str,
        now: datetime,
    ) -> PolicyProposal:
        """Write a pending ``mempolicy-…`` proposal for a person to review; nothing is applied.

        Args:
            target: The policy element or rule concerned, one token
                (``retrieval-trigger:environment-state``, ``conventions``).
            proposed_change: What should change, in prose (kept in the proposal only).
            supporting_refs: At least one; ``memfb-``/``memret-``/``memout-`` events and
                ``mem:`` records must exist, other anchors are taken as given.
            expected_benefit: Why, in prose.
            risk: What could go wrong, in prose.
            actor: Who proposes.
            now: The clock (aware).

        Raises:
            RecordError: A bad target, empty prose, no refs, or an unknown event ref (named).
            RecordNotFound: A ``mem:`` ref the store does not hold.
            ProposalError: The proposal cannot be stored.
        """
        name = check_token(target, "target")
        prose = {
            k: check_prose(v, k)
            for k, v in [
                ("proposed_change", proposed_change),
                ("expected_benefit", expected_benefit),
                ("risk", risk),
            ]
        }
        refs = check_tokens(supporting_refs, "supporting_refs")
        if not refs:
            raise RecordError("cite at least one supporting ref (seed 000 §23.5)", field="supporting_refs")
        with self._lock:
            self._catch_up()
            self._check_refs(refs)
            day = utc_day(now)
            ordinal = max(self._index.ordinals[("mempolicy", day)], self.proposals.highest_ordinal(day)) + 1
            proposal = PolicyProposal(
                proposal_id=f"mempolicy-{day}-{ordinal:03d}",
                target=name,
                supporting_refs=refs,
                proposed_by=actor,
                proposed_at=now,
                **prose,
            )
            self.proposals.keep(proposal)
            digest = "sha256:" + hashlib.sha256(proposal.to_yaml()).hexdigest()
            details = {"target": name, "status": proposal.status, "file_digest": digest}
            self._log.append(
                "policy-proposal",
                actor=actor,
                record_ids=(proposal.proposal_id, *refs),
                details=details,
                now=now,
            )
            return proposal

    def list_feedback(self, record_id: str) -> list[FeedbackEvent]:
        """Return the feedback events that name ``record_id``, oldest first.

        Raises:
            RecordNotFound: The store does not hold ``record_id``.
        """
        if not isinstance(record_id, str) or not self._exists(record_id):
            raise RecordNotFound("no such record", record_id=str(record_id))
        with self._lock:
            self._catch_up()
            return list(self._index.by_record.get(record_id, ()))

    def retrieval(self, retrieval_id: str) -> RetrievalRecord:
        """Return a logged retrieval by id.

        Raises:
            RecordError: No retrieval with that id (field ``retrieval_ref``).
        """
        with self._lock:
            self._catch_up()
            return self._index.retrievals[self._known_event(retrieval_id, "memret", "retrieval_ref") or ""]

    # ------------------------------------------------------------------ internals

    def _append(
        self,
        action: str,
        ids: Sequence[str],
        details: dict[str, Any],
        actor: str,
        now: datetime,
    ) -> str:
        self._catch_up()
        prefix, day = _ACTIONS[action], utc_day(now)
        event_id = f"{prefix}-{day}-{self._index.ordinals[(prefix, day)] + 1:03d}"
        self._log.append(action, actor=actor, record_ids=(event_id, *ids), details=details, now=now)
        self._catch_up()
        return event_id

    def _known_records(self, ids: Sequence[str], *, allow_empty: bool) -> tuple[str, ...]:
        if isinstance(ids, str) or not isinstance(ids, Iterable):
            raise RecordError("must be a list of record ids", field="memory_item_ids")
        unique = tuple(dict.fromkeys(ids))
        for record_id in unique:
            if not isinstance(record_id, str) or not self._exists(record_id):
                raise RecordNotFound("no such record", record_id=str(record_id), field="memory_item_ids")
        if not unique and not allow_empty:
            raise RecordError("name at least one record", field="memory_item_ids")
        return unique

    def _known_event(self, event_id: object, prefix: str, name: str) -> str | None:
        if event_id is None:
            return None
        known = self._index.retrievals if prefix == "memret" else self._index.outcomes
        if not isinstance(event_id, str) or event_id not in known:
            raise RecordError(f"no {prefix}-… event {event_id!r} in the log", field=name)
        return event_id

    def _check_refs(self, refs: Sequence[str]) -> None:
        known = {*self._index.retrievals, *self._index.outcomes, *self._index.feedback}
        for i, ref in enumerate(refs):
            if _EVENT_ID.match(ref) and not ref.startswith("mempolicy-") and ref not in known:
                raise RecordError(f"no event {ref!r} in the log", field=f"supporting_refs[{i}]")
            if ref.startswith("mem:") and not self._exists(ref):
                raise RecordNotFound("no such record", record_id=ref, field=f"supporting_refs[{i}]")

    def _catch_up(self) -> None:
        with self._lock:
            self._fold.catch_up()

    def _start_over(self) -> None:
        self._index = _Index()

    def _step(self, entry: LogEntry) -> None:
        match = _EVENT_ID.match(entry.record_ids[0]) if entry.record_ids else None
        if str(entry.action) not in _ACTIONS or match is None:
            return
        key = (match[1], match[2])
        self._index.ordinals[key] = max(self._index.ordinals[key], int(match[3]))
        if entry.action == "retrieval":
            self._index.retrievals[match[0]] = retrieval_from(entry)
        elif entry.action == "outcome":
            self._index.outcomes[match[0]] = outcome_from(entry)
        elif entry.action == "feedback":
            event = feedback_from(entry)
            self._index.feedback[match[0]] = event
            for record_id in event.memory_item_ids:
                self._index.by_record.setdefault(record_id, []).append(event)

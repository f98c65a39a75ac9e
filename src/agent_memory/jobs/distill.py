"""Distill (autodream, seed 000 §14, ``memory:L3``): archived inbox lines become proposals for review.

A run, in order (issue 7 item 3; DESIGN.md §5 "Maintenance"):

1. **Which lines.** Every item of every ``archive/YYYY-MM-DD.md`` that passes the archive
   check (:func:`~.ledger.check_files`: a file someone edited is not evidence and is skipped,
   listed in ``problems``); minus the lines an earlier run distilled (the *ledger*: the
   ``distill`` events of the log, :func:`read_ledger`); minus the lines the withdrawal gate
   hides, decided *before* any text reaches an operator (seed 000 §14.1, §12.2: a probe
   naming the line's anchor, its ``Source`` and the target namespace goes through
   :meth:`~agent_memory.governance.gate.GateView.check`).
2. **Extract.** A :class:`~.distill_rules.DistillOperator` turns the lines into candidate
   texts: the deterministic :class:`~.distill_rules.HeuristicOperator` by default, or the
   LLM operator (:mod:`.distill_llm`).
3. **Plan.** Each candidate becomes a record (:func:`record_for`) whose ``provenance.ref`` is
   the line's anchor ``archive/YYYY-MM-DD.md#mem-YYYY-MM-DD-NNN`` and which carries the
   line's ``kind``, ``subject``, ``taint`` and day (``occurred_at`` = the start of that local
   day, the only time a line records; ``valid_from`` follows it), with the line's own
   ``Source`` in ``sources``. Exactly what ``remember`` would decide
   (:func:`~agent_memory.write.plan.plan_write`) becomes the proposal: a new record (``create``);
   for a ``state`` line, superseding the live value of its exact subject or opening a dispute
   with it; successive values of one subject in one run form one chain proposal. A record
   already held with the same text is ``held`` (nothing proposed); a subject already
   disputed is a rejection.
4. **Gate.** Every proposal is validated by :func:`~agent_memory.write.proposals.validate_proposals`
   now (a refusal is a :class:`~.pending.Rejection` with the gate's reason) and again by
   ``accept`` against the records of that day (:func:`~.pending.revalidate`).

Proposals are :class:`~.pending.PendingProposal` s of pass ``distill`` with ids ``dist-<16 hex>``,
filed with consolidation's under ``proposals/pending-consolidation/`` and reviewed by the same
``proposals``/``accept``/``reject``/``revert``. Lines that gave a proposal, a held record or a
skip reason enter the ledger; lines whose candidates were all refused do not, so a later run
reads them again. To distill a line again, capture it again.

Invariant: nothing here writes: :func:`distill` returns the report, the porcelain
(:mod:`.distilling`) files it and logs the ``distill`` event. Never read: the live inbox.
Never written by any part of distill: ``conventions.md``, ``inbox.md``, ``archive/``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, tzinfo
from typing import Any

from agent_memory.errors import AgentMemoryError, LogError
from agent_memory.governance.erasure.sanitize import is_redacted
from agent_memory.governance.gate import Exposure
from agent_memory.home import Home
from agent_memory.jobs.archive import archived_items
from agent_memory.jobs.distill_rules import Candidate, DistillOperator, Extraction
from agent_memory.jobs.inbox import InboxItem
from agent_memory.jobs.ledger import check_files, read_runs
from agent_memory.jobs.pending import PendingProposal, Rejection, basis_of
from agent_memory.log.base import Action, OperationLog
from agent_memory.records.record import Kind, MemoryRecord, Provenance
from agent_memory.stores.base import RecordStore
from agent_memory.stores.verified import read_verified
from agent_memory.write.plan import LIVE_STATES, PlanKind, live_key, normalize_text, plan_write, subject_key
from agent_memory.write.proposals import Proposal, ProposalKind, validate_proposals

__all__ = [
    "PASS_NAME",
    "DistillReport",
    "Selection",
    "plan_candidates",
    "read_ledger",
    "record_for",
    "select_lines",
]

PASS_NAME = "distill"  # noqa: S105 - a pass name, not a secret
Builder = Callable[[InboxItem, Candidate], MemoryRecord]
Checker = Callable[[MemoryRecord], Exposure]


@dataclass(slots=True)
class Selection:
    """The archived lines a run may distill, and why the others are left alone.

    Attributes:
        eligible: Lines to distill, by file then position.
        already: Anchors an earlier run distilled (the ledger).
        withdrawn: ``(anchor, reason)`` for lines a withdrawal in force hides (the gate's
            reason) and for redaction lines an erasure left (``erased: a redaction line``).
        problems: Archive files not read (edited, appended, missing, unreadable), one line each.
        total: Lines found in the files read.
    """

    eligible: list[InboxItem] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    withdrawn: list[tuple[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    total: int = 0


@dataclass(slots=True)
class DistillReport:
    """What a run proposed, held, skipped, refused and left alone (``--json`` is :meth:`to_json`).

    Attributes:
        operator: ``heuristic`` or ``llm``.
        model: The model asked (``None`` for the heuristic).
        selection: Which lines were read (see :class:`Selection`).
        proposals: Pending proposals for review, one per knowledge candidate or state subject.
        held: ``{anchor: record id}`` for candidates already held with the same text.
        skipped: ``{anchor: reason}`` for lines the operator found nothing in.
        rejections: Candidates or replies refused, each with the reason (nothing written).
        branch: The ``maintenance/<stamp>`` branch the proposals were committed on, if any.
        log_seq: Seq of the ``distill`` event (``None`` for a dry run).
    """

    operator: str
    model: str | None
    selection: Selection
    proposals: list[PendingProposal] = field(default_factory=list)
    held: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    rejections: list[Rejection] = field(default_factory=list)
    branch: str | None = None
    log_seq: int | None = None

    def ledger_details(self) -> dict[str, Any]:
        """Return the ``distill`` event's details: ids, anchors and counts, never content (DESIGN.md §9)."""
        proposed: dict[str, list[str]] = {}
        for pending in self.proposals:
            proposed[pending.id] = list(pending.anchors)
        return {
            "operator": self.operator,
            "model": self.model,
            "proposed": proposed,
            "held": dict(sorted(self.held.items())),
            "skipped": sorted(self.skipped),
            "rejections": len(self.rejections),
            "withdrawn": len(self.selection.withdrawn),
            "problems": len(self.selection.problems),
            "branch": self.branch,
        }

    def to_json(self) -> dict[str, Any]:
        """Return the report as JSON: proposals as summaries, every line accounted for."""
        sel = self.selection
        return {
            "operator": self.operator,
            "model": self.model,
            "proposals": [
                {
                    "id": p.id,
                    "action": p.action,
                    "record_ids": list(p.record_ids),
                    "anchors": list(p.anchors),
                    "reason": p.reason,
                }
                for p in self.proposals
            ],
            "held": dict(self.held),
            "skipped": dict(self.skipped),
            "rejections": [r.to_json() for r in self.rejections],
            "withdrawn": [{"anchor": a, "reason": why} for a, why in sel.withdrawn],
            "problems": list(sel.problems),
            "stats": {
                "lines": sel.total,
                "already_distilled": len(sel.already),
                "withdrawn": len(sel.withdrawn),
                "eligible": len(sel.eligible),
                "proposals": len(self.proposals),
                "held": len(self.held),
                "skipped": len(self.skipped),
                "rejections": len(self.rejections),
            },
            "branch": self.branch,
            "log_seq": self.log_seq,
        }


def read_ledger(log: OperationLog) -> dict[str, int]:
    """Return ``{anchor: seq of the distill event}`` for every line an earlier run distilled.

    Raises:
        LogError: The log cannot be read, or a ``distill`` event is malformed (naming its seq).
    """
    found: dict[str, int] = {}
    for entry in log.entries():
        if entry.action != Action.DISTILL:
            continue
        details = entry.details
        try:
            anchors = [a for group in dict(details["proposed"]).values() for a in group]
            anchors += list(dict(details["held"])) + list(details["skipped"])
        except (KeyError, TypeError, ValueError) as exc:
            raise LogError(f"malformed distill event: {exc!r}", field=f"seq {entry.seq}") from None
        for anchor in anchors:
            found.setdefault(str(anchor), entry.seq)
    return found


def _probe(item: InboxItem, namespace: str, now: datetime) -> MemoryRecord:
    # What the gate judges before any text is read: the anchor, the Source, the namespace.
    return MemoryRecord.create(
        type="fact",
        body=item.anchor,
        provenance=Provenance(kind=PASS_NAME, ref=item.anchor),
        created_at=now,
        namespace=namespace,
        sources=(item.source,),
    )


def select_lines(
    home: Home, log: OperationLog, check: Checker, *, namespace: str, now: datetime
) -> Selection:
    """Return the lines a run may distill (step 1 of the module docstring); reads only.

    Raises:
        LogError: The log cannot be read (the gate and the ledger fail closed).
    """
    selection = Selection()
    bad: dict[str, str] = {}
    for problem in check_files(home.root, read_runs(log)):
        bad.setdefault(problem.file, str(problem))
    selection.problems.extend(bad.values())
    ledger = read_ledger(log)
    folder = home.root / "archive"
    names = sorted(p.name for p in folder.glob("*.md")) if folder.is_dir() else []
    for name in names:
        if f"archive/{name}" in bad:
            continue
        try:
            items = archived_items(home, date.fromisoformat(name[: -len(".md")]))
        except (ValueError, AgentMemoryError) as exc:
            selection.problems.append(f"archive/{name}: not read: {exc}")
            continue
        for item in items:
            selection.total += 1
            if item.anchor in ledger:
                selection.already.append(item.anchor)
                continue
            if is_redacted(item):  # what an erasure left of the line: no content to distill
                selection.withdrawn.append((item.anchor, "erased: a redaction line"))
                continue
            exposure = check(_probe(item, namespace, now))
            if not exposure.exposed:
                selection.withdrawn.append((item.anchor, exposure.reason))
                continue
            selection.eligible.append(item)
    return selection


def record_for(
    item: InboxItem,
    candidate: Candidate,
    *,
    namespace: str,
    now: datetime,
    zone: tzinfo,
    agent: str | None,
) -> MemoryRecord:
    """Build the record a candidate proposes (step 3 of the module docstring).

    Raises:
        RecordError: The candidate's text is empty or a field is invalid (the field named).
    """
    return MemoryRecord.create(
        type=candidate.type,
        body=normalize_text(candidate.text),
        provenance=Provenance(kind=candidate.provenance_kind, ref=item.anchor, agent=agent),
        created_at=now,
        occurred_at=datetime.combine(item.day, time(), tzinfo=zone),
        tags=candidate.tags,
        confidence=candidate.confidence,
        kind=item.kind,
        subject=item.subject,
        namespace=namespace,
        scope=candidate.scope,
        taint=item.taint or None,
        sources=(item.source,),
        epistemic_status=candidate.epistemic_status,
    )


def _proposal_id(parts: Iterable[str]) -> str:
    key = json.dumps([PASS_NAME, *parts])
    return "dist-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


class _Planner:
    def __init__(
        self,
        store: RecordStore,
        report: DistillReport,
        now: datetime,
        operator: str,
        home_signer: str | None,
        trusted: Collection[str] = (),
    ) -> None:
        self.store, self.report, self.now, self.operator = store, report, now, operator
        self.by_body: dict[tuple[str, str, str, str], str] = {}
        self.by_subject: dict[tuple[str, str], MemoryRecord] = {}
        # The one verified read path: a note that does not verify is never a duplicate or a live value.
        for record in read_verified(store, home_signer=home_signer, trusted=trusted).records:
            if record.state in LIVE_STATES and not record.redacted:
                self.by_body[live_key(record)] = record.id
                key = subject_key(record)
                if key is not None:
                    self.by_subject[key] = record

    def reject(self, anchors: Sequence[str], detail: str) -> None:
        self.report.rejections.append(Rejection(PASS_NAME, detail, tuple(anchors)))

    def file(
        self,
        anchors: list[str],
        action: str,
        reasons: list[str],
        batch: list[Proposal],
        basis: list[MemoryRecord],
    ) -> None:
        try:
            versions = validate_proposals(self.store, batch, now=self.now)
        except AgentMemoryError as exc:
            self.reject(anchors, f"refused by the proposal gate: {exc}")
            return
        ids = sorted({v.id for v in versions})
        self.report.proposals.append(
            PendingProposal(
                pass_name=PASS_NAME,
                action=action,
                reason="; ".join(dict.fromkeys(reasons)) + f" (distilled by {self.operator})",
                record_ids=tuple(ids),
                basis={r.id: basis_of(r) for r in basis},
                made_at=self.now,
                proposals=tuple(batch),
                anchors=tuple(anchors),
                id=_proposal_id([*anchors, *(v.id for v in versions)]),
            )
        )

    def knowledge(self, item: InboxItem, record: MemoryRecord, staged: dict[Any, str]) -> None:
        key = live_key(record)
        held = self.by_body.get(key) or staged.get(key)
        if held is not None:
            self.report.held[item.anchor] = held
            return
        staged[key] = record.id
        reason = f"new {record.type.value} from {item.anchor}"
        self.file([item.anchor], "create", [reason], [Proposal(ProposalKind.CREATE, record=record)], [])

    def state(self, subject: tuple[str, str], values: list[tuple[InboxItem, MemoryRecord]]) -> None:
        current = self.by_subject.get(subject)
        live = current
        batch: list[Proposal] = []
        anchors: list[str] = []
        reasons: list[str] = []
        kinds: list[str] = []
        for item, record in values:
            if live is not None and live_key(live) == live_key(record):
                self.report.held[item.anchor] = live.id
                continue
            plan = plan_write(record, None, live)
            if plan.kind is PlanKind.PENDING or (kinds and kinds[-1] == "dispute"):
                self.reject(
                    [item.anchor], f"subject {subject[1]} is disputed: resolve it, then distill again"
                )
                continue
            if plan.kind is PlanKind.CREATE:
                batch.append(Proposal(ProposalKind.CREATE, record=record))
            elif plan.kind is PlanKind.SUPERSEDE and live is not None:
                batch.append(
                    Proposal(
                        ProposalKind.SUPERSEDE, record=plan.record, target_id=live.id, reason=plan.reason
                    )
                )
            elif live is not None:
                batch.append(Proposal(ProposalKind.CREATE, record=record))
                batch.append(
                    Proposal(
                        ProposalKind.TRANSITION, target_id=live.id, other_id=record.id, reason=plan.reason
                    )
                )
            anchors.append(item.anchor)
            reasons.append(plan.reason or f"first value for subject {subject[1]}")
            kinds.append(plan.kind.value)
            live = plan.record
        if batch:
            action = "dispute" if "dispute" in kinds else "supersede" if "supersede" in kinds else "create"
            self.file(anchors, action, reasons, batch, [current] if current is not None else [])


def plan_candidates(
    store: RecordStore,
    selection: Selection,
    extraction: Extraction,
    *,
    build: Builder,
    operator: DistillOperator,
    now: datetime,
    home_signer: str | None = None,
    trusted: Collection[str] = (),
) -> DistillReport:
    """Turn an operator's extraction into proposals, holds, skips and rejections (steps 3-4); writes nothing.

    Args:
        store: The records (read only).
        selection: The lines read (:func:`select_lines`); candidates for other anchors are refused.
        extraction: What the operator made of ``selection.eligible``.
        build: Makes (and screens and signs) the record of one candidate (:func:`record_for`).
        operator: The operator (its ``name`` and ``model`` are reported).
        now: The run time (aware): ``created_at`` of the records and ``made_at`` of the proposals.
        home_signer: The Home's own address (records are read through
            :func:`~agent_memory.stores.verified.read_verified`).
        trusted: The other signers the Home trusts (``memory.toml [trust]``).
    """
    report = DistillReport(operator.name, operator.model, selection)
    planner = _Planner(store, report, now, operator.name, home_signer, trusted)
    lines = {item.anchor: item for item in selection.eligible}
    for anchors, reason in extraction.rejected:
        planner.reject(anchors, reason)
    staged: dict[Any, str] = {}
    subjects: dict[tuple[str, str], list[tuple[InboxItem, MemoryRecord]]] = {}
    for candidate in extraction.candidates:
        item = lines.get(candidate.anchor)
        if item is None:
            planner.reject([], f"the operator named {candidate.anchor!r}, not a line it was given")
            continue
        try:
            record = build(item, candidate)
        except AgentMemoryError as exc:
            planner.reject([item.anchor], f"not a valid record: {exc}")
            continue
        key = subject_key(record)
        if item.kind is Kind.STATE and key is not None:
            subjects.setdefault(key, []).append((item, record))
        else:
            planner.knowledge(item, record, staged)
    for key, values in sorted(subjects.items()):
        planner.state(key, values)
    proposed = {a for p in report.proposals for a in p.anchors}
    for anchor, why in extraction.skipped.items():
        if anchor in lines and anchor not in proposed and anchor not in report.held:
            report.skipped[anchor] = why
    accounted = proposed | set(report.held) | set(report.skipped)
    accounted |= {a for r in report.rejections for a in r.record_ids}
    silent = [a for a in lines if a not in accounted]
    if silent:
        planner.reject(silent, "the operator returned nothing for these lines")
    return report

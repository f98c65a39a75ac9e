"""Promotion into ``conventions.md``: a governed proposal, applied only by a granted decision (seed 000 §17).

Seed 000 §17 separates promotion *eligibility* (evidence that a rule is stable) from
*authority* (an attributable human decision). An agent, a job or a person proposes; the
proposal waits in ``proposals/promotions/<id>.md`` of the Home::

    ---
    id: "mempromo-2026-11-29-001"
    status: "pending-review"
    target: "conventions"
    source_record: "mem:…"
    proposed_by: "agent:claude"
    proposed_at: "2026-11-29T10:00:00.000Z"
    reason: "confirmed three times"
    ---
    Always run the linter before pushing.

Each frontmatter line is ``key: <compact JSON>`` (valid YAML); the body is the rule, one line.
A decision adds ``decided_by``, ``decided_at``, ``decision_reason`` and sets ``status``.

Invariants:

- :meth:`Promotions.accept` is the only code that writes ``conventions.md`` (``Home.init``
  makes the template); it needs the ``promote`` grant; a refusal leaves it byte-identical;
- the decision is logged (a ``review`` event with the actor) *before* the rule is written
  (§17 step 4); a rule is appended at most once (a decided proposal is refused; a pending one
  whose pointer is already there, after an interrupted accept, is not appended again);
- the source is re-read through the gate at decision time: not ``active``, withdrawn (or
  derived from a withdrawn record), erased, quarantined or rejected refuses;
- the log holds ids, verdicts, reasons and a digest of the rule, never the rule text.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import KW_ONLY, dataclass, replace
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_memory.errors import ProposalError, RecordError
from agent_memory.jobs.inert import inert_inline
from agent_memory.records.record import MemoryRecord, State
from agent_memory.records.wire import format_timestamp, parse_timestamp
from agent_memory.write.screen import screen

if TYPE_CHECKING:
    from agent_memory.governance.actors import Actors
    from agent_memory.governance.gate import Gate
    from agent_memory.governance.review_book import ReviewBook
    from agent_memory.home import Home
    from agent_memory.log.base import OperationLog
    from agent_memory.stores.base import RecordStore
    from agent_memory.write.writer import Writer

__all__ = [
    "PROMOTION_ID_PATTERN",
    "PROMOTION_STATUSES",
    "PROMOTION_TARGETS",
    "PromotionProposal",
    "Promotions",
]

PROMOTION_ID_PATTERN = re.compile(r"\Amempromo-(\d{4}-\d{2}-\d{2})-(\d{3,})\Z")
PROMOTION_STATUSES = ("pending-review", "accepted", "rejected")
PROMOTION_TARGETS = ("conventions",)
"""Where a proposal may promote to. Steering files are outside the Home: not a target."""

_FOLDER = ("proposals", "promotions")
_REQUIRED = ("id", "status", "target", "source_record", "proposed_by", "proposed_at", "reason")
_DECISION = ("decided_by", "decided_at", "decision_reason")


@dataclass(frozen=True, slots=True)
class PromotionProposal:
    """One promotion proposal, as its file holds it.

    Attributes:
    proposal_id: ``mempromo-YYYY-MM-DD-NNN`` (local day of the Home's time zone).
    status: One of :data:`PROMOTION_STATUSES`.
    target: One of :data:`PROMOTION_TARGETS`.
    source_record: The record id (``mem:…``) the rule comes from.
    proposed_by: The actor who proposed it.
    proposed_at: When (aware UTC).
    reason: Why it is eligible, in the proposer's words.
    rule: The proposed rule text, one line.
    decided_by: The actor who accepted or rejected it, once decided.
    decided_at: When it was decided.
    decision_reason: Why, in the decider's words.
    """

    proposal_id: str
    status: str
    target: str
    source_record: str
    proposed_by: str
    proposed_at: datetime
    reason: str
    rule: str
    decided_by: str | None = None
    decided_at: datetime | None = None
    decision_reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the frontmatter fields (decision fields only once decided) plus ``rule``."""
        data: dict[str, Any] = {
            "id": self.proposal_id,
            "status": self.status,
            "target": self.target,
            "source_record": self.source_record,
            "proposed_by": self.proposed_by,
            "proposed_at": format_timestamp(self.proposed_at),
            "reason": self.reason,
        }
        if self.decided_by is not None and self.decided_at is not None:
            data["decided_by"] = self.decided_by
            data["decided_at"] = format_timestamp(self.decided_at)
            data["decision_reason"] = self.decision_reason or ""
        return {**data, "rule": self.rule}

    def to_bytes(self) -> bytes:
        """Return the file: ``---``, ``key: <JSON>`` lines, ``---``, the rule, a newline."""
        fields = self.to_json()
        del fields["rule"]
        lines = [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields.items()]
        return ("---\n" + "\n".join(lines) + "\n---\n" + self.rule + "\n").encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes, *, path: str) -> PromotionProposal:
        """Read a file written by :meth:`to_bytes`.

        Raises:
            ProposalError: Not UTF-8, no frontmatter, a line that is not ``key: <JSON>``, an
                unknown, missing or malformed field, or an empty rule (naming the file).
        """
        try:
            text = data.decode("utf-8")
            head, sep, body = text.removeprefix("---\n").partition("\n---\n")
            if not text.startswith("---\n") or not sep:
                raise ValueError("no '---' frontmatter")
            fields: dict[str, str] = {}
            for line in head.split("\n"):
                key, colon, value = line.partition(": ")
                parsed = json.loads(value) if colon else None
                if key not in (*_REQUIRED, *_DECISION) or not isinstance(parsed, str):
                    raise ValueError(f"not a known 'key: \"text\"' line: {line[:60]!r}")
                fields[key] = parsed
            missing = [key for key in _REQUIRED if key not in fields]
            if missing:
                raise ValueError(f"missing {missing[0]}")
            at = {k: parse_timestamp(fields[k], k) for k in ("proposed_at", "decided_at") if k in fields}
            proposal = cls(
                fields["id"], fields["status"], fields["target"], fields["source_record"],
                fields["proposed_by"], at["proposed_at"], fields["reason"], body.removesuffix("\n"),
                fields.get("decided_by"), at.get("decided_at"), fields.get("decision_reason"),
            )  # fmt: skip
        except (UnicodeDecodeError, ValueError, RecordError) as exc:
            raise ProposalError(f"not a promotion proposal file: {exc}", path=path) from None
        if (
            not PROMOTION_ID_PATTERN.match(proposal.proposal_id)
            or proposal.status not in PROMOTION_STATUSES
            or proposal.target not in PROMOTION_TARGETS
            or not proposal.rule.strip()
            or "\n" in proposal.rule
        ):
            raise ProposalError("not a promotion proposal file: bad id, status, target or rule", path=path)
        return proposal


@dataclass(eq=False)
class Promotions:
    """The promotion verbs over one Memory's parts (``memory.promotions``; seed 000 §17, §23.5).

    Any actor may propose; only an actor with the ``promote`` grant may accept or reject, and
    accepting is the one path that writes ``conventions.md``. Every verb needs a Home:
    without one (``home`` is ``None``) each raises ``ProposalError``. Calling the service,
    ``memory.promotions(status=…)``, lists the proposals (the name it had as a method).

    Args:
        writer: Locks, clock, the log every decision is recorded in, and who acts (its
            ``actors`` say who holds the ``promote`` grant).
        gate: Withdrawals, read again at decision time.
        reviews: Review states (a quarantined or rejected source is refused).
        home: The Home whose ``proposals/promotions/`` and ``conventions.md`` are used, or ``None``.
        zone: The Home's time zone (the local day of proposal ids).
    """

    writer: Writer
    _: KW_ONLY
    gate: Gate
    reviews: ReviewBook
    home: Home | None
    zone: tzinfo

    @property
    def actor(self) -> str:
        """Who proposes and decides (the Memory's actor)."""
        return self.writer.actor

    @property
    def actors(self) -> Actors:
        """Who holds which grants (the Memory's)."""
        return self.writer.actors

    @property
    def log(self) -> OperationLog:
        """The operation log decisions are appended to."""
        return self.writer.log

    @property
    def store(self) -> RecordStore:
        """Where source records are read again."""
        return self.writer.store

    def __call__(self, *, status: str | None = None) -> list[PromotionProposal]:
        """Return the Home's promotion proposals by id, only ``status`` ones when given."""
        return self.proposals(status=status)

    def propose(
        self,
        record_id: str,
        *,
        target: str = "conventions",
        rule_text: str | None = None,
        reason: str,
        now: datetime | None = None,
    ) -> PromotionProposal:
        """Write a pending promotion proposal for a record (seed 000 §17, §23.5); apply nothing.

        Any actor may propose (the agent-initiated path of §17). Writes the proposal file and one
        ``review`` event (verdict ``promotion-proposed``, ids only). The Memory must be over a Home;
        ``record_id`` names the source record; ``rule_text`` (default: the record's body) is collapsed
        to one line and screened for secrets; ``reason`` says why the rule is stable (eligibility).

        Returns:
            The proposal, ``status`` ``pending-review``.

        Raises:
            ProposalError: No Home, or the source record is not eligible (named, with why).
            RecordNotFound: The Home holds no such record.
            RecordError: Unknown target, empty reason or rule, a secret under the ``refuse``
                policy, or a naive ``now``.
        """
        home = self._home()
        stamp = self.writer.clock(now)
        if target not in PROMOTION_TARGETS:
            raise RecordError(f"unknown target {target!r} (one of: {PROMOTION_TARGETS})", field="target")
        why = _text(reason, "reason")
        with self.writer.writing():
            record = self._eligible(record_id)
            rule = _text(record.body if rule_text is None else rule_text, "rule_text")
            rule = screen(rule, field="rule_text", policy=self, record_id=record_id).text
            folder = home.root.joinpath(*_FOLDER)
            day = stamp.astimezone(self.zone).date().isoformat()
            taken = [int(m[2]) for m in map(PROMOTION_ID_PATTERN.match, _ids(folder)) if m and m[1] == day]
            proposal = PromotionProposal(
                proposal_id=f"mempromo-{day}-{max(taken, default=0) + 1:03d}",
                status="pending-review",
                target=target,
                source_record=record.id,
                proposed_by=self.actor,
                proposed_at=stamp,
                reason=why,
                rule=rule,
            )
            path = folder / f"{proposal.proposal_id}.md"
            try:
                folder.mkdir(parents=True, exist_ok=True)
                with path.open("xb") as handle:
                    handle.write(proposal.to_bytes())
            except OSError as exc:
                raise ProposalError(f"cannot write the proposal: {exc}", path=str(path)) from None
            self.log.append(
                "review",
                actor=self.actor,
                record_ids=(record.id,),
                details={
                    "verdict": "promotion-proposed",
                    "proposal_id": proposal.proposal_id,
                    "target": target,
                },
                now=stamp,
            )
            return proposal

    def accept(self, proposal_id: str, *, reason: str, now: datetime | None = None) -> PromotionProposal:
        """Apply a pending proposal: log the decision, append the rule to ``conventions.md``, mark it so.

        The bullet appended is ``- <rule> (promoted from <record id> by <proposal id>)``.

        Returns:
            The proposal as now stored (``accepted``, with ``decided_by`` / ``decided_at``).

        Raises:
            AuthorityError: The actor holds no ``promote`` grant (nothing written).
            ProposalError: No Home, an unknown or unreadable proposal, one already decided, or a
                source record no longer eligible (not active, withdrawn, erased, quarantined or
                rejected); nothing written.
            RecordNotFound: The source record is gone from the store.
            RecordError: An empty reason or a naive ``now``.
        """
        self.actors.require(self.actor, "promote", action=f"accept {proposal_id}")
        home = self._home()
        stamp = self.writer.clock(now)
        why = _text(reason, "reason")
        with self.writer.writing():
            proposal, path = _pending(home, proposal_id)
            self._eligible(proposal.source_record)
            conventions = home.root / "conventions.md"
            before = conventions.read_bytes() if conventions.is_file() else b""
            pointer = f"(promoted from {proposal.source_record} by {proposal.proposal_id})"
            self.log.append(
                "review",
                actor=self.actor,
                record_ids=(proposal.source_record,),
                details={
                    "verdict": "promotion-accepted",
                    "proposal_id": proposal.proposal_id,
                    "target": proposal.target,
                    "rule_digest": hashlib.sha256(proposal.rule.encode("utf-8")).hexdigest(),
                    "reason": why,
                },
                now=stamp,
            )
            if pointer.encode("utf-8") not in before:
                from agent_memory.stores.file_io import write_bytes_atomic

                gap = b"" if not before or before.endswith(b"\n") else b"\n"
                # The rule is note text: escaped like every view's (jobs.inert), it adds no structure.
                line = f"- {inert_inline(proposal.rule)} {pointer}\n"
                write_bytes_atomic(conventions, before + gap + line.encode())
            return _decide(proposal, path, "accepted", self.actor, stamp, why)

    def reject(self, proposal_id: str, *, reason: str, now: datetime | None = None) -> PromotionProposal:
        """Mark a pending proposal rejected with the decider's reason; ``conventions.md`` is untouched.

        Rejecting is a decision too, so it needs the ``promote`` grant.

        Raises:
            AuthorityError: The actor holds no ``promote`` grant (nothing written).
            ProposalError: No Home, an unknown or unreadable proposal, or one already decided.
            RecordError: An empty reason or a naive ``now``.
        """
        self.actors.require(self.actor, "promote", action=f"reject {proposal_id}")
        home = self._home()
        stamp = self.writer.clock(now)
        why = _text(reason, "reason")
        with self.writer.writing():
            proposal, path = _pending(home, proposal_id)
            self.log.append(
                "review",
                actor=self.actor,
                record_ids=(proposal.source_record,),
                details={"verdict": "promotion-rejected", "proposal_id": proposal.proposal_id, "reason": why},
                now=stamp,
            )
            return _decide(proposal, path, "rejected", self.actor, stamp, why)

    def proposals(self, *, status: str | None = None) -> list[PromotionProposal]:
        """Return the Home's promotion proposals by id, optionally only those with ``status``.

        Raises:
            ProposalError: No Home, or a proposal file cannot be read (naming it).
            RecordError: ``status`` is not one of :data:`PROMOTION_STATUSES`.
        """
        if status is not None and status not in PROMOTION_STATUSES:
            raise RecordError(f"unknown status {status!r} (one of: {PROMOTION_STATUSES})", field="status")
        folder = self._home().root.joinpath(*_FOLDER)
        found = [_read(folder / f"{pid}.md") for pid in sorted(_ids(folder))]
        return [p for p in found if status is None or p.status == status]

    def _home(self) -> Home:
        home: Home | None = self.home
        if home is None:
            raise ProposalError(
                "promotion needs a Home: proposals and conventions.md are files of one",
                hint="open the Memory with Memory.open(PATH)",
            )
        return home

    def _eligible(self, record_id: str) -> MemoryRecord:
        """Re-read the source record and refuse one that may not become a rule (seed 000 §17, §12.2)."""
        record = self.store.get(record_id)
        problem = ""
        if record.redacted:
            problem = "it was erased"
        elif record.state is not State.ACTIVE:
            problem = f"it is {record.state.value}, not active"
        else:
            exposure = self.gate.check(record)
            review = self.reviews.state_of(record)
            if not exposure.exposed:
                problem = exposure.reason
            elif review in ("quarantined", "rejected"):
                problem = f"it is {review} (review it first)"
        if problem:
            raise ProposalError(f"cannot promote: {problem}", record_id=record_id)
        return record


def _text(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise RecordError("must be text", field=field)
    text = " ".join(unicodedata.normalize("NFC", value).split())
    if not text:
        raise RecordError("must not be empty", field=field)
    return text


def _ids(folder: Path) -> list[str]:
    return [p.stem for p in folder.glob("mempromo-*.md") if PROMOTION_ID_PATTERN.match(p.stem)]


def _read(path: Path) -> PromotionProposal:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ProposalError("no such promotion proposal", record_id=path.stem, path=str(path)) from None
    except OSError as exc:
        raise ProposalError(f"cannot read the proposal: {exc}", path=str(path)) from None
    proposal = PromotionProposal.from_bytes(data, path=str(path))
    if proposal.proposal_id != path.stem:
        raise ProposalError(f"holds id {proposal.proposal_id!r}, not its file name", path=str(path))
    return proposal


def _pending(home: Home, proposal_id: str) -> tuple[PromotionProposal, Path]:
    if not isinstance(proposal_id, str) or not PROMOTION_ID_PATTERN.match(proposal_id):
        raise ProposalError(f"must be mempromo-YYYY-MM-DD-NNN, got {proposal_id!r}", field="proposal_id")
    path = home.root.joinpath(*_FOLDER, f"{proposal_id}.md")
    proposal = _read(path)
    if proposal.status != "pending-review":
        raise ProposalError(
            f"already {proposal.status} by {proposal.decided_by}",
            record_id=proposal_id,
            hint="a decided proposal stays decided; propose again to revisit it",
        )
    return proposal, path


def _decide(
    proposal: PromotionProposal, path: Path, status: str, actor: str, stamp: datetime, why: str
) -> PromotionProposal:
    from agent_memory.stores.file_io import write_bytes_atomic

    decided = replace(proposal, status=status, decided_by=actor, decided_at=stamp, decision_reason=why)
    write_bytes_atomic(path, decided.to_bytes())
    return decided

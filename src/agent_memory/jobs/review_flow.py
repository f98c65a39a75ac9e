"""Reviewing maintenance proposals: list, accept, decline, revert, and the regret rate (issue 7 item 5).

A consolidation run files each change it may not apply on its own as a
:class:`~agent_memory.jobs.pending.PendingProposal` under ``proposals/pending-consolidation/``
(DESIGN.md §9 "What jobs may apply on their own"). This module is the review that follows:

- :meth:`ProposalReview.accept` re-validates each proposal against the current records
  (:func:`~agent_memory.jobs.pending.revalidate`) and writes exactly the versions the proposal
  gate returns; a stale or illegal one is refused with its reason and writes nothing, and so
  is one whose versions the withdrawal gate would now hide (a withdrawn scope never comes
  back through review, seed 000 §12.2).
- :meth:`ProposalReview.decline` writes no record, only the verdict (the CLI's ``reject`` on a proposal id).
- :meth:`ProposalReview.revert` undoes an accepted proposal by legal moves only (DESIGN.md §9 "``revert``
  writes correction records, never an illegal move"): a record the proposal created is
  superseded by a correction record restoring what it replaced (or archived when it replaced
  nothing, as a promoted rule); a created record in a dispute the proposal opened loses it
  (the other side active again, the created one superseded); every other record it retired
  comes back as a new correction record (keeping the original's provenance, the revert named
  in its ``state_reason`` and the log); a flag goes back to its previous value. Nothing is
  deleted or un-archived.
- :func:`review_stats` folds the log into counts and the regret rate = reverted ÷ accepted
  (seed 003).

Verdicts are ``review`` log events (DESIGN.md §9 "review marks are events") with details
``{"verdict": "accepted" | "declined" | "reverted", "proposal_id": <id>, …}``: ids, pass names
and digests, never record content. The log is the truth of what was decided: proposal files
are never moved or deleted (kept for audit), and a proposal is pending while no verdict
names it. The words ``accepted``/``declined`` are not quarantine verdicts, so
:class:`~agent_memory.governance.review_book.ReviewBook` ignores them.

Where proposals are read: the Memory's :class:`~agent_memory.jobs.pending.ProposalShelf`,
i.e. the live files under ``proposals/pending-consolidation/`` of a Home (written by every
run, git or not, and what a person edits or reviews in place), or memory for a Memory
without a Home; in a git Home a proposal whose live file is missing is read from the
``maintenance/*`` branch its run committed (:func:`~agent_memory.jobs.branches.branch_proposals`).
Both copies are only the *request*: what ``accept`` writes is decided by re-validating it
against the records now.

Invariant: every refusal (stale, illegal, withdrawn, unknown id, already decided, no grant)
raises before the first write; an accepted or reverted proposal's writes all pass the gate first:
the proposal gate, then the write gate (:meth:`Writer.admit
<agent_memory.write.writer.Writer.admit>`: every record moved verifies, every new record's
body passes the screen), so a proposal file edited by hand or a tampered note is refused,
never signed by the Home (issue 18).
When the Home has an identity, every version they write is signed by it, as ``remember``'s
records are (a version already signed keeps its signature), so ``doctor`` and
``agent-memory verify`` find no unsigned version of theirs.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agent_memory.errors import AgentMemoryError, ProposalError, RecordNotFound
from agent_memory.jobs.branches import branch_proposals
from agent_memory.jobs.compensation import compensation, disputes_of_restored
from agent_memory.jobs.pending import PENDING_FOLDER, PendingProposal, ProposalShelf, basis_of, revalidate
from agent_memory.jobs.proposal_trust import trust_concern
from agent_memory.jobs.verdicts import ACCEPTED, DECLINED, REVERTED, review_stats
from agent_memory.jobs.verdicts import verdicts as verdicts_in
from agent_memory.records.record import MemoryRecord, State
from agent_memory.stores.base import RecordStore
from agent_memory.write.journal import JOURNAL_FOLDER, Batch, Step, run_batch

if TYPE_CHECKING:
    from agent_memory.governance.gate import Gate
    from agent_memory.governance.review_book import ReviewBook
    from agent_memory.home import Home
    from agent_memory.write.writer import Writer

__all__ = ["ACCEPTED", "DECLINED", "REVERTED", "Outcome", "ProposalReview", "diff_versions", "review_stats"]


@dataclass(slots=True)
class Outcome:
    """What one ``accept``/``decline``/``revert`` call did.

    Attributes:
        done: Proposal ids that got the verdict, in request order.
        refused: ``(proposal id, reason)`` for each one refused (nothing written for it).
        written: Record versions written, in write order.
    """

    done: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    written: list[MemoryRecord] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Return ``{"done": [ids], "refused": [{"id", "reason"}], "written": [record ids]}``."""
        return {
            "done": list(self.done),
            "refused": [{"id": i, "reason": r} for i, r in self.refused],
            "written": [v.id for v in self.written],
        }


def _lines(record: MemoryRecord | None) -> list[str]:
    if record is None:
        return []
    wire = record.to_wire()
    return [f"{key}: {json.dumps(wire[key], ensure_ascii=False, sort_keys=True)}" for key in sorted(wire)]


def diff_versions(store: RecordStore, versions: Sequence[MemoryRecord]) -> str:
    """Return a unified diff, per version, from the record's current version (or nothing) to it.

    Each version is compared with the one before it in ``versions`` for the same id, the first
    with the store's latest (absent for a new record). Lines are ``field: JSON value``.
    """
    previous: dict[str, MemoryRecord | None] = {}
    chunks: list[str] = []
    for version in versions:
        if version.id not in previous:
            try:
                previous[version.id] = store.get(version.id)
            except RecordNotFound:
                previous[version.id] = None
        before = previous[version.id]
        label = f"{version.id} ({'new' if before is None else 'next version'})"
        chunks.extend(
            difflib.unified_diff(
                _lines(before), _lines(version), fromfile=f"{version.id} (current)", tofile=label, lineterm=""
            )
        )
        previous[version.id] = version
    return "\n".join(chunks)


def _step(versions: list[MemoryRecord], *, job: str, proposal_id: str) -> Step:
    """The step that puts ``versions``, logged as ``supersede``/``archive``/``transition``/``put``."""
    states = {v.state for v in versions}
    action = (
        "supersede"
        if State.SUPERSEDED in states
        else "archive"
        if State.ARCHIVED in states
        else "transition"
        if State.TRANSITIONAL in states
        else "put"
    )
    details = {"reason": f"{job} (maintenance review)", "job": "review", "proposal_id": proposal_id}
    return Step(tuple(versions), action, tuple(dict.fromkeys(v.id for v in versions)), details)


def _verdict(verdict: str, pending: PendingProposal, **details: Any) -> Step:
    """The step that logs the ``review`` event of ``verdict`` (no version)."""
    wire = {"verdict": verdict, "proposal_id": pending.id, "pass": pending.pass_name, **details}
    return Step((), "review", pending.record_ids, wire)


@dataclass(eq=False)
class ProposalReview:
    """The review of maintenance proposals over one Memory's parts (``memory.proposals``; see above).

    Args:
        writer: The Memory's Writer: lock, clock, store, log, who acts and the gate's checks.
        gate: Withdrawal controls (an accepted proposal must not bring a withdrawn record back).
        book: Review states (a proposal that would let tainted text displace a reviewed record).
        shelf: Where the filed proposals are (``memory.maintenance.shelf``).
        home: The Home (its journal finishes an interrupted accept or revert), or ``None``.
    """

    writer: Writer
    _: KW_ONLY
    gate: Gate
    book: ReviewBook
    shelf: ProposalShelf
    home: Home | None

    def pending(self) -> list[PendingProposal]:
        """Return the filed proposals no verdict names yet, by id (live files, else maintenance branches).

        Raises:
            ConfigError: git fails reading a maintenance branch.
            ProposalError: A proposal file is unreadable or malformed (naming it).
        """
        decided = verdicts_in(self.writer.log)
        return [p for p in self._filed().values() if p.id not in decided]

    def trust_warning(self, pending: PendingProposal) -> str | None:
        """Return why accepting ``pending`` would let tainted text displace a reviewed record, or ``None``.

        The words are :func:`~agent_memory.jobs.proposal_trust.trust_concern`'s. Review states
        come from :attr:`book`, so an approved tainted record counts as reviewed.

        Raises:
            LogError: The log cannot be read.
        """
        return trust_concern(self.writer.store, pending, self.book.state_of)

    def accept(
        self, ids: Iterable[str] = (), *, everything: bool = False, now: datetime | None = None
    ) -> Outcome:
        """Re-validate and apply pending proposals through the gate, one at a time (DESIGN.md §9).

        Each proposal is checked against the records as the earlier ones left them; one that is
        stale, illegal, unknown or already decided, that moves a record whose note does not
        verify, or whose new record's body fails the screen (:meth:`Writer.admit
        <agent_memory.write.writer.Writer.admit>`) goes to ``refused`` with its reason and
        writes nothing. One that would let tainted text replace or displace a reviewed record
        (:meth:`trust_warning`, issue 20 item 5) is never applied by ``everything``: it must be
        named, by an actor with the ``approve`` grant, from an untainted session; what it writes
        keeps its taint (a merged record stays quarantined until approved). An applied one logs
        its writes (``supersede``/``archive``/``transition``/``put`` by the versions' kind,
        ``job: review``) then a ``review`` event ``{"verdict": "accepted", "proposal_id", "pass",
        "created": [ids new to the store], "written": {id: sha256}}``, as one journaled batch
        (:mod:`agent_memory.write.journal`: in a Home, a ``batch-intent`` before the first put
        and a ``batch-done`` after the verdict), so an accept killed part way is finished by the
        next open.

        Args:
            ids: Proposal ids (``cons-…``).
            everything: Accept every pending proposal instead of ``ids``.
            now: The clock (aware).

        Raises:
            AuthorityError: The actor lacks the ``approve`` grant; nothing written.
            ConfigError: git fails reading a maintenance branch.
            ProposalError: A proposal file is unreadable.
        """
        with self._deciding(ids, everything=everything, verb="accept", now=now) as (stamp, outcome, chosen):
            view = self.gate.view()  # accept writes no control: one reading of them serves the call
            for proposal_id, pending in chosen:
                try:
                    planned = revalidate(self.writer.store, pending, now=stamp)
                    self.writer.admit(planned, path=self._file_of(pending))  # the gate, before signing
                    versions = self.writer.sign_unsigned(planned)
                except AgentMemoryError as exc:
                    outcome.refused.append((proposal_id, str(exc)))
                    continue
                hidden = next((e for e in map(view.check, versions) if not e.exposed), None)
                if hidden is not None:
                    outcome.refused.append((proposal_id, f"withdrawn: {hidden.reason}"))
                    continue
                concern = self.trust_warning(pending)
                if concern is not None and everything:
                    why = "--all never applies it: accept it by its id (needs the approve grant)"
                    outcome.refused.append((proposal_id, f"{concern}; {why}"))
                    continue
                if concern is not None and self.writer.taint:
                    why = f"a tainted session ({', '.join(self.writer.taint)}) may not accept it"
                    outcome.refused.append((proposal_id, f"{concern}; {why}"))
                    continue
                created = [v.id for v in versions if not self.writer.store.contains(v.id)]
                written = {v.id: basis_of(v) for v in versions}
                steps = (
                    _step(versions, job=pending.pass_name, proposal_id=proposal_id),
                    _verdict(ACCEPTED, pending, created=sorted(set(created)), written=written),
                )
                self._journaled(f"accept-{proposal_id}", steps, stamp)
                outcome.done.append(proposal_id)
                outcome.written.extend(versions)
        return outcome

    def decline(
        self,
        ids: Iterable[str] = (),
        *,
        everything: bool = False,
        reason: str = "",
        now: datetime | None = None,
    ) -> Outcome:
        """Decline pending proposals: log a ``review`` event ``{"verdict": "declined"}`` each, no record.

        ``reason`` is the reviewer's own words and goes into the event, so it must not quote
        record content. Unknown or already decided ids are ``refused``.

        Raises:
            AuthorityError: The actor lacks the ``approve`` grant; nothing written.
            ConfigError: git fails reading a maintenance branch.
            ProposalError: A proposal file is unreadable.
        """
        with self._deciding(ids, everything=everything, verb="decline", now=now) as (stamp, outcome, chosen):
            for proposal_id, pending in chosen:
                step = _verdict(DECLINED, pending, reason=reason)
                self.writer.log.append(
                    step.action,
                    actor=self.writer.actor,
                    record_ids=step.record_ids,
                    details=step.details,
                    now=stamp,
                )
                outcome.done.append(proposal_id)
        return outcome

    def revert(self, proposal_id: str, *, reason: str = "", now: datetime | None = None) -> Outcome:
        """Undo an accepted proposal with compensating legal moves; never delete (DESIGN.md §9).

        Every record the acceptance wrote must still be at the version it wrote (else the revert
        is refused, naming the record: a later change needs a person's correction instead). Then:
        a record the proposal created is superseded by a correction record restoring the first
        record it retired (archived when it retired none); each other retired record comes back
        as a new correction record. A correction record keeps the provenance of the record it
        restores (its source did not change); its ``state_reason`` names the original and the
        proposal. A flag returns to its earlier value. Logs the writes and a ``review`` event
        ``{"verdict": "reverted", "proposal_id", "pass", "reason", "created": [correction ids],
        "restored": {correction id: original id}, "after": {id: sha256 of its version now}}``,
        ``after`` covering every record the acceptance or the revert wrote: consolidation reads it
        so it does not propose the reverted change again over those unchanged records
        (:class:`~agent_memory.jobs.verdicts.Refusals`). The whole revert is planned before its
        first put and written as one journaled batch, so a revert killed part way is finished by
        the next open (issue 20), never left half done.

        Raises:
            AuthorityError: The actor lacks the ``approve`` grant.
            ProposalError: The proposal was never accepted, was already reverted, its file is
                gone, or a record changed since; nothing written.
            LifecycleError: The gate refuses a compensating move; nothing written.
            SignatureError, StoreError: A record the revert moves or restores does not verify
                (its note was edited by hand); nothing written.
            ScreenError: A restored body fails the screen; nothing written.
        """
        stamp = self.writer.clock(now)
        self.writer.actors.require(self.writer.actor, "approve", action=f"revert {proposal_id}")
        with self.writer.writing():
            events = verdicts_in(self.writer.log).get(proposal_id, [])
            verdicts = [e["verdict"] for e in events]
            if ACCEPTED not in verdicts:
                raise ProposalError(
                    f"proposal {proposal_id} was never accepted, so there is nothing to revert"
                )
            if REVERTED in verdicts:
                raise ProposalError(f"proposal {proposal_id} was already reverted")
            pending = self._filed().get(proposal_id)
            if pending is None:
                raise ProposalError(f"proposal {proposal_id}: its file under {PENDING_FOLDER} is gone")
            accepted = next(e for e in events if e["verdict"] == ACCEPTED)
            for record_id, digest in sorted(dict(accepted.get("written", {})).items()):
                if basis_of(self.writer.store.get(record_id)) != digest:
                    raise ProposalError(
                        f"cannot revert {proposal_id}: the record changed since it was accepted; "
                        "correct it by hand",
                        record_id=record_id,
                    )
            created = [str(i) for i in accepted.get("created", [])]
            restored: dict[str, str] = {}
            moves = compensation(self.writer, pending, created, stamp, restored)
            self.writer.admit(moves, path=self._file_of(pending), copies=restored)  # the gate
            versions = self.writer.sign_unsigned(moves)
            latest = {v.id: v for v in versions}  # what each record will be once the moves are put
            disputes = self.writer.sign_unsigned(
                disputes_of_restored(self.writer, restored, stamp, proposal_id, latest)
            )
            latest.update((v.id, v) for v in disputes)
            touched = sorted({*dict(accepted.get("written", {})), *latest})
            after = {i: basis_of(latest[i] if i in latest else self.writer.store.get(i)) for i in touched}
            details = {"created": sorted(restored), "restored": restored, "after": after}
            steps = (
                _step(versions, job="revert", proposal_id=proposal_id),
                *((_step(disputes, job="revert", proposal_id=proposal_id),) if disputes else ()),
                _verdict(REVERTED, pending, reason=reason, **details),
            )
            self._journaled(f"revert-{proposal_id}", steps, stamp)
        return Outcome(done=[proposal_id], written=versions + disputes)

    def _filed(self) -> dict[str, PendingProposal]:
        """Return every filed proposal by id: the shelf (files or memory), then branches for missing ones."""
        shelf = self.shelf
        found = {p.id: p for p in shelf.filed()}
        if shelf.folder is not None:
            for proposal_id, pending in branch_proposals(shelf.folder.parents[1]).items():
                found.setdefault(proposal_id, pending)
        return dict(sorted(found.items()))

    @contextmanager
    def _deciding(
        self, ids: Iterable[str], *, everything: bool, verb: str, now: datetime | None
    ) -> Iterator[tuple[datetime, Outcome, list[tuple[str, PendingProposal]]]]:
        """Check the ``approve`` grant, hold the writer lock, and yield (stamp, outcome, proposals to decide).

        Ids that are unknown or already decided go to the outcome's ``refused`` first.

        Raises:
            AuthorityError: The actor lacks the ``approve`` grant.
        """
        stamp = self.writer.clock(now)
        self.writer.actors.require(self.writer.actor, "approve", action=f"{verb} maintenance proposals")
        outcome = Outcome()
        with self.writer.writing():
            decided = verdicts_in(self.writer.log)
            pending = {p.id: p for p in self._filed().values() if p.id not in decided}
            wanted = sorted(pending) if everything else list(dict.fromkeys(ids))
            for proposal_id in wanted:
                if proposal_id not in pending:
                    outcome.refused.append((proposal_id, self._unknown(proposal_id, decided)))
            yield stamp, outcome, [(i, pending[i]) for i in wanted if i in pending]

    def _unknown(self, proposal_id: str, decided: Mapping[str, object]) -> str:
        if proposal_id in decided:
            return f"proposal {proposal_id} was already decided"
        where = f"under {PENDING_FOLDER}" if self.shelf.folder is not None else "filed in this Memory"
        return f"no pending proposal {proposal_id} {where}"

    def _file_of(self, pending: PendingProposal) -> str | None:
        """The proposal's live file, named in a refusal (``None`` without a Home's shelf)."""
        folder = self.shelf.folder
        return str(folder / f"{pending.id}.json") if folder is not None else None

    def _journaled(self, key: str, steps: tuple[Step, ...], stamp: datetime) -> None:
        """Write ``steps`` as one journaled batch (:mod:`agent_memory.write.journal`).

        A kill between two puts of an accept or a revert is finished by the next open, never
        left half applied (issue 20 "Interrupted operations finish").
        """
        home = self.home
        run_batch(
            Batch(key, steps),
            self.writer.store,
            self.writer.log,
            folder=home.cache_dir / JOURNAL_FOLDER if home is not None else None,
            actor=self.writer.actor,
            now=stamp,
            written=self.writer.after_write,
        )

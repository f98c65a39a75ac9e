"""What a revert writes: the compensating versions of an accepted maintenance proposal.

A revert never makes an illegal move (DESIGN.md §7): what the proposal retired comes back as
correction records that keep the originals' sources, what it created is archived or
superseded by them, disputes it opened are settled in the older side's favour, and a
restored state value whose subject holds another live value disputes it, so a subject never
has two active values. Used by :meth:`agent_memory.jobs.review_flow.ProposalReview.revert`.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from agent_memory.errors import ProposalError
from agent_memory.jobs.pending import PendingProposal
from agent_memory.records.lifecycle import resolve_transition
from agent_memory.records.record import MemoryRecord, State
from agent_memory.stores.base import RecordStore, check_next_version
from agent_memory.write.proposals import Proposal, ProposalKind, validate_proposals

if TYPE_CHECKING:
    from agent_memory.write.writer import Writer

# Content fields a restoring correction record copies from the record it brings back.
_COPIED: tuple[str, ...] = (
    "slots",
    "confidence",
    "evidence",
    "tags",
    "occurred_at",
    "kind",
    "subject",
    "namespace",
    "scope",
    "valid_from",
    "valid_to",
    "taint",
    "sources",
    "epistemic_status",
)


def compensation(
    writer: Writer, pending: PendingProposal, created: list[str], stamp: datetime, restored: dict[str, str]
) -> list[MemoryRecord]:
    """Return the compensating versions; fill ``restored`` with ``{correction id: original id}``."""
    store = writer.store
    if pending.flag is not None:
        current = store.get(pending.flag.id)
        before = [v for v in store.history(pending.flag.id) if v.flagged != pending.flag.flagged]
        back = current.evolve(
            flagged=not pending.flag.flagged,
            flag_reason=before[-1].flag_reason if before else None,
            updated_at=stamp,
        )
        check_next_version(current, back)
        return [back]
    retired: list[str] = []
    for proposal in pending.proposals:
        target = proposal.target_id or (proposal.record.supersedes if proposal.record is not None else None)
        if (
            proposal.kind in (ProposalKind.SUPERSEDE, ProposalKind.ARCHIVE)
            and target
            and target not in retired
            and target not in created  # made and retired by the proposal itself: stays retired
        ):
            retired.append(target)
    moves: list[Proposal] = []
    why = f"reverted maintenance proposal {pending.id}"
    settled = _settle_disputes(store, created, why, stamp)
    for record_id in created:
        state = store.get(record_id).state
        if state is State.TRANSITIONAL and record_id not in {v.id for v in settled}:
            # Both sides of the dispute are the proposal's own: neither comes back.
            moves.append(Proposal(ProposalKind.ARCHIVE, target_id=record_id, reason=why))
            continue
        if state is not State.ACTIVE:
            continue
        if retired:
            original = retired.pop(0)
            copy = _restored(writer, writer.get(original), pending.id, stamp, supersedes=record_id)
            restored[copy.id] = original
            moves.append(Proposal(ProposalKind.SUPERSEDE, record=copy, target_id=record_id, reason=why))
        else:
            moves.append(Proposal(ProposalKind.ARCHIVE, target_id=record_id, reason=why))
    for record_id in retired:
        copy = _restored(writer, writer.get(record_id), pending.id, stamp, supersedes=None)
        restored[copy.id] = record_id
        moves.append(Proposal(ProposalKind.CREATE, record=copy))
    if not moves and not settled:
        raise ProposalError(f"proposal {pending.id}: nothing to compensate")
    return settled + (validate_proposals(store, moves, now=stamp) if moves else [])


def disputes_of_restored(
    writer: Writer,
    restored: dict[str, str],
    stamp: datetime,
    proposal_id: str,
    planned: dict[str, MemoryRecord] | None = None,
) -> list[MemoryRecord]:
    """Open a dispute between each restored state value and a live value its subject holds.

    A revert restores what the proposal retired; when the subject took another active value
    meanwhile (a state supersede reverted while the newer value stays), the two are put in
    dispute for a person to resolve, never left as two active values of one subject
    (DESIGN.md §7). ``planned`` holds what the revert's compensating versions will make of
    each record they touch (``{id: version}``), read over the store, so the whole revert is
    planned before its first put (a journaled batch, :mod:`agent_memory.write.journal`).
    """
    ahead = planned or {}
    from agent_memory.records.lifecycle import begin_transition
    from agent_memory.write.plan import subject_key

    versions: list[MemoryRecord] = []
    for copy_id in restored:
        copy = ahead.get(copy_id) or writer.store.get(copy_id)
        key = subject_key(copy)
        if key is None or copy.state is not State.ACTIVE:
            continue
        live = {r.id: r for r in writer.store.list(state=State.ACTIVE)} | ahead
        rival = next(
            (
                r
                for r in live.values()
                if r.state is State.ACTIVE
                and r.id != copy_id
                and subject_key(r) == key
                and _verifies(writer, r)
            ),
            None,
        )
        if rival is not None:
            why = f"reverting maintenance proposal {proposal_id} restored a value its subject still holds"
            versions += begin_transition(rival, copy, why, now=stamp)
    return versions


def _verifies(writer: Writer, record: MemoryRecord) -> bool:
    """Whether ``record`` passes the verified read path: a refused note is no live value to dispute."""
    from agent_memory.errors import SignatureError

    try:
        writer.check(record)
    except SignatureError:
        return False
    return True


def _settle_disputes(store: RecordStore, created: list[str], why: str, stamp: datetime) -> list[MemoryRecord]:
    """Resolve each dispute between a created record and an older one in the older one's favour."""
    versions: list[MemoryRecord] = []
    for record_id in created:
        record = store.get(record_id)
        if record.state is not State.TRANSITIONAL or record.transition is None:
            continue
        other_id = next(side for side in record.transition.sides if side != record_id)
        if other_id in created:
            continue
        other = store.get(other_id)
        winner, loser = resolve_transition(other, record, why, now=stamp)
        check_next_version(other, winner)
        check_next_version(record, loser)
        versions += [winner, loser]
    return versions


def _restored(
    writer: Writer, original: MemoryRecord, proposal_id: str, stamp: datetime, *, supersedes: str | None
) -> MemoryRecord:
    # ``original`` was read through the verified read path (``writer.get``): its fields are
    # copied into a record the Home signs, so a hand-edited note is never laundered.
    # The copy keeps the original's provenance (its source, e.g. ``docs/cli.md#L444-L455``):
    # where the knowledge came from did not change. The revert itself is in the log's
    # ``reverted`` event and in the copy's ``state_reason``; ``signed_by`` names who wrote it.
    fields = {name: getattr(original, name) for name in _COPIED}
    record = MemoryRecord.create(
        type=original.type,
        body=original.body,
        provenance=original.provenance,
        created_at=stamp,
        supersedes=supersedes,
        state_reason=f"restored {original.id} by reverting maintenance proposal {proposal_id}",
        **fields,
    )
    return writer.sign(record)

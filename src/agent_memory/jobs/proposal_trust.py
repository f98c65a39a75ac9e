"""Trust survives maintenance: the proposals that would let tainted text replace a reviewed record.

Issue 20 item 5; DESIGN.md §9 ("A proposal that would let tainted text supersede or merge into an
untainted record is never applied without the approve grant"; seed 003 trust: a tainted record
is quarantined until a person approves it). A maintenance proposal is *trusted-displacing* when
accepting it would

- supersede a **reviewed** record (untainted, or tainted and approved by a review event) by a
  record whose text is **quarantined** (tainted and not approved): a near-duplicate merge with
  a tainted side (the merged record inherits the taint), a state supersede or a distilled
  value written from outside content; or
- put a reviewed record into a dispute with a quarantined one, which takes the reviewed record
  out of ``MEMORY.md`` (only active records are autoloaded) until someone resolves it.

:func:`trust_concern` says so in words, starting with :data:`REPLACES` or :data:`DISPLACES`, and
naming the records. The review flow never applies such a proposal on its own (``accept --all``
skips it), lists the words in ``proposals`` and ``review``, and applies it only when a person
with the ``approve`` grant names it from an untainted session; what it writes keeps its taint
(the merged record stays quarantined until approved).

Invariant: read-only; a record the proposal names that is gone is no concern here (``accept``
re-validates and refuses the stale proposal itself).
"""

from __future__ import annotations

from collections.abc import Callable

from agent_memory.errors import RecordNotFound
from agent_memory.jobs.pending import PendingProposal
from agent_memory.records.record import MemoryRecord
from agent_memory.stores.base import RecordStore
from agent_memory.write.proposals import ProposalKind

__all__ = ["DISPLACES", "REPLACES", "trust_concern"]

REPLACES = "tainted text would replace a reviewed record"
"""The words that open the concern of a supersede or merge."""
DISPLACES = "tainted text would displace a reviewed record"
"""The words that open the concern of a dispute (a disputed record leaves ``MEMORY.md``)."""

ReviewWord = Callable[[MemoryRecord], str]
"""A record's review state word (``none``, ``approved``, ``quarantined``, ``rejected``, ``stale``)."""


def _reviewed(word: str) -> bool:
    return word not in ("quarantined", "rejected")


def _taint(record: MemoryRecord) -> str:
    return ", ".join(record.taint or ()) or "none"


def trust_concern(store: RecordStore, pending: PendingProposal, review_of: ReviewWord) -> str | None:
    """Return why accepting ``pending`` would let tainted text displace a reviewed record, or ``None``.

    Args:
        store: The current records (a proposal's targets are read at their latest version).
        pending: A maintenance proposal (consolidation or distill).
        review_of: The review state word of a record, from the log's review events
            (:meth:`~agent_memory.governance.review_book.ReviewBook.state_of`); a record new to
            the store has no events, so a tainted one is ``quarantined``.

    Returns:
        ``"tainted text would replace a reviewed record: <new> (taint: external) would
        supersede <old>"`` (every such pair, ``;``-joined), ``"tainted text would displace a
        reviewed record: <quarantined> would put <reviewed> in dispute (it leaves
        MEMORY.md)"``, or ``None``.
    """
    pairs: list[str] = []
    disputes: list[str] = []
    for proposal in pending.proposals:
        if proposal.kind is ProposalKind.SUPERSEDE and proposal.record is not None:
            successor = _current(store, proposal.record.id) or proposal.record
            target = _current(store, proposal.target_id or proposal.record.supersedes or "")
            if target is None or successor.id == target.id:
                continue
            if review_of(successor) == "quarantined" and _reviewed(review_of(target)):
                pair = f"{successor.id} (taint: {_taint(successor)}) would supersede {target.id}"
                if pair not in pairs:
                    pairs.append(pair)
        elif proposal.kind is ProposalKind.TRANSITION:
            sides = [_current(store, i or "") for i in (proposal.target_id, proposal.other_id)]
            if None in sides:
                continue
            a, b = (s for s in sides if s is not None)
            for quarantined, reviewed in ((a, b), (b, a)):
                if review_of(quarantined) == "quarantined" and _reviewed(review_of(reviewed)):
                    disputes.append(
                        f"{quarantined.id} (taint: {_taint(quarantined)}) would put {reviewed.id} "
                        "in dispute (it leaves MEMORY.md)"
                    )
    if pairs:
        return f"{REPLACES}: {'; '.join(pairs)}"
    if disputes:
        return f"{DISPLACES}: {'; '.join(disputes)}"
    return None


def _current(store: RecordStore, record_id: str) -> MemoryRecord | None:
    if not record_id:
        return None
    try:
        return store.get(record_id)
    except RecordNotFound:
        return None

"""Typed proposals and the apply gate: the one road from an operator's wish to a store write.

An operator (heuristic or LLM), a maintenance job or the porcelain never moves a record
itself: it builds a :class:`Proposal` of one of four kinds (seed 001 "Operators &
proposals", origin-notes §1.9) and :func:`apply_proposal` validates it against the
lifecycle (:mod:`agent_memory.records.lifecycle`) and the store's version rules
(:func:`agent_memory.stores.base.check_next_version`) before it writes.

Invariant: an invalid proposal raises :class:`ProposalError` or :class:`LifecycleError` and
writes nothing; it is rejected, never repaired. Every version about to be written is
checked before the first ``put``. Redaction and erasure are deliberately not proposal
kinds: no proposal can destroy content (DESIGN.md §4).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from agent_memory.errors import LifecycleError, ProposalError, RecordError, RecordNotFound, StoreError
from agent_memory.records.lifecycle import archive, begin_transition, supersede
from agent_memory.records.record import RECORD_ID_PATTERN, MemoryRecord, State
from agent_memory.records.wire import utc_now
from agent_memory.stores.base import RecordStore, check_next_version

__all__ = ["Proposal", "ProposalKind", "apply_proposal", "apply_proposals", "validate_proposals"]


class ProposalKind(StrEnum):
    """The four things a proposal may ask for (seed 001); nothing else can be proposed."""

    CREATE = "create"
    SUPERSEDE = "supersede"
    TRANSITION = "transition"
    ARCHIVE = "archive"


@dataclass(frozen=True, slots=True)
class Proposal:
    """One requested change, checked only when applied (so a rejected one can be reported).

    Which fields a kind uses (any other field set is a :class:`ProposalError`):

    - ``create``: ``record``, born active with no lifecycle links, its id new to the store.
    - ``supersede``: ``record`` = the successor, naming the old id in ``supersedes``;
      ``target_id`` optional (must equal ``record.supersedes``); ``reason`` required.
    - ``transition``: ``target_id`` and ``other_id``, both active; ``reason`` required.
    - ``archive``: ``target_id``; ``reason`` required.

    Raises:
        ProposalError: On construction, when ``kind`` is not one of :class:`ProposalKind`.
    """

    kind: ProposalKind
    record: MemoryRecord | None = None
    target_id: str | None = None
    other_id: str | None = None
    reason: str = ""

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "kind", ProposalKind(self.kind))
        except ValueError:
            allowed = ", ".join(ProposalKind)
            raise ProposalError(
                f"unknown proposal kind {self.kind!r} (one of: {allowed})", field="kind"
            ) from None


def apply_proposal(
    store: RecordStore, proposal: Proposal, *, now: datetime | None = None
) -> list[MemoryRecord]:
    """Validate one proposal against the store's current records, then write it (origin-notes §1.9).

    ``create`` puts the record; ``supersede`` puts the successor, then the retired old
    version; ``transition`` puts both sides; ``archive`` puts the archived version.

    Args:
        store: Any :class:`RecordStore`.
        proposal: The change asked for.
        now: The clock for ``updated_at`` of moved records; defaults to the current UTC time.

    Returns:
        The versions written, in write order.

    Raises:
        ProposalError: The proposal is malformed, names a record the store does not hold,
            creates an id that exists, or a version would break the store's version rules.
        LifecycleError: A lifecycle guard fails (illegal move, empty reason, wrong link).
        StoreError: A write failed; with two writes, the first may already be stored (the
            caller's logged intent rolls it forward, DESIGN.md §9).
    """
    return apply_proposals(store, [proposal], now=now)


def apply_proposals(
    store: RecordStore, proposals: Iterable[Proposal], *, now: datetime | None = None
) -> list[MemoryRecord]:
    """Validate a batch in order, each against the store as the earlier ones leave it, then write all.

    All or nothing for validation: if any proposal is invalid nothing is written, not even
    the valid ones before it. Every proposal sees one clock reading.

    Returns:
        Every version written, in write order.

    Raises:
        ProposalError, LifecycleError, StoreError: As for :func:`apply_proposal`.
    """
    writes = validate_proposals(store, proposals, now=now)
    for record in writes:
        store.put(record)
    return writes


def validate_proposals(
    store: RecordStore,
    proposals: Iterable[Proposal],
    *,
    now: datetime | None = None,
    get: Callable[[str], MemoryRecord] | None = None,
) -> list[MemoryRecord]:
    """Return the versions :func:`apply_proposals` would write, without writing anything.

    Used by the gate itself and by ``accept``, which re-validates a reviewed proposal
    against the current records before applying it (DESIGN.md §9).

    Args:
        store: The records the proposals change.
        proposals: The proposals, validated in order (later ones see earlier ones' versions).
        now: The time of the planned versions (default: now).
        get: Reads a record's latest version (raises ``RecordNotFound``); ``store.get`` by
            default. Consolidation passes the versions it has just read, so a proposal does
            not read its records again.

    Raises:
        ProposalError, LifecycleError: As for :func:`apply_proposal`.
    """
    staged = _Staged(get or store.get)
    stamp = now if now is not None else utc_now()
    writes: list[MemoryRecord] = []
    for proposal in proposals:
        if not isinstance(proposal, Proposal):
            raise ProposalError(f"not a Proposal: {type(proposal).__name__}")
        planned = _PLANNERS[proposal.kind](staged, proposal, stamp)
        for record in planned:
            staged.check_and_stage(record)
        writes.extend(planned)
    return writes


# ---------------------------------------------------------------------- planning


class _Staged:
    """The store's latest versions with the batch's planned versions laid over them."""

    def __init__(self, get: Callable[[str], MemoryRecord]) -> None:
        self._get = get
        # Each id's latest version as the batch leaves it: the store is read once per id.
        self._latest: dict[str, MemoryRecord | None] = {}

    def latest(self, record_id: str, field: str) -> MemoryRecord | None:
        if not isinstance(record_id, str) or not RECORD_ID_PATTERN.match(record_id):
            raise ProposalError(f"not a record id: {record_id!r}", field=field)
        if record_id not in self._latest:
            try:
                self._latest[record_id] = self._get(record_id)
            except RecordNotFound:
                self._latest[record_id] = None
        return self._latest[record_id]

    def fetch(self, record_id: str | None, field: str) -> MemoryRecord:
        if record_id is None:
            raise ProposalError("is required for this kind of proposal", field=field)
        record = self.latest(record_id, field)
        if record is None:
            raise ProposalError("the store holds no such record", record_id=record_id, field=field)
        return record

    def check_and_stage(self, record: MemoryRecord) -> None:
        previous = self.latest(record.id, "record.id")
        try:
            check_next_version(previous, record)
        except (RecordError, StoreError) as exc:
            raise ProposalError(
                f"refused as the next version: {exc.detail}", record_id=record.id, field=exc.field
            ) from exc
        self._latest[record.id] = record


def _plan_create(staged: _Staged, proposal: Proposal, now: datetime) -> list[MemoryRecord]:
    record = _new_record(proposal, "create")
    _forbid(proposal, "target_id", "other_id")
    if record.state is not State.ACTIVE:
        raise LifecycleError(
            f"a record is born active, not {record.state.value}", record_id=record.id, field="state"
        )
    for name in ("supersedes", "superseded_by"):
        if getattr(record, name) is not None:
            raise ProposalError(
                "a created record carries no lifecycle links (propose a supersede instead)",
                record_id=record.id,
                field=name,
            )
    if staged.latest(record.id, "record.id") is not None:
        raise ProposalError(
            "the record already exists; create never overwrites", record_id=record.id, field="id"
        )
    _require_evidence(staged, record)
    return [record]


def _plan_supersede(staged: _Staged, proposal: Proposal, now: datetime) -> list[MemoryRecord]:
    successor = _new_record(proposal, "supersede")
    _forbid(proposal, "other_id")
    if successor.supersedes is None:
        raise ProposalError(
            "the successor must name the record it supersedes", record_id=successor.id, field="supersedes"
        )
    if proposal.target_id is not None and proposal.target_id != successor.supersedes:
        raise ProposalError(
            f"target {proposal.target_id} differs from the successor's supersedes {successor.supersedes}",
            record_id=successor.id,
            field="target_id",
        )
    old = staged.fetch(successor.supersedes, "supersedes")
    retired = supersede(old, successor, proposal.reason, now=now)
    existing = staged.latest(successor.id, "record.id")
    if existing is not None and existing.state is not State.ACTIVE:
        raise LifecycleError(
            f"an existing successor must be active, not {existing.state.value}",
            record_id=successor.id,
            field="state",
        )
    _require_evidence(staged, successor)
    return [successor, retired]


def _plan_transition(staged: _Staged, proposal: Proposal, now: datetime) -> list[MemoryRecord]:
    _forbid(proposal, "record")
    a = staged.fetch(proposal.target_id, "target_id")
    b = staged.fetch(proposal.other_id, "other_id")
    return list(begin_transition(a, b, proposal.reason, now=now))


def _plan_archive(staged: _Staged, proposal: Proposal, now: datetime) -> list[MemoryRecord]:
    _forbid(proposal, "record", "other_id")
    target = staged.fetch(proposal.target_id, "target_id")
    return [archive(target, proposal.reason, now=now)]


_PLANNERS = {
    ProposalKind.CREATE: _plan_create,
    ProposalKind.SUPERSEDE: _plan_supersede,
    ProposalKind.TRANSITION: _plan_transition,
    ProposalKind.ARCHIVE: _plan_archive,
}


def _new_record(proposal: Proposal, kind: str) -> MemoryRecord:
    record = proposal.record
    if not isinstance(record, MemoryRecord):
        raise ProposalError(f"a {kind} proposal needs a MemoryRecord", field="record")
    if record.redacted:
        raise ProposalError(
            "a tombstone cannot be proposed; erasure is not a proposal", record_id=record.id, field="redacted"
        )
    return record


def _forbid(proposal: Proposal, *names: str) -> None:
    for name in names:
        if getattr(proposal, name) is not None:
            raise ProposalError(f"is not used by a {proposal.kind.value} proposal", field=name)


def _require_evidence(staged: _Staged, record: MemoryRecord) -> None:
    for i, evidence_id in enumerate(record.evidence):
        field = f"evidence[{i}]"
        try:
            found = staged.latest(evidence_id, field)
        except ProposalError as exc:
            raise exc.located(record_id=record.id) from None
        if found is None:
            raise ProposalError(
                f"evidence {evidence_id} is not in the store", record_id=record.id, field=field
            )

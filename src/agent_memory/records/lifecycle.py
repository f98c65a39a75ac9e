"""The lifecycle state machine: the only place a record's state may change (seed 001, origin-notes §1.8).

Every function here is pure: it takes record versions and returns the next versions, built
with :meth:`MemoryRecord.evolve` (so a signature is cleared and the signed birth version
stays verifiable in history). Nothing is written; :mod:`agent_memory.write.proposals` is the gate
that validates a proposal with these functions and then writes through a store.

Invariant: a state changes only along one of the seven pairs of :data:`LEGAL_TRANSITIONS`:
active -> superseded | transitional | archived; transitional -> active | superseded | archived;
superseded -> archived. Archival is terminal. Every guard failure is a :class:`LifecycleError`
naming the record id and the field at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from agent_memory.errors import LifecycleError
from agent_memory.records.record import Kind, MemoryRecord, RecordType, State, Transition
from agent_memory.records.wire import utc_now

__all__ = [
    "LEGAL_TRANSITIONS",
    "RULE_FLAG_REASON",
    "archive",
    "assert_transition",
    "begin_transition",
    "is_legal",
    "refresh_rule_flag",
    "resolve_transition",
    "supersede",
]

LEGAL_TRANSITIONS: frozenset[tuple[State, State]] = frozenset(
    {
        (State.ACTIVE, State.SUPERSEDED),
        (State.ACTIVE, State.TRANSITIONAL),
        (State.ACTIVE, State.ARCHIVED),
        (State.TRANSITIONAL, State.ACTIVE),
        (State.TRANSITIONAL, State.SUPERSEDED),
        (State.TRANSITIONAL, State.ARCHIVED),
        (State.SUPERSEDED, State.ARCHIVED),
    }
)

RULE_FLAG_REASON = "all evidence records are archived or superseded"

_DEAD_STATES = frozenset({State.ARCHIVED, State.SUPERSEDED})


def is_legal(from_state: State, to_state: State) -> bool:
    """Return whether ``from_state -> to_state`` is one of the seven legal moves.

    Self-loops are never legal: a version that keeps its state is not a move.
    """
    return (State(from_state), State(to_state)) in LEGAL_TRANSITIONS


def assert_transition(record: MemoryRecord, to: State) -> None:
    """Check that ``record`` may move from its current state to ``to``.

    Raises:
        LifecycleError: The move is not in :data:`LEGAL_TRANSITIONS` (field ``state``).
    """
    if not is_legal(record.state, to):
        raise LifecycleError(
            f"illegal move {record.state.value} -> {State(to).value}", record_id=record.id, field="state"
        )


def supersede(
    old: MemoryRecord, successor: MemoryRecord, reason: str, *, now: datetime | None = None
) -> MemoryRecord:
    """Return the retired version of ``old``, replaced by ``successor`` (seed 001, origin-notes §1.8).

    The successor must already name ``old`` in ``supersedes``; it is returned unchanged by
    the caller's choice of writing it. The old version gets ``state=superseded``,
    ``superseded_by``, ``state_reason`` and ``updated_at``. A ``state`` record also gets
    ``valid_to`` = the successor's start of valid time when it had none (DESIGN.md §2, §9).
    Supersession never crosses kinds, and a ``state`` record is superseded only by one with
    the same ``namespace`` and the identical ``subject`` (DESIGN.md §7).

    Args:
        old: The latest version of the record being replaced; must be active.
        successor: The replacing record; must be active and have ``supersedes == old.id``.
        reason: Why, non-empty; stored as ``state_reason``.
        now: The clock (aware); defaults to :func:`agent_memory.records.wire.utc_now`.

    Raises:
        LifecycleError: Empty reason, the successor does not name ``old``, either side is
            not active, the two are one record, the kinds or subjects differ, or a
            ``state`` successor starts its valid time before ``old`` does.
    """
    _require_reason(reason, old)
    if successor.id == old.id:
        raise LifecycleError("a record cannot supersede itself", record_id=old.id, field="supersedes")
    if successor.supersedes != old.id:
        raise LifecycleError(
            f"the successor must name {old.id} in supersedes, not {successor.supersedes!r}",
            record_id=successor.id,
            field="supersedes",
        )
    _require_active(successor, "the successor")
    _require_active(old, "the superseded record")
    _require_same_kind(old, successor)
    valid_to = old.valid_to
    if old.effective_kind is Kind.STATE and valid_to is None:
        if successor.effective_valid_from < old.effective_valid_from:
            raise LifecycleError(
                "a state record cannot be superseded by a value whose valid time starts earlier; "
                "open a transition instead",
                record_id=successor.id,
                field="valid_from",
            )
        valid_to = successor.effective_valid_from
    return old.evolve(
        state=State.SUPERSEDED,
        superseded_by=successor.id,
        state_reason=reason,
        updated_at=_now(now),
        valid_to=valid_to,
    )


def begin_transition(
    a: MemoryRecord, b: MemoryRecord, reason: str, *, now: datetime | None = None
) -> tuple[MemoryRecord, MemoryRecord]:
    """Open a dispute: both records become transitional with one shared block (origin-notes §1.8).

    Both get ``transition = {sides: [a.id, b.id], reason}`` (``a`` first), ``state_reason``
    and the same ``updated_at``, so either side leads to the other (DESIGN.md §2: seed 000's
    ``pending-cleanup``).

    Returns:
        The next versions of ``a`` and ``b``, in that order.

    Raises:
        LifecycleError: Empty reason, the same record twice, or either side not active.
    """
    _require_reason(reason, a)
    if a.id == b.id:
        raise LifecycleError("a transition needs two distinct records", record_id=a.id, field="transition")
    assert_transition(a, State.TRANSITIONAL)
    assert_transition(b, State.TRANSITIONAL)
    block = Transition(sides=(a.id, b.id), reason=reason)
    stamp = _now(now)
    changes = {"state": State.TRANSITIONAL, "transition": block, "state_reason": reason, "updated_at": stamp}
    return a.evolve(**changes), b.evolve(**changes)


def resolve_transition(
    winner: MemoryRecord, loser: MemoryRecord, reason: str, *, now: datetime | None = None
) -> tuple[MemoryRecord, MemoryRecord]:
    """Settle a dispute: the winner returns to active, the loser is superseded by it (origin-notes §1.8).

    Both lose their transition block and record ``reason`` in ``state_reason``; the loser
    names the winner in ``superseded_by``. A ``state`` loser gets ``valid_to`` = the
    winner's start of valid time when the winner is a later value of the same kind (an
    older winner means the loser never held, so no interval is closed).

    Returns:
        The next versions of ``winner`` and ``loser``, in that order.

    Raises:
        LifecycleError: Empty reason, either side not transitional, or the two blocks do not
            name exactly these two records as their sides.
    """
    _require_reason(reason, winner)
    winner_block = _transition_block(winner)
    loser_block = _transition_block(loser)
    if winner.id == loser.id or set(winner_block.sides) != {winner.id, loser.id}:
        raise LifecycleError(
            f"the transition block names {list(winner_block.sides)}, not this pair",
            record_id=winner.id,
            field="transition.sides",
        )
    if loser_block.sides != winner_block.sides:
        raise LifecycleError(
            "the two sides carry different transition blocks", record_id=loser.id, field="transition.sides"
        )
    stamp = _now(now)
    valid_to = loser.valid_to
    if (
        valid_to is None
        and loser.effective_kind is Kind.STATE
        and winner.effective_kind is Kind.STATE
        and winner.effective_valid_from >= loser.effective_valid_from
    ):
        valid_to = winner.effective_valid_from
    won = winner.evolve(state=State.ACTIVE, transition=None, state_reason=reason, updated_at=stamp)
    lost = loser.evolve(
        state=State.SUPERSEDED,
        transition=None,
        superseded_by=winner.id,
        state_reason=reason,
        updated_at=stamp,
        valid_to=valid_to,
    )
    return won, lost


def archive(record: MemoryRecord, reason: str, *, now: datetime | None = None) -> MemoryRecord:
    """Retire a record for good: ``state=archived``, transition cleared (origin-notes §1.8).

    Legal from active, superseded and transitional; archival is terminal. Content is kept
    (erasure is a store operation, never a lifecycle move).

    Raises:
        LifecycleError: Empty reason, or the record is already archived.
    """
    _require_reason(reason, record)
    assert_transition(record, State.ARCHIVED)
    return record.evolve(state=State.ARCHIVED, transition=None, state_reason=reason, updated_at=_now(now))


def refresh_rule_flag(
    rule: MemoryRecord, evidence_records: Mapping[str, MemoryRecord], *, now: datetime | None = None
) -> MemoryRecord:
    """Flag a rule whose evidence is all archived or superseded; clear it otherwise (seed 001).

    Args:
        rule: The latest version of a rule.
        evidence_records: The latest version of every id in ``rule.evidence``, by id.
        now: The clock used for ``updated_at`` when the flag changes.

    Returns:
        ``rule`` itself (the same object) when the flag is already right, else the next
        version with ``flagged`` and ``flag_reason`` (:data:`RULE_FLAG_REASON` or ``None``).

    Raises:
        LifecycleError: ``rule`` is not a rule or is erased (field ``type``/``redacted``), or
            an evidence id is missing from ``evidence_records`` or maps to another record
            (field ``evidence``).
    """
    if rule.type is not RecordType.RULE:
        raise LifecycleError(
            f"only rules carry flags, not a {rule.type.value}", record_id=rule.id, field="type"
        )
    if rule.redacted:
        raise LifecycleError("an erased rule cannot change", record_id=rule.id, field="redacted")
    states = []
    for evidence_id in rule.evidence:
        evidence = evidence_records.get(evidence_id)
        if evidence is None or evidence.id != evidence_id:
            raise LifecycleError(
                f"no record supplied for evidence {evidence_id}", record_id=rule.id, field="evidence"
            )
        states.append(evidence.state)
    flagged = all(state in _DEAD_STATES for state in states)
    flag_reason = RULE_FLAG_REASON if flagged else None
    if rule.flagged == flagged and rule.flag_reason == flag_reason:
        return rule
    return rule.evolve(flagged=flagged, flag_reason=flag_reason, updated_at=_now(now))


# ---------------------------------------------------------------------- guards


def _now(now: datetime | None) -> datetime:
    return now if now is not None else utc_now()


def _require_reason(reason: str, record: MemoryRecord) -> None:
    if not isinstance(reason, str) or not reason.strip():
        raise LifecycleError(
            "a lifecycle move needs a non-empty reason", record_id=record.id, field="state_reason"
        )


def _transition_block(record: MemoryRecord) -> Transition:
    if record.state is not State.TRANSITIONAL or record.transition is None:
        raise LifecycleError(
            f"only a transitional record can be resolved, not a {record.state.value} one",
            record_id=record.id,
            field="state",
        )
    return record.transition


def _require_active(record: MemoryRecord, role: str) -> None:
    if record.state is not State.ACTIVE:
        raise LifecycleError(
            f"{role} must be active, not {record.state.value}", record_id=record.id, field="state"
        )


def _require_same_kind(old: MemoryRecord, successor: MemoryRecord) -> None:
    if old.effective_kind is not successor.effective_kind:
        raise LifecycleError(
            f"supersede never crosses kinds ({old.effective_kind.value} -> {successor.effective_kind.value})",
            record_id=successor.id,
            field="kind",
        )
    if old.effective_kind is not Kind.STATE:
        return
    if old.effective_namespace != successor.effective_namespace:
        raise LifecycleError(
            f"a state record is superseded only within its namespace {old.effective_namespace!r}",
            record_id=successor.id,
            field="namespace",
        )
    if old.subject != successor.subject:
        raise LifecycleError(
            f"a state record is superseded only by the identical subject {old.subject!r}",
            record_id=successor.id,
            field="subject",
        )

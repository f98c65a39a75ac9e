"""State records of a MemoryFile import: one current value per subject, as ``remember`` keeps it.

:func:`agent_memory.transfer.exchange.import_memory_file` writes most records as they are. A live
(active) ``state`` record whose ``namespace`` + ``subject`` already has a live value — held by
the target, or written earlier by the same import — is routed instead through
:func:`agent_memory.write.plan.plan_write` against that value and written by
:func:`agent_memory.write.plan.execute` (a logged intent, then the gate), exactly as a hand-written
value would be (DESIGN.md §7 and §9 "Write-time supersede"; issue 11 item 4):

- trusted and no older than the held value: it **supersedes** it at once;
- tainted (not vouched for by a trusted key) or older: it **disputes** it — both become
  transitional until a person resolves the pair, and neither is autoloaded;
- the subject is already disputed here, or the file's record is itself one side of the file's
  own dispute: it is **held back** (not written, the reason reported; import the file again
  after resolving);
- the held value says the same words: nothing is written (**same value**).

Invariant: after an import, a subject never has two active values that it did not have before;
a file whose state records collide with nothing is written byte for byte as before, and a
second import of the same file writes nothing (ids are content addresses; a routed record
keeps its id, since lifecycle links are not part of the birth content).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from agent_memory.log.base import OperationLog
from agent_memory.records.record import Kind, MemoryRecord, State
from agent_memory.stores.base import RecordStore
from agent_memory.write.plan import LIVE_STATES, Plan, PlanKind, execute, live_key, plan_write, subject_key

__all__ = ["StatePlans", "plan_states", "write_routed"]


@dataclass(slots=True)
class StatePlans:
    """The decision for every record of one import.

    Attributes:
        plain: Records written as they are, in file order.
        routed: Supersede and dispute plans for state values that meet a live value, in file order.
        held_back: ``{record id: why}`` for state records not written (subject already disputed,
            or one side of the file's own dispute meeting a held value).
        same_value: ``{record id: held id}`` for state records whose words are already the
            live value of their subject.
    """

    plain: list[MemoryRecord] = field(default_factory=list)
    routed: list[Plan] = field(default_factory=list)
    held_back: dict[str, str] = field(default_factory=dict)
    same_value: dict[str, str] = field(default_factory=dict)


def plan_states(store: RecordStore, records: Sequence[MemoryRecord], written: Collection[str]) -> StatePlans:
    """Decide, without writing, how each of ``records`` (new ids, file order) is written.

    Args:
        store: The target, read for the live value of each subject the file's state records name.
        records: The records to import (already tainted, screened and checked).
        written: Ids of every record that will exist once the plain records are written (the
            target's evidence check: a routed record's evidence must be among them or held).

    Returns:
        The plans; a record is in exactly one of ``plain``, ``routed``, ``held_back``, ``same_value``.
    """
    plans = StatePlans()
    live: dict[tuple[str, str], list[MemoryRecord]] = {}
    disputed: set[tuple[str, str]] = set()
    for record in records:
        key = subject_key(record)
        if key is None or record.state not in LIVE_STATES:
            plans.plain.append(record)
            continue
        if key not in live:
            namespace, subject = key
            held = store.list(kind=Kind.STATE, subject=subject, namespace=namespace)
            live[key] = [r for r in held if r.state in LIVE_STATES]
            if any(r.state is State.TRANSITIONAL for r in live[key]):
                disputed.add(key)
        sides = set(record.transition.sides) if record.transition is not None else set()
        others = [r for r in live[key] if r.id not in sides]
        if not others:
            plans.plain.append(record)  # the subject's first value here (or its own dispute pair)
            live[key].append(record)
            continue
        why = _held_back(record, key, disputed, store, written)
        if why:
            plans.held_back[record.id] = why
            continue
        current = max(others, key=lambda r: (r.effective_valid_from, r.id))
        duplicate = next((r for r in others if live_key(r) == live_key(record)), None)
        # A created record carries no lifecycle links: the file's own link to an older value
        # gives way to the one this Home decides (that value's superseded_by still names it).
        plan = plan_write(record.evolve(supersedes=None) if record.supersedes else record, duplicate, current)
        if plan.kind is PlanKind.DEDUP and plan.other is not None:
            plans.same_value[record.id] = plan.other.id
        elif plan.kind is PlanKind.PENDING:
            plans.held_back[record.id] = plan.reason
        else:
            plans.routed.append(plan)
            live[key] = [r for r in live[key] if r.id != current.id] + [plan.record]
            if plan.kind is PlanKind.DISPUTE:
                disputed.add(key)
    return plans


def _held_back(
    record: MemoryRecord,
    key: tuple[str, str],
    disputed: set[tuple[str, str]],
    store: RecordStore,
    written: Collection[str],
) -> str:
    if record.state is State.TRANSITIONAL:
        return f"one side of the file's own dispute over subject {key[1]}, which already has a value here"
    if key in disputed:
        return f"subject {key[1]} is already disputed here: resolve it, then import again"
    missing = [e for e in record.evidence if e not in written and not store.contains(e)]
    if missing:
        return f"its evidence {missing[0]} is neither held nor in the file"
    return ""


def write_routed(
    plans: Sequence[Plan],
    store: RecordStore,
    log: OperationLog | None,
    *,
    actor: str,
    now: datetime,
    sign: Callable[[MemoryRecord], MemoryRecord] | None = None,
) -> list[MemoryRecord]:
    """Write each supersede or dispute plan through :func:`~agent_memory.write.plan.execute`.

    ``sign`` signs each version the store did not get signed (the held record's next version,
    which a Home that signs would otherwise refuse on its verified read path).

    Each write logs an ``intent`` first and ``intent-done`` after, so a crash between its two
    puts is rolled forward on the next open. Without a ``log`` (a bare store) the two steps are
    journaled nowhere: a private in-memory log stands in.

    Returns:
        Every version written, in write order.

    Raises:
        ProposalError, LifecycleError: The gate refuses a plan because the target changed
            since it was planned; the plans before it are written, none after.
    """
    from agent_memory.log.inmemory import MemoryLog

    journal: OperationLog = log if log is not None else MemoryLog()
    written: list[MemoryRecord] = []
    for plan in plans:
        written += execute(plan, store, journal, actor=actor, now=now, sign=sign)
    return written

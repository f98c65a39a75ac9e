"""Withdrawal controls carried through MemoryFiles: the anti-resurrection rule for export and import.

Seed 000 §12.2: "backup, export, migration, and replication preserve the applicable control
event with the affected content, so a target or returning replica applies it before
exposure"; §21 item 20: keep the controls with retained content "or fail closed".

- A plain export holds only exposed records and no controls. ``include_withdrawn`` exports
  every record plus every control of the log under the file's ``withdrawal_controls`` key
  (:data:`EXTRA_KEY`; signed with the file). Only readers of ours apply it: an
  ``fg-agent-memory`` 0.1 reader keeps the key in its ``extra`` and ignores it.
- An import reads the file's controls strictly and appends them to the target's log before
  any record is written. A target without a log cannot keep them and refuses the file.
- Import never lets another party lift a withdrawal: an imported reinstatement is applied only
  when the withdrawal it names came in the same file, or from an earlier verified file by
  the same signer; one that would lift a withdrawal decided here, or one from an unverified
  file, is kept out (and reported), so its scope stays excluded.
- A control already here (same action, scope, reason, decider and time, under its id or the
  id it arrived with) is skipped; a control whose id is taken here by another is renumbered
  (next free ``NNN`` of its day) and the ``supersedes`` of later imported controls follow.
  The log event of an imported control names its origin (file agent, original id).
- Migration (:func:`plan_carry`, :func:`apply_carry`) carries every control of the source's
  log, in log order with its ``supersedes`` chain, into the target's log *before* any record
  is copied, by the same rules, the source standing in for the file's signer; a target
  without a log (a plain ``notes:`` or ``json:`` folder) cannot keep them, so a source with a
  withdrawal in force is refused there before anything is opened or written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent_memory.errors import RecordError, StoreError
from agent_memory.governance.controls import WithdrawalControl, next_withdrawal_id, resolve
from agent_memory.log.base import LogEntry, OperationLog
from agent_memory.records.memory_file import MemoryFile

__all__ = [
    "EXTRA_KEY",
    "ControlImport",
    "append_control",
    "apply_carry",
    "plan_carry",
    "plan_control_import",
    "read_file_controls",
]

EXTRA_KEY = "withdrawal_controls"


def append_control(
    log: OperationLog,
    control: WithdrawalControl,
    *,
    actor: str,
    origin: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> LogEntry:
    """Append ``control`` as a ``withdraw`` / ``reinstate`` event (ids and refs only, never content).

    The event's ``record_ids`` are the withdrawal id and the scope's record ids; its details
    are ``{"control": <wire object>}`` plus ``origin`` for an imported control.

    Raises:
        LogError: The log refuses the event; nothing is appended.
    """
    details: dict[str, Any] = {"control": control.to_wire()}
    if origin:
        details["origin"] = dict(origin)
    return log.append(
        control.action,
        actor=actor,
        record_ids=(control.withdrawal_id, *control.scope.memory_item_ids),
        details=details,
        now=now,
    )


def read_file_controls(memory_file: MemoryFile, *, path: str | None = None) -> list[WithdrawalControl]:
    """Return the controls a MemoryFile carries under :data:`EXTRA_KEY` (``[]`` when it has none).

    Raises:
        RecordError: The key is not an array of valid controls (path and
            ``withdrawal_controls[i].<field>`` named).
    """
    raw = memory_file.extra.get(EXTRA_KEY)
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise RecordError("must be an array of withdrawal-control-v1 records", path=path, field=EXTRA_KEY)
    controls = []
    for i, value in enumerate(raw):
        try:
            controls.append(WithdrawalControl.from_wire(value, field=f"{EXTRA_KEY}[{i}]"))
        except RecordError as exc:
            raise exc.located(path=path) from None
    return controls


@dataclass(slots=True)
class ControlImport:
    """What an import does with a file's controls (planned before anything is written).

    Attributes:
        to_append: ``(control as it will be stored, origin)`` in file order.
        added: The stored ids of the controls to append.
        skipped: File ids of controls already here.
        renamed: ``{file id: stored id}`` for controls renumbered because the id was taken.
        refused: ``{file id: why}`` for reinstatements kept out (their scope stays excluded).
    """

    to_append: list[tuple[WithdrawalControl, dict[str, Any]]] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)


def _same_event(a: WithdrawalControl, b: WithdrawalControl) -> bool:
    return (a.action, a.scope, a.reason, a.decided_by, a.decided_at) == (
        b.action,
        b.scope,
        b.reason,
        b.decided_by,
        b.decided_at,
    )


def plan_control_import(
    local: Sequence[tuple[LogEntry, WithdrawalControl]],
    incoming: Sequence[WithdrawalControl],
    *,
    file_agent: str | None,
    verified: bool,
    path: str | None = None,
) -> ControlImport:
    """Decide how a file's controls join this Home's log (see the module docstring for the rules).

    Args:
        local: This Home's controls with their log events (:meth:`Gate.entries`).
        incoming: The file's controls, in file order.
        file_agent: The file's ``agent`` (its signer).
        verified: Whether the file's signatures were checked.
        path: The file, named in errors.

    Raises:
        RecordError: A reinstatement naming a withdrawal that is neither in the file before
            it nor here, or one whose scope differs from that withdrawal's (refused: nothing
            is written).
    """
    plan = ControlImport()
    # stored id -> (control, origin agent or None when decided here, came in this file)
    known: dict[str, tuple[WithdrawalControl, str | None, bool]] = {}
    arrived_as: dict[str, str] = {}  # id a control had in the file it came from -> stored id
    for entry, control in local:
        origin = entry.details.get("origin")
        if not isinstance(origin, dict):
            known[control.withdrawal_id] = (control, None, False)
            continue
        known[control.withdrawal_id] = (control, str(origin.get("agent") or "unsigned"), False)
        if isinstance(origin.get("withdrawal_id"), str):
            arrived_as[origin["withdrawal_id"]] = control.withdrawal_id
    mapping: dict[str, str | None] = {}
    for i, control in enumerate(incoming):
        where = f"{EXTRA_KEY}[{i}]"
        here = _already_here(control, known, arrived_as)
        if here is not None:
            mapping[control.withdrawal_id] = here
            plan.skipped.append(control.withdrawal_id)
            continue
        supersedes = control.supersedes
        if supersedes is not None:
            supersedes = mapping.get(supersedes, supersedes)
        if control.action == "reinstate":
            why = _reinstatement_refused(control, supersedes, known, file_agent, verified, where, path)
            if why:
                mapping[control.withdrawal_id] = None
                plan.refused[control.withdrawal_id] = why
                continue
        stored_id = control.withdrawal_id
        if stored_id in known:
            stored_id = next_withdrawal_id(known, control.day)
            plan.renamed[control.withdrawal_id] = stored_id
        stored = dataclasses.replace(control, withdrawal_id=stored_id, supersedes=supersedes)
        origin = {"agent": file_agent, "withdrawal_id": control.withdrawal_id, "path": path}
        plan.to_append.append((stored, origin))
        plan.added.append(stored_id)
        known[stored_id] = (stored, file_agent or "unsigned", True)
        mapping[control.withdrawal_id] = stored_id
    return plan


def _already_here(
    control: WithdrawalControl,
    known: Mapping[str, tuple[WithdrawalControl, str | None, bool]],
    arrived_as: Mapping[str, str],
) -> str | None:
    for candidate in (control.withdrawal_id, arrived_as.get(control.withdrawal_id)):
        if candidate is not None and candidate in known and _same_event(known[candidate][0], control):
            return candidate
    return None


def _reinstatement_refused(
    control: WithdrawalControl,
    supersedes: str | None,
    known: Mapping[str, tuple[WithdrawalControl, str | None, bool]],
    file_agent: str | None,
    verified: bool,
    where: str,
    path: str | None,
) -> str:
    if supersedes is None:
        return f"it names {control.supersedes}, a control this import kept out"
    if supersedes not in known:
        raise RecordError(
            f"reinstates {control.supersedes}, a withdrawal neither in the file before it nor here",
            path=path,
            field=f"{where}.supersedes",
        )
    target, agent, same_file = known[supersedes]
    if not target.withdraws or target.scope != control.scope:
        raise RecordError(
            f"refused: a reinstatement must name a withdrawal of its exact scope; {control.supersedes} "
            f"is a {target.action} of {target.scope.describe()}",
            path=path,
            field=f"{where}.scope",
        )
    if same_file:
        return ""
    if agent is None:
        return f"it would lift {supersedes}, a withdrawal this Home decided (reinstate it here)"
    if not verified or agent != file_agent:
        return f"it would lift {supersedes}, a withdrawal imported from another signer or unverified"
    return ""


def plan_carry(
    source_log: OperationLog | None, target_log: OperationLog | None, *, origin: str, target: str = ""
) -> ControlImport:
    """Plan carrying every control of ``source_log`` into ``target_log`` (seed 000 §12.2, §21 item 20).

    Args:
        source_log: The log of the store records are copied from (``None``: it has none).
        target_log: The log of the store they are copied to (``None``: it cannot keep controls).
        origin: Names the source in each carried control's ``origin`` (no password).
        target: The target as shown to people, for the refusal message.

    Returns:
        The plan (:class:`ControlImport`); empty when the source has no control, or none in
        force while the target has no log (then nothing it would carry changes exposure).

    Raises:
        StoreError: A withdrawal is in force in the source and the target has no log (fail
            closed: nothing is written).
        LogError: A control event of either log is malformed.
        RecordError: A source reinstatement names a withdrawal the source does not hold.
    """
    from agent_memory.governance.gate import log_controls

    incoming = [control for _, control in log_controls(source_log)] if source_log is not None else []
    if not incoming:
        return ControlImport()
    if target_log is None:
        in_force = resolve(incoming).in_force()
        if in_force:
            ids = ", ".join(control.withdrawal_id for control in in_force)
            raise StoreError(
                f"the source has withdrawals in force ({ids}) and {target or 'the target'} has no "
                "operation log to keep them, so nothing was copied (fail closed: withdrawn records "
                "must not be exposed there)",
                hint="migrate into a Home, sqlite: or postgresql: (they keep controls), or reinstate first",
            )
        return ControlImport()
    return plan_control_import(log_controls(target_log), incoming, file_agent=origin, verified=True)


def apply_carry(plan: ControlImport, target_log: OperationLog, *, actor: str, now: datetime | None) -> None:
    """Append the planned controls to ``target_log`` in order (origin recorded on each event).

    Raises:
        LogError: The log refuses an event; those before it stay appended.
    """
    for control, origin in plan.to_append:
        append_control(target_log, control, actor=actor, origin=origin, now=now)

"""``forget``: the seed 000 §12.1 router — withdraw, never erase, and say what could not be done.

A "forget" request crosses three governance surfaces; before claiming anything the router
reports each separately in the five-line *surface receipt*::

    Context / Workspace: …
    Original project: …
    Temporary exploration workspace: …
    Promoted / derived artifacts: …
    Memory: …

Invariants:

- it never erases and never says "erased" or "forgotten": the Memory action is a §12.2
  withdrawal (reversible, by :meth:`Memory.withdraw`, needing the ``withdraw`` grant) or,
  when nothing in the scope entered Memory, *non-admission* (nothing is written);
- the scope is exactly the selectors given: a ``namespaces`` selector covers only records of
  those namespaces (and what derives from them), so other users' and agents' memories stay
  exposed and unchanged;
- the surfaces it cannot act on (model context, project files, temporary workspaces) are
  reported as not done, and promoted rules in ``conventions.md`` that came from the scope
  are named as still standing (Memory withdrawal does not revoke them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agent_memory.governance.controls import WithdrawalScope, plan_withdrawal
from agent_memory.governance.gate import GateView

if TYPE_CHECKING:
    from agent_memory.memory import Memory

__all__ = ["SURFACES", "ForgetReceipt", "forget"]

SURFACES: tuple[str, ...] = (
    "Context / Workspace",
    "Original project",
    "Temporary exploration workspace",
    "Promoted / derived artifacts",
    "Memory",
)
"""The five surfaces of the §12.1 receipt, in its order."""

_CONTEXT = (
    "not erased: agent-memory cannot remove tokens already in a model's context; "
    "stop relying on this scope in the current conversation"
)
_PROJECT = (
    "not inspected: project files, commits, branches and pushes are outside Memory and are not undone; "
    "review them with their own tools"
)
_TEMPORARY = (
    "not inspected: a temporary workspace or worktree is outside Memory; dispose of it under its own "
    "rules (unique uncommitted work needs confirmation)"
)


@dataclass(frozen=True, slots=True)
class ForgetReceipt:
    """What a forget request did on each surface (seed 000 §12.1).

    Attributes:
        lines: ``{surface: text}`` for each of :data:`SURFACES`.
        withdrawal_id: The withdrawal written (``memwd-…``), or ``None`` for non-admission.
        covered: Ids newly excluded by the withdrawal (the scope and what derives from it).
        promoted: Promoted artifacts that name a covered record (``conventions.md``, proposals).
    """

    lines: dict[str, str]
    withdrawal_id: str | None
    covered: tuple[str, ...]
    promoted: tuple[str, ...]

    def render(self) -> str:
        """Return the five-line receipt, one ``Surface: text`` line each, newline-terminated."""
        return "".join(f"{surface}: {self.lines[surface]}\n" for surface in SURFACES)

    def to_json(self) -> dict[str, Any]:
        """Return ``{surfaces: {…}, withdrawal_id, covered, promoted, erased: false}``."""
        return {
            "surfaces": dict(self.lines),
            "withdrawal_id": self.withdrawal_id,
            "covered": list(self.covered),
            "promoted": list(self.promoted),
            "erased": False,
        }


def forget(
    memory: Memory,
    *,
    memory_item_ids: Iterable[str] = (),
    archive_refs: Iterable[str] = (),
    source_or_run_refs: Iterable[str] = (),
    namespaces: Iterable[str] = (),
    reason: str = "forget-request",
    now: datetime | None = None,
) -> ForgetReceipt:
    """Route a forget request: withdraw what entered Memory and report every surface (seed 000 §12.1).

    Args:
        memory: The Memory to act on.
        memory_item_ids: Record ids (``mem:…``).
        archive_refs: Archive files or anchors.
        source_or_run_refs: Source or run refs.
        namespaces: Namespaces (``user:u1``); only their records are covered.
        reason: Why (not a verdict on truth).
        now: The clock.

    Returns:
        The surface receipt. Nothing is erased on any path.

    Raises:
        AuthorityError: The actor holds no ``withdraw`` grant (nothing written).
        RecordError: No selector or a malformed one.
        RecordNotFound: A record id the Home does not hold.
        LifecycleError: This exact scope is already withdrawn.
    """
    scope = WithdrawalScope(
        tuple(memory_item_ids), tuple(archive_refs), tuple(source_or_run_refs), tuple(namespaces)
    )
    memory.actors.require(memory.actor, "withdraw", action="forget a scope")
    stamp = memory.writer.clock(now)
    for record_id in scope.memory_item_ids:
        memory.get(record_id)
    candidate = plan_withdrawal(
        memory.gate.state(), scope, reason=reason, actor=memory.actor, now=stamp, zone=memory.zone
    )
    current, hypothetical = memory.gate.view(), GateView([candidate], memory.store.get)
    covered = tuple(
        sorted(
            r.id
            for r in memory.store.list()
            if not r.redacted and current.is_exposed(r) and not hypothetical.is_exposed(r)
        )
    )
    promoted = _promoted(memory, covered)
    lines = {
        "Context / Workspace": _CONTEXT,
        "Original project": _PROJECT,
        "Temporary exploration workspace": _TEMPORARY,
    }
    if promoted:
        lines["Promoted / derived artifacts"] = (
            f"partial: {', '.join(promoted)} still carry rules or proposals from this scope; "
            "Memory withdrawal does not revoke them: revise them under their owner's authority"
        )
    else:
        lines["Promoted / derived artifacts"] = "none known: no promoted rule or proposal names this scope"
    if not covered:
        lines["Memory"] = "no capture: nothing exposed in this scope entered Memory; nothing was written"
        return ForgetReceipt(lines, None, covered, promoted)
    control = memory.withdraw(
        memory_item_ids=scope.memory_item_ids,
        archive_refs=scope.archive_refs,
        source_or_run_refs=scope.source_or_run_refs,
        namespaces=scope.namespaces,
        reason=reason,
        now=stamp,
    )
    lines["Memory"] = (
        f"withdrawn (reversible), not erased: {control.withdrawal_id} excludes {len(covered)} record(s) "
        f"from recall, views and export; the content is retained and recoverable with "
        f"`agent-memory reinstate {control.withdrawal_id}`; erasure needs `agent-memory erase`"
    )
    if memory.views_note:
        lines["Memory"] += f"; {memory.views_note}"
    return ForgetReceipt(lines, control.withdrawal_id, covered, promoted)


def _promoted(memory: Memory, covered: tuple[str, ...]) -> tuple[str, ...]:
    """Return the Home files of promoted artifacts that name a covered record id."""
    home = memory.home
    if home is None or not covered:
        return ()
    candidates = [
        home.root / "conventions.md",
        *sorted((home.root / "proposals" / "promotions").glob("*.md")),
    ]
    found = []
    for path in candidates:
        if path.is_file():
            text = path.read_text("utf-8", errors="replace")
            if any(record_id in text for record_id in covered):
                found.append(path.relative_to(home.root).as_posix())
    return tuple(found)

"""``forget``'s receipt: the seed 000 §12.1 router withdraws, never erases, and says what could not be done.

The router is :meth:`memory.withdrawals.forget <.withdrawals.Withdrawals.forget>`; this module
holds what it reports.

A "forget" request crosses three governance surfaces; before claiming anything the router
reports each separately in the five-line *surface receipt*::

    Context / Workspace: …
    Original project: …
    Temporary exploration workspace: …
    Promoted / derived artifacts: …
    Memory: …

Invariants:

- it never erases and never says "erased" or "forgotten": the Memory action is a §12.2
  withdrawal (reversible, by :meth:`.Withdrawals.withdraw`, needing the ``withdraw`` grant) or,
  when nothing in the scope entered Memory, *non-admission* (nothing is written);
- the scope is exactly the selectors given: a ``namespaces`` selector covers only records of
  those namespaces (and what derives from them), so other users' and agents' memories stay
  exposed and unchanged;
- the surfaces it cannot act on (model context, project files, temporary workspaces) are
  reported as not done, and promoted rules in ``conventions.md`` that came from the scope
  are named as still standing (Memory withdrawal does not revoke them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_memory.home import Home

__all__ = ["SURFACES", "ForgetReceipt", "forget_receipt", "promoted_in"]

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


def forget_receipt(
    covered: tuple[str, ...],
    promoted: tuple[str, ...],
    withdrawal_id: str | None = None,
    views_note: str | None = None,
) -> ForgetReceipt:
    """Return the surface receipt of a forget request.

    Args:
        covered: Ids the withdrawal newly excludes; none means non-admission (nothing written).
        promoted: Promoted artifacts that name a covered record (:func:`promoted_in`).
        withdrawal_id: The withdrawal written, when ``covered`` is not empty.
        views_note: What was done to views edited by hand, if anything.
    """
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
    if not covered or withdrawal_id is None:
        lines["Memory"] = "no capture: nothing exposed in this scope entered Memory; nothing was written"
        return ForgetReceipt(lines, None, covered, promoted)
    lines["Memory"] = (
        f"withdrawn (reversible), not erased: {withdrawal_id} excludes {len(covered)} record(s) "
        f"from recall, views and export; the content is retained and recoverable with "
        f"`agent-memory reinstate {withdrawal_id}`; erasure needs `agent-memory erase`"
    )
    if views_note:
        lines["Memory"] += f"; {views_note}"
    return ForgetReceipt(lines, withdrawal_id, covered, promoted)


def promoted_in(home: Home | None, covered: tuple[str, ...]) -> tuple[str, ...]:
    """Return the Home files of promoted artifacts (``conventions.md``, proposals) naming a covered id."""
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

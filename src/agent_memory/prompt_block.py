"""The text block recall hands to an agent: every item as dated, sourced testimony, conflicts visible.

Shape (seed 001 ``as_prompt_block`` extended by seed 000 §15.2 and §15.2.1):

- a header ``Relevant memories (query: Q):`` and ``(no relevant memories)`` when empty;
- one line per record: ``- [valid date] (kind[ subject]) body Source: ref [suffixes]`` where the
  suffixes are the origin's (``[disputed: reason]``, ``[superseded — kept for history]``,
  ``[archived]``, ``[flagged: reason]``) plus ours (``[quarantined: …]``, ``[stale]``);
- the two sides of a dispute are grouped under ``Conflict on `subject: S`:`` (or
  ``Conflict (knowledge):``), both rows dated, with a closing line that neither is settled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_memory.records import MemoryRecord, State

if TYPE_CHECKING:
    from agent_memory.recall import RecalledRecord, RecallResult

__all__ = ["render"]


def render(result: RecallResult) -> str:
    """Render a recall result as the prompt block described in the module docstring."""
    lines = [f"Relevant memories (query: {result.query}):"]
    if not result.records:
        lines.append("(no relevant memories)")
        lines.extend(f"  note: {note}" for note in result.notes)
        return "\n".join(lines)
    by_id = {item.record.id: item for item in result.records}
    done: set[str] = set()
    for item in result.records:
        record = item.record
        if record.id in done:
            continue
        done.add(record.id)
        if record.transition is None:
            lines.append(_line(item))
            continue
        sides = [by_id[s] for s in record.transition.sides if s in by_id]
        done.update(side.record.id for side in sides)
        lines.append(_conflict_header(record))
        lines.extend("  " + _line(side) for side in sides)
        lines.append(
            f"  Neither side is settled ({record.transition.reason}): cite both; do not act on either "
            "without checking. A person resolves it with `agent-memory resolve WINNER LOSER`."
        )
    return "\n".join(lines)


def _conflict_header(record: MemoryRecord) -> str:
    if record.subject:
        return f"Conflict on `subject: {record.subject}`:"
    return "Conflict (knowledge):"


def _line(item: RecalledRecord) -> str:
    record = item.record
    date = record.effective_valid_from.date().isoformat()
    label = record.effective_kind.value + (f" {record.subject}" if record.subject else "")
    source = f" Source: {record.provenance.ref}" if record.provenance.ref else ""
    return f"- [{date}] ({label}) {record.body}{source}{_suffixes(item)}"


def _suffixes(item: RecalledRecord) -> str:
    record = item.record
    parts = []
    if record.transition is not None:
        parts.append(f"[disputed: {record.transition.reason}]")
    if record.state is State.SUPERSEDED:
        parts.append("[superseded — kept for history]")
    if record.state is State.ARCHIVED:
        parts.append("[archived]")
    if record.flagged:
        parts.append(f"[flagged: {record.flag_reason}]")
    if item.review == "quarantined":
        parts.append(f"[quarantined: {', '.join(record.taint or ())}, unreviewed]")
    elif item.review in ("stale", "rejected"):
        parts.append(f"[{item.review}]")
    return (" " + " ".join(parts)) if parts else ""

"""The text block recall hands to an agent: every item as dated, sourced testimony, conflicts visible.

Shape (seed 001 ``as_prompt_block`` extended by seed 000 §15.2 and §15.2.1):

- a header ``Relevant memories (query: Q):`` (the query on one line), then
  ``(no relevant memories)`` and the result's notes when nothing was recalled;
- one row per record, in rank order::

    - [valid date] (kind[ subject][, type]) body[ —] Source: ref ← `Status: state`[, review: …] [suffixes]

  where the date is the valid-time start (``[from → to]`` once the fact stopped holding),
  the review part says ``quarantined (taint: …)``, ``marked stale``, ``rejected`` or
  ``approved`` (nothing for an untainted, unreviewed record), a superseded row names the
  record that replaced it, and the suffixes are the origin's (``[disputed: reason]``,
  ``[superseded — kept for history]``, ``[archived]``, ``[flagged: reason]``);
- the two sides of a dispute are grouped at the rank of the better one under
  ``Conflict on `subject: S`:`` (or ``Conflict (knowledge):``), both rows indented and
  dated, followed by a line saying neither is settled and how a person settles it;
- a body of several lines keeps them, indented under its row, so no body line can pass
  for a row or a header of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agent_memory.governance.review_book import is_stale
from agent_memory.records.record import MemoryRecord, State

__all__ = ["Shown", "ShownResult", "render", "source_separator"]

_SENTENCE_ENDS = (".", "!", "?", ":", ";", "…", ")", '"', "”", "'", "`", "]")


def source_separator(body: str) -> str:
    """Return what goes between a body and ``Source:`` in a row: a space after a sentence, else `` — ``.

    So a body without a full stop never runs into its source (``We ship on Fridays — Source: …``).
    """
    return " " if body.rstrip().endswith(_SENTENCE_ENDS) else " — "


class Shown(Protocol):
    """One recalled row as the block reads it (:class:`~agent_memory.recall.select.Shown`)."""

    @property
    def record(self) -> MemoryRecord:
        """The record's version shown."""

    @property
    def review(self) -> str:
        """Its review state word (a :class:`~agent_memory.governance.review_book.ReviewState`)."""


class ShownResult(Protocol):
    """A recall result as the block reads it (:class:`~agent_memory.recall.select.RecallResult`)."""

    @property
    def query(self) -> str:
        """The question asked."""

    @property
    def records(self) -> Sequence[Shown]:
        """The rows, best first."""

    @property
    def notes(self) -> Sequence[str]:
        """Why nothing or less was recalled."""


def render(result: ShownResult) -> str:
    """Render a recall result as the prompt block described in the module docstring."""
    lines = [f"Relevant memories (query: {' '.join(result.query.split())}):"]
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
            lines.append(_row(item, ""))
            continue
        sides = [by_id[s] for s in record.transition.sides if s in by_id]
        missing = [s for s in record.transition.sides if s not in by_id]
        done.update(side.record.id for side in sides)
        lines.append(_conflict_header(record))
        lines.extend(_row(side, "  ") for side in sides)
        if missing:
            lines.append(f"  The other side ({', '.join(missing)}) cannot be shown.")
        lines.append(
            f"  Neither row is settled ({record.transition.reason}): cite both, and do not act on either "
            "as current without checking. If one of them is the current truth, ask a person to "
            "reconcile: `agent-memory resolve WINNER LOSER --reason …`."
        )
    return "\n".join(lines)


def _conflict_header(record: MemoryRecord) -> str:
    if record.subject:
        return f"Conflict on `subject: {record.subject}`:"
    return "Conflict (knowledge):"


def _row(item: Shown, indent: str) -> str:
    record = item.record
    start = record.effective_valid_from.date().isoformat()
    dates = f"{start} → {record.valid_to.date().isoformat()}" if record.valid_to else start
    label = record.kind_label
    body = record.body.replace("\n", "\n" + indent + "    ")
    lead = source_separator(record.body)
    source = f"{lead}Source: {record.provenance.ref or '(none recorded)'}"
    return f"{indent}- [{dates}] ({label}) {body}{source} ← {_status(item)}{_suffixes(record)}"


def _status(item: Shown) -> str:
    record = item.record
    status = f"`Status: {record.state.value}`"
    if record.state is State.SUPERSEDED and record.superseded_by:
        status += f" by {record.superseded_by}"
    review = []
    if item.review == "quarantined":
        review.append(f"quarantined (taint: {', '.join(record.taint or ())}; unreviewed)")
    elif item.review in ("rejected", "approved"):
        review.append(str(item.review))
    if is_stale(item.review):
        review.append("marked stale")
    return status + (f", review: {', '.join(review)}" if review else "")


def _suffixes(record: MemoryRecord) -> str:
    parts = []
    if record.transition is not None:
        parts.append(f"[disputed: {record.transition.reason}]")
    if record.state is State.SUPERSEDED:
        parts.append("[superseded — kept for history]")
    if record.state is State.ARCHIVED:
        parts.append("[archived]")
    if record.flagged:
        parts.append(f"[flagged: {record.flag_reason}]")
    return (" " + " ".join(parts)) if parts else ""

"""Corrections: a person's change to a note becomes a new record that supersedes it (DESIGN.md §3, §9).

A version file is never rewritten (DESIGN.md §3): a note corrected in ``$EDITOR``
(``agent-memory edit``) or edited by hand in ``notes/`` (``agent-memory sync``) is saved as a
*correction record* written through :meth:`Memory.supersede` — a ``state`` record is
superseded by its new value, a ``knowledge`` record by the corrected text — so the old text
stays in history and the change is logged like any other supersede.

Invariants:

- A correction carries every field of the record it corrects that a person did not change
  (:func:`carried_fields`), so correcting a typo does not lose tags, confidence, sources or
  evidence (the last two keep withdrawals that cover the old record covering the new one).
- From a hand-edited version file only the body and :data:`EDITABLE_FIELDS` are taken; a
  change to any other field (state, ids, times, provenance…) is refused with the field named,
  because those change only through the lifecycle commands.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from agent_memory.errors import RecordError
from agent_memory.records.record import MemoryRecord, State
from agent_memory.write.plan import normalize_text

if TYPE_CHECKING:
    from agent_memory.write.plan import RememberResult

__all__ = [
    "EDITABLE_FIELDS",
    "NoteEdit",
    "Writes",
    "carried_fields",
    "correct",
    "read_note_edit",
    "require_active",
    "split_note",
]

EDITABLE_FIELDS: tuple[str, ...] = ("type", "tags", "confidence", "epistemic_status")
"""Frontmatter fields a hand edit may change; the correction record takes their new values."""

_MISSING = object()


class Writes(Protocol):
    """What edit and sync write records through: an opened :class:`~agent_memory.memory.Memory`.

    ``remember`` and ``supersede`` take the Memory's arguments (``Memory.remember``,
    ``Memory.supersede``); ``close`` persists what was written and commits the Home.
    """

    @property
    def remember(self) -> Callable[..., RememberResult]:
        """``Memory.remember``."""
        ...

    @property
    def supersede(self) -> Callable[..., RememberResult]:
        """``Memory.supersede``."""
        ...

    def close(self) -> None:
        """``Memory.close``."""
        ...


@dataclass(frozen=True, slots=True)
class NoteEdit:
    """What a person changed in one version file.

    Attributes:
        body: The new text, NFC-normalised and stripped.
        changes: New values of :data:`EDITABLE_FIELDS` that differ from the original, as
            ``Memory.supersede`` keyword arguments (``type`` a word, ``tags`` a tuple,
            ``confidence`` a float in [0, 1], ``epistemic_status`` a word or ``None``).
        body_changed: Whether the text differs from the original's (after normalising).
    """

    body: str
    changes: dict[str, Any] = field(default_factory=dict)
    body_changed: bool = True

    @property
    def changed(self) -> bool:
        """True when the edit changes anything a correction would carry."""
        return self.body_changed or bool(self.changes)

    def describe(self) -> str:
        """Say what changed, e.g. ``body, tags``."""
        return ", ".join((["body"] if self.body_changed else []) + sorted(self.changes)) or "nothing"


def carried_fields(record: MemoryRecord) -> dict[str, Any]:
    """Return what a hand edit carries from ``record``, as ``Memory.supersede`` keyword arguments.

    :func:`~agent_memory.write.corrections.carried_fields` plus ``occurred_at`` and
    ``valid_from``: an edit says what was true all along, so it holds from the same valid time.
    """
    from agent_memory.write.corrections import carried_fields as kept

    return {**kept(record), "occurred_at": record.occurred_at, "valid_from": record.valid_from}


def correct(
    memory: Writes,
    record: MemoryRecord,
    text: str,
    *,
    source: str,
    reason: str,
    expected_version: int | None = None,
    changes: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> RememberResult:
    """Write the correction of ``record``: a new record of ``text`` that supersedes it.

    Args:
        memory: The opened porcelain of the Home.
        record: The latest version of the record corrected (must be ``active``).
        text: The corrected text.
        source: Where the correction came from (``provenance.ref`` of the new record).
        reason: Why (the old record's ``state_reason``).
        expected_version: The number of versions ``record`` had when the edit began; a
            change by another writer meanwhile is refused (``ProposalError``).
        changes: New values of :data:`EDITABLE_FIELDS` (others are carried from ``record``).
        now: The clock (aware); the current time by default.

    Returns:
        The result of :meth:`Memory.supersede` (``record_id`` is the correction's id).

    Raises:
        LifecycleError: ``record`` is not active (superseded, archived or disputed).
        ProposalError: ``expected_version`` does not match.
        RecordError: The text is empty or a field value is invalid; nothing is written.
    """
    require_active(record)
    fields = {**carried_fields(record), **(changes or {})}
    return memory.supersede(
        record.id, text, source=source, reason=reason, expected_version=expected_version, now=now, **fields
    )


def require_active(record: MemoryRecord) -> None:
    """Refuse to correct a record that is not active.

    Raises:
        RecordError: ``record`` is superseded (its successor named), archived or disputed.
    """
    if record.state is State.ACTIVE:
        return
    successor = f" by {record.superseded_by}" if record.superseded_by else ""
    raise RecordError(
        f"is {record.state.value}{successor}: only an active record can be corrected",
        record_id=record.id,
        field="state",
        hint="correct its live successor instead" if successor else "resolve the dispute first",
    )


def split_note(data: bytes, *, path: str) -> tuple[dict[str, Any], str]:
    """Return a note file's frontmatter fields and body, read as strictly as the note codec does.

    Unlike :func:`~agent_memory.records.note.load_note` this does not build a record, so a file
    whose body no longer matches its id can still be compared with what it was.

    Raises:
        RecordError: Not UTF-8, the fences are broken, or the YAML is malformed (``path`` named).
    """
    from agent_memory.records.note import read_frontmatter

    try:
        return read_frontmatter(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise RecordError(f"not UTF-8: invalid byte at offset {exc.start}", path=path) from None
    except RecordError as exc:
        raise exc.located(path=path) from None


def read_note_edit(original: MemoryRecord, data: bytes, *, path: str) -> NoteEdit:
    """Compare a hand-edited version file with the version it was and return the edit.

    Args:
        original: The version the file held before the edit.
        data: The file's bytes now.
        path: The file, named in every error.

    Raises:
        RecordError: The file is no longer a readable note, a field outside
            :data:`EDITABLE_FIELDS` (and ``body``) was changed (the first such field is
            named), an edited value is invalid, or the new body is empty.
    """
    fields, body = split_note(data, path=path)
    wire = original.to_wire()
    wire.pop("body")
    changed = sorted(k for k in {*wire, *fields} if wire.get(k, _MISSING) != fields.get(k, _MISSING))
    refused = [k for k in changed if k not in EDITABLE_FIELDS]
    if refused:
        raise RecordError(
            f"changed by hand: {', '.join(refused)}; only the body and "
            f"{', '.join(EDITABLE_FIELDS)} can be corrected by editing a note",
            path=path,
            record_id=original.id,
            field=refused[0],
            hint="undo that change (git checkout -- <file>), then use agent-memory supersede, "
            "archive or resolve for lifecycle changes",
        )
    text = normalize_text(body)
    candidate = _validated(original, fields, text, path)
    changes: dict[str, Any] = {}
    for name in changed:
        value = getattr(candidate, name)
        changes[name] = value.value if hasattr(value, "value") else value
    return NoteEdit(text, changes, body_changed=text != _normal(original.body))


def _normal(text: str) -> str:
    """Normalise as :func:`normalize_text` does, but let an empty text be empty."""
    return unicodedata.normalize("NFC", text).strip()


def _validated(original: MemoryRecord, fields: Mapping[str, Any], body: str, path: str) -> MemoryRecord:
    """Check the edited values by building a record of them (a new id, no signature)."""
    wire = {
        **original.to_wire(),
        **{name: fields[name] for name in EDITABLE_FIELDS if name in fields},
        "body": body,
        "id": "",
        "signature": "",
        "signed_by": None,
    }
    for name in EDITABLE_FIELDS:
        if name not in fields:
            wire.pop(name, None)
    if wire.get("state") != State.ACTIVE.value:
        # Validate the edited values only; the lifecycle fields are checked against the original.
        wire.update(state="active", superseded_by=None, transition=None)
    try:
        return MemoryRecord.from_wire(wire, path=path)
    except RecordError as exc:
        raise exc.located(path=path, record_id=original.id) from None

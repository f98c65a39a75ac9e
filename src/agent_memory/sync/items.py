"""The report of ``agent-memory sync`` and its one creating step: a new Markdown file becomes a record.

:class:`SyncItem` is one line of the report (one file, one action); :class:`SyncReport`
collects them. :func:`new_file_step` plans a Markdown file dropped into ``notes/`` by a
person (or a merge): its text is remembered with the file's path as the source, its
optional YAML frontmatter giving the ``remember`` options of :data:`NEW_FILE_FIELDS`; the
file is removed only once the record is written (DESIGN.md §9 "Corrections").

Invariant: a file that cannot become a record is reported with the reason and left as it is;
a file that carries an ``id`` (a copy of a note version, e.g. a merge tool's backup) is never
turned into a second record.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_memory.errors import AgentMemoryError, RecordError

if TYPE_CHECKING:
    from agent_memory.sync.edit import Writes

__all__ = ["ACTIONS", "NEW_FILE_FIELDS", "SyncItem", "SyncReport", "new_file_step"]

ACTIONS: tuple[str, ...] = ("correct", "restore", "resolve", "create", "problem")
"""What sync does with a file, in report order of the counts."""

NEW_FILE_FIELDS: tuple[str, ...] = (
    "type",
    "kind",
    "subject",
    "tags",
    "namespace",
    "scope",
    "confidence",
    "occurred_at",
    "valid_from",
    "epistemic_status",
    "taint",
)
"""Frontmatter keys a new file in ``notes/`` may carry (the options of ``remember``)."""


@dataclass(frozen=True, slots=True)
class SyncItem:
    """What sync did (or, in a dry run, would do) with one file.

    Attributes:
        path: The file, relative to the Home (POSIX separators).
        action: One of :data:`ACTIONS`.
        detail: What was done, or why it could not be (for ``problem``).
        record_id: The record the file belongs to, when known.
        new_record_id: The record written (a correction or a new record), after a real run.
        hint: What a person can do about a problem.
    """

    path: str
    action: str
    detail: str
    record_id: str | None = None
    new_record_id: str | None = None
    hint: str | None = None

    def failed(self, exc: AgentMemoryError) -> SyncItem:
        """Return this item turned into a ``problem`` with the error that stopped it."""
        return replace(self, action="problem", detail=f"{self.action} failed: {exc}", hint=exc.hint)

    def to_json(self) -> dict[str, Any]:
        """Return ``{"path", "action", "detail", "record_id", "new_record_id", "hint"}``."""
        return {
            "path": self.path,
            "action": self.action,
            "detail": self.detail,
            "record_id": self.record_id,
            "new_record_id": self.new_record_id,
            "hint": self.hint,
        }


@dataclass(frozen=True, slots=True)
class SyncReport:
    """Every item of one sync run.

    Attributes:
        items: One per file found, in processing order.
        dry_run: Nothing was written.
        git: The Home is in a git work tree (committed bytes were available).
    """

    items: tuple[SyncItem, ...]
    dry_run: bool = False
    git: bool = False

    @property
    def ok(self) -> bool:
        """True when no item is a problem."""
        return all(item.action != "problem" for item in self.items)

    def counts(self) -> dict[str, int]:
        """Return ``{action: count}`` for every action in :data:`ACTIONS`."""
        return {action: sum(item.action == action for item in self.items) for action in ACTIONS}

    def to_json(self) -> dict[str, Any]:
        """Return ``{"ok", "dry_run", "git", "counts", "items": [...]}``."""
        return {
            "ok": self.ok,
            "dry_run": self.dry_run,
            "git": self.git,
            "counts": self.counts(),
            "items": [item.to_json() for item in self.items],
        }


def new_file_step(
    rel: str,
    path: Path,
    memory: Callable[[], Writes],
    log: Callable[[tuple[str, ...], dict[str, Any]], None],
    now: datetime | None,
    *,
    namespace: str = "default",
) -> tuple[SyncItem, Callable[[], SyncItem] | None]:
    """Plan turning the Markdown file ``path`` into a new record.

    Args:
        rel: ``path`` relative to the Home: the new record's source.
        path: The file.
        memory: Returns the opened porcelain (opened only when the step runs).
        log: Appends a ``sync`` event (record ids, details).
        now: Clock of the new record.
        namespace: The record's namespace unless the frontmatter names one.

    Returns:
        The planned item and the action (``None`` when the file is a problem).
    """
    try:
        text, options = _read_new_file(path, rel)
        options.setdefault("namespace", namespace)
        _validate(text, options, rel)
    except (AgentMemoryError, OSError) as exc:
        reason = exc.detail if isinstance(exc, AgentMemoryError) else f"cannot be read: {exc.strerror}"
        hint = exc.hint if isinstance(exc, AgentMemoryError) else None
        return SyncItem(rel, "problem", reason, hint=hint), None
    item = SyncItem(rel, "create", "a new Markdown file: remembered as a new record, then removed")

    def apply() -> SyncItem:
        result = memory().remember(text, source=rel, now=now, **options)
        path.unlink()
        log((result.record_id,), {"action": "create", "path": rel})
        notes = [
            "an identical record existed (deduped)" if result.deduped else "",
            f"superseded {result.superseded}" if result.superseded else "",
            f"disputes {result.disputed_with}" if result.disputed_with else "",
            "pending review" if result.pending else "",
            "quarantined until reviewed" if result.quarantined else "",
        ]
        detail = "; ".join(["remembered, the file removed", *[n for n in notes if n]])
        return replace(item, detail=detail, new_record_id=result.record_id)

    return item, apply


def _read_new_file(path: Path, rel: str) -> tuple[str, dict[str, Any]]:
    from agent_memory.sync.edit import split_note

    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as file:
        data = file.read()
    if not data.startswith(b"---\n"):
        try:
            return data.decode("utf-8"), {}
        except UnicodeDecodeError as exc:
            raise RecordError(f"not UTF-8: invalid byte at offset {exc.start}", path=rel) from None
    fields, body = split_note(data, path=rel)
    if "id" in fields:
        raise RecordError(
            "holds an id: a copy of a note version, not a new note",
            path=rel,
            hint="move it out of notes/ (agent-memory import reads MemoryFiles and note folders)",
        )
    unknown = sorted(set(fields) - set(NEW_FILE_FIELDS))
    if unknown:
        raise RecordError(
            f"unknown frontmatter keys {unknown} (allowed: {', '.join(NEW_FILE_FIELDS)})",
            path=rel,
            field=unknown[0],
        )
    options = dict(fields)
    if isinstance(options.get("confidence"), str):
        try:
            options["confidence"] = float(options["confidence"])
        except ValueError:
            raise RecordError("must be a number in [0, 1]", path=rel, field="confidence") from None
    for name in ("occurred_at", "valid_from"):
        if name in options:
            from agent_memory.records.wire import parse_timestamp

            options[name] = parse_timestamp(options[name], name)
    return body, options


def _validate(text: str, options: dict[str, Any], rel: str) -> None:
    """Build the record ``remember`` would build (without writing) so a dry run finds bad values."""
    from agent_memory.records.record import MemoryRecord, Provenance
    from agent_memory.records.wire import utc_now
    from agent_memory.write.plan import normalize_text

    fields = {k: v for k, v in options.items() if k != "type"}
    try:
        MemoryRecord.create(
            type=str(options.get("type", "fact")),
            body=normalize_text(text),
            provenance=Provenance(kind="file", ref=rel),
            created_at=utc_now(),
            **fields,
        )
    except RecordError as exc:
        raise exc.located(path=rel) from None

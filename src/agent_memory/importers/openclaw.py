"""Read an OpenClaw agent workspace's memory into records (issue 9: ``--from openclaw``).

OpenClaw keeps memory as plain Markdown in the agent workspace (``~/.openclaw/workspace`` by
default; docs.openclaw.ai, "Memory" and "Agent workspace"):

- ``MEMORY.md`` — curated long-term memory: durable facts, preferences, decisions, usually
  bullets under ``##`` headings. Each top-level bullet (nested lines included) and each run
  of other blocks becomes a ``fact``, prefixed with its heading (``"Preferences: No emojis"``),
  tagged ``openclaw``, ``long-term``. Older installs wrote ``memory.md``; it is read the same way.
- ``memory/YYYY-MM-DD.md`` and ``memory/YYYY-MM-DD-<slug>.md`` — the append-only daily logs.
  Each section (heading) becomes an ``episode`` dated by the file name in the Home's time zone:
  midnight of that day, or the section's time when its heading starts with one
  (``## 14:30 — Deployed``, ``## [09:12] Topic``, ``## 2:05 PM``); tagged ``openclaw``, ``daily-log``.
- Any other ``memory/**/*.md`` (``memory/projects/…``, topic notes) becomes ``fact`` records
  per section, tagged ``openclaw``, ``memory-note``.

Left out on purpose: the bootstrap files (``AGENTS.md``, ``SOUL.md``, ``USER.md``,
``TOOLS.md``, ``IDENTITY.md``, ``HEARTBEAT.md``: instructions and persona, not memory),
``DREAMS.md`` (generated summaries: a derivative, never the only copy) and ``~/.openclaw/memory``
(OpenClaw's own search index). Sources are ``<file>#L<first>-L<last>``, relative to the workspace.

Invariant: a daily log whose name is not a real calendar date (``2026-02-30.md``) is reported,
never imported with a made-up date.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import date, datetime, time, tzinfo

from agent_memory.errors import RecordError
from agent_memory.importers.files import SKIP_DIRS, TextFile, resolve_root, walk
from agent_memory.importers.items import Item, Problem
from agent_memory.importers.markdown import (
    Note,
    curated_units,
    heading_text,
    note_chunks,
    parse_note,
    problem_of,
)

__all__ = ["daily_date", "read_openclaw", "section_time"]

LONG_TERM = ("MEMORY.md", "memory.md")
"""The curated long-term memory file (``memory.md`` in older installs)."""

_DAILY = re.compile(r"^memory/(\d{4})-(\d{2})-(\d{2})(?:-[^/]+)?\.md$")
_CLOCK = re.compile(r"^\[?(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp][Mm])?\]?(?:\s|$|[-—–:,])")


def read_openclaw(path: str, *, zone: tzinfo, limit: int | None = None) -> Iterator[Item | Problem]:
    """Yield the long-term facts, daily-log episodes and memory notes of the workspace ``path``.

    Args:
        path: The workspace folder (holding ``MEMORY.md`` and/or ``memory/``).
        zone: The Home's time zone: a daily log's day and times are local to it.
        limit: Only the latest this many daily logs (by date); all when None. ``MEMORY.md``
            and the other notes are always read.

    Raises:
        RecordError: ``path`` is not a folder, or holds neither ``MEMORY.md`` nor ``memory/``.
    """
    root = resolve_root(path)
    if not os.path.isdir(root):
        raise RecordError("an OpenClaw workspace is a folder, not a file", path=path)
    found = list(walk(root, include=_wanted, descend=_in_memory))
    if not found:
        raise RecordError(
            "not an OpenClaw workspace: no MEMORY.md and no memory/*.md",
            path=path,
            hint="pass the workspace folder, e.g. ~/.openclaw/workspace",
        )
    if limit is not None:
        daily = sorted((f.path for f in found if _DAILY.match(f.path)), reverse=True)
        dropped = set(daily[limit:])
        found = [f for f in found if f.path not in dropped]
    for file in found:
        if isinstance(file, Problem):
            yield file
            continue
        try:
            items = list(_items(file, zone))
        except RecordError as exc:
            yield problem_of(file.path, exc)
            continue
        yield from items


def _in_memory(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    hidden = name.startswith(".") or name in SKIP_DIRS
    return (rel == "memory" or rel.startswith("memory/")) and not hidden


def _wanted(rel: str) -> bool:
    return rel in LONG_TERM or (rel.startswith("memory/") and rel.endswith(".md"))


def _items(file: TextFile, zone: tzinfo) -> Iterator[Item]:
    note = parse_note(file)
    if file.path in LONG_TERM:
        for first, last, text in curated_units(note):
            yield Item(text, f"{file.path}#L{first}-L{last}", "fact", tags=("openclaw", "long-term"))
        return
    day = daily_date(file.path)
    if day is None:
        for first, last, text in note_chunks(note):
            yield Item(text, f"{file.path}#L{first}-L{last}", "fact", tags=("openclaw", "memory-note"))
        return
    yield from _episodes(note, day, zone)


def _episodes(note: Note, day: date, zone: tzinfo) -> Iterator[Item]:
    headings = {s.first: s for s in note.segments if s.kind == "heading"}
    current = time(0, 0)
    for first, last, text in note_chunks(note):
        # Chunks come in order: a later part of a long section keeps its heading's time.
        if (heading := headings.get(first)) is not None:
            current = section_time(heading_text(heading)[1]) or time(0, 0)
        yield Item(
            text,
            f"{note.path}#L{first}-L{last}",
            "episode",
            occurred_at=datetime.combine(day, current, tzinfo=zone),
            tags=("openclaw", "daily-log"),
        )


def daily_date(rel: str) -> date | None:
    """Return the day a daily log's name gives (``memory/2026-03-18-standup.md``), or None.

    Raises:
        RecordError: The name has the shape of a date but is not a real one (the file named).
    """
    match = _DAILY.match(rel)
    if match is None:
        return None
    year, month, day = (int(part) for part in match.groups())
    try:
        return date(year, month, day)
    except ValueError:
        shown = f"{year:04d}-{month:02d}-{day:02d}"
        raise RecordError(f"the name is not a real date ({shown})", path=rel) from None


def section_time(heading: str) -> time | None:
    """Return the clock time a daily-log heading starts with (``14:30``, ``[09:12]``, ``2:05 PM``)."""
    match = _CLOCK.match(heading.strip())
    if match is None:
        return None
    hour, minute = int(match.group(1)), int(match.group(2))
    second = int(match.group(3) or 0)
    meridiem = (match.group(4) or "").lower()
    if meridiem:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if meridiem == "pm" else 0)
    if hour > 23 or minute > 59 or second > 59:
        return None
    return time(hour, minute, second)

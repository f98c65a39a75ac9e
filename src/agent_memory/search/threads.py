"""Threads: which notes are neighbouring turns of one conversation, read from their source anchors.

A conversation imported or captured turn by turn becomes one note per turn, and a turn
alone often does not say what it is about: ``"Caroline: Yes, yesterday!"`` answers the
turn before it. An index that reads each turn together with its neighbours finds such
turns (``docs/benchmarks.md``, Retrieval quality: +0.10 LoCoMo evidence recall@10 for
BM25). The neighbours are found from what every note already carries, its source anchor
(``provenance.ref``, required on every write, DESIGN.md §2) and its event time:

- a ref ``<document>#<path>/<leaf>`` puts the note in the thread ``(<document>#<path>,
  occurred_at)`` at position ``<leaf>``. The importers write such anchors:
  ``locomo.json#conv-26/D1:3`` (conversation ``conv-26``; the session's date in
  ``occurred_at`` tells its sessions apart), ``longmemeval_s.json#/12/haystack_sessions/3/5``,
  and the inbox archive's ``archive/2026-11-29.md#mem-2026-11-29-003`` (path empty: the lines
  of one archive day with one event time);
- positions sort naturally, digits by value: ``D1:3`` < ``D1:10`` < ``D2:1``;
- only an ``episode`` (a turn, an event) joins a thread: facts, procedures and rules stand
  on their own words, so sections of one Markdown file (``CLAUDE.md#L3-L3``) never lend
  each other text;
- a ref without ``#``, with nothing after it, or no ref at all (records of 0.1 files) belongs
  to no thread: the note is read alone.

Invariant: the thread and position depend on the record version alone (its ref and
``occurred_at``), never on other notes, so an index can store them beside the record and
find every neighbour of a changed note with one lookup.
"""

from __future__ import annotations

import re
from datetime import datetime

from agent_memory.errors import RecordError
from agent_memory.records.record import MemoryRecord, RecordType
from agent_memory.records.wire import format_timestamp, parse_timestamp

__all__ = ["Place", "place_of", "thread_time"]

Place = tuple[str, str]
"""``(thread key, position key)``; position keys sort as text in thread order."""

_RUNS = re.compile(r"(\d+)")
_DIGITS = 12  # positions up to 10^12 - 1 sort by value; longer digit runs sort as text


def _natural(leaf: str) -> str:
    """Return ``leaf`` with every run of digits zero-padded, so text order is natural order."""
    return "".join(part.zfill(_DIGITS) if part.isdigit() else part for part in _RUNS.split(leaf))


def place_of(record: MemoryRecord) -> Place | None:
    """Return the note's thread and position (module docstring), or ``None`` when it has none.

    Args:
        record: Any record version; only ``type``, ``provenance.ref`` and ``occurred_at`` are read.

    Returns:
        ``(thread, position)``: the thread is ``<document>#<path>`` and the event time in
        canonical UTC (empty when unknown), joined by a space; the position is the leaf
        with its digit runs zero-padded.
    """
    ref = record.provenance.ref
    if not ref or record.type is not RecordType.EPISODE:
        return None
    document, hash_sign, anchor = ref.partition("#")
    if not hash_sign or not anchor:
        return None
    path, _, leaf = anchor.rpartition("/")
    if not leaf:
        return None
    when = format_timestamp(record.occurred_at) if record.occurred_at is not None else ""
    return f"{document}#{path} {when}", _natural(leaf)


def thread_time(thread: str) -> datetime | None:
    """Return the event time a thread key of :func:`place_of` carries (aware UTC), or ``None``.

    ``None`` when the key has no time (a note without ``occurred_at``) or its last word is
    not a canonical timestamp; never raises.
    """
    _, space, when = thread.rpartition(" ")
    if not space or not when:
        return None
    try:
        return parse_timestamp(when, "occurred_at")
    except (RecordError, ValueError):
        return None

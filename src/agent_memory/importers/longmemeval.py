"""Read a LongMemEval file (oracle or S schema) into one episode per non-empty turn.

Each turn becomes ``"User: …"`` or ``"Assistant: …"``, dated by its session's entry in
``haystack_dates`` (``"2023/05/20 (Sat) 02:21"``, read in the Home's time zone), and sourced
by its JSON position, ``<file>#/<record>/haystack_sessions/<session>/<turn>`` (0-based, a JSON
pointer into the original file).

Invariant: the labels that give answers away never reach an item or its source — not the
session ids (evidence sessions are named ``answer_…``), ``has_answer``, ``question``,
``answer``, ``question_type`` nor ``question_id``. Empty turns (the blanked assistant turns of
the ``useronly`` file) are skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import tzinfo
from typing import Any

from agent_memory.errors import RecordError
from agent_memory.importers.items import Item, load_json, parse_date

__all__ = ["read_longmemeval"]

DATE_FORMATS = ("%Y/%m/%d (%a) %H:%M", "%Y/%m/%d %H:%M")
_SPEAKERS = {"user": "User", "assistant": "Assistant"}


def read_longmemeval(path: str, *, zone: tzinfo, limit: int | None = None) -> Iterator[Item]:
    """Yield one episode per non-empty turn of every question's haystack in ``path``.

    Args:
        path: A JSON list of LongMemEval records.
        zone: The Home's time zone; haystack dates carry no offset and are read in it.
        limit: At most this many sessions per record (the first ones); all when None.

    Raises:
        RecordError: Unreadable file, a record without ``haystack_sessions`` /
            ``haystack_dates`` of equal length, a turn without ``role`` or ``content``, or an
            unreadable date — the path and field are named.
    """
    data = load_json(path)
    if not isinstance(data, list):
        raise RecordError("a LongMemEval file is a JSON list of records", path=path)
    name = os.path.basename(path)
    items: list[Item] = []
    for index, record in enumerate(data):
        items.extend(_record(record, index, name, path, zone, limit))
    yield from items


def _record(record: Any, index: int, name: str, path: str, zone: tzinfo, limit: int | None) -> Iterator[Item]:
    where = f"[{index}]"
    if not isinstance(record, dict):
        raise RecordError("a record is an object", path=path, field=where)
    sessions, dates = record.get("haystack_sessions"), record.get("haystack_dates")
    if not isinstance(sessions, list) or not isinstance(dates, list) or len(sessions) != len(dates):
        raise RecordError(
            "haystack_sessions and haystack_dates must be lists of one length", path=path, field=where
        )
    count = len(sessions) if limit is None else min(limit, len(sessions))
    for s in range(count):
        field = f"{where}.haystack_sessions[{s}]"
        when = parse_date(dates[s], DATE_FORMATS, zone, path=path, field=f"{where}.haystack_dates[{s}]")
        turns = sessions[s]
        if not isinstance(turns, list):
            raise RecordError("a session is a list of turns", path=path, field=field)
        for t, turn in enumerate(turns):
            text = _turn_text(turn, path, f"{field}[{t}]")
            if text is None:
                continue
            yield Item(
                text=text,
                source=f"{name}#/{index}/haystack_sessions/{s}/{t}",
                occurred_at=when,
                tags=("longmemeval",),
            )


def _turn_text(turn: Any, path: str, field: str) -> str | None:
    if not isinstance(turn, dict):
        raise RecordError("a turn is an object", path=path, field=field)
    role, content = turn.get("role"), turn.get("content")
    if role not in _SPEAKERS:
        raise RecordError(f"role must be user or assistant, not {role!r}", path=path, field=f"{field}.role")
    if not isinstance(content, str):
        raise RecordError("a turn needs content", path=path, field=f"{field}.content")
    if not content.strip():
        return None
    return f"{_SPEAKERS[str(role)]}: {content.strip()}"

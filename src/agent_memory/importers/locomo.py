"""Read a LoCoMo conversation file (``locomo.json`` schema) into one episode per turn.

Each turn becomes ``"<speaker>: <text>"`` (image turns add ``[shares <caption>]``, as the
paper's retrievers do), dated by its session's ``session_<N>_date_time`` read in the Home's
time zone, and sourced ``<file>#<sample_id>/<dia_id>`` (e.g. ``locomo.json#conv-26/D1:3``).

Invariant: only ``conversation`` is read. ``qa`` (questions, answers, evidence ids),
``observation``, ``session_summary`` and ``event_summary`` never reach an item, so nothing
indexed hints at a benchmark answer.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import tzinfo
from typing import Any

from agent_memory.errors import RecordError
from agent_memory.importers.items import Item, load_json, parse_date

__all__ = ["read_locomo"]

DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y")
"""LoCoMo's session dates, e.g. ``"1:56 pm on 8 May, 2023"``."""

_SESSION = re.compile(r"session_(\d+)")


def read_locomo(path: str, *, zone: tzinfo, limit: int | None = None) -> Iterator[Item]:
    """Yield one episode per turn of every conversation in the LoCoMo file ``path``.

    Args:
        path: A JSON list of conversations (``sample_id``, ``conversation``).
        zone: The Home's time zone; session dates carry no offset and are read in it.
        limit: At most this many sessions per conversation (the first ones); all when None.

    Raises:
        RecordError: Unreadable file, not a list of conversations, a turn without ``speaker``
            or ``text``, or an unreadable session date — the path and field are named.
    """
    data = load_json(path)
    if not isinstance(data, list):
        raise RecordError("a LoCoMo file is a JSON list of conversations", path=path)
    name = os.path.basename(path)
    items: list[Item] = []
    for index, sample in enumerate(data):
        items.extend(_conversation(sample, index, name, path, zone, limit))
    yield from items


def _conversation(
    sample: Any, index: int, name: str, path: str, zone: tzinfo, limit: int | None
) -> Iterator[Item]:
    where = f"[{index}]"
    if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
        raise RecordError("not a LoCoMo conversation (no 'conversation' object)", path=path, field=where)
    sample_id = sample.get("sample_id")
    if not isinstance(sample_id, str) or not sample_id:
        raise RecordError("missing sample_id", path=path, field=f"{where}.sample_id")
    conversation: dict[str, Any] = sample["conversation"]
    numbers = sorted(int(m.group(1)) for key in conversation if (m := _SESSION.fullmatch(key)))
    for number in numbers[:limit] if limit is not None else numbers:
        field = f"{sample_id}.session_{number}"
        turns = conversation[f"session_{number}"]
        if not isinstance(turns, list):
            raise RecordError("a session is a list of turns", path=path, field=field)
        when = parse_date(
            conversation.get(f"session_{number}_date_time"),
            DATE_FORMATS,
            zone,
            path=path,
            field=f"{field}_date_time",
        )
        for position, turn in enumerate(turns, start=1):
            yield Item(
                text=_turn_text(turn, path, f"{field}[{position - 1}]"),
                source=f"{name}#{sample_id}/{_dia_id(turn, number, position)}",
                occurred_at=when,
                tags=("locomo",),
            )


def _turn_text(turn: Any, path: str, field: str) -> str:
    if not isinstance(turn, dict):
        raise RecordError("a turn is an object", path=path, field=field)
    speaker, text = turn.get("speaker"), turn.get("text")
    if not isinstance(speaker, str) or not speaker.strip():
        raise RecordError("a turn needs a speaker", path=path, field=f"{field}.speaker")
    if not isinstance(text, str):
        raise RecordError("a turn needs text", path=path, field=f"{field}.text")
    caption = turn.get("blip_caption")
    shared = f" [shares {caption.strip()}]" if isinstance(caption, str) and caption.strip() else ""
    return f"{speaker.strip()}: {text.strip()}{shared}".strip()


def _dia_id(turn: dict[str, Any], session: int, position: int) -> str:
    # The dataset's own id when it is well formed; the position it stands for otherwise.
    dia_id = turn.get("dia_id")
    if isinstance(dia_id, str) and re.fullmatch(r"D\d+:\d+", dia_id):
        return dia_id
    return f"D{session}:{position}"

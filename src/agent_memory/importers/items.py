"""What an importer reads its input into: :class:`Item` and :class:`Problem`, and the readers' helpers.

The format modules of :mod:`agent_memory.importers` import only this module of the package's
root (never the package itself, whose :func:`~agent_memory.importers.import_path` picks them),
so the package and its readers do not import each other. Pure values and file reading: no
store, no log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from agent_memory.errors import RecordError

__all__ = ["Item", "Problem", "Reader", "load_json", "parse_date"]


@dataclass(frozen=True, slots=True)
class Item:
    """One record to be, as a reader found it.

    Attributes:
        text: The body, e.g. ``"Caroline: Hey Mel!"`` for a conversation turn.
        source: The anchor back to the input (file and position, or ``git:<sha>``).
        type: ``episode`` for turns and commits, ``fact`` for documentation.
        occurred_at: When it happened (aware), if the input says.
        tags: Labels naming the input format, never a dataset id.
    """

    text: str
    source: str
    type: str = "episode"
    occurred_at: datetime | None = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Problem:
    """A file of a folder that was not imported; the folder's other files still are.

    Attributes:
        path: The file, as its source anchors would name it.
        reason: Why, as a sentence fragment (``"not UTF-8 text (byte 12 cannot be decoded)"``).
        skipped: True when left out on purpose (binary, over the size limit, a symbolic link
            leading outside the folder); False for an error (unreadable, malformed).
    """

    path: str
    reason: str
    skipped: bool = False

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


Reader = Callable[..., Iterator[Item | Problem]]
"""``reader(path, zone=..., limit=...)``: yields items (and, for folders, problems per file);
raises RecordError naming the path when the input as a whole cannot be read."""


def load_json(path: str) -> Any:
    """Load a JSON input file (UTF-8).

    Raises:
        RecordError: The file cannot be read or is not JSON (the path is named).
    """
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as exc:
        raise RecordError(f"cannot read: {exc.strerror or exc}", path=path) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise RecordError(f"not a JSON file: {exc}", path=path) from None


def parse_date(text: Any, formats: tuple[str, ...], zone: tzinfo, *, path: str, field: str) -> datetime:
    """Parse a dataset's free-text date with the first matching ``strptime`` format, in ``zone``.

    Raises:
        RecordError: Not a string, or no format matches (path and field named).
    """
    if isinstance(text, str):
        cleaned = " ".join(text.split())
        for fmt in formats:
            try:
                return datetime.strptime(cleaned, fmt).replace(tzinfo=zone)
            except ValueError:
                continue
    raise RecordError(f"unreadable date {text!r}", path=path, field=field)

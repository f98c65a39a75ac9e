"""The capture inbox ``inbox.md`` (seed 000 §9, §12; DESIGN.md §3): one line per captured item.

A line is seed 000's minimum inbox format, with ``Subject:`` for a ``state`` item (§9) and
the session's taint labels last (DESIGN.md §2 "trust")::

    - [2026-11-29] [mem-2026-11-29-003] (state) Staging runs on db-4. ⏎
      Subject: host:staging. Source: cli:ada. Taint: external.

(shown on two lines here, at the ⏎; one line in the file).

The text is everything between ``(kind)`` and the last `` Subject: `` (state items only) or
`` Source: ``; the final period after the subject, source and taint labels is optional when
reading. An ambiguous hand-written line is read towards more taint (the safe side).
Besides items, only blank lines and ``# Inbox YYYY-MM-DD`` headers may appear.

Invariants:

- :func:`capture` only appends, one writer at a time (:meth:`Home.writer_lock`); the id is
  ``mem-<day>-NNN`` with NNN the highest ordinal of that day found in ``inbox.md`` or
  ``archive/<day>.md``, plus one (seed 000 §9 field notes), so ids never repeat within a Home;
  it refuses text that would not read back exactly as given.
- :func:`parse_inbox` never drops a line: each one is an item, structure, or an
  :class:`InboxProblem` carrying its line number and its text.

Date policy (DESIGN.md §9 "Time"): a day is the user's local day in the Home's ``timezone``
setting. Aware times are converted into that zone; a time without a zone (a naive
``datetime``, or ISO-8601 text without an offset) is read as wall-clock time in that zone
(``fold=0`` where a clock change makes it ambiguous). Naive and aware values are never compared.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from pathlib import Path
from typing import Any

from agent_memory.errors import RecordError
from agent_memory.home import Home
from agent_memory.jobs.files import append_bytes, read_text
from agent_memory.records.record import Kind
from agent_memory.records.wire import utc_now
from agent_memory.write.screen import screen

__all__ = [
    "INBOX",
    "InboxItem",
    "InboxProblem",
    "ParsedInbox",
    "capture",
    "format_line",
    "inbox_header",
    "local_day",
    "parse_inbox",
    "parse_local_time",
    "read_inbox",
    "to_zone",
]

INBOX = "inbox.md"
"""The inbox file, relative to the Home root."""

_ITEM = re.compile(
    r"\A- \[(?P<date>[^\]]*)\] \[(?P<id>mem-(?P<id_date>\d{4}-\d{2}-\d{2})-(?P<ordinal>\d{3,}))\]"
    r" \((?P<kind>[^)]*)\) (?P<rest>.*)\Z"
)
_LOOKS_LIKE_ITEM = re.compile(r"\A\s*[-*]\s")
_HEADER = re.compile(r"\A# Inbox \d{4}-\d{2}-\d{2}\Z")
_TAINT = re.compile(r"\A(?P<head>.*) Taint: (?P<labels>[^ ,]+(?:, [^ ,]+)*)\Z")
_LABEL = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
_ANY_ID = re.compile(r"\bmem-(\d{4}-\d{2}-\d{2})-(\d{3,})\b")
_SHAPE = "`- [YYYY-MM-DD] [mem-YYYY-MM-DD-NNN] (kind) text Source: ref.`"


@dataclass(frozen=True, slots=True)
class InboxItem:
    """One well-formed inbox line.

    Attributes:
        line: 1-based line number in the file it was read from.
        day: The local day of capture (the line's date, equal to the id's date).
        id: ``mem-YYYY-MM-DD-NNN``, stable: it names the line in the archive too.
        kind: ``state`` or ``knowledge``.
        text: The captured conclusion.
        source: Where it came from (seed 000 §9 ``Source``), never empty.
        subject: The exact key of a ``state`` item; ``None`` for ``knowledge``.
        taint: Sorted taint labels of the capturing session (``()`` when untainted).
        raw: The line exactly as in the file, without its line break.
    """

    line: int
    day: date
    id: str
    kind: Kind
    text: str
    source: str
    subject: str | None
    taint: tuple[str, ...]
    raw: str

    @property
    def anchor(self) -> str:
        """The stable archive anchor of this item: ``archive/<day>.md#<id>`` (DESIGN.md §2 "source")."""
        return f"archive/{self.day.isoformat()}.md#{self.id}"

    def to_json(self) -> dict[str, Any]:
        """Return a JSON object of the item's fields (``day`` as ``YYYY-MM-DD``)."""
        return {
            "line": self.line,
            "id": self.id,
            "day": self.day.isoformat(),
            "kind": self.kind.value,
            "subject": self.subject,
            "text": self.text,
            "source": self.source,
            "taint": list(self.taint),
            "anchor": self.anchor,
        }


@dataclass(frozen=True, slots=True)
class InboxProblem:
    """A line that is neither an item nor structure: kept in the file, reported here.

    Attributes:
        line: 1-based line number.
        reason: What is wrong, as a sentence fragment.
        raw: The line as it stands.
    """

    line: int
    reason: str
    raw: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass(frozen=True, slots=True)
class ParsedInbox:
    """Every line of an inbox text, accounted for.

    Attributes:
        items: The well-formed items, in file order.
        problems: The malformed lines, in file order.
    """

    items: tuple[InboxItem, ...]
    problems: tuple[InboxProblem, ...]

    @property
    def substantive(self) -> bool:
        """Whether anything besides blank lines and headers is there (seed 000 §13 step 1)."""
        return bool(self.items or self.problems)


def to_zone(moment: datetime, zone: tzinfo) -> datetime:
    """Return ``moment`` as an aware time in ``zone``; a naive one is read as wall-clock time there."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        return moment.replace(tzinfo=zone, fold=0)
    return moment.astimezone(zone)


def local_day(moment: datetime, zone: tzinfo) -> date:
    """Return the local day of ``moment`` in ``zone`` (naive: wall-clock time in ``zone``)."""
    return to_zone(moment, zone).date()


def parse_local_time(text: str, zone: tzinfo, *, field: str = "at") -> datetime:
    """Parse ISO-8601 text into an aware time; text without an offset is read in ``zone``.

    Raises:
        RecordError: Not an ISO-8601 date or time (the field is named).
    """
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        raise RecordError(f"not an ISO-8601 time: {text!r}", field=field) from None
    return to_zone(parsed, zone)


def inbox_header(day: date) -> str:
    """Return the header a fresh inbox starts with: ``# Inbox YYYY-MM-DD`` and a blank line."""
    return f"# Inbox {day.isoformat()}\n\n"


def format_line(
    day: date,
    item_id: str,
    kind: Kind,
    text: str,
    source: str,
    subject: str | None = None,
    taint: Iterable[str] = (),
) -> str:
    """Return the inbox line (no line break) for one item, in the format of the module docstring."""
    parts = [f"- [{day.isoformat()}] [{item_id}] ({kind.value}) {text}"]
    if subject is not None:
        parts.append(f" Subject: {subject}.")
    parts.append(f" Source: {source}.")
    labels = sorted(set(taint))
    if labels:
        parts.append(f" Taint: {', '.join(labels)}.")
    return "".join(parts)


def parse_inbox(text: str, *, structure: re.Pattern[str] = _HEADER) -> ParsedInbox:
    r"""Read every line of an inbox text; malformed lines become problems, none is dropped.

    Args:
        text: The file's text; lines end at ``\\n`` (a trailing ``\\r`` stays in ``raw``).
        structure: Lines that are structure rather than items, besides blank lines
            (``# Inbox YYYY-MM-DD`` headers for the inbox; the archive passes its headings).

    Returns:
        The items and problems, each with its 1-based line number. An id seen twice is a
        problem on its second line.
    """
    items: list[InboxItem] = []
    problems: list[InboxProblem] = []
    first_seen: dict[str, int] = {}
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip()
        if not line or structure.match(line):
            continue
        parsed = _parse_line(line, number, raw)
        if isinstance(parsed, str):
            problems.append(InboxProblem(number, parsed, raw))
        elif parsed.id in first_seen:
            problems.append(
                InboxProblem(number, f"duplicate id {parsed.id} (first on line {first_seen[parsed.id]})", raw)
            )
        else:
            first_seen[parsed.id] = number
            items.append(parsed)
    return ParsedInbox(tuple(items), tuple(problems))


def read_inbox(home: Home) -> ParsedInbox:
    """Parse the Home's ``inbox.md`` (an absent file reads as empty).

    Raises:
        RecordError: The file cannot be read or is not UTF-8 (naming it).
    """
    return parse_inbox(read_text(home.root / INBOX))


def capture(
    home: Home,
    text: str,
    *,
    kind: Kind | str = Kind.KNOWLEDGE,
    source: str,
    subject: str | None = None,
    taint: Iterable[str] = (),
    at: datetime | None = None,
) -> InboxItem:
    """Append one item to the Home's inbox and return it as it reads back (seed 000 §12).

    Args:
        home: The Home whose ``inbox.md`` gets the line (created with a header when absent).
        text: The conclusion, one line; NFC-normalised and stripped.
        kind: ``state`` or ``knowledge`` (when unsure, ``knowledge``: seed 000 §4).
        source: Where it came from (required, seed 000 §9), one line.
        subject: The exact key of a ``state`` item (required for ``state``, refused for
            ``knowledge``); no whitespace.
        taint: The session's taint labels (``external``…): 1-64 letters, digits, ``.``,
            ``_``, ``-``; archive and distill carry them on.
        at: When it was captured (default now); naive means wall-clock time in the Home's zone.

    Raises:
        RecordError: Empty or multi-line text or source, an unknown kind, a missing or
            malformed subject, a malformed taint label, or text that would not read back
            as given (the field is named); nothing is written.
    """
    item_kind = _kind(kind)
    clean_text = _one_line(screen(text, field="text", policy=home).text, "text")
    clean_source = _one_line(source, "source")
    clean_subject = _subject(subject, item_kind)
    labels = _labels(taint)
    day = local_day(at if at is not None else utc_now(), home.settings.zone)
    path = home.root / INBOX
    with home.writer_lock():
        current = read_text(path)
        archived = read_text(home.root / "archive" / f"{day.isoformat()}.md")
        item_id = f"mem-{day.isoformat()}-{_next_ordinal((current, archived), day):03d}"
        line = format_line(day, item_id, item_kind, clean_text, clean_source, clean_subject, labels)
        _check_reads_back(
            line, path, text=clean_text, subject=clean_subject, source=clean_source, taint=labels
        )
        prefix = inbox_header(day) if not current else ("" if current.endswith("\n") else "\n")
        append_bytes(path, (prefix + line + "\n").encode("utf-8"))
        number = (current + prefix).count("\n") + 1
    return InboxItem(number, day, item_id, item_kind, clean_text, clean_source, clean_subject, labels, line)


def _parse_line(line: str, number: int, raw: str) -> InboxItem | str:
    match = _ITEM.match(line)
    if match is None:
        if _LOOKS_LIKE_ITEM.match(line):
            return f"not an inbox item: expected {_SHAPE}"
        return f"not an inbox item or a `# Inbox YYYY-MM-DD` header: expected {_SHAPE}"
    try:
        day = date.fromisoformat(match["date"])
        id_day = date.fromisoformat(match["id_date"])
    except ValueError:
        return f"not a calendar date in [{match['date']}] or {match['id']}"
    if day != id_day:
        return f"the date [{match['date']}] and the id {match['id']} name different days"
    try:
        kind = Kind(match["kind"])
    except ValueError:
        return f"unknown kind ({match['kind']}): state or knowledge"
    rest: str = match["rest"]
    labels: tuple[str, ...] = ()
    tainted = _TAINT.match(rest)
    if tainted:
        labels = tuple(sorted(set(_strip_period(tainted["labels"]).split(", "))))
        bad = [label for label in labels if not _LABEL.match(label)]
        if bad:
            return f"malformed taint label {bad[0]!r}"
        rest = tainted["head"]
    head, found, source = rest.rpartition(" Source: ")
    if not found:
        return "no `Source: ref.`: every item names its source (seed 000 §9)"
    source = _strip_period(source).strip()
    if not source:
        return "empty Source"
    if " Taint: " in source:
        return "malformed Taint: labels are 1-64 letters, digits, '.', '_' or '-', separated by ', '"
    subject = None
    if kind is Kind.STATE:
        head, found, subject = head.rpartition(" Subject: ")
        subject = _strip_period(subject)
        if not found or not subject or any(c.isspace() for c in subject):
            return "a state item needs `Subject: KEY.` before its Source (seed 000 §12 rule 4)"
    text = head.strip()
    if not text:
        return "empty text"
    return InboxItem(number, day, match["id"], kind, text, source, subject, labels, raw)


def _check_reads_back(line: str, path: Path, **given: object) -> None:
    parsed = _parse_line(line, 0, line)
    wrong = (
        "text"
        if isinstance(parsed, str)
        else next((k for k, v in given.items() if getattr(parsed, k) != v), None)
    )
    if wrong is not None:
        raise RecordError(
            "the item would not read back as given: its text, subject or source ends in a way the "
            "inbox line format cannot tell apart (e.g. with ' Taint: …')",
            path=str(path),
            field=wrong,
        )


def _strip_period(value: str) -> str:
    return value[:-1] if value.endswith(".") else value


def _next_ordinal(texts: Iterable[str], day: date) -> int:
    wanted = day.isoformat()
    ordinals = [int(n) for text in texts for d, n in _ANY_ID.findall(text) if d == wanted]
    return max(ordinals, default=0) + 1


def _kind(kind: Kind | str) -> Kind:
    try:
        return Kind(kind)
    except ValueError:
        raise RecordError(f"unknown kind {kind!r} (state or knowledge)", field="kind") from None


def _one_line(value: str, field: str) -> str:
    if not isinstance(value, str):
        raise RecordError(f"must be a string, got {type(value).__name__}", field=field)
    clean = unicodedata.normalize("NFC", value).strip()
    if not clean:
        raise RecordError("must not be empty (seed 000 §9)", field=field)
    if any(unicodedata.category(c) == "Cc" for c in clean):
        raise RecordError("must be one line without control characters", field=field)
    return clean


def _subject(subject: str | None, kind: Kind) -> str | None:
    if kind is Kind.KNOWLEDGE:
        if subject is not None:
            raise RecordError("only a state item has a subject", field="subject")
        return None
    if subject is None:
        raise RecordError(
            "a state item needs a subject (seed 000 §12 rule 4)",
            field="subject",
            hint="name the key it is the current value of (e.g. host:staging), or capture it as knowledge",
        )
    clean = unicodedata.normalize("NFC", subject)
    if not clean or any(c.isspace() or unicodedata.category(c) == "Cc" for c in clean):
        raise RecordError(f"must be a key without whitespace, got {subject!r}", field="subject")
    return clean


def _labels(taint: Iterable[str]) -> tuple[str, ...]:
    if isinstance(taint, str):
        taint = (taint,)
    labels = tuple(sorted(set(taint)))
    for label in labels:
        if not isinstance(label, str) or not _LABEL.match(label):
            raise RecordError(
                f"taint label {label!r} must be 1-64 letters, digits, '.', '_' or '-'", field="taint"
            )
    return labels

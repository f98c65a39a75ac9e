"""The screen: one function, one table of hazards, that every door's text passes before it is stored.

Every door that puts words into a Home — ``remember``, ``capture``, supersede and edit, ``sync``
of hand-edited notes, every ``--from`` importer, MemoryFile import, the MCP tools — calls
:func:`screen` on the text it is about to store (DESIGN.md §5 "One gate in"; issue 18). The
Writer owns it: it is pure (no store, no log), so it runs before the writer lock is taken and
a refusal writes nothing.

:data:`HAZARDS` is the table. Each hazard says what a person's write does with it (``refuse``)
and what an importer of someone's existing data does (``clean`` what can be cleaned without
changing the meaning, ``refuse`` only what cannot be taken in):

============  =========================================================  ======  =========
hazard        what                                                       person  importer
============  =========================================================  ======  =========
empty         nothing left once NFC-normalised and stripped              refuse  refuse
size          over :data:`MAX_TEXT_BYTES` of UTF-8                       refuse  refuse
control       C0 controls but tab/LF (CR only in CRLF), DEL, C1          refuse  clean
conflict      a git conflict block (``<<<<<<<`` … ``>>>>>>>`` lines)     refuse  refuse
frontmatter   a leading YAML block (``---`` … ``---``) that is not ours  refuse  refuse
secret        a credential (:mod:`agent_memory.governance.secrets`)      policy  policy
============  =========================================================  ======  =========

NFC is not a hazard but a normal form: every text is NFC-normalised and stripped, silently, as
the same words in another form are the same memory. A secret follows the Home's ``[secrets]``
policy at every door (refuse, or redact and tag ``redacted-secret``).

Cleaning replaces each control character: a C1 control by the Windows-1252 character it was
mis-decoded from (U+0093 → “) where that code page defines one, a lone CR by a line feed, any
other by U+FFFD. Each replacement is said in :attr:`Screened.cleaned` (character, position,
replacement) and the record carries the tag :data:`CLEANED_TAG`.

Invariant: a refusal is a :class:`~agent_memory.errors.ScreenError` naming the hazard, the file,
record and field, and where in the text (1-based character or line); it never quotes a secret.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from agent_memory.errors import RecordError, ScreenError
from agent_memory.governance.secrets import screen_text
from agent_memory.records.fields import CONTROL_CHARACTERS

__all__ = [
    "CLEANED_TAG",
    "HAZARDS",
    "MAX_TEXT_BYTES",
    "Hazard",
    "Screened",
    "clean_controls",
    "find_conflict_markers",
    "screen",
]

MAX_TEXT_BYTES = 1024 * 1024
"""The largest text a record may hold: 1 MiB of UTF-8, the importers' file limit too."""

CLEANED_TAG = "cleaned-text"
"""The tag a record gets when the screen replaced control characters in its text (imports)."""


class Hazard(StrEnum):
    """The hazards of the screen's table (the ``hazard`` of a :class:`ScreenError`)."""

    EMPTY = "empty"
    SIZE = "size"
    CONTROL = "control"
    CONFLICT = "conflict"
    FRONTMATTER = "frontmatter"
    SECRET = "secret"  # noqa: S105 - the name of a hazard, not a password


HAZARDS: dict[Hazard, tuple[str, str]] = {
    Hazard.EMPTY: ("refuse", "refuse"),
    Hazard.SIZE: ("refuse", "refuse"),
    Hazard.CONTROL: ("refuse", "clean"),
    Hazard.CONFLICT: ("refuse", "refuse"),
    Hazard.FRONTMATTER: ("refuse", "refuse"),
    Hazard.SECRET: ("policy", "policy"),
}
"""``{hazard: (a person's write, an importer's write)}``: ``refuse``, ``clean`` or ``policy``
(the Home's ``[secrets] on_detect``)."""


@dataclass(frozen=True, slots=True)
class Screened:
    """The text to store, once screened.

    Attributes:
        text: NFC-normalised, stripped, cleaned (imports) and, under the ``redact`` policy,
            with each secret replaced by ``[redacted:<kind>]``.
        tags: The caller's tags, plus ``redacted-secret`` and/or :data:`CLEANED_TAG`.
        cleaned: One line per cleaning, e.g. ``"U+0093 at character 12 replaced by “
            (Windows-1252)"``; empty when nothing was cleaned.
    """

    text: str
    tags: tuple[str, ...]
    cleaned: tuple[str, ...] = ()


_CONFLICT_LINE = re.compile(r"^(?:<{7}|>{7}|\|{7})(?:[ \t].*)?$", re.MULTILINE)
_FRONTMATTER = re.compile(r"\A---[ \t]*\n(?:.*\n)*?(?:---|\.\.\.)[ \t]*(?:\n|\Z)")
_YAML_KEY = re.compile(r"^[A-Za-z_][\w-]*:(?:\s|$)", re.MULTILINE)


def screen(
    text: object,
    *,
    field: str = "text",
    policy: object = None,
    tags: Iterable[str] = (),
    clean: bool = False,
    secrets: bool = True,
    record_id: str | None = None,
    path: str | None = None,
) -> Screened:
    """Screen ``text`` against every hazard of :data:`HAZARDS`; return what to store.

    Args:
        text: What the caller is about to store (a body, an inbox line, a rule text).
        field: The field it goes to (``text``, ``body``), named in a refusal.
        policy: The ``[secrets]`` settings, or a Home or Memory whose settings decide
            (:func:`~agent_memory.governance.secrets.policy_of`); refuse when ``None``.
        tags: The record's tags; :data:`CLEANED_TAG` and ``redacted-secret`` are added as needed.
        clean: The importer's column of the table: clean control characters instead of
            refusing them (someone's existing data, e.g. a chat export holding U+0093).
        secrets: Screen for secrets too (the default); ``False`` for a caller that applies
            the ``[secrets]`` policy itself (MemoryFile import, whose redaction makes a new record).
        record_id: The record concerned, named in a refusal.
        path: The file concerned, named in a refusal.

    Returns:
        The screened text, tags and the cleanings done.

    Raises:
        ScreenError: A hazard the table refuses (its ``hazard`` attribute names it; the
            message names file, record, field and where); nothing has been written.
    """
    where = {"field": field, "record_id": record_id, "path": path}
    if not isinstance(text, str):
        raise RecordError(f"must be text, got {type(text).__name__}", **where)
    value = unicodedata.normalize("NFC", text).strip()
    if not value:
        raise ScreenError("is empty: there is nothing to remember", hazard=Hazard.EMPTY, **where)
    size = len(value.encode("utf-8"))
    if size > MAX_TEXT_BYTES:
        raise ScreenError(
            f"is {size} bytes of UTF-8, over the limit of {MAX_TEXT_BYTES} (1 MiB): no memory is "
            "that long; keep a pointer to the document instead",
            hazard=Hazard.SIZE,
            **where,
        )
    kept = tuple(tags)
    cleaned: tuple[str, ...] = ()
    found = CONTROL_CHARACTERS.search(value)
    if found is not None:
        if not clean:
            raise ScreenError(
                f"holds the control character U+{ord(found.group()[0]):04X} at character "
                f"{found.start() + 1}: remove it (tabs and line breaks are fine)",
                hazard=Hazard.CONTROL,
                **where,
            )
        value, cleaned = clean_controls(value)
        value = value.strip()
        if not value:
            raise ScreenError("holds only control characters", hazard=Hazard.EMPTY, **where)
        kept = kept if CLEANED_TAG in kept else (*kept, CLEANED_TAG)
    line = find_conflict_markers(value)
    if line is not None:
        raise ScreenError(
            f"holds a git conflict marker at line {line}: two versions were left unmerged, and "
            "which one holds is not known; refused, nothing was written",
            hazard=Hazard.CONFLICT,
            hint="resolve the conflict (keep one version, delete the <<<<<<< ======= >>>>>>> lines)",
            **where,
        )
    block = _FRONTMATTER.match(value)
    if block is not None and _YAML_KEY.search(block.group()):
        raise ScreenError(
            "starts with a YAML frontmatter block (--- … ---) that is not agent-memory's: its "
            "fields would be read as words of the memory",
            hazard=Hazard.FRONTMATTER,
            hint="remember the text alone and pass type, tags or source as options",
            **where,
        )
    if secrets:
        value, kept = screen_text(
            value, field=field, policy=policy, tags=kept, record_id=record_id, path=path
        )
    return Screened(value, kept, cleaned)


def find_conflict_markers(text: str) -> int | None:
    """Return the 1-based line of the first git conflict marker in ``text``, or ``None``.

    A marker is a line that starts with seven ``<``, ``>`` or ``|`` (diff3's base) followed by
    nothing or a space and a label. A lone ``=======`` is a Markdown heading underline, not
    enough on its own.
    """
    found = _CONFLICT_LINE.search(text)
    if found is None:
        return None
    return text.count("\n", 0, found.start()) + 1


def clean_controls(text: str) -> tuple[str, tuple[str, ...]]:
    """Replace each control character of ``text``; return the text and one line per replacement.

    A C1 control (U+0080–U+009F) becomes the Windows-1252 character of that byte where the code
    page defines one (text decoded as Latin-1 that was Windows-1252: U+0093 → “), a lone CR a
    line feed, any other control U+FFFD. Positions are 1-based characters of ``text``.
    """
    notes: list[str] = []

    def replace(match: re.Match[str]) -> str:
        char = match.group()
        code = ord(char[0])
        if char == "\r":
            swap, why = "\n", "a line feed"
        elif 0x80 <= code <= 0x9F:
            try:
                swap = bytes([code]).decode("cp1252")
                why = f"{swap} (Windows-1252)"
            except UnicodeDecodeError:
                swap, why = "\ufffd", "U+FFFD"
        else:
            swap, why = "\ufffd", "U+FFFD"
        notes.append(f"U+{code:04X} at character {match.start() + 1} replaced by {why}")
        return swap

    return CONTROL_CHARACTERS.sub(replace, text), tuple(notes)

"""The parts a `MemoryRecord` is made of: vocabularies, provenance, transitions, the wire field lists.

Closed vocabularies are ``StrEnum``s (seed 001 types and states; seed 000 kinds, scopes and
epistemic status); seed 003's type words map onto the four wire types on creation only
(DESIGN.md §2). :class:`Provenance` always carries its three keys on the wire; a
:class:`Transition` names exactly two distinct sides and a reason. Every check raises a
:class:`RecordError` naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from agent_memory.errors import RecordError

__all__ = [
    "CONTROL_CHARACTERS",
    "DIGEST_PATTERN",
    "EXTENSION_FIELDS",
    "KNOWN_FIELDS",
    "OPTIONAL_FIELDS",
    "RECORD_ID_PATTERN",
    "WIRE_FIELDS",
    "EpistemicStatus",
    "Kind",
    "Provenance",
    "RecordType",
    "Scope",
    "State",
    "Transition",
    "UnknownWordError",
    "check_plain_text",
    "parse_record_type",
    "require_optional_str",
    "require_str",
    "screen_plain",
    "string_tuple",
]

RECORD_ID_PATTERN = re.compile(r"\Amem:[0-9a-f]{32}\Z")
DIGEST_PATTERN = re.compile(r"\A[0-9a-f]{64}\Z")


class UnknownWordError(RecordError, ValueError):
    """A word outside a closed vocabulary: a :class:`RecordError` naming the field and the allowed words.

    Also a ``ValueError``, which is what ``Kind("x")`` raised before, so callers catching
    that keep working.
    """


# The wire field each vocabulary fills, for the message of a word outside it.
_FIELD_OF = {
    "RecordType": "type",
    "State": "state",
    "Kind": "kind",
    "Scope": "scope",
    "EpistemicStatus": "epistemic_status",
}


class _Vocabulary(StrEnum):
    """A closed vocabulary whose unknown words raise :class:`UnknownWordError`, not a bare ValueError."""

    @classmethod
    def _missing_(cls, value: object) -> None:
        allowed = ", ".join(member.value for member in cls)
        hint = None
        if cls.__name__ == "Kind" and isinstance(value, str) and value in _SEED_003_TYPES:
            hint = f"{value!r} is a record type (seed 003), not a kind: pass it as the type (--type {value})"
        raise UnknownWordError(
            f"unknown value {value!r} (one of: {allowed})", field=_FIELD_OF.get(cls.__name__), hint=hint
        )


class RecordType(_Vocabulary):
    """The four record types of seed 001 (wire field ``type``)."""

    FACT = "fact"
    EPISODE = "episode"
    PROCEDURE = "procedure"
    RULE = "rule"


class State(_Vocabulary):
    """Lifecycle states, in the origin's declaration order (it orders the legality vectors)."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"
    TRANSITIONAL = "transitional"
    ARCHIVED = "archived"


class Kind(_Vocabulary):
    """Seed 000's epistemic kind (extension field ``kind``): one current value, or additive."""

    STATE = "state"
    KNOWLEDGE = "knowledge"


class Scope(_Vocabulary):
    """Seed 000's Scope of an item (extension field ``scope``)."""

    GLOBAL = "global"
    PROJECT = "project"
    ENVIRONMENT = "environment"
    WORKFLOW = "workflow"
    USER_PREFERENCE = "user-preference"


class EpistemicStatus(_Vocabulary):
    """Seed 000's ``epistemic-status-v1`` confidence words (extension ``epistemic_status``)."""

    CONFIRMED = "confirmed"
    OBSERVED_ONCE = "observed-once"
    INFERRED = "inferred"
    UNKNOWN = "unknown"


# Seed 003 names record kinds differently; DESIGN.md §2 maps them onto the four wire types.
_SEED_003_TYPES: dict[str, tuple[RecordType, tuple[str, ...]]] = {
    "episodic": (RecordType.EPISODE, ()),
    "semantic": (RecordType.FACT, ()),
    "procedural": (RecordType.PROCEDURE, ()),
    "preference": (RecordType.FACT, ("preference",)),
}


CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")
"""What :func:`check_plain_text` refuses: invisible characters that drive terminals (ESC starts
an escape sequence, CR rewrites the line, BS erases): C0 controls but tab and newline (CR only
before LF), DEL, and C1 controls."""


def check_plain_text(value: str, field: str) -> str:
    """Return ``value`` unchanged, or refuse a control character in text a person or agent writes.

    The note codec keeps any body byte for byte (DESIGN.md §9), so records read from files and
    0.1 MemoryFiles may hold anything; this guard is for new input (``remember``,
    ``supersede`` and their CLI and MCP forms), where a control character is a paste
    accident or an attempt to hide text from the person reading the note, ``recall`` or
    ``git diff``. Tabs, newlines and CRLF line ends are plain text.

    Raises:
        RecordError: ``value`` holds a C0 control other than tab and newline (a CR only as
            part of CRLF), DEL or a C1 control; the message names ``field``, the character
            (``U+0007``) and its 1-based position.
    """
    found = CONTROL_CHARACTERS.search(value)
    if found is not None:
        raise RecordError(
            f"holds the control character U+{ord(found.group()[0]):04X} at character "
            f"{found.start() + 1}: remove it (tabs and line breaks are fine)",
            field=field,
        )
    return value


def screen_plain(**texts: str | Sequence[str] | None) -> None:
    """Refuse a control character in any new text, naming its field: the one screen of new input.

    ``remember`` and ``supersede`` run it on the source, subject and tags they are given, and
    the CLI and the MCP tools run it on every text argument before they call them, so a
    Python caller, a command line and an agent meet the same check (:func:`check_plain_text`).

    Args:
        texts: Field name -> a text, several texts (tags), or ``None`` (nothing to check).

    Raises:
        RecordError: A text holds a control character; the first one found, field named.
    """
    for field, value in texts.items():
        for text in (value,) if isinstance(value, str) else value or ():
            check_plain_text(text, field)


def parse_record_type(word: str) -> tuple[RecordType, tuple[str, ...]]:
    """Map a type word from either vocabulary to a wire type and the tags it implies.

    Accepts seed 001's ``fact|episode|procedure|rule`` and seed 003's
    ``episodic|semantic|procedural|preference`` (``preference`` → ``fact`` tagged
    ``preference``), per DESIGN.md §2. Used where records are created, never when a
    stored record is read (its type is part of its id).

    Raises:
        RecordError: The word is in neither vocabulary (field ``type``).
    """
    key = word.strip().lower()
    if key in _SEED_003_TYPES:
        return _SEED_003_TYPES[key]
    try:
        return RecordType(key), ()
    except ValueError:
        allowed = ", ".join([*RecordType, *_SEED_003_TYPES])
        raise RecordError(f"unknown record type {word!r} (one of: {allowed})", field="type") from None


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a record came from: ``{kind, ref, agent}``, all three keys always on the wire.

    Attributes:
        kind: Open vocabulary (conversation, observation, tool, import, correction, …); non-empty.
        ref: The primary source anchor, e.g. ``archive/2026-11-29.md#mem-2026-11-29-003``.
        agent: The writing agent's ``amp:key:`` address, if known.
    """

    kind: str
    ref: str | None = None
    agent: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not self.kind:
            raise RecordError("must be a non-empty string", field="provenance.kind")
        for name in ("ref", "agent"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise RecordError(
                    f"must be a string or null, got {type(value).__name__}", field=f"provenance.{name}"
                )

    def to_wire(self) -> dict[str, Any]:
        """Return the wire object with all three keys."""
        return {"kind": self.kind, "ref": self.ref, "agent": self.agent}

    @classmethod
    def from_wire(cls, data: Any) -> Provenance:
        """Parse the wire object; unknown keys are refused (they could not be re-emitted).

        Raises:
            RecordError: Not an object, an unknown key, or a field of the wrong type.
        """
        if not isinstance(data, Mapping):
            raise RecordError(f"must be an object, got {type(data).__name__}", field="provenance")
        unknown = sorted(set(data) - {"kind", "ref", "agent"})
        if unknown:
            raise RecordError(f"unknown keys {unknown}", field="provenance")
        return cls(kind=data.get("kind"), ref=data.get("ref"), agent=data.get("agent"))  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Transition:
    """The shared block of a dispute: both sides carry the same ``sides`` and ``reason``."""

    sides: tuple[str, str]
    reason: str

    def __post_init__(self) -> None:
        sides = tuple(self.sides) if isinstance(self.sides, list | tuple) else ()
        if len(sides) != 2 or not all(isinstance(s, str) and s for s in sides) or sides[0] == sides[1]:
            raise RecordError("sides must be exactly two distinct record ids", field="transition.sides")
        object.__setattr__(self, "sides", sides)
        if not isinstance(self.reason, str) or not self.reason:
            raise RecordError("must be a non-empty string", field="transition.reason")

    def to_wire(self) -> dict[str, Any]:
        """Return ``{"sides": [a, b], "reason": …}``."""
        return {"sides": list(self.sides), "reason": self.reason}

    @classmethod
    def from_wire(cls, data: Any) -> Transition | None:
        """Parse the wire block (``null`` → ``None``).

        Raises:
            RecordError: Not an object or null, an unknown key, or a broken side or reason.
        """
        if data is None:
            return None
        if not isinstance(data, Mapping):
            raise RecordError(f"must be an object or null, got {type(data).__name__}", field="transition")
        unknown = sorted(set(data) - {"sides", "reason"})
        if unknown:
            raise RecordError(f"unknown keys {unknown}", field="transition")
        return cls(sides=data.get("sides"), reason=data.get("reason"))  # type: ignore[arg-type]


# Emission order of the origin's model_dump; the optional tail follows only when set.
WIRE_FIELDS: tuple[str, ...] = (
    "id",
    "type",
    "body",
    "slots",
    "state",
    "confidence",
    "created_at",
    "updated_at",
    "provenance",
    "evidence",
    "supersedes",
    "superseded_by",
    "transition",
    "state_reason",
    "tags",
    "flagged",
    "flag_reason",
    "signed_by",
    "signature",
)
OPTIONAL_FIELDS: tuple[str, ...] = ("occurred_at", "redacted", "redaction_reason", "birth_digest")
# DESIGN.md §9, emitted in this (sorted) order after the optional tail.
EXTENSION_FIELDS: tuple[str, ...] = (
    "epistemic_status",
    "kind",
    "namespace",
    "scope",
    "sources",
    "subject",
    "taint",
    "valid_from",
    "valid_to",
)
KNOWN_FIELDS = frozenset(WIRE_FIELDS) | frozenset(OPTIONAL_FIELDS) | frozenset(EXTENSION_FIELDS)


def string_tuple(value: Any, name: str, *, non_empty: bool = False) -> tuple[str, ...]:
    """Return ``value`` (a non-string iterable of strings) as a tuple.

    Raises:
        RecordError: Not an array of strings, or (``non_empty``) an empty string, named by index.
    """
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise RecordError(f"must be an array of strings, got {type(value).__name__}", field=name)
    items = tuple(value)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise RecordError(f"must be a string, got {type(item).__name__}", field=f"{name}[{i}]")
        if non_empty and not item:
            raise RecordError("must not be empty", field=f"{name}[{i}]")
    return items


def require_str(value: Any, name: str) -> None:
    """Raise a :class:`RecordError` naming ``name`` unless ``value`` is a string."""
    if not isinstance(value, str):
        raise RecordError(f"must be a string, got {type(value).__name__}", field=name)


def require_optional_str(value: Any, name: str) -> None:
    """Raise a :class:`RecordError` naming ``name`` unless ``value`` is a string or ``None``."""
    if value is not None and not isinstance(value, str):
        raise RecordError(f"must be a string or null, got {type(value).__name__}", field=name)

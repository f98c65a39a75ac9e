"""Scalar rules of the fg-agent-memory 0.1 wire format: timestamps, confidence, JSON values.

Canonical JSON itself comes from ``fg_agent_id.canonical_json`` (origin-notes §1.1); this
module adds what the records need around it, each failure as a :class:`RecordError` that
names the field:

- timestamps are UTC, rendered ``YYYY-MM-DDTHH:MM:SS.mmmZ`` with milliseconds truncated;
- confidence is a string of exactly ``d.dddd`` in [0, 1] (DESIGN.md §9, strict);
- a JSON value on the wire holds no float, no NaN and no lone surrogate anywhere.
"""

from __future__ import annotations

import json
import re
import unicodedata
from datetime import UTC, datetime
from typing import Any

from fg_agent_id import canonical_json as _fg_canonical_json
from fg_agent_id.serde import canonical_timestamp as _fg_canonical_timestamp

from agent_memory.errors import RecordError

__all__ = [
    "FORMAT_VERSION",
    "canonical_json",
    "check_json_value",
    "confidence_from_wire",
    "confidence_to_wire",
    "format_timestamp",
    "loads_json",
    "parse_timestamp",
    "utc_now",
]

FORMAT_VERSION = "fg-agent-memory/0.1"

_CANONICAL_TS = re.compile(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z\Z")
_CONFIDENCE = re.compile(r"\A[01]\.[0-9]{4}\Z")


def canonical_json(value: Any, *, checked: bool = False) -> bytes:
    """Return the canonical bytes of a JSON value (fg-agent-id's scheme, origin-notes §1.1).

    Sorted keys, no whitespace, raw UTF-8, the whole text NFC-normalised; floats refused.

    Args:
        value: The JSON value.
        checked: ``value`` is made of parts :func:`check_json_value` has passed (a record's
            own wire object, birth or signing payload, every part checked when the record
            was built), so that walk is not made again (issue 23: a tenth of a batched
            remember's time); fg-agent-id's float refusal, the encoding and the escape
            check below still run.

    Raises:
        RecordError: The value holds a float, NaN, a lone surrogate or a non-JSON type, or a
            control character directly followed by a combining mark (NFC would merge the mark
            with the last letter of the character's escape, and the bytes would not be JSON).
    """
    if not checked:
        check_json_value(value, "value")
    try:
        data = _fg_canonical_json(value)
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        raise RecordError(f"not canonical JSON: {exc}") from exc
    if _ESCAPE_THEN_MARK.search(data):
        _check_escapes(data)
    return data


# The scheme normalises the JSON *text*, so a combining mark right after an escape sequence
# (a newline, then U+0303) composes with the escape's last letter (a backslash, then ñ): not JSON.
# Valid JSON never has a non-ASCII byte right after a backslash or inside a ``\u`` escape's four hex digits.
_ESCAPE_THEN_MARK = re.compile(rb"\\(?:u[0-9a-fA-F]{0,3})?[\x80-\xff]")


def _check_escapes(data: bytes) -> None:
    """Refuse canonical bytes that NFC made invalid JSON (a string with an escape, then a combining mark).

    Raises:
        RecordError: The value holds a control character directly followed by a combining
            mark, which the canonical scheme (fg-agent-id, NFC over the JSON text) cannot
            write as JSON (found by the MemoryFile fuzzer of issue 11's soak).
    """
    try:
        json.loads(data)
    except ValueError:
        raise RecordError(
            "not canonical JSON: a string has a control character directly followed by a"
            " combining mark (such as a newline, then U+0303), which the canonical form cannot write"
        ) from None


def utc_now() -> datetime:
    """Return the current time in UTC, truncated to milliseconds like every wire timestamp."""
    return truncate_ms(datetime.now(UTC))


def truncate_ms(value: datetime) -> datetime:
    """Return an aware datetime in UTC with microseconds truncated to whole milliseconds."""
    value = value.astimezone(UTC)
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def format_timestamp(value: datetime) -> str:
    """Render an aware datetime as the canonical wire string ``2026-01-01T00:00:00.000Z``.

    Years below 1000 get their four digits (``0090-…``): the origin's formatter leaves them
    unpadded (``strftime``), which no ISO-8601 reader takes back (note fuzzer, issue 11 soak).
    """
    if type(value) is datetime:
        # The same text as the origin's formatter with the year padded, in one C call.
        return value.astimezone(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"
    stamp = str(_fg_canonical_timestamp(value))
    year, dash, rest = stamp.partition("-")
    return f"{int(year):04d}{dash}{rest}" if len(year) < 4 else stamp


def parse_timestamp(value: Any, field: str, *, strict: bool = False) -> datetime:
    """Parse a wire timestamp into an aware UTC datetime truncated to milliseconds.

    Args:
        value: An aware ``datetime`` or an ISO-8601 string with an offset (``Z`` allowed).
        field: The wire field, named in errors.
        strict: Require the exact canonical spelling (used for the extension fields of
            DESIGN.md §9, which only this project writes).

    Raises:
        RecordError: Not a string or datetime, naive, not ISO-8601, or (strict) not canonical.
    """
    if type(value) is datetime and value.tzinfo is UTC and value.microsecond % 1000 == 0:
        return value  # already what truncate_ms would make of it
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise RecordError("naive datetime: a time zone is required", field=field)
        return truncate_ms(value)
    if not isinstance(value, str):
        raise RecordError(f"must be a timestamp string, got {type(value).__name__}", field=field)
    if strict and not _CANONICAL_TS.match(value):
        raise RecordError(
            f"must be a canonical UTC timestamp like 2026-01-01T00:00:00.000Z, got {value!r}", field=field
        )
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise RecordError(f"not an ISO-8601 timestamp: {value!r}", field=field) from None
    if parsed.tzinfo is None:
        raise RecordError(f"naive timestamp {value!r}: a time zone offset or Z is required", field=field)
    return truncate_ms(parsed)


def confidence_to_wire(value: float) -> str:
    """Render a confidence in [0, 1] as the 4-decimal wire string (``0.9`` → ``"0.9000"``).

    Raises:
        RecordError: Not a real number (bools refused), NaN, or outside [0, 1].
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RecordError(f"must be a number in [0, 1], got {type(value).__name__}", field="confidence")
    if not 0.0 <= float(value) <= 1.0:
        raise RecordError(f"must be in [0, 1], got {value!r}", field="confidence")
    return format(float(value), ".4f")


def confidence_from_wire(value: Any) -> float:
    """Parse the wire confidence strictly: a string of exactly ``d.dddd`` in [0, 1].

    The origin's reader also takes numbers and short strings, but re-emitting those would
    change the signed bytes, so this project refuses them (DESIGN.md §9).

    Raises:
        RecordError: Anything but a ``d.dddd`` string in [0, 1].
    """
    if not isinstance(value, str):
        raise RecordError(
            f'must be a 4-decimal string like "0.9000", got {type(value).__name__} {value!r}',
            field="confidence",
        )
    if not _CONFIDENCE.match(value) or float(value) > 1.0:
        raise RecordError(
            f'must be a 4-decimal string in [0, 1] like "0.9000", got {value!r}', field="confidence"
        )
    return float(value)


MAX_JSON_DEPTH = 100
"""How deeply JSON values may nest; the note codec reads no deeper (DESIGN.md §9)."""
_MAX_INT = 10**4000  # well inside Python's 4,300-digit limit for int <-> str conversion


def check_json_value(value: Any, field: str, _depth: int = 0) -> None:
    """Check that a value is plain float-free JSON with encodable strings.

    Args:
        value: The value to check (dicts need string keys).
        field: Its wire field; nested positions are appended (``slots.weight``, ``tags[2]``).

    Raises:
        RecordError: Naming the innermost offending position.
    """
    kind = type(value)
    if (kind is str and value.isascii()) or value is None or kind is bool:
        return  # the common cases, at a glance (see _settled)
    if _depth > MAX_JSON_DEPTH and isinstance(value, list | tuple | dict):
        raise RecordError(f"nested deeper than {MAX_JSON_DEPTH} levels", field=field)
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if abs(value) >= _MAX_INT:
            raise RecordError("integer too large (4,000 digits or more)", field=field)
        return
    if isinstance(value, float):
        raise RecordError("floats are not allowed on the wire: use an integer or a string", field=field)
    if isinstance(value, str):
        _check_text(value, field)
        return
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            if not _settled(item):  # the position is named only for a value that needs a look
                check_json_value(item, f"{field}[{i}]", _depth + 1)
        return
    if isinstance(value, dict):
        normalised: set[str] = set()
        for key, item in value.items():
            if not isinstance(key, str):
                raise RecordError(f"object keys must be strings, got {type(key).__name__}", field=field)
            if not key.isascii():  # ASCII text is valid UTF-8, in NFC, and has no control-then-mark
                _check_text(key, field)
            # Canonical JSON sorts keys, then NFC-normalises the whole text: a key that is not
            # NFC would sort differently once re-read, and two keys could collide.
            nfc = key if key.isascii() else unicodedata.normalize("NFC", key)
            if nfc != key:
                raise RecordError(f"object keys must be in Unicode NFC form: {key!r}", field=field)
            if nfc in normalised:
                raise RecordError(f"two keys are the same text after NFC normalisation: {key!r}", field=field)
            normalised.add(nfc)
            if not _settled(item):
                check_json_value(item, f"{field}.{key}", _depth + 1)
        return
    raise RecordError(f"not a JSON value: {type(value).__name__}", field=field)


def _settled(value: Any) -> bool:
    """Whether ``value`` passes :func:`check_json_value` at a glance: null, a bool, a small int, ASCII text.

    ASCII text encodes as UTF-8 and holds no control character followed by a combining
    mark, so it needs no closer look; anything else, including subclasses, gets the full check.
    """
    kind = type(value)
    if kind is str:
        return value.isascii()  # type: ignore[no-any-return]
    return value is None or kind is bool or (kind is int and -_MAX_INT < value < _MAX_INT)


def _check_text(value: str, field: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise RecordError("contains a lone surrogate, which UTF-8 cannot encode", field=field) from None
    for match in _CONTROL.finditer(value):
        # The escape JSON writes for it (\n, \u001a), then the combining marks after it: NFC
        # over the JSON text would compose the escape's last letter with one of them.
        escape = json.dumps(match.group())[1:-1]
        end = match.end()
        while end < len(value) and unicodedata.combining(value[end]):
            end += 1
        if end > match.end() and not unicodedata.normalize(
            "NFC", escape + value[match.end() : end]
        ).startswith(escape):
            raise RecordError(
                f"a control character ({match.group()!r}) directly followed by a combining mark"
                f" ({value[match.end()]!r}) cannot be written as canonical JSON",
                field=field,
            )


# A control character (which JSON escapes) followed by a non-ASCII one: the only candidates.
_CONTROL = re.compile(r"[\x00-\x1f](?=[^\x00-\x7f])")


def toml_string(text: str) -> str:
    """Return ``text`` as a quoted TOML basic string that every TOML reader reads back as ``text``.

    Backslash and quote are escaped, and every character TOML forbids raw in a basic string
    (U+0000 to U+001F and U+007F) is written as a ``u`` escape of four hex digits; everything else stays
    as it is (characters beyond the BMP included, never as surrogate escapes). Used by every
    ``to_toml`` that writes ``memory.toml`` (found by the ``memory.toml`` fuzzer of issue 11's
    soak: a ``home_id`` holding a quote was written unescaped).

    Args:
        text: Any string without lone surrogates.

    Returns:
        The string with its quotes: for ``a"b``, the quote in the middle escaped.
    """
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + _TOML_FORBIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", escaped) + '"'


_TOML_FORBIDDEN = re.compile("[\x00-\x1f\x7f]")


def loads_json(data: bytes | str, *, path: str | None = None) -> Any:
    """Parse JSON text strictly: UTF-8, no duplicate keys, no NaN or Infinity.

    Floats still parse (as ``float``) so that the record checks can name the field.

    Raises:
        RecordError: Not UTF-8, not JSON, a duplicate key, a non-finite number, or nesting
            too deep for the parser's stack; with ``path``.
    """
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordError(f"not UTF-8 (byte {exc.start})", path=path) from None

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, item in pairs:
            if key in result:
                raise RecordError(f"duplicate JSON key {key!r}", path=path)
            result[key] = item
        return result

    def no_constant(name: str) -> Any:
        raise RecordError(f"{name} is not allowed in JSON", path=path)

    try:
        return json.loads(data, object_pairs_hook=no_duplicates, parse_constant=no_constant)
    except json.JSONDecodeError as exc:
        raise RecordError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", path=path) from None
    except ValueError as exc:  # e.g. an integer longer than Python's digit limit
        raise RecordError(f"not usable JSON: {exc}", path=path) from None
    except RecursionError:  # arrays or objects nested thousands deep exhaust the parser's stack
        raise RecordError(
            f"not usable JSON: nested deeper than the parser can follow (at most {MAX_JSON_DEPTH} levels)",
            path=path,
        ) from None

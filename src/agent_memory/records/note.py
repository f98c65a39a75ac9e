r"""The Markdown note codec: one note version file is exactly one wire record (DESIGN.md §3, §9).

A note is ``---\n`` + YAML frontmatter holding every wire field but ``body`` + ``---\n`` +
the body + ``\n``, read and written as bytes: no newline translation, no ``splitlines``, so a
body keeps its ``\r``, U+2028, ``---`` lines and blank edges. The frontmatter closes at the
first line that is exactly ``---``; the writer never emits one, because every field is one
line of compact JSON (valid YAML flow) with YAML's unsafe characters escaped as ``\u`` plus four hex digits.

Invariant: for every valid record ``r``,
``load_note(dump_note(r)).canonical_bytes() == r.canonical_bytes()`` and
``dump_note(load_note(dump_note(r))) == dump_note(r)``, so ids and signatures verify from the
file alone. The reader never repairs: every departure from the format is a
:class:`~agent_memory.errors.RecordError` naming the file, the record when known, and the
field (or the line, for YAML errors). Hand-written notes may use ordinary YAML, read with
JSON's scalar types only: no dates, no ``yes``/``no`` booleans, no floats, no aliases.
A note exactly as the writer left it is read line by line as JSON, each line checked to be
what the writer makes of the value read; any other frontmatter goes to the YAML reader, so
both ways give the same fields and the same errors (issue 10: reads at recall time).
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from agent_memory.errors import RecordError
from agent_memory.records.fields import KNOWN_FIELDS
from agent_memory.records.record import MemoryRecord

__all__ = ["MAX_DEPTH", "dump_note", "load_note", "read_frontmatter"]

_FENCE = "---\n"
_CLOSE = "\n---\n"
# Keys stay plain when no YAML 1.1 reader can mistake them for a bool or null.
_PLAIN_KEY = re.compile(r"\A[a-z_][a-z0-9_]*\Z")
_YAML11_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})
# What a double-quoted YAML scalar cannot carry raw: anything outside YAML's printable set,
# NEL (folded into a space), U+2028/U+2029 (line breaks to YAML 1.1) and the BOM. JSON has
# already escaped C0 controls; every match is in the BMP, so one four-hex-digit ``\u`` escape suffices.
_UNSAFE = re.compile("[^\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\u2028\u2029\ufeff]")
# YAML refuses implicit keys over 1024 characters; longer ones are written as `? key`.
_MAX_IMPLICIT_KEY = 1000
# Nesting beyond this is refused both ways, well before libyaml's limit (1000) or Python's stack.
MAX_DEPTH = 100
_ID_LINE = re.compile(rb"""^id:[ \t]*["']?(mem:[0-9a-f]{32})["']?[ \t\r]*$""", re.MULTILINE)

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_FLOAT = "tag:yaml.org,2002:float"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_DECIMAL = re.compile(r"\A[-+]?(?:0|[1-9][0-9]*)\Z")
_NULL_WORDS = frozenset({"", "~", "null", "Null", "NULL"})
# Whatever a YAML 1.1 or 1.2 reader takes for a number but JSON's integers do not cover:
# floats, inf/nan, octal/hex/binary, digit groups and base 60. Refused, never read as text.
_OTHER_NUMBER = re.compile(
    r"""\A[-+]?(?:
        [0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?
      | \.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?
      | 0[box][0-9a-fA-F_]+
      | [0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?
      | \.(?:inf|Inf|INF|nan|NaN|NAN)
    )\Z""",
    re.VERBOSE,
)


class _NoteLoader(yaml.CSafeLoader):
    """libyaml's safe loader resolving plain scalars with JSON's types only.

    ``true``/``false`` are the only booleans, integers are plain decimals, and there is no
    timestamp, merge-key or value resolver: everything else plain is a string, except
    number-like text, which resolves to ``float`` so that the reader can refuse it.
    """

    yaml_implicit_resolvers: dict[Any, Any] = {}  # noqa: RUF012 - PyYAML's class-level registry


for _tag, _pattern, _first in (
    (_BOOL, re.compile(r"\A(?:true|false)\Z"), list("tf")),
    (_NULL, re.compile(r"\A(?:~|null|Null|NULL|)\Z"), ["~", "n", "N", ""]),
    (_INT, _DECIMAL, list("-+0123456789")),
    (_FLOAT, _OTHER_NUMBER, list("-+.0123456789")),
):
    _NoteLoader.add_implicit_resolver(_tag, _pattern, _first)


# ---------------------------------------------------------------------- writer


def dump_note(record: MemoryRecord) -> bytes:
    """Return the bytes of the note version file for a record.

    Fields come in ``record.to_wire()`` order without ``body``; each value is compact JSON
    with YAML-unsafe characters escaped (DESIGN.md §9, "The codec"). The output depends on
    the record alone, so writing it twice gives the same bytes.

    Raises:
        RecordError: A value is nested deeper than :data:`MAX_DEPTH` levels (the field is named).
    """
    lines = [_FENCE]
    try:
        for key, value in record.to_wire().items():
            if key != "body":
                written = _key(key)
                separator = "\n: " if len(written) > _MAX_IMPLICIT_KEY else ": "
                lines.append(f"{_explicit(written)}{separator}{_flow(value, key, 1)}\n")
    except RecordError as exc:
        raise exc.located(record_id=record.id) from None
    lines.append(_FENCE)
    return ("".join(lines) + record.body + "\n").encode("utf-8")


def _key(key: str) -> str:
    return key if _PLAIN_KEY.match(key) and key not in _YAML11_WORDS else _string(key)


def _explicit(written_key: str) -> str:
    return f"? {written_key}" if len(written_key) > _MAX_IMPLICIT_KEY else written_key


def _string(text: str) -> str:
    return _UNSAFE.sub(_escape, json.dumps(text, ensure_ascii=False))


def _escape(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"


def _flow(value: Any, field: str, depth: int) -> str:
    if isinstance(value, dict | list | tuple) and depth > MAX_DEPTH:
        raise RecordError(f"nested deeper than {MAX_DEPTH} levels, which a note does not hold", field=field)
    if isinstance(value, dict):
        items = (f"{_explicit(_string(k))}:{_flow(v, field, depth + 1)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_flow(item, field, depth + 1) for item in value) + "]"
    if isinstance(value, str):
        return _string(value)
    return json.dumps(value)  # null, true, false or an integer: a valid record holds nothing else


# ---------------------------------------------------------------------- reader


def load_note(data: bytes, *, path: str | None = None) -> MemoryRecord:
    """Parse a note version file into the record it holds (DESIGN.md §3 and §9).

    Args:
        data: The file's bytes, exactly as stored.
        path: The file, named in every error.

    Raises:
        RecordError: The bytes are not UTF-8; the file does not start with ``---``, never
            closes its frontmatter or lacks the final newline; the YAML is malformed (the
            line is given), not a mapping, repeats a key, holds ``body``, a float, an alias,
            a non-JSON value or one nested deeper than :data:`MAX_DEPTH`; or the fields do
            not make a valid record (the field is named).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        detail = f"not UTF-8: invalid byte 0x{data[exc.start]:02x} at byte offset {exc.start}"
        raise RecordError(detail, path=path, record_id=_record_id(data)) from None
    try:
        frontmatter, body = _split(text)
        fields = _parse_frontmatter(frontmatter)
    except RecordError as exc:
        raise exc.located(path=path, record_id=_record_id(data)) from None
    fields["body"] = body
    return MemoryRecord.from_wire(fields, path=path)


def _record_id(data: bytes) -> str | None:
    """Find the id line of a note that failed to parse, so that the error can name the record."""
    end = data.find(b"\n---\n", 3)
    found = _ID_LINE.search(data if end < 0 else data[:end])
    return found.group(1).decode("ascii") if found else None


def read_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """Return a note's frontmatter fields and its body, read exactly as :func:`load_note` reads them.

    Raises:
        RecordError: The fences are broken or the YAML is malformed (no path: the caller adds it).
    """
    frontmatter, body = _split(text)
    return _parse_frontmatter(frontmatter), body


def _split(text: str) -> tuple[str, str]:
    if not text.startswith(_FENCE):
        crlf = text.startswith("---\r\n")
        raise RecordError(
            "a note must start with a '---' line opening its YAML frontmatter",
            hint="the file has CRLF line endings; notes use LF only" if crlf else None,
        )
    end = text.find(_CLOSE, len(_FENCE) - 1)
    if end < 0:
        if text.endswith("\n---"):
            raise RecordError("the file must end with a newline after the closing '---'")
        raise RecordError("the frontmatter is never closed by a '---' line")
    rest = text[end + len(_CLOSE) :]
    if not rest.endswith("\n"):
        raise RecordError("the file must end with a newline after the body (an empty body is one empty line)")
    return text[len(_FENCE) : end + 1], rest[:-1]


def _parse_frontmatter(frontmatter: str) -> dict[str, Any]:
    fields = _parse_written(frontmatter)
    return fields if fields is not None else _parse_yaml(frontmatter)


class _NotWritten(ValueError):
    """The frontmatter is not exactly what :func:`dump_note` writes: the YAML reader decides."""


def _refuse(_text: str) -> Any:
    raise _NotWritten


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    # A repeated key is an error, and a long key may be written `? key`: the YAML reader decides.
    if len(result) != len(pairs) or any(len(key) > _MAX_IMPLICIT_KEY // 6 for key in result):
        raise _NotWritten
    return result


_JSON = json.JSONDecoder(object_pairs_hook=_unique, parse_float=_refuse, parse_constant=_refuse)
# What _flow writes for a value with short keys and no character YAML cannot carry raw.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
# Lines every note has, read without a parser; fresh containers for each note.
_LITERALS: dict[str, Any] = {"null": None, "true": True, "false": False}
_EMPTY: dict[str, type[list[Any]] | type[dict[str, Any]]] = {"[]": list, "{}": dict}
_WIRE_KEYS = KNOWN_FIELDS - {"body"}  # all plain keys that no YAML reader takes for a bool or null
# Characters YAML cannot carry raw (see _UNSAFE; a line break ends a line here).
_NOT_PRINTABLE = re.compile(
    "[^\n\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\u2028\u2029\ufeff]"
)


def _parse_written(frontmatter: str) -> dict[str, Any] | None:
    """Read frontmatter the writer's way, or return ``None`` for the YAML reader to decide.

    :func:`dump_note` writes one ``key: <value>`` line per field, the value being what
    :func:`_flow` makes of it. A line is taken here only when the value JSON reads from it
    is written back as exactly that line, with only printable characters, short keys and
    shallow nesting; the YAML reader reads such a line to the same value (the codec's
    round-trip invariant). Anything else (hand edits, escapes of unsafe characters, every
    error) goes to the YAML reader, whose results and errors stand unchanged. Several times
    faster than building libyaml's node graph.
    """
    if not frontmatter or (
        "\x7f" in frontmatter if frontmatter.isascii() else _NOT_PRINTABLE.search(frontmatter)
    ):
        return None
    fields: dict[str, Any] = {}
    scan = _JSON.raw_decode
    for line in frontmatter[:-1].split("\n"):
        key, separator, text = line.partition(": ")
        if not (separator and text) or key in fields:
            return None
        if key not in _WIRE_KEYS and (
            key == "body"
            or key in _YAML11_WORDS
            or len(key) > _MAX_IMPLICIT_KEY // 6
            or not _PLAIN_KEY.match(key)
        ):
            return None
        if text in _LITERALS:
            fields[key] = _LITERALS[text]
        elif text in _EMPTY:
            fields[key] = _EMPTY[text]()
        else:
            # Brackets bound the nesting: MAX_DEPTH is never reached here.
            if text[0] in "[{" and text.count("[") + text.count("{") >= MAX_DEPTH:
                return None
            try:
                value, end = scan(text)
            except (ValueError, RecursionError):  # not JSON, a float, a repeated or long key, a huge integer
                return None
            if end != len(text) or _COMPACT.encode(value) != text:
                return None
            fields[key] = value
    return fields


def _parse_yaml(frontmatter: str) -> dict[str, Any]:
    loader = _NoteLoader(frontmatter)
    try:
        root = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 2}, column {mark.column + 1}" if mark else ""
        context = f" ({exc.context})" if exc.context else ""
        raise RecordError(f"YAML error{where}: {exc.problem}{context}") from None
    except yaml.reader.ReaderError as exc:
        # libyaml reports the byte offset within the frontmatter, which starts on line 2.
        line = frontmatter.encode("utf-8")[: exc.position].count(b"\n") + 2
        raise RecordError(f"YAML cannot read character U+{exc.character:04X} at line {line}") from None
    except yaml.YAMLError as exc:
        raise RecordError(f"YAML error: {exc}") from None
    finally:
        loader.dispose()
    if root is None:
        raise RecordError("the frontmatter is empty: it must hold the record's wire fields")
    if not isinstance(root, MappingNode) or root.tag != _MAP:
        raise RecordError(f"the frontmatter must be a mapping of wire fields (line {_line(root)})")
    fields: dict[str, Any] = _mapping(root, None, set(), 0)
    return fields


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 2 if node.start_mark else 0


def _error(node: Node, field: str | None, detail: str) -> RecordError:
    return RecordError(f"line {_line(node)}: {detail}", field=field)


def _value(node: Node, field: str, seen: set[int], depth: int) -> Any:
    # An alias is the very node object it names: refusing any node seen before stops
    # recursive documents and exponential "billion laughs" expansion alike.
    if id(node) in seen:
        raise _error(node, field, "anchors and aliases are not supported: write the value out")
    seen.add(id(node))
    if isinstance(node, ScalarNode):
        return _scalar(node, field)
    if depth > MAX_DEPTH:
        raise _error(node, field, f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(node, SequenceNode) and node.tag == _SEQ:
        return [_value(item, f"{field}[{i}]", seen, depth + 1) for i, item in enumerate(node.value)]
    if isinstance(node, MappingNode) and node.tag == _MAP:
        return _mapping(node, field, seen, depth)
    raise _error(node, field, f"unsupported YAML tag {node.tag}: only JSON values are allowed")


def _mapping(node: MappingNode, field: str | None, seen: set[int], depth: int) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key_node, value_node in node.value:
        if not (isinstance(key_node, ScalarNode) and key_node.tag == _STR):
            shown = key_node.value if isinstance(key_node, ScalarNode) else key_node.tag
            raise _error(key_node, field, f"the key {shown!r} is not a string: quote it")
        key: str = key_node.value
        name = f"{field}.{key}" if field else key
        if key in result:
            raise _error(key_node, name, "duplicate key")
        if field is None and key == "body":
            raise _error(key_node, "body", "the body is the Markdown after the frontmatter, not a field")
        result[key] = _value(value_node, name, seen, depth + 1)
    return result


def _scalar(node: ScalarNode, field: str) -> Any:
    tag, text = node.tag, node.value
    if tag == _STR:
        return text
    if tag == _NULL and text in _NULL_WORDS:
        return None
    if tag == _BOOL and text in ("true", "false"):
        return text == "true"
    if tag == _INT and _DECIMAL.match(text):
        try:
            return int(text)
        except ValueError:
            raise _error(node, field, "the integer is too long") from None
    if tag in (_FLOAT, _INT):
        if field == "confidence":
            fix = 'quote it as a 4-decimal string, e.g. confidence: "0.9000"'
        else:
            fix = "quote it to keep it as text, or write a plain decimal integer"
        raise _error(
            node, field, f"the unquoted number {text} is not allowed (the wire has no floats): {fix}"
        )
    raise _error(node, field, f"unsupported YAML value {text!r} with tag {tag}: only JSON values are allowed")

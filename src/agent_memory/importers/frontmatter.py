"""Read the YAML frontmatter of a Markdown file written by another tool, as text only.

Notes from Obsidian, basic-memory, Jekyll or Claude Code open with ``---``, YAML, ``---``.
This reader never constructs a Python object from that YAML: it composes the node tree with
libyaml's safe loader and keeps every scalar as the text written, so none of YAML 1.1's
implicit typing can bite (``2024-01-15`` stays a string, ``no`` is not ``False``, ``1.10`` is
not ``1.1``, ``012`` is not octal) and no tag can build an object. Dates are then parsed by
:func:`meta_date` on purpose, in the Home's time zone.

Invariant: a frontmatter that cannot be read is a :class:`~agent_memory.errors.RecordError`
naming the file and the line (a file with no frontmatter is fine: ``{}``); anchors and aliases
are refused, so a "billion laughs" document cannot expand; keys are unique strings.
"""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from agent_memory.errors import RecordError

__all__ = ["MAX_DEPTH", "meta_date", "meta_tags", "meta_text", "split_frontmatter"]

MAX_DEPTH = 20
"""Nesting deeper than this in a frontmatter is refused (no note needs it)."""

DATE_KEYS = ("date", "created", "created_at")
"""Frontmatter keys read as the note's date, first present wins (Jekyll, Obsidian, others)."""

_CLOSERS = ("---", "...")


def split_frontmatter(text: str, path: str) -> tuple[dict[str, Any], int]:
    r"""Split a leading ``---`` frontmatter off ``text``.

    Args:
        text: The whole file, newlines as ``\n``.
        path: The file, named in errors.

    Returns:
        ``(fields, lines)``: the frontmatter as nested dicts, lists and strings (``{}`` when
        there is none), and how many lines of the file it takes, closing line included (0
        when none), so the body starts on line ``lines + 1``.

    Raises:
        RecordError: The frontmatter is never closed, is not YAML, is not a mapping, repeats
            a key, uses anchors or aliases, or nests deeper than :data:`MAX_DEPTH`.
    """
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return {}, 0
    for number in range(1, len(lines)):
        if lines[number].rstrip() in _CLOSERS:
            return _parse("\n".join(lines[1:number]), path), number + 1
    raise RecordError("the frontmatter opened on line 1 is never closed by a '---' line", path=path)


def _parse(source: str, path: str) -> dict[str, Any]:
    if not source.strip():
        return {}
    try:
        root = yaml.compose(source, Loader=yaml.CSafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 2}" if mark else ""
        raise RecordError(f"frontmatter YAML error{where}: {exc.problem}", path=path) from None
    except yaml.YAMLError as exc:
        raise RecordError(f"frontmatter YAML error: {exc}", path=path) from None
    if root is None:
        return {}
    if not isinstance(root, MappingNode):
        raise RecordError(f"the frontmatter must be a mapping of fields (line {_line(root)})", path=path)
    fields: dict[str, Any] = _value(root, path, set(), 0)
    return fields


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 2 if node.start_mark else 0


def _value(node: Node, path: str, seen: set[int], depth: int) -> Any:
    # An alias is the very node it names: refusing a node seen before stops cycles and expansion.
    if id(node) in seen:
        raise RecordError(f"frontmatter line {_line(node)}: anchors and aliases are not supported", path=path)
    seen.add(id(node))
    if depth > MAX_DEPTH:
        raise RecordError(f"frontmatter line {_line(node)}: nested deeper than {MAX_DEPTH}", path=path)
    if isinstance(node, ScalarNode):
        return str(node.value)
    if isinstance(node, SequenceNode):
        return [_value(item, path, seen, depth + 1) for item in node.value]
    if isinstance(node, MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                raise RecordError(f"frontmatter line {_line(key_node)}: a key must be plain text", path=path)
            key = str(key_node.value)
            if key in result:
                raise RecordError(f"frontmatter line {_line(key_node)}: duplicate key {key!r}", path=path)
            result[key] = _value(value_node, path, seen, depth + 1)
        return result
    raise RecordError(f"frontmatter line {_line(node)}: unsupported YAML node", path=path)  # pragma: no cover


def meta_text(meta: dict[str, Any], key: str, path: str) -> str | None:
    """Return the frontmatter field ``key`` as stripped text, or None when absent or empty.

    Raises:
        RecordError: The field is a list or a mapping (the file and field are named).
    """
    value = meta.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise RecordError("must be text, not a list or mapping", path=path, field=key)
    return value.strip() or None


def meta_tags(meta: dict[str, Any], path: str) -> tuple[str, ...]:
    """Return the frontmatter ``tags``: a YAML list, or one string split on commas (else spaces).

    A leading ``#`` is dropped (``#coffee`` → ``coffee``); duplicates and empty ones are left out.

    Raises:
        RecordError: ``tags`` is a mapping, or a list holding a list or mapping.
    """
    value = meta.get("tags")
    if value is None:
        return ()
    if isinstance(value, str):
        words = value.split(",") if "," in value else value.split()
    elif isinstance(value, list) and all(isinstance(word, str) for word in value):
        words = value
    else:
        raise RecordError("must be a list of words or one comma-separated string", path=path, field="tags")
    cleaned = (word.strip().lstrip("#").strip() for word in words)
    return tuple(dict.fromkeys(word for word in cleaned if word))


def meta_date(meta: dict[str, Any], zone: tzinfo, path: str) -> datetime | None:
    """Return the note's date from the first of :data:`DATE_KEYS` present, or None.

    ``2024-01-15`` is midnight of that day in ``zone``; a time without an offset is read in
    ``zone``; ``2024-01-15T09:30:00Z`` keeps its offset. File modification times are never
    used: they change with every clone and copy.

    Raises:
        RecordError: The value is not an ISO 8601 date or time (the file and field named).
    """
    for key in DATE_KEYS:
        text = meta_text(meta, key, path)
        if text is None:
            continue
        try:
            when = datetime.fromisoformat(text)
        except ValueError:
            raise RecordError(
                f"unreadable date {text!r}", path=path, field=key, hint="write YYYY-MM-DD or an ISO 8601 time"
            ) from None
        return when if when.tzinfo is not None else when.replace(tzinfo=zone)
    return None

"""Read a basic-memory notes folder into records (issue 9: ``--from basic-memory``).

A basic-memory note (basicmachines-co/basic-memory, "Note Format Reference"; the rules below
follow its parser, ``markdown/plugins.py``) is Markdown with YAML frontmatter (``title``,
``type``, ``tags``, ``permalink``) and two kinds of list items, found anywhere in the body:

- an **observation** ``- [category] content #tag (context)``: a categorised fact. Each becomes
  one ``fact`` record, ``"<title>: <the item as written>"``, tagged ``basic-memory``,
  ``observation``, ``category:<category>`` (plus ``preference`` for that category, the word
  DESIGN.md §2 uses), each ``#tag``, the note's tags, ``permalink:<permalink>`` and
  ``entity:<type>``. A bullet with a ``#tag`` but no category is an observation too; task
  boxes (``[ ]``, ``[x]``, ``[-]``), clock stamps (``[00:01:02]``) and plain links are not.
- a **relation** ``- relation_type [[Target]] (context)`` (a quoted type may hold spaces): an
  edge of basic-memory's knowledge graph. Our records hold no typed links (``evidence`` names
  record ids, and a target note may never be imported), so each relation becomes one ``fact``
  whose text names both ends, ``"<title> relation_type [[Target]] (context)"`` (found by
  search on either title), tagged ``relation`` and ``relation:<relation_type>``.

The rest of the note (prose, tables, code) becomes ``fact`` records per section, headed by the
note's title. A frontmatter ``date`` / ``created`` is every record's ``occurred_at``; there is
no other date (basic-memory keeps its times in its database, and file times are not stable).
Sources are ``<file>#L<first>-L<last>`` relative to the folder; an observation cites its line.

Invariant: lines inside fenced code and block quotes (Obsidian callouts) are never read as
observations or relations.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, tzinfo

from agent_memory.errors import RecordError
from agent_memory.importers.frontmatter import meta_date, meta_tags, meta_text
from agent_memory.importers.items import Item, Problem
from agent_memory.importers.markdown import (
    Note,
    note_chunks,
    parse_note,
    problem_of,
    segments,
    source_files,
    titled,
)

__all__ = ["parse_observation", "parse_relation", "read_basic_memory"]

_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(.*\S)\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_CATEGORY = re.compile(r"^\[([^\[\]()]+)\]\s+(.+)$")
_STAMP = r"\d{1,3}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?"
_CLOCK = re.compile(rf"^{_STAMP}(?:\s+-\s+{_STAMP})?$")
_MD_LINK = re.compile(r"^\[.*?\]\(.*?\)$")
_WIKI_LINK = re.compile(r"^\[\[.*?\]\]$")


def read_basic_memory(path: str, *, zone: tzinfo, limit: int | None = None) -> Iterator[Item | Problem]:
    """Yield observations, relations and prose of every note in the basic-memory folder ``path``.

    Args:
        path: The project folder (or one note).
        zone: The Home's time zone; a frontmatter date without an offset is read in it.
        limit: At most this many notes; all when None.

    Raises:
        RecordError: ``path`` does not exist, or is a folder holding no ``.md`` note (a bad
            note is yielded as a :class:`Problem`).
    """
    files = list(source_files(path, limit=limit))
    if not files:
        raise RecordError(
            "not a basic-memory folder: no .md note",
            path=path,
            hint="pass the project folder, e.g. ~/basic-memory, or one note",
        )
    for found in files:
        if isinstance(found, Problem):
            yield found
            continue
        try:
            items = list(_note_items(parse_note(found), zone))
        except RecordError as exc:
            yield problem_of(found.path, exc)
            continue
        yield from items


def _note_items(note: Note, zone: tzinfo) -> Iterator[Item]:
    when = meta_date(note.meta, zone, note.path)
    base = list(meta_tags(note.meta, note.path))
    if permalink := meta_text(note.meta, "permalink", note.path):
        base.append(f"permalink:{permalink}")
    if entity := meta_text(note.meta, "type", note.path):
        base.append(f"entity:{entity}")
    used: set[int] = set()
    for number, content in _list_lines(note):
        source = f"{note.path}#L{number}-L{number}"
        if (relation := parse_relation(content)) is not None:
            labels = ["relation", f"relation:{relation[0]}"]
            yield _item(f"{note.title} {content}", source, when, [*labels, *base])
        elif (observation := parse_observation(content)) is not None:
            category, hashtags = observation
            labels = [f"category:{category}"] if category else []
            if category and category.lower() == "preference":
                labels.append("preference")
            yield _item(f"{note.title}: {content}", source, when, ["observation", *labels, *hashtags, *base])
        else:
            continue
        used.add(number)
    yield from _prose(note, used, when, base)


def _item(text: str, source: str, when: datetime | None, tags: list[str]) -> Item:
    return Item(text, source, "fact", occurred_at=when, tags=tuple(dict.fromkeys(["basic-memory", *tags])))


def _list_lines(note: Note) -> Iterator[tuple[int, str]]:
    fence: str | None = None
    start = note.segments[0].first if note.segments else len(note.lines) + 1
    for number in range(start, len(note.lines) + 1):
        line = note.lines[number - 1]
        if (opener := _FENCE.match(line)) is not None:
            mark = opener.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = None
            continue
        if fence is None and not line.lstrip().startswith(">") and (bullet := _BULLET.match(line)):
            yield number, bullet.group(1)


def _prose(note: Note, used: set[int], when: datetime | None, tags: list[str]) -> Iterator[Item]:
    lines = ["" if n + 1 in used else line for n, line in enumerate(note.lines)]
    first_body = note.segments[0].first if note.segments else len(lines) + 1
    rest = replace(note, lines=lines, segments=segments(lines[first_body - 1 :], offset=first_body - 1))
    for first, last, text in note_chunks(rest):
        squeezed = re.sub(r"\n{3,}", "\n\n", text)
        yield _item(titled(note.title, squeezed), f"{note.path}#L{first}-L{last}", when, tags)


def parse_observation(content: str) -> tuple[str | None, list[str]] | None:
    """Return ``(category, hashtags)`` when a list item's ``content`` is an observation, else None.

    ``"[method] Pour over is clearer #coffee (tasting)"`` → ``("method", ["coffee"])``; a
    content with hashtags and no category → ``(None, [...])``; task boxes, clock stamps and
    bare links → None.
    """
    if content.startswith(("[ ]", "[x]", "[-]")) or _MD_LINK.match(content) or _WIKI_LINK.match(content):
        return None
    category: str | None = None
    rest = content
    if (match := _CATEGORY.match(content)) is not None:
        word = match.group(1).strip()
        task_mark = len(word) == 1 and (word in "xX" or not word.isalnum())
        if not (_CLOCK.match(word) or task_mark):
            category, rest = word, match.group(2)
    hashtags = [
        tag.strip(".,;:!?)")
        for part in rest.split()
        if part.startswith("#")
        for tag in part.split("#")
        if tag.strip(".,;:!?)")
    ]
    if category is None and not hashtags:
        return None
    return category, list(dict.fromkeys(hashtags))


def parse_relation(content: str) -> tuple[str, str, str | None] | None:
    """Return ``(relation_type, target, context)`` for ``relation_type [[Target]] (context)``, else None.

    The type is one word, or quoted when it holds spaces; anything after the target but one
    parenthesised context makes the line prose with a link, not a relation.
    """
    start = content.find("[[")
    end = content.find("]]", start + 2) if start >= 0 else -1
    if start < 0 or end < 0:
        return None
    before = content[:start].strip()
    if len(before) >= 2 and before[0] in "'\"" and before.endswith(before[0]):
        kind = before[1:-1].strip()
    elif before and not any(char.isspace() for char in before):
        kind = before
    else:
        return None
    target = content[start + 2 : end].strip()
    after = content[end + 2 :].strip()
    if not kind or not target:
        return None
    if not after:
        return kind, target, None
    if after.startswith("(") and after.endswith(")") and _balanced(after):
        return kind, target, after[1:-1].strip() or None
    return None


def _balanced(text: str) -> bool:
    depth = 0
    for position, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if depth == 0:
            return position == len(text) - 1
    return False

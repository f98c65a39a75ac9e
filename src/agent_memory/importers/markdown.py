"""Read Markdown notes into records: the shared Markdown reading, and the plain-folder format.

Every folder format reads its files with :func:`parse_note`: the frontmatter (as text, see
:mod:`.frontmatter`) and the body cut into :class:`Segment` values — headings, top-level list
items (with their nested lines) and other blocks (paragraphs, tables, quotes, fenced code kept
whole) — each with its 1-based line range in the file. Two ways of grouping them into records:

- :func:`note_chunks` for notes and logs: one chunk per section (heading), sections longer than
  :data:`MAX_CHUNK_CHARS` cut between blocks, the section's heading repeated on later parts;
- :func:`curated_units` for curated lists (``MEMORY.md``, ``CLAUDE.md``): one unit per
  top-level list item and one per run of other blocks, prefixed with the nearest ``##``-level
  heading (``"Preferences: Code style: TypeScript"``).

``--from markdown`` (:func:`read_markdown`): every ``*.md`` / ``*.markdown`` file under the
folder (hidden folders and :data:`~.files.SKIP_DIRS` left out) becomes ``fact`` records — the
whole file when its body is at most :data:`MAX_CHUNK_CHARS` characters, else one per chunk — each
headed by the note's own title (frontmatter ``title``, else its first ``#`` heading) when it does
not start with a level-1 heading. A file name is never made a title: it is presentation, named
by the source anchor, so the same text under two file names is one record (exact dedup).
Frontmatter ``tags`` are kept; the
frontmatter date (``date``, ``created``) is ``occurred_at``; without one the records have no
event time (mtimes are not stable across clones, so they are never used).

Invariant: a chunk never splits a fenced code block or a list item; line ranges cite exactly
the lines the text came from (a repeated heading or title excepted).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

from agent_memory.errors import RecordError
from agent_memory.importers.files import TextFile, anchor_of, read_file, resolve_root, walk
from agent_memory.importers.frontmatter import meta_date, meta_tags, meta_text, split_frontmatter
from agent_memory.importers.items import Item, Problem

__all__ = [
    "MAX_CHUNK_CHARS",
    "Note",
    "Segment",
    "curated_units",
    "heading_text",
    "item_text",
    "note_chunks",
    "note_texts",
    "parse_note",
    "problem_of",
    "read_markdown",
    "source_files",
    "titled",
]

MAX_CHUNK_CHARS = 1500
"""Blocks of one section are joined into chunks of at most about this many characters."""

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_ITEM = re.compile(r"^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_EXTENSIONS = (".md", ".markdown")


@dataclass(frozen=True, slots=True)
class Segment:
    r"""One block of a Markdown body.

    Attributes:
        kind: ``heading``, ``item`` (a top-level list item, nested lines included) or ``block``.
        first: Its first line in the file (1-based).
        last: Its last line in the file (inclusive).
        text: The lines as written, joined by ``\n``.
    """

    kind: str
    first: int
    last: int
    text: str


@dataclass(frozen=True, slots=True)
class Note:
    """A Markdown file as read.

    Attributes:
        path: The anchor path of the file.
        meta: The frontmatter (strings, lists and mappings of them; ``{}`` when none).
        title: Frontmatter ``title``, else the first level-1 heading, else the file name
            without its extension.
        segments: The body's blocks, in order.
        lines: Every line of the file (frontmatter included), without newlines.
        named: The title is the file name (the note has no title of its own): presentation
            the library would add, which ``--from markdown`` leaves out of the body.
    """

    path: str
    meta: dict[str, Any]
    title: str
    segments: list[Segment]
    lines: list[str]
    named: bool = False

    def text(self, first: int, last: int) -> str:
        """Return lines ``first``–``last`` (1-based, inclusive) as written, stripped at both ends."""
        return "\n".join(self.lines[first - 1 : last]).strip()


def parse_note(file: TextFile) -> Note:
    """Parse a file's frontmatter and cut its body into segments.

    Raises:
        RecordError: The frontmatter cannot be read, or its ``title`` is not text.
    """
    meta, taken = split_frontmatter(file.text, file.path)
    lines = file.text.split("\n")
    found = segments(lines[taken:], offset=taken)
    title = meta_text(meta, "title", file.path)
    if title is None:
        heads = (heading_text(s) for s in found if s.kind == "heading")
        title = next((words for level, words in heads if level == 1 and words), None)
    stem = os.path.splitext(file.path.rsplit("/", 1)[-1])[0]
    return Note(file.path, meta, title or stem, found, lines, named=title is None)


def segments(lines: list[str], *, offset: int = 0) -> list[Segment]:
    """Cut Markdown ``lines`` into headings, top-level list items and other blocks.

    Args:
        lines: The body's lines, without newlines.
        offset: Lines of the file before ``lines`` (the frontmatter), added to line numbers.
    """
    found: list[Segment] = []
    i, count = 0, len(lines)
    while i < count:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if _FENCE.match(line):
            kind, end = "block", _fence_end(lines, i)
        elif _HEADING.match(line):
            kind, end = "heading", i
        elif _ITEM.match(line):
            kind, end = "item", _item_end(lines, i)
        else:
            kind, end = "block", _block_end(lines, i)
        found.append(Segment(kind, i + 1 + offset, end + 1 + offset, "\n".join(lines[i : end + 1]).rstrip()))
        i = end + 1
    return found


def _fence_end(lines: list[str], start: int) -> int:
    opener = _FENCE.match(lines[start])
    mark = opener.group(1) if opener else "```"
    for j in range(start + 1, len(lines)):
        closer = _FENCE.match(lines[j])
        if closer and closer.group(1)[0] == mark[0] and len(closer.group(1)) >= len(mark):
            return j
    return len(lines) - 1  # an unclosed fence runs to the end, as in CommonMark


def _item_end(lines: list[str], start: int) -> int:
    last, j = start, start + 1
    while j < len(lines):
        line = lines[j]
        if not line.strip():
            k = j
            while k < len(lines) and not lines[k].strip():
                k += 1
            if k == len(lines) or _indent(lines[k]) < 2:
                break  # a blank line ends the item unless the next text is indented under it
            j = k
            continue
        if _indent(line) < 2 and (_ITEM.match(line) or _HEADING.match(line) or _FENCE.match(line)):
            break
        if _FENCE.match(line):
            j = _fence_end(lines, j)
        last = j
        j += 1
    return last


def _block_end(lines: list[str], start: int) -> int:
    j = start + 1
    while j < len(lines):
        line = lines[j]
        if not line.strip() or _HEADING.match(line) or _FENCE.match(line) or _ITEM.match(line):
            break
        j += 1
    return j - 1


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def heading_text(segment: Segment) -> tuple[int, str]:
    """Return a heading segment's level (1–6) and its text without the ``#`` marks."""
    match = _HEADING.match(segment.text)
    if match is None:
        return 0, segment.text.strip()
    return len(match.group(1)), (match.group(2) or "").strip()


def _sections(note: Note) -> Iterator[tuple[Segment | None, list[Segment]]]:
    heading: Segment | None = None
    body: list[Segment] = []
    for segment in note.segments:
        if segment.kind == "heading":
            if body:
                yield heading, body
            heading, body = segment, []
        else:
            body.append(segment)
    if body:
        yield heading, body


def note_chunks(note: Note, max_chars: int = MAX_CHUNK_CHARS) -> list[tuple[int, int, str]]:
    """Return ``(first_line, last_line, text)`` per section, long sections cut between blocks.

    A heading with nothing under it before the next heading yields nothing; a later part of a
    long section starts with its heading again so it reads on its own.
    """
    chunks: list[tuple[int, int, str]] = []
    for heading, body in _sections(note):
        part: list[Segment] = [heading] if heading else []
        for segment in body:
            size = sum(len(s.text) for s in part if s.kind != "heading")
            if size and size + len(segment.text) > max_chars:
                chunks.append(_joined(note, part, heading))
                part = []
            part.append(segment)
        chunks.append(_joined(note, part, heading))
    return chunks


def _joined(note: Note, part: list[Segment], heading: Segment | None) -> tuple[int, int, str]:
    text = note.text(part[0].first, part[-1].last)
    if heading is not None and part[0] is not heading:
        text = f"{heading.text.strip()}\n\n{text}"
    return part[0].first, part[-1].last, text


def curated_units(note: Note) -> list[tuple[int, int, str]]:
    """Return ``(first_line, last_line, text)`` per top-level list item and per run of other blocks.

    The list marker is dropped and nested lines dedented; the nearest heading of level 2 or
    deeper prefixes the text (a level-1 heading is the document's title and adds nothing).
    """
    units: list[tuple[int, int, str]] = []
    for heading, body in _sections(note):
        prefix = ""
        if heading is not None:
            level, words = heading_text(heading)
            prefix = f"{words.rstrip(':')}: " if level >= 2 and words else ""
        run: list[Segment] = []
        for segment in [*body, None]:
            if segment is not None and segment.kind != "item":
                run.append(segment)
                continue
            if run:
                units.append((run[0].first, run[-1].last, prefix + note.text(run[0].first, run[-1].last)))
                run = []
            if segment is not None:
                units.append((segment.first, segment.last, prefix + item_text(segment.text)))
    return units


def item_text(text: str) -> str:
    """Drop a list item's marker and dedent its nested lines by the marker's width."""
    lines = text.split("\n")
    match = _ITEM.match(lines[0])
    width = match.end() if match else 0
    rest = [line[width:] if line[:width].strip() == "" else line.lstrip() for line in lines[1:]]
    return "\n".join([lines[0][width:].strip(), *rest]).strip()


def source_files(
    path: str,
    *,
    include: Callable[[str], bool] | None = None,
    descend: Callable[[str], bool] | None = None,
    limit: int | None = None,
) -> Iterator[TextFile | Problem]:
    """Yield the Markdown files of ``path``: the file itself, or those under the folder.

    Args:
        path: A file (anchored as named, see :func:`~.files.anchor_of`) or a folder (anchors
            relative to it).
        include: A ``rel_path -> bool`` choosing files in a folder; ``*.md`` / ``*.markdown``
            by default.
        descend: A ``rel_path -> bool`` choosing folders to look in (see :func:`~.files.walk`).
        limit: At most this many files are read (problems are not counted).

    Raises:
        RecordError: ``path`` does not exist.
    """
    root = resolve_root(path)
    if not os.path.isdir(root):
        yield read_file(root, anchor_of(path))
        return
    wanted = include or (lambda rel: rel.lower().endswith(_EXTENSIONS))
    count = 0
    for found in walk(root, include=wanted, descend=descend):
        if isinstance(found, TextFile):
            if limit is not None and count >= limit:
                return
            count += 1
        yield found


def read_markdown(path: str, *, zone: tzinfo, limit: int | None = None) -> Iterator[Item | Problem]:
    """Yield ``fact`` items for every Markdown note of the file or folder ``path``.

    Args:
        path: A ``.md`` file or a folder of them.
        zone: The Home's time zone; a frontmatter date without an offset is read in it.
        limit: At most this many files; all when None.

    Raises:
        RecordError: ``path`` does not exist, is a file that is not ``.md`` / ``.markdown``,
            or is a folder holding no such file (a bad file in a folder is yielded as a
            :class:`Problem`).
    """
    if not os.path.isdir(resolve_root(path)) and not path.lower().endswith(_EXTENSIONS):
        raise RecordError(
            "is not a Markdown file (.md or .markdown)",
            path=path,
            hint="pass a Markdown file or a folder of notes, or name this file's format with --from",
        )
    files = list(source_files(path, limit=limit))
    if not files:
        raise RecordError(
            "no Markdown notes here: no .md or .markdown file",
            path=path,
            hint="pass a folder of Markdown notes or one note",
        )
    for found in files:
        if isinstance(found, Problem):
            yield found
            continue
        try:
            note = parse_note(found)
            when = meta_date(note.meta, zone, note.path)
            tags = ("markdown", *meta_tags(note.meta, note.path))
        except RecordError as exc:
            yield problem_of(found.path, exc)
            continue
        for first, last, text in note_texts(note, name_title=False):
            yield Item(text, f"{note.path}#L{first}-L{last}", "fact", occurred_at=when, tags=tags)


def problem_of(path: str, exc: RecordError) -> Problem:
    """Turn the error met reading the file ``path`` into its reported :class:`Problem`."""
    reason = f"{exc.field}: {exc.detail}" if exc.field else exc.detail
    return Problem(path, f"{reason} ({exc.hint})" if exc.hint else reason)


def note_texts(
    note: Note, title: str | None = None, *, name_title: bool = True
) -> list[tuple[int, int, str]]:
    """Return the whole body as one text when at most :data:`MAX_CHUNK_CHARS`, else its chunks.

    Each text is headed by ``# <title>`` (``note.title`` by default) unless it opens with a
    level-1 heading; a note with nothing but headings yields nothing. With ``name_title``
    false, a title that is only the file name (:attr:`Note.named`) heads nothing: the body
    is the note's own text, so the same note under another file name is the same record
    (exact dedup compares content, not presentation; the source anchor names the file).
    """
    body = note.segments
    if not any(s.kind != "heading" for s in body):
        return []
    if sum(len(s.text) for s in body) <= MAX_CHUNK_CHARS:
        chunks = [(body[0].first, body[-1].last, note.text(body[0].first, body[-1].last))]
    else:
        chunks = note_chunks(note)
    if title is None and note.named and not name_title:
        return chunks
    return [(first, last, titled(title or note.title, text)) for first, last, text in chunks]


def titled(title: str, text: str) -> str:
    """Head ``text`` with ``# title`` unless it already opens with a level-1 heading."""
    first = text.split("\n", 1)[0]
    match = _HEADING.match(first)
    if match and len(match.group(1)) == 1:
        return text
    return f"# {title}\n\n{text}"

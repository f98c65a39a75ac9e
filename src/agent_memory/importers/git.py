"""Read a git repository's history and documentation into records (issue 9: what the demo uses).

Commits become dated episodes with their authors (``"<author> committed: <subject>"`` plus
the message body, ``occurred_at`` = author date, source ``git:<sha>``). Documentation —
``README*`` at the top and ``docs/**/*.md`` — becomes notes (type ``fact``) chunked by
heading and paragraph, each sourced ``<file>#L<first>-L<last>`` (1-based, inclusive).

Invariant: only tracked files are read (``git ls-files``; their work-tree text, so the line
numbers match the files as they are now) and only commits reachable from ``HEAD``; a chunk
never splits a fenced code block.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from datetime import datetime, tzinfo

from agent_memory.errors import RecordError
from agent_memory.importers.items import Item

__all__ = ["chunk_markdown", "read_git"]

MAX_CHUNK_CHARS = 1500
"""Paragraphs of one section are joined into chunks of at most about this many characters."""

_FIELD, _RECORD = "\x1f", "\x1e"


def read_git(path: str, *, zone: tzinfo, limit: int | None = None) -> Iterator[Item]:
    """Yield the commits (newest first, at most ``limit``) and documentation chunks of ``path``.

    Args:
        path: A folder inside a git work tree.
        zone: Unused (git dates carry their offset); accepted like every reader.
        limit: At most this many of the latest commits; all when None.

    Raises:
        RecordError: ``path`` is not a git work tree, or git is not installed.
    """
    del zone
    top = _git(path, "rev-parse", "--show-toplevel").strip()
    items = list(_commits(top, limit))
    for name in _documents(top):
        items.extend(_document(top, name))
    yield from items


def _git(path: str, *args: str) -> str:
    git = shutil.which("git") or "git"
    try:
        done = subprocess.run(  # noqa: S603 - fixed git arguments, no shell
            [git, "-C", path, *args], capture_output=True, text=True, encoding="utf-8", errors="replace"
        )
    except OSError as exc:
        raise RecordError(f"cannot run git: {exc.strerror or exc}", path=path) from None
    if done.returncode != 0:
        reason = done.stderr.strip().splitlines()[0] if done.stderr.strip() else f"git {args[0]} failed"
        raise RecordError(f"not a readable git repository ({reason})", path=path)
    return done.stdout


def _commits(top: str, limit: int | None) -> Iterator[Item]:
    try:
        _git(top, "rev-parse", "--verify", "-q", "HEAD")
    except RecordError:
        return  # a repository without commits yet: documents only
    count = [f"-n{limit}"] if limit is not None else []
    fmt = _FIELD.join(["%H", "%an", "%aI", "%s", "%b"]) + _RECORD
    for entry in _git(top, "log", *count, f"--format={fmt}").split(_RECORD):
        parts = entry.strip("\n").split(_FIELD)
        if len(parts) != 5:
            continue
        sha, author, date, subject, body = parts
        text = f"{author} committed: {subject.strip()}"
        if body.strip():
            text += "\n\n" + body.strip()
        yield Item(
            text=text,
            source=f"git:{sha}",
            occurred_at=datetime.fromisoformat(date),
            tags=("git", "commit"),
        )


def _documents(top: str) -> list[str]:
    names = _git(top, "ls-files", "-z").split("\0")
    picked = [
        n
        for n in names
        if (n.lower().startswith("readme") and "/" not in n) or (n.startswith("docs/") and n.endswith(".md"))
    ]
    return sorted(picked)


def _document(top: str, name: str) -> Iterator[Item]:
    full = os.path.join(top, name)
    try:
        with open(full, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return  # deleted in the work tree or not text: nothing to cite
    for first, last, chunk in chunk_markdown(text):
        if "\n" not in chunk and chunk.startswith("#"):
            continue  # a heading with nothing under it before the next heading says nothing alone
        yield Item(text=chunk, source=f"{name}#L{first}-L{last}", type="fact", tags=("docs",))


def chunk_markdown(text: str, max_chars: int = MAX_CHUNK_CHARS) -> list[tuple[int, int, str]]:
    """Split Markdown into ``(first_line, last_line, text)`` chunks by heading and paragraph.

    A heading starts a new chunk; paragraphs (blank-line separated, fenced blocks kept whole)
    of one section are joined while the chunk stays within ``max_chars`` characters. Line
    numbers are 1-based and inclusive. A chunk keeps its section's heading as its first line
    when the paragraph came later in that section, so it reads on its own.
    """
    blocks = _blocks(text.split("\n"))
    chunks: list[tuple[int, int, str]] = []
    heading = ""
    current: list[tuple[int, int, str]] = []

    def flush() -> None:
        if current:
            body = "\n\n".join(b[2] for b in current)
            if heading and not body.startswith(heading):
                body = f"{heading}\n\n{body}"
            chunks.append((current[0][0], current[-1][1], body))
            current.clear()

    for first, last, block in blocks:
        if block.startswith("#"):
            flush()
            heading = block.split("\n", 1)[0]
        elif current and sum(len(b[2]) for b in current) + len(block) > max_chars:
            flush()
        current.append((first, last, block))
    flush()
    return chunks


def _blocks(lines: list[str]) -> list[tuple[int, int, str]]:
    blocks: list[tuple[int, int, str]] = []
    start: int | None = None
    fenced = False
    for number, line in enumerate(lines, start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        is_heading = not fenced and line.startswith("#") and start is not None
        if (not line.strip() and not fenced) or is_heading:
            if start is not None:
                blocks.append((start, number - 1, "\n".join(lines[start - 1 : number - 1]).strip()))
                start = None
            if not line.strip():
                continue
        if start is None:
            start = number
    if start is not None:
        blocks.append((start, len(lines), "\n".join(lines[start - 1 :]).strip()))
    return [b for b in blocks if b[2]]

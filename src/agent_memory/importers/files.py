r"""Read the files of a folder to import, safely: inside the folder, text only, bounded in size.

The folder importers (OpenClaw, Claude Code, basic-memory, plain Markdown) find their files
through :func:`walk` and read each through :func:`read_file`. A file that cannot or should not
be imported becomes a :class:`~agent_memory.importers.Problem` naming it, never an exception,
so one bad file never stops the others.

Invariants: nothing outside the folder given is ever read — a symbolic link whose target lies
outside it is reported and skipped (files and folders alike), a symbolic link to a folder is
never descended (its target, when inside, is read at its own place), and the final open uses
``O_NOFOLLOW`` so a file swapped for a link after the check is refused; only regular files
are read (a FIFO never blocks the import); a file over :data:`MAX_FILE_BYTES` or holding a NUL
byte is skipped with its reason; text is UTF-8 (an optional BOM is dropped) with ``\r\n``
read as ``\n``, so line numbers match what an editor shows. agent-memory's own output is never
imported back (fresh-user trial, session 3): a folder that is an agent-memory Home is skipped
and reported, and agent-memory's marked bind block and view digest footers are blanked out of
every file read, line for line, so the line numbers of the rest do not move.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from agent_memory.bindings.block import BEGIN, END
from agent_memory.errors import RecordError
from agent_memory.importers.items import Problem
from agent_memory.jobs.views import FOOTER_LINE

__all__ = [
    "HOME_SKIPPED",
    "MAX_FILE_BYTES",
    "SKIP_DIRS",
    "TextFile",
    "anchor_of",
    "is_home",
    "read_file",
    "resolve_root",
    "strip_own_blocks",
    "walk",
]

MAX_FILE_BYTES = 1_048_576
"""Files larger than this (1 MiB) are skipped: no note of memory is that long."""

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox"})
"""Folders never descended: version control, dependencies and caches hold no memory."""

HOME_SKIPPED = (
    "an agent-memory Home (memory.toml and notes/): not imported "
    "(its records move with `agent-memory export` and `import`)"
)
"""The reason a folder that is an agent-memory Home is skipped: its notes and views are this
tool's own output, and importing them would copy records as outside content."""

_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


@dataclass(frozen=True, slots=True)
class TextFile:
    r"""One file's text, as read for import.

    Attributes:
        path: The anchor path: relative to the folder imported, ``/``-separated (or the
            file as the user named it, see :func:`anchor_of`).
        text: The whole text, newlines as ``\n``.
    """

    path: str
    text: str


def resolve_root(path: str) -> str:
    """Return the real path of the file or folder ``path`` (symbolic links resolved).

    The user chose ``path``, so a link there is followed; everything below it must then stay
    inside the resolved folder.

    Raises:
        RecordError: ``path`` does not exist (the path is named).
    """
    real = os.path.realpath(os.path.expanduser(path))
    if not os.path.exists(real):
        raise RecordError("no such file or folder", path=path)
    return real


def anchor_of(path: str) -> str:
    """Name a single file given by the user in its source anchors: as given, home as ``~``.

    A relative path stays as given (``notes/grout.md``); an absolute one inside the home folder
    is written from ``~`` (``/home/ada/.claude/CLAUDE.md`` → ``~/.claude/CLAUDE.md``), so anchors
    do not carry the user's account name and read the same on every machine.
    """
    home = os.path.expanduser("~").rstrip(os.sep)
    if os.path.isabs(path) and home not in ("", "~") and path.startswith(home + os.sep):
        return "~" + path[len(home) :].replace(os.sep, "/")
    return path.replace(os.sep, "/")


def walk(
    root: str,
    *,
    include: Callable[[str], bool],
    descend: Callable[[str], bool] | None = None,
) -> Iterator[TextFile | Problem]:
    """Yield every file under the folder ``root`` that ``include`` accepts, in path order.

    Args:
        root: A real folder path (from :func:`resolve_root`).
        include: Called with a relative ``/``-separated path; True to read that file.
        descend: Called with a relative folder path; True to look inside. By default every
            folder but hidden ones and :data:`SKIP_DIRS`.

    Yields:
        A :class:`TextFile` per file read, or a :class:`Problem` per file (or linked folder)
        left out, with its reason.
    """
    wanted = descend or _default_descend
    yield from _walk(root, "", include, wanted)


def _default_descend(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return not name.startswith(".") and name not in SKIP_DIRS


def _walk(
    root: str, rel_dir: str, include: Callable[[str], bool], descend: Callable[[str], bool]
) -> Iterator[TextFile | Problem]:
    folder = os.path.join(root, rel_dir) if rel_dir else root
    if is_home(folder):
        yield Problem(rel_dir or ".", HOME_SKIPPED, skipped=True)
        return
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        yield Problem(rel_dir or ".", f"cannot list the folder: {exc.strerror or exc}")
        return
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        if entry.is_symlink():
            yield from _linked(root, rel, entry.path, include, descend)
        elif entry.is_dir(follow_symlinks=False):
            if descend(rel):
                yield from _walk(root, rel, include, descend)
        elif include(rel):
            yield read_file(entry.path, rel)


def _linked(
    root: str, rel: str, full: str, include: Callable[[str], bool], descend: Callable[[str], bool]
) -> Iterator[TextFile | Problem]:
    target = os.path.realpath(full)
    is_dir = os.path.isdir(target)
    if not (descend(rel) if is_dir else include(rel)):
        return
    if not _inside(root, target):
        yield Problem(rel, "a symbolic link leading outside the folder: not followed", skipped=True)
    elif not os.path.exists(target):
        yield Problem(rel, "a broken symbolic link", skipped=True)
    elif not is_dir:
        yield read_file(target, rel)
    # A link to a folder inside: not descended (no cycles); its target is read where it lives.


def _inside(root: str, target: str) -> bool:
    return os.path.commonpath([root, target]) == root


def read_file(full: str, rel: str) -> TextFile | Problem:
    """Read one file as UTF-8 text, or say why not.

    Args:
        full: Its real path on disk (no symbolic link in the last component).
        rel: Its anchor path (named in the result).

    Returns:
        The text, or a :class:`Problem`: skipped when not a regular file, over
        :data:`MAX_FILE_BYTES` or binary (a NUL byte); an error when it cannot be opened or
        is not UTF-8.
    """
    try:
        fd = os.open(full, _FLAGS)
    except OSError as exc:
        return Problem(rel, f"cannot read: {exc.strerror or exc}")
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return Problem(rel, "not a regular file", skipped=True)
        if info.st_size > MAX_FILE_BYTES:
            return Problem(rel, f"larger than {MAX_FILE_BYTES} bytes ({info.st_size} bytes)", skipped=True)
        try:
            data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            return Problem(rel, f"cannot read: {exc.strerror or exc}")
    if len(data) > MAX_FILE_BYTES:
        return Problem(rel, f"larger than {MAX_FILE_BYTES} bytes (it grew while read)", skipped=True)
    if b"\0" in data:
        return Problem(rel, "a binary file (it holds NUL bytes)", skipped=True)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Problem(rel, f"not UTF-8 text (byte {exc.start} cannot be decoded)")
    return TextFile(rel, strip_own_blocks(text.replace("\r\n", "\n")))


def is_home(folder: str) -> bool:
    """Return True if ``folder`` is an agent-memory Home: it holds ``memory.toml`` and ``notes/``."""
    return os.path.isfile(os.path.join(folder, "memory.toml")) and os.path.isdir(
        os.path.join(folder, "notes")
    )


def strip_own_blocks(text: str) -> str:
    r"""Blank out agent-memory's own marked text, keeping every other line where it was.

    Blanked are the bind block (:data:`~agent_memory.bindings.block.BEGIN` to
    :data:`~agent_memory.bindings.block.END`, both lines included; an unclosed block runs to
    the end) and every view digest footer line (``<!-- agent-memory:digest sha256=… -->``).

    Args:
        text: A file's text, newlines as ``\n``.

    Returns:
        The text with those lines emptied (the line count is unchanged).
    """
    lines = text.split("\n")
    inside = False
    for number, line in enumerate(lines):
        marker = line.strip()
        if inside or marker == BEGIN:
            inside = marker != END
            lines[number] = ""
        elif FOOTER_LINE.fullmatch((marker + "\n").encode("utf-8")):
            lines[number] = ""
    return "\n".join(lines)

"""Byte-level file operations the jobs share: read, append, replace, read a tail.

Invariants: every write is fsynced before it counts; no read or append follows a symbolic
link (``O_NOFOLLOW``: a linked inbox or archive file is an error naming it); :func:`append_bytes`
never touches the bytes already in a file (the archive and the inbox are append-only through it);
:func:`replace_bytes` swaps a whole file atomically (a temp file in the same folder and
``os.replace``; temp names start with ``.tmp-``, which a Home's ``.gitignore`` ignores), so a
reader sees the old bytes or the new ones, never a mix. Failures name the file.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from agent_memory.errors import RecordError, StoreError

__all__ = ["append_bytes", "read_bytes", "read_text", "replace_bytes", "tail"]


def read_text(path: Path) -> str:
    """Return a UTF-8 file's text, ``""`` when it is absent.

    Raises:
        RecordError: Unreadable or not UTF-8 (naming the file and the byte offset).
    """
    try:
        return _read_no_link(path).decode("utf-8")
    except FileNotFoundError:
        return ""
    except UnicodeDecodeError as exc:
        raise RecordError(f"not UTF-8 text at byte {exc.start}", path=str(path)) from None
    except OSError as exc:
        raise RecordError(f"cannot read: {_reason(exc)}", path=str(path)) from None


def read_bytes(path: Path) -> bytes:
    """Return a file's bytes, ``b""`` when it is absent.

    Raises:
        StoreError: The file exists but cannot be read (naming it).
    """
    try:
        return _read_no_link(path)
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise StoreError(f"cannot read: {_reason(exc)}", path=str(path)) from None


def tail(path: Path, offset: int) -> bytes | None:
    """Return the bytes from ``offset`` on; ``None`` when the file is shorter or unreadable.

    An absent file reads as ``b""`` at offset 0 (nothing written yet) and ``None`` beyond.
    """
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() < offset:
                return None
            handle.seek(offset)
            return handle.read()
    except FileNotFoundError:
        return b"" if offset == 0 else None
    except OSError:
        return None


def append_bytes(path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` (created when absent) and fsync it.

    Raises:
        StoreError: The write failed (naming the file); a partial tail may remain, which
            the next reader reports rather than hides.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise StoreError(f"cannot append: {_reason(exc)}", path=str(path)) from None


def replace_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` atomically, creating its folder when needed.

    Raises:
        StoreError: The write failed (naming the file); the old file is untouched.
    """
    temp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with temp.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise StoreError(f"cannot write: {exc.strerror or exc}", path=str(path)) from None


def _read_no_link(path: Path) -> bytes:
    # O_NOFOLLOW: the inbox and archive files are read in place, never through a link.
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "it is a symbolic link, which agent-memory never follows"
    return str(exc.strerror or exc)

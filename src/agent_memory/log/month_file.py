r"""Byte-level reads of one ``YYYY-MM.jsonl`` month file of a :class:`~agent_memory.log.jsonl.JsonlLog`.

Reading the tail of the log costs what is read, not the size of the month (issue 10):
:func:`tail_start` bisects a file on byte offsets, parsing one line per step, to find
where the entries after a seq begin; :func:`read_lines` then reads from that offset
only; :func:`last_line` reads backwards from the end. Line numbers, which errors name,
are counted from the start of the file only when an error is raised
(:func:`line_number`).

Invariants:

- Lines are split on ``b"\n"`` only (canonical JSON escapes every control character,
  while ``splitlines()`` would also break on U+2028 and friends inside strings).
- Every probe line is parsed strictly (:func:`~agent_memory.log.chain.read_entry`): a
  damaged line met while bisecting is a :class:`~agent_memory.errors.LogError` naming its
  file and line, as it is when read in order.
- Every read goes through :func:`open_file`, the one seam tests wrap to count bytes read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

from agent_memory.errors import LogError
from agent_memory.log.chain import read_entry

__all__ = ["first_seq", "last_line", "line_number", "open_file", "read_lines", "tail_start"]

CHUNK = 8192
"""Bytes read per step when looking for a newline."""


def open_file(path: Path) -> IO[bytes]:
    """Open a month file for reading bytes (the seam tests wrap to count bytes read).

    Raises:
        OSError: The file cannot be opened (callers turn it into a ``LogError``).
    """
    return path.open("rb")


def read_lines(path: Path, offset: int = 0) -> tuple[list[bytes], bytes]:
    """Return the complete lines from byte ``offset`` on (without newlines) and the torn tail.

    Args:
        path: The month file.
        offset: Where to start reading, in bytes: 0 or the start of a line.

    Returns:
        ``(lines, tail)``: ``tail`` is the bytes after the last newline (``b""`` if none).

    Raises:
        LogError: The file cannot be read (naming it).
    """
    try:
        with open_file(path) as file:
            file.seek(offset)
            data = file.read()
    except OSError as exc:
        raise LogError(f"cannot read: {exc.strerror}", path=str(path)) from None
    *lines, tail = data.split(b"\n")
    return lines, tail


def first_seq(path: Path) -> int | None:
    """Return the seq of a month file's first complete line, or ``None`` if it has none.

    Raises:
        LogError: The file cannot be read, or its first line is not an entry (``line 1``).
    """
    try:
        with open_file(path) as file:
            line = file.readline()
    except OSError as exc:
        raise LogError(f"cannot read: {exc.strerror}", path=str(path)) from None
    if not line.endswith(b"\n"):
        return None
    return read_entry(line[:-1], path=str(path), where="line 1").seq


def last_line(path: Path) -> tuple[bytes | None, int, int, int]:
    """Return ``(last complete line or None, its offset, bytes up to its newline, file size)``.

    Reads backwards from the end: the cost is the last line and any torn tail.

    Raises:
        LogError: The file cannot be read (naming it).
    """
    try:
        with open_file(path) as file:
            size = file.seek(0, os.SEEK_END)
            end = _rfind_newline(file, size)
            if end < 0:
                return None, 0, 0, size
            start = _rfind_newline(file, end) + 1
            file.seek(start)
            return file.read(end - start), start, end + 1, size
    except OSError as exc:
        raise LogError(f"cannot read: {exc.strerror}", path=str(path)) from None


def tail_start(path: Path, since_seq: int, first: int) -> tuple[int, int]:
    """Find the last line whose seq is at most ``since_seq`` by bisecting byte offsets.

    Seqs grow along a month file, so about ``log2(file size)`` lines are parsed, each
    strictly. The caller reads on from the returned line, checking that seqs stay
    contiguous from it, so a line missing or out of place after it is still found.

    Args:
        path: The month file.
        since_seq: The seq the caller wants the entries after.
        first: The seq of the file's first line, at most ``since_seq``.

    Returns:
        ``(offset, seq)``: the byte offset where that line starts and its seq
        (``(0, first)`` when no later line qualifies).

    Raises:
        LogError: The file cannot be read, or a probed line is not an entry (naming the
            file and the line's number).
    """
    try:
        with open_file(path) as file:
            lo, seq_lo = 0, first
            # Every line starting at or after ``hi`` has a seq above since_seq (or there is none).
            hi = _rfind_newline(file, file.seek(0, os.SEEK_END)) + 1
            while hi - lo > 1:
                mid = (lo + hi) // 2
                probe = _line_from(file, mid, hi)
                if probe is None:  # no line starts in [mid, hi)
                    hi = mid
                    continue
                start, line = probe
                try:
                    seq = read_entry(line, path=str(path), where="").seq
                except LogError as exc:
                    raise LogError(
                        exc.detail, path=str(path), field=f"line {line_number(path, start)}"
                    ) from None
                if seq <= since_seq:
                    lo, seq_lo = start, seq
                else:
                    hi = start
            return lo, seq_lo
    except OSError as exc:
        raise LogError(f"cannot read: {exc.strerror}", path=str(path)) from None


def line_number(path: Path, offset: int) -> int:
    """Return the 1-based number of the line that starts at byte ``offset`` (errors only: reads the prefix).

    Raises:
        LogError: The file cannot be read (naming it).
    """
    try:
        with open_file(path) as file:
            return file.read(offset).count(b"\n") + 1
    except OSError as exc:
        raise LogError(f"cannot read: {exc.strerror}", path=str(path)) from None


def _line_from(file: IO[bytes], position: int, hi: int) -> tuple[int, bytes] | None:
    """Return ``(start, line)`` of the first line starting in ``[position, hi)``, or ``None``.

    ``position`` is at least 1 and ``hi`` is just after a newline, so a line starting
    before ``hi`` ends before it.
    """
    file.seek(position - 1)
    skipped = file.readline()  # ends at the newline at hi - 1 at the latest
    start = position - 1 + len(skipped)
    if not skipped.endswith(b"\n") or start >= hi:
        return None
    line = file.readline()
    if not line.endswith(b"\n"):  # the file shrank under us: ``hi`` said a newline was there
        raise OSError(0, "the file changed while it was read")
    return start, line[:-1]


def _rfind_newline(file: IO[bytes], before: int) -> int:
    r"""Return the offset of the last ``\n`` before offset ``before``, or -1; reads backwards."""
    position = before
    while position > 0:
        step = min(CHUNK, position)
        file.seek(position - step)
        found = file.read(step).rfind(b"\n")
        if found >= 0:
            return position - step + found
        position -= step
    return -1

r"""`JsonlLog`: the operation log of a Home as month files of JSON lines (DESIGN.md §3 ``log/``).

Layout: ``<folder>/YYYY-MM.jsonl``, one file per UTC month of the entries' ``time``, each
line the canonical JSON of one entry followed by ``\n`` (no other bytes, no BOM, no CR).
The hash chain runs on across months: the first line of ``2026-02.jsonl`` carries the hash
of the last line of ``2026-01.jsonl``. ``<folder>/.lock`` is the writers' lock file, not
part of the log; other names in the folder are ignored.

Invariants:

- An append holds an exclusive ``fcntl.flock`` on ``.lock`` while it reads the head and
  writes, so several processes (and threads) append without forking the chain. The line
  goes out in one ``O_APPEND`` write and is ``fsync``-ed (and the folder too when a month
  file is new) before :meth:`JsonlLog.append` returns.
- Reading the tail costs what is read, not the size of the log (issue 10): ``entries(since_seq)``
  skips earlier month files by their first line and bisects the byte offsets of the month
  holding ``since_seq`` (:mod:`agent_memory.log.month_file`); ``last()`` reads backwards from
  the end. Only :meth:`JsonlLog.verify` reads every line.
- The head entry is remembered per month file (:data:`_HEADS`): ``last()`` and ``append``
  read back only that line's bytes and compare them, and parse the tail again only when
  they differ, so a write that asks for the head several times parses it once (issue 23).
  The head is a function of the last line's bytes alone, so this is never stale.
- Reading never repairs. A line that is not valid JSON or not an entry is a
  :class:`~agent_memory.errors.LogError` naming the file and line number.
- A crash mid-append can leave a *torn tail*: a final partial line without its newline in
  the last month file. :meth:`JsonlLog.entries` and :meth:`JsonlLog.last` ignore it (that
  append never returned), :meth:`JsonlLog.verify` reports it, and the next append cuts it
  off (under the lock) before writing. An unterminated line in any other file is damage.
- Cutting off the tail leaves a valid, shorter chain: only a head remembered elsewhere
  (``verify(expect_head=...)``) reveals it (see :mod:`agent_memory.log.base`).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from agent_memory.errors import LogError
from agent_memory.log import month_file
from agent_memory.log.base import LogEntry
from agent_memory.log.chain import ChainCheck, ChainedLog, read_entry
from agent_memory.log.month_file import first_seq, last_line, line_number, read_lines, tail_start

__all__ = ["LOCK_NAME", "JsonlLog"]

LOCK_NAME = ".lock"
_MONTH_FILE = re.compile(r"\A\d{4}-(0[1-9]|1[0-2])\.jsonl\Z")
_HEADS: OrderedDict[str, LogEntry] = OrderedDict()
"""A month file's path -> the entry of its last line when last read or written; every instance shares it."""
_HEADS_KEPT = 64
_HEADS_LOCK = threading.Lock()


class JsonlLog(ChainedLog):
    """An operation log in ``<folder>/YYYY-MM.jsonl`` files; safe for several writer processes.

    Implements :class:`~agent_memory.log.base.OperationLog`. The folder is created (not
    its parents) by the first append; a missing folder reads as an empty log.

    Args:
        folder: The log folder, ``<home>/log`` in a Home.
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    def __repr__(self) -> str:
        return f"<JsonlLog {str(self.folder)!r}>"

    def _append_after(self, make: Callable[[LogEntry | None], LogEntry]) -> LogEntry:
        """Store the entry after the head in the month file of its time (:class:`.ChainedLog`).

        A torn tail left by a crashed append is cut off first.

        Raises:
            LogError: A malformed argument, record content in ``details``, an unreadable
                head line, or an I/O failure (naming the file); no entry is appended.
        """
        with self._locked(exclusive=True):
            files = self._files()
            head = _remembered(files[-1]) if files else None
            if head is None:
                if files:
                    self._cut_torn_tail(files[-1])
                head = self._head(files)
            entry = make(head)
            path = self.folder / f"{entry.time:%Y-%m}.jsonl"
            self._write(path, entry.line + b"\n")
            _remember(path, entry)  # still under the lock: no other append came between
        return entry

    def entries(self, *, since_seq: int = 0) -> Iterator[LogEntry]:
        """Yield the entries with ``seq > since_seq``, oldest first, ignoring a torn tail.

        The cost is what is read, not the size of the log: month files that end before
        ``since_seq`` are skipped unread (their successor's first line says where it
        starts), and within the month holding ``since_seq`` the start is found by bisecting
        byte offsets (:func:`~agent_memory.log.month_file.tail_start`, about ``log2(bytes)``
        lines parsed). From there every line is parsed strictly and seqs are checked to be
        contiguous; lines before it are :meth:`verify`'s job.

        Raises:
            LogError: A line read is not an entry, a seq is missing, or a file other than
                the last ends without a newline (naming the file and line number).
        """
        files = self._files()
        start, expected = 0, 1
        for index in range(len(files) - 1, 0, -1):
            first = first_seq(files[index])
            if first is not None and first <= since_seq + 1:
                start, expected = index, first
                break
        for index in range(start, len(files)):
            path, offset = files[index], 0
            if index == start and since_seq >= expected:
                offset, expected = tail_start(path, since_seq, expected)
            lines, tail = read_lines(path, offset)
            base = _LineBase(path, offset)
            if tail and index < len(files) - 1:
                raise _unterminated(path, base.number(len(lines) + 1))
            for number, line in enumerate(lines, start=1):
                try:
                    entry = LogEntry.from_line(line)
                except LogError as exc:
                    raise LogError(exc.detail, path=str(path), field=f"line {base.number(number)}") from None
                if entry.seq != expected:
                    raise LogError(
                        f"seq {entry.seq} where {expected} was expected: a line is missing or out of order",
                        path=str(path),
                        field=f"line {base.number(number)}",
                    )
                expected = entry.seq + 1
                if entry.seq > since_seq:
                    yield entry

    def last(self) -> LogEntry | None:
        """Return the head entry (a torn tail ignored), or ``None`` for an empty log.

        Reads only the end of the last non-empty month file, and nothing when that file is
        unchanged since its head was last read in this process.

        Raises:
            LogError: The head line is not an entry.
        """
        files = self._files()
        remembered = _remembered(files[-1]) if files else None
        return remembered if remembered is not None else self._head(files)

    def month_files(self) -> list[Path]:
        """Return the month files ``YYYY-MM.jsonl``, oldest first (no file is read).

        Raises:
            LogError: The folder cannot be listed, or a month file is a symbolic link.
        """
        return self._files()

    def verify(
        self,
        *,
        expect_head: tuple[int, str] | None = None,
        on_entry: Callable[[LogEntry, str], None] | None = None,
    ) -> int:
        """Check every line of every month file and the whole chain; return the entry count.

        Besides the chain (:class:`~agent_memory.log.base.ChainCheck`), each entry must sit
        in the file of its own month. Waits for a running append (shared lock) so that its
        half-written line is not mistaken for a torn tail.

        Args:
            expect_head: See :meth:`OperationLog.verify`.
            on_entry: Called with each entry that checked and its digest (SHA-256 hex of its
                line), in order, up to the first problem: how :mod:`agent_memory.doctor.log_audit`
                compares the log with its signed checkpoints in the same single pass.

        Raises:
            LogError: Naming the file and line: damage, a broken chain, an entry in the
                wrong month file, a torn tail, or a head that differs from ``expect_head``.
        """
        with self._locked(exclusive=False):
            files = self._files()
            check = ChainCheck(expect_head)
            for index, path in enumerate(files):
                lines, tail = read_lines(path)
                for number, line in enumerate(lines, start=1):
                    entry = check.add(line, path=str(path), where=f"line {number}")
                    if f"{entry.time:%Y-%m}.jsonl" != path.name:
                        raise LogError(
                            f"seq {entry.seq} of {entry.time:%Y-%m} is in the file of another month",
                            path=str(path),
                            field=f"line {number}",
                        )
                    if on_entry is not None:
                        on_entry(entry, hashlib.sha256(line).hexdigest())
                if tail and index < len(files) - 1:
                    raise _unterminated(path, len(lines) + 1)
                if tail:
                    raise LogError(
                        f"torn tail: {len(tail)} bytes without a final newline (an append "
                        "interrupted by a crash); entries() ignores it and the next append removes it",
                        path=str(path),
                        field=f"line {len(lines) + 1}",
                    )
            return check.finish(path=str(self.folder))

    # ------------------------------------------------------------------ internals

    def _files(self) -> list[Path]:
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise LogError(f"cannot list the log folder: {exc.strerror}", path=str(self.folder)) from None
        files = [self.folder / name for name in sorted(names) if _MONTH_FILE.match(name)]
        for path in files:
            if path.is_symlink():
                raise LogError(
                    "is a symbolic link: the log is never read or written through a link", path=str(path)
                )
        return files

    @contextmanager
    def _locked(self, *, exclusive: bool) -> Iterator[None]:
        lock = self.folder / LOCK_NAME
        fd: int | None = None
        try:
            if exclusive:
                if not self.folder.is_dir():
                    # Several threads or processes may create it at once: that is fine.
                    self.folder.mkdir(parents=True, exist_ok=True)
                    _fsync_dir(self.folder.parent)
                fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            else:
                fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            # A reader of a log without a lock file (never written, or read-only) needs none.
            if exclusive:
                raise LogError(f"cannot lock the log folder: {exc.strerror}", path=str(lock)) from None
        if fd is None:
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def _head(self, files: list[Path]) -> LogEntry | None:
        for index in range(len(files) - 1, -1, -1):
            path = files[index]
            line, start, complete, size = last_line(path)
            if complete < size and index < len(files) - 1:
                raise _unterminated(path, line_number(path, complete))
            if line is not None:
                try:
                    entry = read_entry(line, path=str(path), where="last line")
                except LogError as exc:
                    number = line_number(path, start)
                    raise LogError(exc.detail, path=str(path), field=f"line {number}") from None
                if index == len(files) - 1 and complete == size:
                    _remember(path, entry)  # no torn tail after it
                return entry
        return None

    def _cut_torn_tail(self, path: Path) -> None:
        _, _, complete, size = last_line(path)
        if complete == size:
            return
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
            try:
                os.ftruncate(fd, complete)
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise LogError(f"cannot remove the torn tail: {exc.strerror}", path=str(path)) from None

    def _write(self, path: Path, data: bytes) -> None:
        is_new = not path.exists()
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            if is_new:
                _fsync_dir(self.folder)
        except OSError as exc:
            # A partial write is a torn tail: the next append cuts it off.
            raise LogError(f"cannot append: {exc.strerror}", path=str(path)) from None


class _LineBase:
    """Turns a line number counted from a read's start offset into the file's line number.

    The lines before the offset are counted only when an error needs the number.
    """

    def __init__(self, path: Path, offset: int) -> None:
        self._path, self._offset = path, offset
        self._before: int | None = 0 if offset == 0 else None

    def number(self, relative: int) -> int:
        if self._before is None:
            self._before = line_number(self._path, self._offset) - 1
        return self._before + relative


def _unterminated(path: Path, number: int) -> LogError:
    return LogError(
        "ends without a newline although later month files follow: damaged, not a torn tail",
        path=str(path),
        field=f"line {number}",
    )


def _remember(path: Path, entry: LogEntry) -> None:
    """Remember ``entry`` as the last line of ``path`` (its line ends the file, newline included)."""
    with _HEADS_LOCK:
        _HEADS[str(path)] = entry
        _HEADS.move_to_end(str(path))
        while len(_HEADS) > _HEADS_KEPT:
            _HEADS.popitem(last=False)


def _remembered(path: Path) -> LogEntry | None:
    """Return the remembered head of ``path`` if the file still ends with its line, else ``None``.

    The head is a function of the last line's bytes alone, so reading the line (and the
    newline before it) back and comparing bytes is enough: no parse, whatever else changed.
    """
    with _HEADS_LOCK:
        entry = _HEADS.get(str(path))
    if entry is None:
        return None
    want = b"\n" + entry.line + b"\n"
    try:
        with month_file.open_file(path) as file:
            size = file.seek(0, os.SEEK_END)
            if size < len(want) - 1:
                return None
            start = size - len(want)
            file.seek(max(start, 0))
            got = file.read()
    except OSError:
        return None
    return entry if got == (want if start >= 0 else want[1:]) else None


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

"""`MemoryLog`: the reference adapter of the `OperationLog` port, held in process memory.

It keeps the stored lines (canonical JSON bytes, exactly what :class:`~agent_memory.log.jsonl.JsonlLog`
writes to a file and :class:`~agent_memory.log.sqlite.SQLiteLog` to a row) in a list behind
one lock. Tests of the core use it as the fake log (STYLE.md "fakes, not mocks"), and the
contract suite ``tests/log/test_log_contract.py`` holds every adapter to its behaviour.

Invariant: :attr:`MemoryLog.lines` only grows by :meth:`MemoryLog.append`, each new line
chained to the previous one; the list is exposed so tests can tamper with it and watch
:meth:`MemoryLog.verify` notice.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

from agent_memory.errors import LogError
from agent_memory.log.base import LogEntry
from agent_memory.log.chain import ChainCheck, ChainedLog, read_entry

__all__ = ["MemoryLog"]

_WHERE = "<memory log>"


class MemoryLog(ChainedLog):
    """An operation log in a list of lines; thread-safe, lost at exit.

    Implements :class:`~agent_memory.log.base.OperationLog`.

    Example:
        >>> log = MemoryLog()
        >>> log.append("init", actor="owner").seq
        1
    """

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        # One lock for reads and writes: an append must chain to the head it read.
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<MemoryLog entries={len(self.lines)}>"

    def _append_after(self, make: Callable[[LogEntry | None], LogEntry]) -> LogEntry:
        """Store the entry after the head (the ``append`` of :class:`.ChainedLog`).

        Raises:
            LogError: A malformed argument, record content in ``details``, or an unreadable
                head line; nothing is appended.
        """
        with self._lock:
            head = self._head()
            entry = make(head)
            self.lines.append(entry.line)
            return entry

    def entries(self, *, since_seq: int = 0) -> Iterator[LogEntry]:
        """Yield the entries with ``seq > since_seq``, oldest first.

        Raises:
            LogError: A line is not an entry, or a seq is missing.
        """
        with self._lock:
            lines = list(self.lines)
        for number, line in enumerate(lines, start=1):
            entry = read_entry(line, path=_WHERE, where=f"line {number}")
            if entry.seq != number:
                raise LogError(
                    f"seq {entry.seq} where {number} was expected: a line is missing or out of order",
                    path=_WHERE,
                    field=f"line {number}",
                )
            if entry.seq > since_seq:
                yield entry

    def last(self) -> LogEntry | None:
        """Return the head entry, or ``None`` for an empty log.

        Raises:
            LogError: The last line is not an entry.
        """
        with self._lock:
            return self._head()

    def verify(self, *, expect_head: tuple[int, str] | None = None) -> int:
        """Check every line and the chain; return the number of entries.

        Raises:
            LogError: Naming the line and what is wrong.
        """
        with self._lock:
            lines = list(self.lines)
        check = ChainCheck(expect_head)
        for number, line in enumerate(lines, start=1):
            check.add(line, path=_WHERE, where=f"line {number}")
        return check.finish(path=_WHERE)

    def _head(self) -> LogEntry | None:
        if not self.lines:
            return None
        return read_entry(self.lines[-1], path=_WHERE, where=f"line {len(self.lines)}")

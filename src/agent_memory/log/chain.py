"""The hash chain of the operation log: build the next entry, read stored lines, verify a log.

Shared by every :class:`~agent_memory.log.base.OperationLog` adapter so that all of them
chain, locate errors and verify identically (seed 000 §7.1 capability 5: "replayable";
DESIGN.md §9). The adapters own storage and locking; this module owns the rules:

- :class:`ChainedLog` is the ``append`` every adapter inherits; the adapter's
  ``_append_after`` stores the entry :func:`next_entry` makes after its head.
- :func:`next_entry` builds the entry after a head (under the adapter's write lock):
  ``seq`` = head + 1, ``prev`` = the head's digest, ``time`` = ``max(now, head time)``,
  and only an action of :data:`~agent_memory.log.base.ACTIONS`.
- :func:`read_entry` parses a stored line, naming its file or table and position in errors.
- :class:`ChainCheck` checks line after line: a readable canonical entry, contiguous
  ``seq``, the stored key, ``prev`` = SHA-256 of the previous stored line's bytes, time
  order, and at the end an optional remembered head.

Every failure is a :class:`~agent_memory.errors.LogError` whose message reads
``<file or database>: <line N | oplog seq N>: <what is wrong>``.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from agent_memory.errors import LogError, RecordError
from agent_memory.log.base import ACTIONS, GENESIS, Action, LogEntry
from agent_memory.records.wire import format_timestamp, parse_timestamp, utc_now

__all__ = ["ChainCheck", "ChainedLog", "next_entry", "read_entry"]


class ChainedLog(ABC):
    """The ``append`` of every :class:`~agent_memory.log.base.OperationLog` adapter.

    An adapter implements ``_append_after(make)``: under its write lock (or transaction) it
    reads its head, stores the line of ``make(head)`` (the :func:`next_entry` after it) and
    returns that entry; its docstring says how its storage fails.
    """

    def append(
        self,
        action: str,
        *,
        actor: str,
        record_ids: Iterable[str] = (),
        details: Mapping[str, Any] | None = None,
        now: datetime | None = None,
    ) -> LogEntry:
        """Append one event after the head and return it as it reads back (:meth:`.OperationLog.append`).

        Raises:
            LogError: A malformed argument, record content in ``details``, an unreadable head,
                or the write failed (the adapter's ``_append_after`` says how); nothing is
                appended.
        """
        when = utc_now() if now is None else now

        def make(head: LogEntry | None) -> LogEntry:
            return next_entry(head, action, actor=actor, record_ids=record_ids, details=details, now=when)

        return self._append_after(make)

    @abstractmethod
    def _append_after(self, make: Callable[[LogEntry | None], LogEntry]) -> LogEntry:
        """Under the write lock, store the line of ``make(head)`` after the head and return it.

        Args:
            make: Builds the next entry from the head read under the lock (``None``: empty log).

        Raises:
            LogError: The head cannot be read or the write failed; nothing is stored.
        """


def next_entry(
    head: LogEntry | None,
    action: str,
    *,
    actor: str,
    record_ids: Iterable[str],
    details: Mapping[str, Any] | None,
    now: datetime,
) -> LogEntry:
    """Build the entry that follows ``head`` (``None`` for an empty log); write nothing.

    Adapters call this while holding their write lock, so ``head`` is the real head.

    Args:
        head: The current last entry, or ``None``.
        action: One of :data:`~agent_memory.log.base.ACTIONS`.
        actor: Who acts, without whitespace.
        record_ids: The ids the event concerns.
        details: Float-free JSON object, no record content, or ``None`` for ``{}``.
        now: The clock reading (aware); an earlier time than the head's is raised to it.

    Raises:
        LogError: An unknown action, a naive clock, or a malformed field (named).
    """
    if str(action) not in ACTIONS:
        raise LogError(f"unknown action {action!r}; known: {', '.join(sorted(ACTIONS))}", field="action")
    if isinstance(record_ids, str):
        raise LogError("must be a list of ids, not one string", field="record_ids")
    try:
        time = parse_timestamp(now, "now")
    except RecordError as exc:
        raise LogError(exc.detail, field="now") from None
    if head is not None and time < head.time:
        # Keep time ordered along the chain, so month files stay in seq order too.
        time = head.time
    return LogEntry(
        seq=1 if head is None else head.seq + 1,
        time=time,
        actor=actor,
        action=Action(str(action)),
        record_ids=tuple(record_ids),
        details=details if details is not None else {},
        prev=GENESIS if head is None else head.digest,
    )


def read_entry(line: bytes, *, path: str, where: str) -> LogEntry:
    """Parse one stored line with :meth:`LogEntry.from_line`, naming its place in errors.

    Args:
        line: The stored bytes, without the newline.
        path: The file or database.
        where: The position in it: ``line 12`` or ``oplog seq 12``.

    Raises:
        LogError: ``<path>: <where>: <what is wrong>``.
    """
    try:
        return LogEntry.from_line(line)
    except LogError as exc:
        raise LogError(exc.detail, path=path, field=where) from None


class ChainCheck:
    """Verify a log line by line, in order; shared by every adapter's ``verify``.

    Feed each stored line with :meth:`add` together with its location (``path`` is the file
    or database, ``where`` the line or row), then call :meth:`finish`. Memory use is
    constant: only the previous line's digest and time are kept.

    Args:
        expect_head: A ``(seq, digest)`` remembered from an earlier :meth:`OperationLog.last`;
            :meth:`finish` checks that the log still holds that entry unchanged.
    """

    def __init__(self, expect_head: tuple[int, str] | None = None) -> None:
        self.count = 0
        self._expect_head = expect_head
        self._seen_head: str | None = None
        self._prev = GENESIS
        self._prev_time: datetime | None = None
        self._prev_where = ""

    def add(self, line: bytes, *, path: str, where: str, row_seq: int | None = None) -> LogEntry:
        """Check one line against everything before it and return its entry.

        Args:
            line: The stored bytes, without the newline.
            path: The file or database, for the error.
            where: The position inside it: ``line 12`` or ``oplog seq 12``.
            row_seq: The key the line is stored under, when the adapter has one.

        Raises:
            LogError: The line is not an entry, or breaks seq, key, chain or time order.
        """
        entry = read_entry(line, path=path, where=where)
        expected = self.count + 1
        if entry.seq != expected:
            raise LogError(
                f"seq {entry.seq} where {expected} was expected: "
                "a line is missing, inserted or out of order here",
                path=path,
                field=where,
            )
        if row_seq is not None and row_seq != entry.seq:
            raise LogError(f"row key {row_seq} holds the entry of seq {entry.seq}", path=path, field=where)
        if entry.prev != self._prev:
            before = f"the previous entry ({self._prev_where})" if self.count else "the start of the log"
            raise LogError(
                f"seq {entry.seq}: prev does not match the hash of {before}: "
                "that line was edited, or a line is missing, inserted or swapped between them",
                path=path,
                field=where,
            )
        if self._prev_time is not None and entry.time < self._prev_time:
            raise LogError(
                f"seq {entry.seq}: time {format_timestamp(entry.time)} is earlier than the previous entry's",
                path=path,
                field=where,
            )
        self.count = expected
        self._prev = hashlib.sha256(line).hexdigest()
        self._prev_time = entry.time
        self._prev_where = f"{path}: {where}"
        if self._expect_head is not None and entry.seq == self._expect_head[0]:
            self._seen_head = self._prev
        return entry

    def finish(self, *, path: str) -> int:
        """Check the remembered head, if any, and return the number of entries checked.

        Args:
            path: The log folder or database, for the error.

        Raises:
            LogError: The remembered entry is gone (a truncated tail) or has changed.
        """
        if self._expect_head is not None and self._expect_head[0] >= 1:
            seq, digest = self._expect_head
            if seq > self.count:
                raise LogError(
                    f"the log ends at seq {self.count} but seq {seq} was remembered: its tail was truncated",
                    path=path,
                )
            if self._seen_head != digest:
                raise LogError(f"seq {seq} differs from the remembered head: it was edited", path=path)
        return self.count


PAGE = 512
"""Rows the SQL adapters read per query when walking the log."""


def paged_entries(
    fetch: Callable[[int], Sequence[tuple[int, Any]]],
    to_entry: Callable[[int, Any], LogEntry],
    since_seq: int,
    *,
    path: str,
) -> Iterator[LogEntry]:
    """Yield the entries after ``since_seq`` from an SQL table read a page at a time, checking seqs.

    Args:
        fetch: Returns up to :data:`PAGE` ``(row seq, line)`` rows with seq ≥ its argument, by seq.
        to_entry: Parses one row (naming it in errors).
        since_seq: Yield entries with a greater seq.
        path: The table's name in errors.

    Raises:
        LogError: A seq is missing (``a row is missing``), or ``to_entry`` refuses a row.
    """
    expected = max(since_seq, 0) + 1
    while True:
        rows = fetch(expected)
        for row_seq, line in rows:
            entry = to_entry(row_seq, line)
            if entry.seq != expected:
                raise LogError(
                    f"seq {entry.seq} where {expected} was expected: a row is missing",
                    path=path,
                    field=f"oplog seq {row_seq}",
                )
            expected += 1
            yield entry
        if len(rows) < PAGE:
            return

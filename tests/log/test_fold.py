"""LogFold: one incremental reading of a log, started over when the log moved under it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory.errors import LogError
from agent_memory.log.base import LogEntry, OperationLog
from agent_memory.log.fold import LogFold, one_pass
from agent_memory.log.inmemory import MemoryLog

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


class Reader:
    """Folds the seq of every entry it is fed; a restart clears them."""

    def __init__(self, log: OperationLog, **options: bool) -> None:
        self.folded: list[int] = []
        self.restarts = 0
        self.fold = LogFold(log, lambda entry: self.folded.append(entry.seq), restart=self.restart, **options)

    def restart(self) -> None:
        self.folded.clear()
        self.restarts += 1


def write(log: MemoryLog, count: int, *, start: int = 0) -> None:
    for i in range(count):
        log.append("put", actor="owner", record_ids=(f"r{start + i}",), now=T0 + timedelta(seconds=start + i))


def test_each_entry_is_folded_once_in_order_and_later_appends_are_seen() -> None:
    log = MemoryLog()
    reader = Reader(log)
    assert reader.fold.catch_up() == (None, False)
    write(log, 3)
    head, moved = reader.fold.catch_up()
    assert head is not None and head.seq == 3 and moved
    assert reader.fold.catch_up()[1] is False
    write(log, 2, start=3)
    reader.fold.catch_up()
    assert reader.folded == [1, 2, 3, 4, 5] and reader.fold.seen == 5 and reader.restarts == 0


def test_a_cut_or_rewritten_log_is_read_again_from_the_start() -> None:
    log = MemoryLog()
    write(log, 4)
    reader = Reader(log)
    reader.fold.catch_up()
    del log.lines[2:]  # cut below what was read
    assert reader.fold.catch_up() == (log.last(), True)
    assert reader.folded == [1, 2] and reader.restarts == 1
    other = MemoryLog()  # the same length, other entries: restored from another copy
    write(other, 2, start=10)
    log.lines[:] = other.lines
    reader.fold.catch_up()
    assert reader.folded == [1, 2] and reader.restarts == 2
    write(log, 1, start=20)
    reader.fold.catch_up()
    assert reader.folded == [1, 2, 3] and reader.restarts == 2


def test_a_verifying_fold_refuses_a_broken_link_every_time_it_is_asked() -> None:
    log = MemoryLog()
    write(log, 3)
    forged = LogEntry(2, T0, "owner", "put", ("forged",), prev="f" * 64)
    log.lines[1] = forged.line
    reader = Reader(log, verify=True)
    with one_pass():
        for _ in range(2):  # inside one pass too: a refusal is never skipped the second time
            with pytest.raises(LogError, match="does not follow"):
                reader.fold.catch_up()
    assert reader.folded == [1]
    assert Reader(log).fold.catch_up()[0] is not None  # a reader that does not verify folds on


def test_inside_one_pass_the_head_is_read_once_unless_the_reader_also_writes() -> None:
    log = MemoryLog()
    write(log, 1)
    reading, writing = Reader(log), Reader(log, in_pass=False)
    with one_pass():
        reading.fold.catch_up()
        writing.fold.catch_up()
        write(log, 1, start=1)
        reading.fold.catch_up()
        writing.fold.catch_up()
    assert reading.folded == [1] and writing.folded == [1, 2]
    reading.fold.catch_up()
    assert reading.folded == [1, 2]

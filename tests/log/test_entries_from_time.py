"""`entries_from_time`: the tail of a log from a time on, found by bisecting seqs (issue 10)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory.log import JsonlLog, MemoryLog, OperationLog, SQLiteLog
from agent_memory.log.base import entries_from_time

T0 = datetime(2026, 1, 30, tzinfo=UTC)

MAKERS: dict[str, Callable[[Path], OperationLog]] = {
    "memory": lambda tmp: MemoryLog(),
    "jsonl": lambda tmp: JsonlLog(tmp / "log"),
    "sqlite": lambda tmp: SQLiteLog(tmp / "log.db"),
}


@pytest.fixture(params=sorted(MAKERS))
def log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OperationLog]:
    made = MAKERS[request.param](tmp_path)
    yield made
    close = getattr(made, "close", None)
    if callable(close):
        close()


def test_an_empty_log_has_no_entries_from_any_time(log: OperationLog) -> None:
    assert list(entries_from_time(log, T0)) == []


def test_the_entries_from_a_time_are_those_a_whole_read_finds(log: OperationLog) -> None:
    # Hours apart across a month boundary, with runs of equal times (a clock that ran back).
    offsets: list[float] = [0, 1, 1, 1, 5, 9, 30, 31, 31, 47, 48, 100, 100, 101]
    for hours in offsets:
        log.append("put", actor="owner", now=T0 + timedelta(hours=hours))
    log.append("put", actor="owner", now=T0)  # stamped with the head's time
    whole = list(log.entries())
    assert whole[-1].time == T0 + timedelta(hours=101)
    for hours in [-3, *offsets, 0.5, 2, 47.5, 101, 101.5, 500]:
        when = T0 + timedelta(hours=hours)
        assert list(entries_from_time(log, when)) == [e for e in whole if e.time >= when], hours

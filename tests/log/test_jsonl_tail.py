"""JsonlLog tail reads cost what they read: counted lines parsed and bytes read, never timed (issue 10)."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import pytest

from agent_memory.errors import LogError
from agent_memory.log import JsonlLog, LogEntry, month_file
from agent_memory.log.base import entries_from_time
from agent_memory.log.chain import next_entry

START = datetime(2026, 1, 1, tzinfo=UTC)


class Counter:
    """Lines parsed (every ``LogEntry.from_line``) and bytes read from month files."""

    def __init__(self) -> None:
        self.lines = 0
        self.bytes = 0

    def reset(self) -> None:
        self.lines = self.bytes = 0


class CountingFile:
    """A read-only binary file that adds what it returns to a :class:`Counter`."""

    def __init__(self, file: IO[bytes], counter: Counter) -> None:
        self._file, self._counter = file, counter

    def read(self, size: int = -1) -> bytes:
        data = self._file.read(size)
        self._counter.bytes += len(data)
        return data

    def readline(self, size: int = -1) -> bytes:
        data = self._file.readline(size)
        self._counter.bytes += len(data)
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._file.seek(offset, whence)

    def __enter__(self) -> CountingFile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._file.close()


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> Counter:
    counts = Counter()
    real_open = month_file.open_file
    real_from_line = LogEntry.from_line.__func__  # type: ignore[attr-defined]

    def counting_open(path: Path) -> CountingFile:
        return CountingFile(real_open(path), counts)

    def counting_from_line(cls: type[LogEntry], line: bytes) -> LogEntry:
        counts.lines += 1
        entry: LogEntry = real_from_line(cls, line)
        return entry

    monkeypatch.setattr(month_file, "open_file", counting_open)
    monkeypatch.setattr(LogEntry, "from_line", classmethod(counting_from_line))
    return counts


def write_log(folder: Path, count: int, *, step: timedelta = timedelta(minutes=1), seed: int = 0) -> None:
    """Write a valid chain of ``count`` entries of varied length straight to month files."""
    rng = random.Random(seed)  # noqa: S311 - line lengths, not secrets
    folder.mkdir(parents=True, exist_ok=True)
    head: LogEntry | None = None
    files: dict[str, list[bytes]] = {}
    for i in range(count):
        details: dict[str, Any] = {"version": i, "reason": "r" * rng.choice((0, 5, 80, 300, 9000))}
        head = next_entry(
            head, "put", actor="owner", record_ids=[f"mem:{i:032x}"], details=details, now=START + step * i
        )
        files.setdefault(f"{head.time:%Y-%m}.jsonl", []).append(head.line + b"\n")
    for name, lines in files.items():
        (folder / name).write_bytes(b"".join(lines))


def test_a_tail_read_parses_a_few_lines_of_a_large_month_not_all_of_them(
    tmp_path: Path, counter: Counter
) -> None:
    write_log(tmp_path, 3000, step=timedelta(seconds=1))
    (month,) = tmp_path.glob("*.jsonl")
    log = JsonlLog(tmp_path)
    assert [e.seq for e in log.entries()] == list(range(1, 3001))
    assert counter.lines == 3000  # the whole month: the baseline

    counter.reset()
    assert [e.seq for e in log.entries(since_seq=2990)] == list(range(2991, 3001))
    size = month.stat().st_size
    probes = size.bit_length() + 2
    assert counter.lines <= 11 + probes, counter.lines
    assert counter.bytes < size // 10, (counter.bytes, size)


def test_a_read_from_the_middle_parses_only_what_follows(tmp_path: Path, counter: Counter) -> None:
    write_log(tmp_path, 2000, step=timedelta(seconds=1))
    log = JsonlLog(tmp_path)
    assert len(list(log.entries(since_seq=1500))) == 500
    assert 500 <= counter.lines <= 501 + 2 * 30


def test_the_head_is_read_from_the_end_of_a_large_month(tmp_path: Path, counter: Counter) -> None:
    write_log(tmp_path, 3000, step=timedelta(seconds=1))
    (month,) = tmp_path.glob("*.jsonl")
    head = JsonlLog(tmp_path).last()
    assert head is not None and head.seq == 3000
    assert counter.lines == 1
    longest = max(len(line) for line in month.read_bytes().split(b"\n"))
    assert counter.bytes <= 2 * 8192 + 2 * longest < month.stat().st_size // 10


def test_a_tail_read_yields_what_a_whole_read_yields_after_every_seq(tmp_path: Path) -> None:
    # Entries every 4 hours over about three months; lines from ~250 bytes to ~9 kB.
    write_log(tmp_path, 600, step=timedelta(hours=4), seed=7)
    assert len(list(tmp_path.glob("*.jsonl"))) == 4
    log = JsonlLog(tmp_path)
    whole = list(log.entries())
    for since in range(-1, 603):  # the first three entries after every seq (the reads are lazy)
        expected = [e for e in whole if e.seq > since][:3]
        assert list(itertools.islice(log.entries(since_seq=since), 3)) == expected, since
    for since in (0, 185, 186, 187, 598):
        assert list(log.entries(since_seq=since)) == [e for e in whole if e.seq > since], since


def test_a_damaged_line_after_the_start_is_named_by_its_line_in_the_file(tmp_path: Path) -> None:
    write_log(tmp_path, 400, step=timedelta(seconds=1))
    (month,) = tmp_path.glob("*.jsonl")
    lines = month.read_bytes().split(b"\n")
    lines[349] = b'{"seq": broken'
    month.write_bytes(b"\n".join(lines))
    log = JsonlLog(tmp_path)
    for since in (0, 200, 340, 349):
        with pytest.raises(LogError, match=r"\.jsonl: line 350: not JSON"):
            list(log.entries(since_seq=since))
    with pytest.raises(LogError, match=r"\.jsonl: line 350: not JSON"):
        log.verify()


def test_a_missing_line_after_the_start_is_named_by_the_line_where_seq_jumps(tmp_path: Path) -> None:
    write_log(tmp_path, 400, step=timedelta(seconds=1))
    (month,) = tmp_path.glob("*.jsonl")
    lines = month.read_bytes().split(b"\n")
    del lines[299]  # seq 300
    month.write_bytes(b"\n".join(lines))
    for since in (0, 250, 298):
        with pytest.raises(LogError, match=r"line 300: seq 301 where 300 was expected"):
            list(JsonlLog(tmp_path).entries(since_seq=since))


def test_an_unterminated_earlier_month_read_from_its_middle_is_named_by_its_last_line(tmp_path: Path) -> None:
    write_log(tmp_path, 300, step=timedelta(hours=4))  # January and February
    january = tmp_path / "2026-01.jsonl"
    count = january.read_bytes().count(b"\n")
    january.write_bytes(january.read_bytes()[:-1])
    with pytest.raises(LogError, match=rf"2026-01\.jsonl: line {count}: ends without a newline"):
        list(JsonlLog(tmp_path).entries(since_seq=count - 5))


def test_a_torn_tail_is_ignored_by_a_tail_read_of_a_large_month(tmp_path: Path, counter: Counter) -> None:
    write_log(tmp_path, 2000, step=timedelta(seconds=1))
    (month,) = tmp_path.glob("*.jsonl")
    month.write_bytes(month.read_bytes() + b'{"action":"put","ac')
    log = JsonlLog(tmp_path)
    assert [e.seq for e in log.entries(since_seq=1995)] == [1996, 1997, 1998, 1999, 2000]
    head = log.last()
    assert head is not None and head.seq == 2000
    with pytest.raises(LogError, match=r"line 2001: torn tail"):
        log.verify()


def test_damage_before_the_start_is_left_to_verify_which_still_checks_the_whole_chain(
    tmp_path: Path,
) -> None:
    write_log(tmp_path, 400, step=timedelta(seconds=1))
    (month,) = tmp_path.glob("*.jsonl")
    lines = month.read_bytes().split(b"\n")
    lines[9] = lines[9].replace(b'"version":9', b'"version":8')  # an edit that still parses
    month.write_bytes(b"\n".join(lines))
    log = JsonlLog(tmp_path)
    assert [e.seq for e in log.entries(since_seq=397)] == [398, 399, 400]
    with pytest.raises(LogError, match=r"line 11: seq 11: prev does not match"):
        log.verify()


def test_an_append_after_a_tail_read_continues_the_chain(tmp_path: Path) -> None:
    write_log(tmp_path, 500, step=timedelta(seconds=1))
    log = JsonlLog(tmp_path)
    assert len(list(log.entries(since_seq=499))) == 1
    entry = log.append("put", actor="owner", now=START + timedelta(days=1))
    assert entry.seq == 501
    assert [e.seq for e in log.entries(since_seq=499)] == [500, 501]
    assert log.verify() == 501


def test_the_entries_from_a_time_are_found_without_parsing_the_whole_month(
    tmp_path: Path, counter: Counter
) -> None:
    write_log(tmp_path, 3000, step=timedelta(seconds=1))
    log = JsonlLog(tmp_path)
    found = list(entries_from_time(log, START + timedelta(seconds=2995)))
    assert [e.seq for e in found] == [2996, 2997, 2998, 2999, 3000]
    size = next(tmp_path.glob("*.jsonl")).stat().st_size
    probes = (3000).bit_length() * (size.bit_length() + 3)  # seq bisection x byte bisection
    assert counter.lines <= probes < 3000 // 4, counter.lines


def test_asking_for_the_head_again_reads_back_only_its_line_and_parses_nothing(
    tmp_path: Path, counter: Counter
) -> None:
    write_log(tmp_path, 500, step=timedelta(seconds=1))
    log = JsonlLog(tmp_path)
    entry = log.append("put", actor="owner", record_ids=["mem:" + "a" * 32])
    counter.reset()
    for _ in range(3):  # one write asks for the head several times (issue 23)
        assert log.last() == entry
    assert counter.lines == 0
    assert counter.bytes <= 3 * (len(entry.line) + 2)
    assert JsonlLog(tmp_path).last() == entry  # another instance over the same folder shares it


def test_a_head_line_edited_in_place_after_it_was_read_is_read_again(tmp_path: Path) -> None:
    log = JsonlLog(tmp_path)
    log.append("put", actor="owner", now=START)
    entry = log.append("put", actor="alice", now=START)
    month = tmp_path / f"{START:%Y-%m}.jsonl"
    edited = month.read_bytes().replace(b'"actor":"alice"', b'"actor":"bobby"')  # same length
    month.write_bytes(edited)
    head = log.last()
    assert head is not None and head.seq == entry.seq and head.actor == "bobby"
    assert log.append("put", actor="owner", now=START).prev == head.digest  # chained to what is stored

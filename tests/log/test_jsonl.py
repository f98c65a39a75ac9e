"""JsonlLog specifics: month files, the chain across months, several writer processes, torn tails."""

import hashlib
import os
import signal
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from agent_memory.errors import LogError
from agent_memory.log import JsonlLog

JAN = datetime(2026, 1, 31, 23, 59, 59, tzinfo=UTC)
FEB = datetime(2026, 2, 1, tzinfo=UTC)
MAR = datetime(2026, 3, 15, tzinfo=UTC)

# A writer process: appends COUNT entries as agent:NAME, printing each seq as it lands.
WRITER = """
import sys
from agent_memory.log import JsonlLog
log = JsonlLog(sys.argv[1])
for i in range(int(sys.argv[2])):
    entry = log.append("put", actor="agent:" + sys.argv[3], record_ids=[sys.argv[3] + "-" + str(i)])
    print(entry.seq, flush=True)
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "log"


def three_months(log: JsonlLog) -> None:
    for when in (JAN, JAN, FEB, FEB, MAR):
        log.append("put", actor="owner", now=when)


def test_entries_go_to_the_file_of_their_utc_month(folder: Path) -> None:
    log = JsonlLog(folder)
    three_months(log)
    names = sorted(p.name for p in folder.iterdir())
    assert names == [".lock", "2026-01.jsonl", "2026-02.jsonl", "2026-03.jsonl"]
    counts = [len((folder / n).read_bytes().splitlines()) for n in names[1:]]
    assert counts == [2, 2, 1]


def test_a_local_time_zone_clock_is_filed_by_its_utc_month(folder: Path) -> None:
    east = timezone(timedelta(hours=2))
    entry = JsonlLog(folder).append("init", actor="owner", now=datetime(2026, 2, 1, 1, 0, tzinfo=east))
    assert entry.time == datetime(2026, 1, 31, 23, 0, tzinfo=UTC)
    assert [p.name for p in folder.glob("*.jsonl")] == ["2026-01.jsonl"]


def test_the_chain_runs_on_across_month_files(folder: Path) -> None:
    log = JsonlLog(folder)
    three_months(log)
    last_of_january = (folder / "2026-01.jsonl").read_bytes().splitlines()[-1]
    first_of_february = next(e for e in log.entries() if e.seq == 3)
    assert first_of_february.prev == hashlib.sha256(last_of_january).hexdigest()
    assert log.verify() == 5
    assert [e.seq for e in log.entries()] == [1, 2, 3, 4, 5]


def test_entries_since_a_seq_skip_earlier_month_files(folder: Path) -> None:
    log = JsonlLog(folder)
    three_months(log)
    (folder / "2026-01.jsonl").write_bytes(b"damage that is never read\n")
    assert [e.seq for e in log.entries(since_seq=3)] == [4, 5]
    assert [e.seq for e in log.entries(since_seq=2)] == [3, 4, 5]
    with pytest.raises(LogError, match=r"2026-01\.jsonl: line 1: not JSON"):
        list(log.entries(since_seq=1))


def test_an_entry_moved_into_another_month_file_is_named(folder: Path) -> None:
    log = JsonlLog(folder)
    three_months(log)
    february = (folder / "2026-02.jsonl").read_bytes().splitlines(keepends=True)
    (folder / "2026-01.jsonl").write_bytes((folder / "2026-01.jsonl").read_bytes() + february[0])
    (folder / "2026-02.jsonl").write_bytes(february[1])
    with pytest.raises(
        LogError, match=r"2026-01.jsonl: line 3: seq 3 of 2026-02 is in the file of another month"
    ):
        log.verify()


def test_a_clock_that_runs_backwards_never_writes_into_an_earlier_month(folder: Path) -> None:
    log = JsonlLog(folder)
    log.append("init", actor="owner", now=FEB)
    entry = log.append("put", actor="owner", now=JAN)
    assert entry.time == FEB
    assert [p.name for p in folder.glob("*.jsonl")] == ["2026-02.jsonl"]


def test_a_missing_folder_reads_as_an_empty_log_and_other_files_are_ignored(folder: Path) -> None:
    log = JsonlLog(folder)
    assert log.last() is None and log.verify() == 0
    log.append("init", actor="owner", now=JAN)
    (folder / "notes.txt").write_text("not part of the log", encoding="utf-8")
    (folder / "2026-13.jsonl").write_text("not a month", encoding="utf-8")
    assert log.verify() == 1


def test_each_line_is_canonical_json_and_a_newline(folder: Path) -> None:
    log = JsonlLog(folder)
    entry = log.append("put", actor="owner", record_ids=["mem:" + "a" * 32], details={"v": 1}, now=JAN)
    assert (folder / "2026-01.jsonl").read_bytes() == entry.line + b"\n"


def test_four_processes_appending_at_once_give_one_contiguous_verified_chain(folder: Path) -> None:
    folder.mkdir()
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(folder), "100", f"w{n}"], stdout=subprocess.PIPE)
        for n in range(4)
    ]
    for writer in writers:
        writer.communicate(timeout=60)
        assert writer.returncode == 0
    log = JsonlLog(folder)
    entries = list(log.entries())
    assert [e.seq for e in entries] == list(range(1, 401))
    assert log.verify() == 400
    for n in range(4):  # each writer's own appends keep their order
        mine = [e.record_ids[0] for e in entries if e.actor == f"agent:w{n}"]
        assert mine == [f"w{n}-{i}" for i in range(100)]


def test_threads_appending_at_once_give_one_contiguous_chain(folder: Path) -> None:
    log = JsonlLog(folder)
    errors: list[BaseException] = []

    def work(name: str) -> None:
        try:
            for i in range(25):
                log.append("put", actor=f"agent:{name}", record_ids=[f"{name}-{i}"])
        except BaseException as exc:  # surfaced below; a thread cannot fail the test itself
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"t{n}",)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert log.verify() == 200


# ---------------------------------------------------------------- torn tails and damage


def test_a_torn_tail_is_ignored_by_reading_reported_by_verify_and_cut_by_the_next_append(
    folder: Path,
) -> None:
    log = JsonlLog(folder)
    three_months(log)
    march = folder / "2026-03.jsonl"
    whole = march.read_bytes()
    march.write_bytes(whole + b'{"action":"put","actor":"ow')
    assert [e.seq for e in log.entries()] == [1, 2, 3, 4, 5]
    head = log.last()
    assert head is not None and head.seq == 5
    with pytest.raises(LogError, match=r"2026-03.jsonl: line 2: torn tail: 27 bytes"):
        log.verify()

    entry = log.append("put", actor="owner", now=MAR)
    assert entry.seq == 6
    assert march.read_bytes() == whole + entry.line + b"\n"
    assert log.verify() == 6


def test_a_torn_tail_alone_in_a_new_month_file_is_cut_and_the_chain_goes_on(folder: Path) -> None:
    log = JsonlLog(folder)
    log.append("init", actor="owner", now=JAN)
    (folder / "2026-02.jsonl").write_bytes(b'{"seq":2')
    head = log.last()
    assert head is not None and head.seq == 1
    assert log.append("put", actor="owner", now=FEB).seq == 2
    assert log.verify() == 2


def test_a_writer_killed_mid_stream_leaves_a_log_the_next_append_continues(folder: Path) -> None:
    folder.mkdir()
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder), "100000", "doomed"], stdout=subprocess.PIPE
    )
    assert writer.stdout is not None
    for _ in range(20):  # wait until it is well into its loop, then kill it without warning
        writer.stdout.readline()
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=30)
    writer.stdout.close()
    log = JsonlLog(folder)
    head = log.last()
    assert head is not None and head.seq >= 20
    after = log.append("put", actor="owner")
    assert after.seq == head.seq + 1
    assert log.verify() == after.seq


def test_an_unterminated_line_in_an_earlier_month_is_damage_not_a_torn_tail(folder: Path) -> None:
    log = JsonlLog(folder)
    three_months(log)
    january = folder / "2026-01.jsonl"
    january.write_bytes(january.read_bytes()[:-1])
    for read in (log.verify, lambda: list(log.entries())):
        with pytest.raises(LogError, match=r"2026-01\.jsonl: line 2: ends without a newline"):
            read()


def test_a_damaged_last_line_refuses_appends_and_is_left_as_it_is(folder: Path) -> None:
    log = JsonlLog(folder)
    three_months(log)
    march = folder / "2026-03.jsonl"
    damaged = march.read_bytes().replace(b'"seq":5', b'"seq":"5"')
    march.write_bytes(damaged)
    with pytest.raises(
        LogError, match=r"2026-03.jsonl: line 1: not a log entry: seq: must be a positive integer"
    ):
        log.append("put", actor="owner", now=MAR)
    with pytest.raises(LogError, match=r"2026-03.jsonl: line 1"):
        log.last()
    assert march.read_bytes() == damaged


def test_a_blank_line_is_damage_named_by_file_and_line(folder: Path) -> None:
    log = JsonlLog(folder)
    three_months(log)
    february = folder / "2026-02.jsonl"
    february.write_bytes(b"\n" + february.read_bytes())
    with pytest.raises(LogError, match=r"2026-02.jsonl: line 1: not JSON"):
        list(log.entries())

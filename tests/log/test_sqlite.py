"""SQLiteLog specifics: concurrent threads and processes, the table's shape, sharing a database."""

import sqlite3
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_memory.errors import LogError
from agent_memory.log import SQLiteLog

T0 = datetime(2026, 1, 1, tzinfo=UTC)

# A writer process: opens its own SQLiteLog and appends COUNT entries as agent:NAME.
WRITER = """
import sys
from agent_memory.log import SQLiteLog
with SQLiteLog(sys.argv[1]) as log:
    for i in range(int(sys.argv[2])):
        log.append("put", actor="agent:" + sys.argv[3], record_ids=[sys.argv[3] + "-" + str(i)])
"""


def test_threads_sharing_one_log_append_one_contiguous_chain(tmp_path: Path) -> None:
    errors: list[BaseException] = []
    with SQLiteLog(tmp_path / "log.db") as log:

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
        assert [e.seq for e in log.entries()] == list(range(1, 201))
        assert log.verify() == 200


def test_four_processes_appending_at_once_give_one_contiguous_verified_chain(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), "50", f"w{n}"]) for n in range(4)]
    for writer in writers:
        assert writer.wait(timeout=60) == 0
    with SQLiteLog(path) as log:
        entries = list(log.entries())
        assert [e.seq for e in entries] == list(range(1, 201))
        assert log.verify() == 200
    for n in range(4):
        mine = [e.record_ids[0] for e in entries if e.actor == f"agent:w{n}"]
        assert mine == [f"w{n}-{i}" for i in range(50)]


def test_the_database_uses_the_wal_journal(tmp_path: Path) -> None:
    with SQLiteLog(tmp_path / "log.db") as log:
        log.append("init", actor="owner", now=T0)
    db = sqlite3.connect(tmp_path / "log.db")
    try:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        db.close()


def test_the_log_can_share_a_database_with_other_tables(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    db = sqlite3.connect(path)
    with db:
        db.execute("CREATE TABLE records (id TEXT PRIMARY KEY, data BLOB)")
        db.execute("INSERT INTO records VALUES ('mem:x', x'00')")
    db.close()
    with SQLiteLog(path) as log:
        log.append("put", actor="owner", record_ids=["mem:x"], now=T0)
        assert log.verify() == 1
    db = sqlite3.connect(path)
    try:
        assert db.execute("SELECT count(*) FROM records").fetchone()[0] == 1
    finally:
        db.close()


def test_an_oplog_table_of_another_shape_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    with db:
        db.execute("CREATE TABLE oplog (id INTEGER PRIMARY KEY, message TEXT)")
    db.close()
    with pytest.raises(LogError, match="the oplog table has columns"):
        SQLiteLog(path)


def test_a_row_stored_as_text_is_named_by_its_seq(tmp_path: Path) -> None:
    with SQLiteLog(tmp_path / "log.db") as log:
        entry = log.append("init", actor="owner", now=T0)
        db = sqlite3.connect(tmp_path / "log.db")
        with db:
            db.execute("UPDATE oplog SET line = ? WHERE seq = 1", (entry.line.decode("utf-8"),))
        db.close()
        with pytest.raises(LogError, match="oplog seq 1: line is a str, not a BLOB"):
            log.verify()


def test_a_busy_database_is_reported_after_the_timeout_and_nothing_is_appended(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    with SQLiteLog(path, timeout=0.05) as log:
        log.append("init", actor="owner", now=T0)
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(LogError, match="cannot append: database is locked"):
                log.append("put", actor="owner", now=T0)
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert log.verify() == 1
        assert log.append("put", actor="owner", now=T0).seq == 2


def test_a_closed_log_cannot_be_used(tmp_path: Path) -> None:
    log = SQLiteLog(tmp_path / "log.db")
    log.close()
    with pytest.raises(LogError, match="closed"):
        log.append("init", actor="owner", now=T0)


def test_an_in_memory_database_works_for_tests(tmp_path: Path) -> None:
    with SQLiteLog(":memory:") as log:
        log.append("init", actor="owner", now=T0)
        assert log.verify() == 1

"""One suite for every OperationLog adapter: the in-memory reference, JSONL month files, SQLite."""

import hashlib
import json
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from agent_memory.errors import LogError
from agent_memory.log import ACTIONS, GENESIS, Action, JsonlLog, LogEntry, MemoryLog, OperationLog, SQLiteLog
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.wire import canonical_json
from pg import shared_cluster

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ID_A = "mem:" + "a" * 32
ID_B = "mem:" + "b" * 32


@dataclass
class Subject:
    """A log plus raw access to its stored lines, so tests can tamper like a person with an editor."""

    log: OperationLog
    read_lines: Callable[[], list[bytes]]
    write_lines: Callable[[list[bytes]], None]
    where: Callable[[int], str]  # how an error names the n-th stored line (1-based)
    close: Callable[[], None] = lambda: None


def memory_subject(tmp_path: Path) -> Subject:
    log = MemoryLog()

    def write(lines: list[bytes]) -> None:
        log.lines[:] = lines

    return Subject(log, lambda: list(log.lines), write, lambda n: f"line {n}")


def jsonl_subject(tmp_path: Path) -> Subject:
    folder = tmp_path / "log"
    month = folder / "2026-01.jsonl"  # every test writes in January 2026

    def read() -> list[bytes]:
        return month.read_bytes().split(b"\n")[:-1]

    def write(lines: list[bytes]) -> None:
        month.write_bytes(b"".join(line + b"\n" for line in lines))

    return Subject(JsonlLog(folder), read, write, lambda n: f"2026-01.jsonl: line {n}")


def sqlite_subject(tmp_path: Path) -> Subject:
    log = SQLiteLog(tmp_path / "log.db")
    db = sqlite3.connect(tmp_path / "log.db")  # a second connection, like a person with a SQL shell

    def read() -> list[bytes]:
        return [row[0] for row in db.execute("SELECT line FROM oplog ORDER BY seq")]

    def write(lines: list[bytes]) -> None:
        # Rows are keyed by position, as if someone rewrote the table by hand.
        with db:
            db.execute("DELETE FROM oplog")
            db.executemany("INSERT INTO oplog (seq, line) VALUES (?, ?)", enumerate(lines, start=1))

    def close() -> None:
        db.close()
        log.close()

    return Subject(log, read, write, lambda n: f"oplog seq {n}", close)


def postgres_subject(tmp_path: Path) -> Subject:
    from agent_memory.log.postgres import PostgresLog

    cluster = shared_cluster()  # skips without PostgreSQL binaries (fails under CI)
    schema = f"t_{uuid.uuid4().hex}"
    log = PostgresLog(cluster.dsn, schema=schema)
    db = psycopg.connect(cluster.dsn, autocommit=True)  # a second session, like a person with psql
    table = sql.SQL("{}.oplog").format(sql.Identifier(schema))

    def read() -> list[bytes]:
        return [
            bytes(row[0]) for row in db.execute(sql.SQL("SELECT line FROM {} ORDER BY seq").format(table))
        ]

    def write(lines: list[bytes]) -> None:
        with db.transaction():
            db.execute(sql.SQL("DELETE FROM {}").format(table))
            for seq, line in enumerate(lines, start=1):
                db.execute(sql.SQL("INSERT INTO {} (seq, line) VALUES (%s, %s)").format(table), (seq, line))

    def close() -> None:
        log.close()
        db.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
        db.close()

    return Subject(log, read, write, lambda n: f"oplog seq {n}", close)


@pytest.fixture(
    params=[memory_subject, jsonl_subject, sqlite_subject, postgres_subject],
    ids=["memory", "jsonl", "sqlite", "postgres"],
)
def subject(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Subject]:
    made: Subject = request.param(tmp_path)
    yield made
    made.close()


def fill(log: OperationLog, count: int = 5) -> list[LogEntry]:
    return [
        log.append("put", actor="owner", record_ids=[f"mem:{i:032x}"], details={"version": i}, now=T0)
        for i in range(1, count + 1)
    ]


def rewrite(line: bytes, **changes: Any) -> bytes:
    wire = json.loads(line)
    wire.update(changes)
    return canonical_json(wire)


def rechain(lines: list[bytes]) -> list[bytes]:
    """Recompute every prev, as a careful forger would."""
    out: list[bytes] = []
    prev = GENESIS
    for line in lines:
        out.append(rewrite(line, prev=prev))
        prev = hashlib.sha256(out[-1]).hexdigest()
    return out


def verify_error(subject: Subject) -> str:
    with pytest.raises(LogError) as info:
        subject.log.verify()
    return str(info.value)


# ---------------------------------------------------------------- append, entries, last


def test_every_adapter_implements_the_port(subject: Subject) -> None:
    assert isinstance(subject.log, OperationLog)


def test_an_empty_log_has_no_head_no_entries_and_verifies(subject: Subject) -> None:
    assert subject.log.last() is None
    assert list(subject.log.entries()) == []
    assert subject.log.verify() == 0


def test_appended_entries_read_back_in_order_with_contiguous_seqs(subject: Subject) -> None:
    appended = fill(subject.log)
    assert [e.seq for e in appended] == [1, 2, 3, 4, 5]
    assert list(subject.log.entries()) == appended
    assert subject.log.last() == appended[-1]


def test_each_entry_chains_to_the_hash_of_the_previous_stored_line(subject: Subject) -> None:
    appended = fill(subject.log, 3)
    lines = subject.read_lines()
    assert appended[0].prev == GENESIS
    assert appended[1].prev == hashlib.sha256(lines[0]).hexdigest()
    assert appended[2].prev == appended[1].digest
    assert [e.line for e in appended] == lines


def test_the_chain_verifies_and_counts_the_entries(subject: Subject) -> None:
    fill(subject.log)
    assert subject.log.verify() == 5


def test_entries_since_a_seq_start_after_it(subject: Subject) -> None:
    fill(subject.log)
    assert [e.seq for e in subject.log.entries(since_seq=2)] == [3, 4, 5]
    assert list(subject.log.entries(since_seq=5)) == []
    assert list(subject.log.entries(since_seq=99)) == []


def test_details_and_ids_round_trip_exactly(subject: Subject) -> None:
    details = {
        "reason": "newer value for subject host:staging — ok ✓",
        "version": 2,
        "big": 2**70,
        "flags": [True, False, None],
        "receipt": {"holders": [{"name": "notes", "status": "completed"}]},
    }
    entry = subject.log.append(
        Action.SUPERSEDE, actor="agent:claude", record_ids=(ID_A, ID_B), details=details, now=T0
    )
    (read,) = subject.log.entries()
    assert read == entry
    assert read.details == details
    assert read.record_ids == (ID_A, ID_B)
    assert read.action == "supersede" and read.actor == "agent:claude"
    assert read.time == T0


def test_text_is_stored_nfc_normalised_and_the_returned_entry_matches_the_stored_one(
    subject: Subject,
) -> None:
    entry = subject.log.append("review", actor="owner", details={"reason": "cafe\u0301"}, now=T0)
    assert entry.details["reason"] == "caf\u00e9"
    assert subject.log.last() == entry


def test_time_never_runs_backwards_along_the_chain(subject: Subject) -> None:
    subject.log.append("init", actor="owner", now=T0 + timedelta(hours=1))
    later = subject.log.append("put", actor="owner", now=T0)
    assert later.time == T0 + timedelta(hours=1)
    assert subject.log.verify() == 2


def test_time_is_stored_as_utc_milliseconds(subject: Subject) -> None:
    entry = subject.log.append("init", actor="owner", now=datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=UTC))
    assert entry.time == datetime(2026, 1, 1, 12, 0, 0, 123000, tzinfo=UTC)
    assert b'"time":"2026-01-01T12:00:00.123Z"' in subject.read_lines()[0]


def test_the_same_events_give_the_same_lines_in_every_adapter(tmp_path: Path) -> None:
    reference = MemoryLog()
    with SQLiteLog(tmp_path / "log.db") as table:
        logs: list[OperationLog] = [reference, JsonlLog(tmp_path / "log"), table]
        for log in logs:
            fill(log, 3)
        stored = [[e.line for e in log.entries()] for log in logs]
    assert stored == [reference.lines] * 3
    assert (tmp_path / "log" / "2026-01.jsonl").read_bytes() == b"".join(
        line + b"\n" for line in reference.lines
    )


def test_an_entry_is_checked_and_normalised_when_built() -> None:
    east = datetime(2026, 1, 1, 2, 0, 0, 999999, tzinfo=timezone(timedelta(hours=2)))
    entry = LogEntry(seq=1, time=east, actor="cli", action="init", record_ids=[ID_A], details=None)  # type: ignore[arg-type]
    assert entry.time == datetime(2026, 1, 1, 0, 0, 0, 999000, tzinfo=UTC)
    assert entry.record_ids == (ID_A,) and entry.details == {} and entry.action is Action.INIT
    assert LogEntry.from_line(entry.line) == entry
    assert len({entry, LogEntry.from_line(entry.line)}) == 1
    with pytest.raises(LogError) as info:
        LogEntry(seq=0, time=T0, actor="cli", action="init")
    assert info.value.field == "seq"
    with pytest.raises(LogError) as info:
        LogEntry(seq=1, time=T0, actor="cli", action="init", prev="ab")
    assert info.value.field == "prev"


# ---------------------------------------------------------------- refused appends write nothing


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"details": {"weight": 0.5}}, "details.weight"),
        ({"details": {"nested": [1, {"score": 1.0}]}}, "details.nested[1].score"),
        ({"details": {"id": ID_A, "body": "the secret itself"}}, "details"),
        ({"details": {"old": {"id": ID_A, "body": "x"}}}, "details.old"),
        ({"details": {"records": [{"body": "x"}]}}, "details.records[0]"),
        ({"details": ["not", "an", "object"]}, "details"),
        ({"actor": ""}, "actor"),
        ({"actor": "the owner"}, "actor"),
        ({"record_ids": ID_A}, "record_ids"),
        ({"record_ids": [""]}, "record_ids[0]"),
        ({"now": datetime(2026, 1, 1)}, "now"),  # a naive clock is the point
    ],
)
def test_a_bad_append_is_refused_naming_the_field_and_writes_nothing(
    subject: Subject, kwargs: dict[str, Any], field: str
) -> None:
    fill(subject.log, 2)
    before = subject.read_lines()
    arguments: dict[str, Any] = {"actor": "owner", "now": T0, **kwargs}
    with pytest.raises(LogError) as info:
        subject.log.append("put", **arguments)
    assert info.value.field == field
    assert subject.read_lines() == before
    assert subject.log.verify() == 2


def test_a_whole_record_wire_object_is_refused_as_details(subject: Subject) -> None:
    record = MemoryRecord.create(
        type="fact",
        body="Staging runs on host 10.0.0.7.",
        provenance=Provenance(kind="conversation", ref="s-1"),
        created_at=T0,
    )
    with pytest.raises(LogError, match="never holds record content"):
        subject.log.append("put", actor="owner", record_ids=[record.id], details=record.to_wire(), now=T0)
    assert subject.log.last() is None


def test_an_unknown_action_is_refused_but_every_listed_action_is_accepted(subject: Subject) -> None:
    with pytest.raises(LogError, match="unknown action 'cool'"):
        subject.log.append("cool", actor="owner", now=T0)
    for action in sorted(ACTIONS):
        assert subject.log.append(action, actor="owner", now=T0).action == action
    assert subject.log.verify() == len(ACTIONS) == len(Action)


def test_an_action_written_by_a_newer_version_still_reads_and_verifies(subject: Subject) -> None:
    fill(subject.log, 2)
    lines = subject.read_lines()
    subject.write_lines(rechain([*lines, rewrite(lines[1], seq=3, action="cool")]))
    assert [e.action for e in subject.log.entries()] == ["put", "put", "cool"]
    assert subject.log.verify() == 3


# ---------------------------------------------------------------- tampering is detected and located


def test_an_edited_line_breaks_the_chain_at_the_next_line(subject: Subject) -> None:
    fill(subject.log)
    lines = subject.read_lines()
    lines[2] = rewrite(lines[2], details={"version": 99})
    subject.write_lines(lines)
    message = verify_error(subject)
    assert subject.where(4) in message and "prev does not match" in message
    assert subject.where(3) in message  # the previous entry is named too


def test_a_line_edited_out_of_canonical_form_is_named(subject: Subject) -> None:
    fill(subject.log)
    lines = subject.read_lines()
    lines[2] = lines[2].replace(b'"actor":', b'"actor": ')
    subject.write_lines(lines)
    message = verify_error(subject)
    assert subject.where(3) in message and "canonical" in message


def test_a_deleted_line_is_named(subject: Subject) -> None:
    fill(subject.log)
    lines = subject.read_lines()
    del lines[2]
    subject.write_lines(lines)
    message = verify_error(subject)
    assert subject.where(3) in message and "seq 4" in message
    with pytest.raises(LogError):
        list(subject.log.entries())


def test_swapped_lines_are_named(subject: Subject) -> None:
    fill(subject.log)
    lines = subject.read_lines()
    lines[1], lines[2] = lines[2], lines[1]
    subject.write_lines(lines)
    assert subject.where(2) in verify_error(subject)


def test_an_inserted_line_is_named_even_when_it_chains_correctly(subject: Subject) -> None:
    fill(subject.log)
    lines = subject.read_lines()
    forged = rewrite(lines[1], seq=3, record_ids=[ID_A], prev=hashlib.sha256(lines[1]).hexdigest())
    subject.write_lines([*lines[:2], forged, *lines[2:]])
    message = verify_error(subject)
    assert subject.where(4) in message and "seq 3 where 4 was expected" in message


def test_a_rechained_forgery_with_time_running_backwards_is_named(subject: Subject) -> None:
    fill(subject.log, 3)
    lines = subject.read_lines()
    lines[2] = rewrite(lines[2], time="2025-12-31T23:59:59.000Z")
    subject.write_lines(rechain(lines))
    message = verify_error(subject)
    assert subject.where(3) in message and "earlier" in message


def test_a_line_that_is_not_json_is_named(subject: Subject) -> None:
    fill(subject.log, 3)
    lines = subject.read_lines()
    lines[1] = b"{not json"
    subject.write_lines(lines)
    message = verify_error(subject)
    assert subject.where(2) in message and "not JSON" in message
    with pytest.raises(LogError, match="not JSON"):
        list(subject.log.entries())


def test_a_line_that_is_json_but_not_an_entry_is_named(subject: Subject) -> None:
    fill(subject.log, 2)
    lines = subject.read_lines()
    lines[1] = canonical_json({"seq": 2, "note": "hello"})
    subject.write_lines(lines)
    message = verify_error(subject)
    assert subject.where(2) in message and "missing action" in message and "unknown note" in message


def test_a_cut_tail_or_edited_last_line_is_only_caught_against_a_remembered_head(subject: Subject) -> None:
    fill(subject.log)
    head = subject.log.last()
    assert head is not None
    remembered = (head.seq, head.digest)
    assert subject.log.verify(expect_head=remembered) == 5
    lines = subject.read_lines()

    subject.write_lines(lines[:-1])
    assert subject.log.verify() == 4  # the chain alone cannot tell
    with pytest.raises(LogError, match="truncated"):
        subject.log.verify(expect_head=remembered)

    subject.write_lines([*lines[:-1], rewrite(lines[-1], details={"version": 6})])
    assert subject.log.verify() == 5
    with pytest.raises(LogError, match="seq 5 differs from the remembered head"):
        subject.log.verify(expect_head=remembered)


def test_an_earlier_remembered_head_still_verifies_after_more_appends(subject: Subject) -> None:
    first = fill(subject.log, 2)[-1]
    fill(subject.log, 2)
    assert subject.log.verify(expect_head=(first.seq, first.digest)) == 4

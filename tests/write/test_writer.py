"""The Writer: one place that locks, reads the clock, signs, puts and logs, and keeps caches in step."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from fg_agent_id import KeyPair

from agent_memory.errors import RecordError
from agent_memory.home import Home
from agent_memory.memory import Memory
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.signing import verify_record

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _record(body: str) -> MemoryRecord:
    return MemoryRecord.create(
        type="fact", body=body, created_at=T0, provenance=Provenance(kind="conversation", ref="test:1")
    )


def test_a_write_is_signed_put_logged_with_its_versions_and_searchable(seed_keys: KeyPair) -> None:
    memory = Memory.in_memory(identity=seed_keys)
    writer = memory.writer
    record = _record("The staging host is db-2.")
    with writer.writing():
        numbers = writer.write([record], T0, action="put", details={"reason": "test"})
    stored = memory.store.get(record.id)
    assert stored.signature is not None
    verify_record(stored)  # raises when the signature does not hold
    entry = memory.log.last()
    assert entry is not None and str(entry.action) == "put"
    assert entry.record_ids == (record.id,) and entry.details == {"reason": "test", "versions": numbers}
    assert writer.head() == f"{entry.seq}:{entry.digest}"
    assert [r.record.id for r in memory.recall("staging host").records] == [record.id]


def test_the_clock_refuses_a_naive_time_and_keeps_milliseconds() -> None:
    writer = Memory.in_memory().writer
    with pytest.raises(RecordError) as caught:
        writer.clock(datetime(2026, 11, 1))  # a naive time
    assert caught.value.field == "now"
    assert writer.clock(datetime(2026, 11, 1, 0, 0, 0, 123456, tzinfo=UTC)).microsecond == 123000


def test_a_memory_knows_its_home_or_that_it_has_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert Memory.in_memory().home is None
    Home.init(tmp_path / "home", git=False, now=T0)
    with Memory.open(tmp_path / "home") as memory:
        assert memory.home is not None and memory.home.root == (tmp_path / "home").resolve()

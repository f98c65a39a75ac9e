"""A recall reads the log's head once (the withdrawal gate and the review book share it), and
still sees every withdrawal and review logged before it."""

from __future__ import annotations

from agent_memory.log.base import LogEntry
from agent_memory.log.fold import log_head, one_pass
from agent_memory.log.inmemory import MemoryLog
from agent_memory.memory import Memory
from agent_memory.search.catalog import IndexCatalog
from agent_memory.stores.inmemory import InMemoryStore


class CountingLog(MemoryLog):
    def __init__(self) -> None:
        super().__init__()
        self.heads = 0

    def last(self) -> LogEntry | None:
        self.heads += 1
        return super().last()


def make() -> tuple[Memory, CountingLog]:
    store = InMemoryStore()
    log = CountingLog()
    return Memory(store, log, IndexCatalog.in_memory(store)), log


def test_one_recall_reads_the_log_head_once() -> None:
    memory, log = make()
    for text in ("Staging runs on db-3.", "Production runs on db-9.", "Backups run at night on db-3."):
        memory.remember(text, source="ticket-1")
    memory.recall("db-3")  # the first recall may catch up from the start
    log.heads = 0
    result = memory.recall("which host runs staging db-3")
    assert result.records
    assert log.heads == 1


def test_a_withdrawal_logged_between_recalls_is_seen_by_the_next_one() -> None:
    memory, _ = make()
    kept = memory.remember("Staging runs on db-3.", source="ticket-1")
    gone = memory.remember("Staging once ran on db-2 behind db-3.", source="ticket-2")
    assert {r.record.id for r in memory.recall("staging db-3").records} == {kept.record_id, gone.record_id}
    memory.withdraw(memory_item_ids=[gone.record_id], reason="wrong host")
    assert [r.record.id for r in memory.recall("staging db-3").records] == [kept.record_id]


def test_a_pass_inside_a_pass_is_the_same_pass() -> None:
    log = CountingLog()
    with one_pass():
        log_head(log)
        with one_pass():
            log_head(log)
        log_head(log)
    assert log.heads == 1
    log_head(log)
    log_head(log)
    assert log.heads == 3

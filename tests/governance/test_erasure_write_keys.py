"""The erasure receipt lists the write-keys cache: its digests of dedup and subject keys derive from text."""

from __future__ import annotations

from collections.abc import Iterable

from agent_memory.governance.erasure.receipt import HolderResult
from agent_memory.log.inmemory import MemoryLog
from agent_memory.memory import Memory
from agent_memory.search.catalog import IndexCatalog
from agent_memory.stores.inmemory import InMemoryStore
from agent_memory.write.dedup import WriteKeys, body_digest, subject_digest
from memory.conftest import T0, at

UNIQUE = "Zanzibar-quokka-7731 lives at the old lighthouse"


def holder(holders: Iterable[HolderResult], ref: str) -> HolderResult:
    (found,) = [h for h in holders if h.holder_ref == ref]
    return found


def test_the_write_keys_cache_is_a_completed_holder_with_no_digest_of_an_erased_key(memory: Memory) -> None:
    gone = memory.remember(UNIQUE, source="s", now=T0).record_id
    state = memory.remember(
        "The quokka lives at the lighthouse.", source="s", kind="state", subject="quokka home", now=T0
    )
    originals = [memory.get(gone), memory.get(state.record_id)]
    digests = [("body", body_digest(r)) for r in originals] + [("subject", subject_digest(originals[1]))]
    assert {rid for column, d in digests if d for rid in memory.write_keys.table.find(column, d)} == {
        gone,
        state.record_id,
    }

    receipt = memory.erase([gone, state.record_id], reason="user request", authority="ada", now=at(1))

    assert holder(receipt.holders, "write-keys") == HolderResult("write-keys", "completed")
    assert [rid for column, d in digests if d for rid in memory.write_keys.table.find(column, d)] == []
    assert receipt.complete
    # Nothing left to dedup against: the same text is a new record, the subject a new value.
    again = memory.remember(UNIQUE, source="s", now=at(2))
    assert again.record_id != gone and again.superseded is None


class ForgetfulKeys(WriteKeys):
    """A write-keys cache whose refresh does nothing: the erased digests stay."""

    def refresh(self, record_ids: Iterable[str]) -> None:
        del record_ids


def test_a_cache_that_keeps_an_erased_digest_is_reported_as_holding_content() -> None:
    store = InMemoryStore()
    catalog = IndexCatalog.in_memory(store)
    keys = ForgetfulKeys(store, read_all=catalog.readable_records)
    with Memory(store, MemoryLog(), catalog, write_keys=keys) as memory:
        gone = memory.remember(UNIQUE, source="s", now=T0).record_id
        receipt = memory.erase([gone], reason="user request", authority="ada", now=at(1))
    assert holder(receipt.holders, "write-keys") == HolderResult(
        "write-keys", "partially-completed", "content-remains"
    )
    assert not receipt.complete

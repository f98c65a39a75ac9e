"""`iter_verified`: the verified read path in chunks, for passes that keep no record (issue 23)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.signing import KeyPair, address_of, sign_record
from agent_memory.stores.files import FileStore
from agent_memory.stores.inmemory import InMemoryStore
from agent_memory.stores.sqlite import SQLiteStore
from agent_memory.stores.verified import Refusal, iter_verified, read_verified

T0 = datetime(2026, 7, 1, tzinfo=UTC)


@pytest.mark.parametrize("kind", ["files", "sqlite", "memory"])
def test_chunks_yield_what_read_verified_returns_and_report_each_refusal(tmp_path: Path, kind: str) -> None:
    keys = KeyPair.generate()
    store = {
        "files": lambda: FileStore(tmp_path / "notes"),
        "sqlite": lambda: SQLiteStore(tmp_path / "store.sqlite"),
        "memory": InMemoryStore,
    }[kind]()
    source = Provenance(kind="test", ref="test:chunks")
    for n in range(7):
        made = MemoryRecord.create(
            type="fact", body=f"Fact {n}.", provenance=source, created_at=T0 + timedelta(n)
        )
        store.put(made if n == 3 else sign_record(made, keys))  # one unsigned: refused
    whole = read_verified(store, home_signer=address_of(keys))
    refused: list[Refusal] = []
    chunked = list(iter_verified(store, home_signer=address_of(keys), chunk=2, refused=refused.append))
    assert [r.id for r in chunked] == sorted(r.id for r in whole.records)
    assert len(chunked) == 6
    assert [r.record_id for r in refused] == [r.record_id for r in whole.refused]
    assert len(refused) == 1

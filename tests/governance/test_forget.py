"""``forget`` routes to withdrawal and prints the five-line surface receipt (seed 000 §12.1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent_memory.governance.actors import Actors, AuthorityError
from agent_memory.governance.forget import SURFACES
from agent_memory.governance.gate import Gate
from agent_memory.home import Home
from agent_memory.memory import Memory
from memory.conftest import T0, at
from pg import PgSchema, postgres_cluster, postgres_schema  # noqa: F401 - fixtures


def recalled(memory: Memory, query: str, **options: object) -> set[str]:
    return set(memory.recall(query, now=at(2), touch=False, **options).ids)  # type: ignore[arg-type]


def test_forget_withdraws_reversibly_and_never_claims_erasure(memory: Memory) -> None:
    gone = memory.remember("The deploy script needs sudo.", source="run-7", now=T0).record_id
    before = memory.history(gone)
    receipt = memory.withdrawals.forget(memory_item_ids=[gone], now=at(1))
    text = receipt.render()
    assert [line.split(":")[0] for line in text.splitlines()] == list(SURFACES)
    assert "withdrawn (reversible), not erased" in receipt.lines["Memory"]
    assert re.findall(r"(?<!not )\berased\b", text) == [] and "forgotten" not in text.lower()
    assert receipt.lines["Context / Workspace"].startswith("not erased")
    assert receipt.covered == (gone,) and receipt.withdrawal_id == "memwd-2026-11-02-001"
    assert recalled(memory, "deploy script sudo") == set()
    assert memory.history(gone) == before  # nothing erased, nothing changed
    memory.reinstate(receipt.withdrawal_id, "back", now=at(1, hours=1))
    assert recalled(memory, "deploy script sudo") == {gone}


def test_forget_limited_to_one_namespace_leaves_the_others_untouched(memory: Memory) -> None:
    u1 = memory.remember("The user prefers dark mode.", source="s", namespace="user:u1", now=T0).record_id
    u2 = memory.remember("The user prefers light mode.", source="s", namespace="user:u2", now=T0).record_id
    agent = memory.remember(
        "The agent prefers short mode.", source="s", namespace="agent:a", now=T0
    ).record_id
    histories = {rid: memory.history(rid) for rid in (u2, agent)}
    receipt = memory.withdrawals.forget(namespaces=["user:u1"], now=at(1))
    assert receipt.covered == (u1,)
    assert recalled(memory, "prefers mode") == {u2, agent}
    assert recalled(memory, "prefers mode", namespace="user:u2") == {u2}
    assert recalled(memory, "prefers mode", namespace="user:u1") == set()
    assert {rid: memory.history(rid) for rid in (u2, agent)} == histories


def test_a_scope_that_never_entered_memory_is_non_admission(memory: Memory) -> None:
    memory.remember("Tea at four.", source="s", now=T0)
    head = memory.log.last()
    receipt = memory.withdrawals.forget(source_or_run_refs=["run-never-captured"], now=at(1))
    assert receipt.withdrawal_id is None and receipt.lines["Memory"].startswith("no capture")
    assert memory.log.last() == head


def test_forget_without_the_withdraw_grant_writes_nothing(memory: Memory) -> None:
    rid = memory.remember("Tea at four.", source="s", now=T0).record_id
    head = memory.log.last()
    memory.actor, memory.actors = "agent:claude", Actors(owner="ada")
    with pytest.raises(AuthorityError):
        memory.withdrawals.forget(memory_item_ids=[rid], now=at(1))
    assert memory.log.last() == head


def test_forget_names_a_promoted_rule_it_cannot_revoke(tmp_path: Path) -> None:
    Home.init(tmp_path / "home", git=False, now=T0)
    with Memory.open(tmp_path / "home") as memory:
        rid = memory.remember("Always run the linter first.", source="s", now=T0).record_id
        conventions = tmp_path / "home" / "conventions.md"
        conventions.write_text(conventions.read_text("utf-8") + f"\n- Run the linter first. <!-- {rid} -->\n")
        receipt = memory.withdrawals.forget(memory_item_ids=[rid], now=at(1))
    assert receipt.promoted == ("conventions.md",)
    assert receipt.lines["Promoted / derived artifacts"].startswith("partial: conventions.md")
    assert json.loads(json.dumps(receipt.to_json()))["erased"] is False


def test_forget_limited_to_one_namespace_leaves_the_others_untouched_in_postgresql(
    request: pytest.FixtureRequest,
) -> None:
    from agent_memory.log.postgres import PostgresLog
    from agent_memory.search.catalog import IndexCatalog
    from agent_memory.stores.postgres import PostgresStore
    from agent_memory.transfer.exchange import export_memory_file

    schema: PgSchema = request.getfixturevalue("postgres_schema")
    store = PostgresStore(schema.dsn, schema=schema.schema)
    log = PostgresLog(schema.dsn, schema=schema.schema)
    try:
        with Memory(store, log, IndexCatalog.in_memory(store)) as memory:
            u1 = memory.remember("The user prefers dark mode.", source="s", namespace="user:u1", now=T0)
            u2 = memory.remember("The user prefers light mode.", source="s", namespace="user:u2", now=T0)
            agent = memory.remember("The agent prefers short mode.", source="s", namespace="agent:a", now=T0)
            others = (u2.record_id, agent.record_id)
            histories = {rid: memory.history(rid) for rid in others}
            receipt = memory.withdrawals.forget(namespaces=["user:u1"], now=at(1))
            assert receipt.covered == (u1.record_id,)
            assert recalled(memory, "prefers mode") == set(others)
            assert {rid: memory.history(rid) for rid in others} == histories
            assert [e.action for e in log.entries()].count("withdraw") == 1
            exported = export_memory_file(store, now=at(2), log=log)
            assert sorted(r.id for r in exported.records) == sorted(others)
        # A second connection (another process) sees the same scope.
        with PostgresLog(schema.dsn, schema=schema.schema) as again:
            view = Gate(again, store).view()
            assert {rid for rid in (u1.record_id, *others) if not view.is_exposed(store.get(rid))} == {
                u1.record_id
            }
    finally:
        log.close()
        store.close()

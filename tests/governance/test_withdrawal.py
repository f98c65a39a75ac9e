"""Withdraw and reinstate through the porcelain: recall never shows a withdrawn scope (seed 000 §12.2)."""

from zoneinfo import ZoneInfo

import pytest

from agent_memory.errors import LifecycleError, LogError, RecordError, RecordNotFound
from agent_memory.governance.actors import Actors, AuthorityError
from agent_memory.governance.controls import WithdrawalScope
from agent_memory.governance.portability import append_control
from agent_memory.memory import Memory
from agent_memory.records.record import MemoryRecord, Provenance
from memory.conftest import T0, at

ARCHIVE = "archive/2026-10-31.md"


def recalled(memory: Memory, query: str, **options: object) -> set[str]:
    return set(memory.recall(query, now=at(2), touch=False, **options).ids)  # type: ignore[arg-type]


def log_size(memory: Memory) -> int:
    head = memory.log.last()
    return head.seq if head else 0


def test_a_withdrawn_record_is_absent_from_recall_until_reinstated(memory: Memory) -> None:
    kept = memory.remember("The staging host is db-2.", source="session-1", now=T0).record_id
    gone = memory.remember("The staging host might be db-9.", source="session-2", now=T0).record_id
    before = memory.history(gone)
    assert recalled(memory, "staging host") == {kept, gone}

    control = memory.withdraw(memory_item_ids=[gone], reason="failed-exploration", now=at(1))
    assert control.withdrawal_id == "memwd-2026-11-02-001"
    assert recalled(memory, "staging host") == {kept}
    assert recalled(memory, "staging host", include_history=True, include_archived=True) == {kept}
    assert recalled(memory, "staging host", as_of=at(1)) == {kept}
    assert memory.history(gone) == before  # not false, not changed: state and confidence stay

    lifted = memory.reinstate(control.withdrawal_id, "confirmed after all", now=at(1, hours=1))
    assert (lifted.action, lifted.supersedes, lifted.scope) == (
        "reinstate",
        control.withdrawal_id,
        control.scope,
    )
    assert recalled(memory, "staging host") == {kept, gone}
    assert [c.withdrawal_id for c in memory.controls()] == [control.withdrawal_id, lifted.withdrawal_id]


def test_controls_are_log_events_holding_ids_never_content(memory: Memory) -> None:
    gone = memory.remember("Secret-ish exploration result.", source="session-2", now=T0).record_id
    control = memory.withdraw(memory_item_ids=[gone], reason="failed-exploration", now=at(1))
    (entry,) = [e for e in memory.log.entries() if e.action == "withdraw"]
    assert entry.details == {"control": control.to_wire()}
    assert entry.record_ids == (control.withdrawal_id, gone)
    assert entry.actor == "owner"
    assert "exploration result" not in entry.line.decode()


def test_an_archive_file_covers_every_anchor_inside_it(memory: Memory) -> None:
    one = memory.remember("Deploys happen on Fridays.", source=f"{ARCHIVE}#mem-2026-10-31-001", now=T0)
    two = memory.remember("Deploys need two approvals.", source=f"{ARCHIVE}#mem-2026-10-31-002", now=T0)
    other = memory.remember("Deploys are logged.", source="archive/2026-10-30.md#mem-2026-10-30-001", now=T0)
    assert recalled(memory, "deploys") == {one.record_id, two.record_id, other.record_id}
    memory.withdraw(archive_refs=[f"{ARCHIVE}#mem-2026-10-31-002"], reason="wrong", now=at(1))
    assert recalled(memory, "deploys") == {one.record_id, other.record_id}
    memory.withdraw(archive_refs=[ARCHIVE], reason="bad day", now=at(1))
    assert recalled(memory, "deploys") == {other.record_id}


def test_a_source_ref_covers_its_anchors_and_further_sources(memory: Memory) -> None:
    run = memory.remember("The cache is cold at boot.", source="run:42#step-3", now=T0).record_id
    elsewhere = memory.remember("The cache warms in a minute.", source="run:43", now=T0).record_id
    memory.withdraw(source_or_run_refs=["run:42"], reason="aborted run", now=at(1))
    assert recalled(memory, "cache") == {elsewhere}
    assert memory.gate.check(memory.get(run)).reason == "withdrawn by memwd-2026-11-02-001 (source run:42)"


def test_what_derives_from_a_withdrawn_record_is_withdrawn_too(memory: Memory) -> None:
    root = memory.remember("Service X listens on port 8080.", source="session-1", now=T0).record_id
    child = memory.remember("Port 8080 must be open for service X.", source=root, now=T0).record_id
    grandchild = memory.remember(
        "The firewall opens port 8080 for X.", source=f"{child}#note", now=T0
    ).record_id
    rule = MemoryRecord.create(
        type="rule",
        body="Always check port 8080 for X first.",
        created_at=T0,
        provenance=Provenance(kind="observation", ref="session-3"),
        evidence=(grandchild,),
    )
    memory.store.put(memory.writer.sign(rule))  # another writer of this Home's, signing as it does
    unrelated = memory.remember("Service Y listens on port 9090.", source="session-1", now=T0).record_id
    assert recalled(memory, "port") == {root, child, grandchild, rule.id, unrelated}

    control = memory.withdraw(memory_item_ids=[root], reason="wrong service", now=at(1))
    assert recalled(memory, "port") == {unrelated}
    verdict = memory.gate.check(memory.get(rule.id))
    assert not verdict.exposed
    assert verdict.reason == f"derives from {grandchild}, withdrawn by {control.withdrawal_id}"
    memory.reinstate(control.withdrawal_id, "it was right", now=at(1))
    assert recalled(memory, "port") == {root, child, grandchild, rule.id, unrelated}


def test_a_namespace_withdrawal_touches_only_that_namespace(memory: Memory) -> None:
    ids = {
        ns: memory.remember(f"Prefers dark mode ({ns}).", source="s", namespace=ns, now=T0).record_id
        for ns in ("user:u1", "user:u2", "agent:claude", "default")
    }
    memory.withdraw(namespaces=["user:u1"], reason="user asked", now=at(1))
    assert recalled(memory, "dark mode") == {ids["user:u2"], ids["agent:claude"], ids["default"]}
    assert recalled(memory, "dark mode", namespace="user:u1") == set()
    assert recalled(memory, "dark mode", namespace="user:u2") == {ids["user:u2"]}


def test_conflicting_withdrawals_keep_a_record_excluded_until_each_is_lifted(memory: Memory) -> None:
    record = memory.remember("Team lunch is on Thursday.", source="s", namespace="user:u1", now=T0).record_id
    by_id = memory.withdraw(memory_item_ids=[record], reason="stale plan", now=at(1))
    by_namespace = memory.withdraw(namespaces=["user:u1"], reason="user left", now=at(1))
    memory.reinstate(by_id.withdrawal_id, "plan holds", now=at(1))
    assert recalled(memory, "lunch") == set()
    assert memory.gate.check(memory.get(record)).controls == (by_namespace.withdrawal_id,)
    memory.reinstate(by_namespace.withdrawal_id, "user is back", now=at(1))
    assert recalled(memory, "lunch") == {record}


def test_two_unordered_withdrawals_of_one_scope_and_one_reinstatement_still_exclude(memory: Memory) -> None:
    record = memory.remember("The VPN needs MFA.", source="s", now=T0).record_id
    first = memory.withdraw(memory_item_ids=[record], reason="replica a", now=at(1))
    # A second withdrawal of the same scope that does not name the first, as a merged
    # replica's log would hold: the two have no causal order.
    twin = first.__class__(
        "memwd-2026-11-02-002", "withdraw", first.scope, "replica b", "bob", at(1), supersedes=None
    )
    append_control(memory.log, twin, actor="bob", now=at(1))
    memory.reinstate(first.withdrawal_id, "replica a was wrong", now=at(1))
    assert recalled(memory, "VPN") == set()
    assert [c.withdrawal_id for c in memory.gate.state().in_force()] == [twin.withdrawal_id]


def test_a_reinstatement_with_a_different_scope_is_refused_and_writes_nothing(memory: Memory) -> None:
    a = memory.remember("Build cache lives in /tmp.", source="s", now=T0).record_id
    b = memory.remember("Build cache is 2 GB.", source="s", now=T0).record_id
    control = memory.withdraw(memory_item_ids=[a, b], reason="wrong machine", now=at(1))
    size = log_size(memory)
    with pytest.raises(LifecycleError, match="exact scope"):
        memory.reinstate(
            control.withdrawal_id, "only a", scope=WithdrawalScope(memory_item_ids=(a,)), now=at(1)
        )
    assert log_size(memory) == size
    assert recalled(memory, "build cache") == set()


@pytest.mark.parametrize(
    ("selectors", "error"),
    [
        ({}, RecordError),
        ({"memory_item_ids": ["mem:" + "0" * 32]}, RecordNotFound),
        ({"memory_item_ids": ["not-an-id"]}, RecordError),
        ({"archive_refs": ["notes/x.md"]}, RecordError),
        ({"namespaces": ["user:u1"], "reason": " "}, RecordError),
    ],
)
def test_a_bad_withdrawal_is_refused_and_writes_nothing(
    memory: Memory, selectors: dict[str, object], error: type[Exception]
) -> None:
    memory.remember("Anything.", source="s", now=T0)
    size = log_size(memory)
    options = {"reason": "why"} | selectors
    with pytest.raises(error):
        memory.withdraw(now=at(1), **options)  # type: ignore[arg-type]
    assert log_size(memory) == size


def test_withdrawing_an_already_withdrawn_scope_or_lifting_twice_is_refused(memory: Memory) -> None:
    record = memory.remember("Anything.", source="s", now=T0).record_id
    control = memory.withdraw(memory_item_ids=[record], reason="why", now=at(1))
    with pytest.raises(LifecycleError, match="already withdrawn"):
        memory.withdraw(memory_item_ids=[record, record], reason="again", now=at(1))
    memory.reinstate(control.withdrawal_id, "back", now=at(1))
    with pytest.raises(LifecycleError, match="no longer in force"):
        memory.reinstate(control.withdrawal_id, "back again", now=at(1))
    again = memory.withdraw(memory_item_ids=[record], reason="after all", now=at(1))
    assert again.supersedes == "memwd-2026-11-02-002"


def test_ids_count_up_per_local_day_of_the_time_zone() -> None:
    memory = Memory.in_memory(timezone=ZoneInfo("Pacific/Auckland"))
    record = memory.remember("Anything.", source="s", now=T0).record_id
    made = [
        memory.withdraw(memory_item_ids=[record], reason="r", now=at(0, hours=10)),  # 1 Nov 23:00 UTC+13
        memory.reinstate("memwd-2026-11-01-001", "r", now=at(0, hours=11)),  # 2 Nov 00:00 UTC+13
        memory.withdraw(memory_item_ids=[record], reason="r", now=at(0, hours=12)),
    ]
    assert [c.withdrawal_id for c in made] == [
        "memwd-2026-11-01-001",
        "memwd-2026-11-02-001",
        "memwd-2026-11-02-002",
    ]


def test_an_actor_without_the_withdraw_grant_cannot_withdraw_or_reinstate() -> None:
    owner = Memory.in_memory()
    record = owner.remember("Anything.", source="s", now=T0).record_id
    control = owner.withdraw(memory_item_ids=[record], reason="r", now=at(1))
    agent = Memory(owner.store, owner.log, owner.catalog, actor="agent:claude", actors=Actors(owner="owner"))
    size = log_size(owner)
    with pytest.raises(AuthorityError, match="agent:claude may not reinstate") as info:
        agent.reinstate(control.withdrawal_id, "r", now=at(1))
    assert info.value.hint is not None and '"agent:claude" = ["withdraw"]' in info.value.hint
    with pytest.raises(AuthorityError):
        agent.withdraw(namespaces=["default"], reason="r", now=at(1))
    assert log_size(owner) == size
    granted = Memory(
        owner.store,
        owner.log,
        owner.catalog,
        actor="agent:claude",
        actors=Actors(owner="owner", grants={"agent:claude": ("withdraw",)}),
    )
    assert granted.reinstate(control.withdrawal_id, "r", now=at(1)).decided_by == "agent:claude"


def test_a_control_the_gate_cannot_read_fails_closed(memory: Memory) -> None:
    memory.remember("Anything at all.", source="s", now=T0)
    memory.log.append("withdraw", actor="owner", details={"control": {"withdrawal_id": "x"}}, now=at(1))
    with pytest.raises(LogError, match="does not hold a valid withdrawal control") as info:
        memory.recall("anything", now=at(2))
    assert info.value.hint is not None and "fails closed" in info.value.hint


def test_an_older_version_is_hidden_when_a_later_one_derives_from_a_withdrawn_record(memory: Memory) -> None:
    root = memory.remember("Service X listens on port 8080.", source="session-1", now=T0).record_id
    later = memory.remember("Open port 8080 on the firewall.", source="session-2", now=T0)
    first = memory.get(later.record_id)
    memory.store.put(first.evolve(evidence=(root,), updated_at=at(1)))  # evidence added afterwards
    memory.withdraw(memory_item_ids=[root], reason="wrong service", now=at(1, hours=1))
    assert recalled(memory, "port 8080", as_of=at(0, hours=12)) == set()
    assert memory.gate.check(first).exposed  # the first version alone names no withdrawn record

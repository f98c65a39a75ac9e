"""withdrawal-control-v1 records and their causal chains (seed 000 §12.2), without a store."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from agent_memory.errors import LifecycleError, RecordError
from agent_memory.governance.controls import (
    WithdrawalControl,
    WithdrawalScope,
    next_withdrawal_id,
    plan_reinstatement,
    plan_withdrawal,
    resolve,
)

T0 = datetime(2026, 11, 29, 10, tzinfo=UTC)
A = "mem:" + "a" * 32
B = "mem:" + "b" * 32


def withdrawal(wid: str, scope: WithdrawalScope, supersedes: str | None = None) -> WithdrawalControl:
    return WithdrawalControl(wid, "withdraw", scope, "failed-exploration", "ada", T0, supersedes)


def reinstatement(wid: str, scope: WithdrawalScope, lifts: str, at: datetime = T0) -> WithdrawalControl:
    return WithdrawalControl(wid, "reinstate", scope, "confirmed again", "ada", at, lifts)


def test_a_scope_is_normalised_to_sorted_deduplicated_selectors_with_empty_ones_absent() -> None:
    scope = WithdrawalScope(memory_item_ids=(B, A, B), archive_refs=(), namespaces=["user:u1"])
    assert scope.memory_item_ids == (A, B)
    assert scope.to_wire() == {"memory_item_ids": [A, B], "namespaces": ["user:u1"]}
    assert scope == WithdrawalScope.from_wire({"namespaces": ["user:u1"], "memory_item_ids": [A, B, A]})
    assert scope == WithdrawalScope.from_wire(
        {"memory_item_ids": [B, A], "namespaces": ["user:u1"], "archive_refs": []}
    )
    assert scope != WithdrawalScope(memory_item_ids=(A, B))


@pytest.mark.parametrize(
    ("wire", "field"),
    [
        ({}, "scope"),
        ({"memory_item_ids": []}, "scope"),
        ({"memory_item_ids": ["mem:short"]}, "scope.memory_item_ids[0]"),
        ({"archive_refs": ["notes/x.md"]}, "scope.archive_refs[0]"),
        ({"source_or_run_refs": ["has space"]}, "scope.source_or_run_refs[0]"),
        ({"namespaces": "user:u1"}, "scope.namespaces"),
        ({"topics": ["x"]}, "scope"),
    ],
)
def test_a_bad_scope_is_refused_naming_the_selector(wire: dict[str, object], field: str) -> None:
    with pytest.raises(RecordError) as info:
        WithdrawalScope.from_wire(wire)
    assert info.value.field == field


def test_a_control_reads_back_from_its_wire_object_in_seed_field_order() -> None:
    control = withdrawal("memwd-2026-11-29-001", WithdrawalScope(archive_refs=("archive/2026-11-28.md",)))
    wire = control.to_wire()
    assert list(wire) == [
        "withdrawal_id", "record_type", "action", "scope", "reason", "decided_by", "decided_at", "effect",
        "supersedes",
    ]  # fmt: skip
    assert wire["effect"] == "exclude-from-influence"
    assert wire["record_type"] == "withdrawal-control-v1"
    assert wire["decided_at"] == "2026-11-29T10:00:00.000Z"
    assert WithdrawalControl.from_wire(wire) == control


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"effect": "restore-eligibility"}, "effect"),
        ({"action": "reinstate"}, "effect"),
        ({"action": "erase"}, "action"),
        ({"withdrawal_id": "memwd-2026-11-29-1"}, "withdrawal_id"),
        ({"record_type": "withdrawal-control-v2"}, "record_type"),
        ({"reason": " "}, "reason"),
        ({"decided_by": "two words"}, "decided_by"),
        ({"decided_at": "2026-11-29T10:00:00+00:00"}, "decided_at"),
        ({"supersedes": "memwd-2026-11-29-001"}, "supersedes"),
    ],
)
def test_a_malformed_control_is_refused_naming_its_field(change: dict[str, object], field: str) -> None:
    wire = withdrawal("memwd-2026-11-29-001", WithdrawalScope(memory_item_ids=(A,))).to_wire() | change
    with pytest.raises(RecordError) as info:
        WithdrawalControl.from_wire(wire, field="withdrawal_controls[0]")
    assert info.value.field == f"withdrawal_controls[0].{field}"


def test_a_reinstatement_must_name_the_withdrawal_it_lifts() -> None:
    with pytest.raises(RecordError, match="must name the withdrawal") as info:
        WithdrawalControl(
            "memwd-2026-11-29-002", "reinstate", WithdrawalScope(memory_item_ids=(A,)), "r", "ada", T0
        )
    assert info.value.field == "supersedes"


def test_ids_count_up_within_a_local_day_only() -> None:
    taken = ["memwd-2026-11-29-001", "memwd-2026-11-29-007", "memwd-2026-11-30-003"]
    assert next_withdrawal_id(taken, "2026-11-29") == "memwd-2026-11-29-008"
    assert next_withdrawal_id(taken, "2026-12-01") == "memwd-2026-12-01-001"
    assert next_withdrawal_id(["memwd-2026-11-29-999"], "2026-11-29") == "memwd-2026-11-29-1000"


def test_the_local_day_of_an_id_comes_from_the_time_zone() -> None:
    scope = WithdrawalScope(memory_item_ids=(A,))
    late = datetime(2026, 11, 29, 12, tzinfo=UTC)  # already 30 November in Auckland (UTC+13)
    made = plan_withdrawal(
        resolve([]), scope, reason="r", actor="ada", now=late, zone=ZoneInfo("Pacific/Auckland")
    )
    assert made.withdrawal_id == "memwd-2026-11-30-001"
    assert made.decided_at == late


def test_two_unordered_withdrawals_and_one_reinstatement_keep_the_scope_excluded() -> None:
    scope = WithdrawalScope(memory_item_ids=(A,))
    first, second = withdrawal("memwd-2026-11-29-001", scope), withdrawal("memwd-2026-11-29-002", scope)
    lift_first = reinstatement("memwd-2026-11-29-003", scope, "memwd-2026-11-29-001")
    state = resolve([first, second, lift_first])
    assert state.in_force() == [second]
    lift_second = reinstatement("memwd-2026-11-29-004", scope, "memwd-2026-11-29-002")
    assert resolve([first, second, lift_first, lift_second]).in_force() == []


def test_a_reinstatement_of_another_scope_lifts_nothing() -> None:
    first = withdrawal("memwd-2026-11-29-001", WithdrawalScope(memory_item_ids=(A, B)))
    narrower = reinstatement(
        "memwd-2026-11-29-002", WithdrawalScope(memory_item_ids=(A,)), first.withdrawal_id
    )
    assert resolve([first, narrower]).in_force() == [first]


def test_a_fork_after_a_withdrawal_fails_closed_to_exclusion() -> None:
    scope = WithdrawalScope(namespaces=("user:u1",))
    first = withdrawal("memwd-2026-11-29-001", scope)
    lifted = reinstatement("memwd-2026-11-29-002", scope, first.withdrawal_id)
    again = withdrawal("memwd-2026-11-29-003", scope, supersedes=first.withdrawal_id)
    assert resolve([first, lifted, again]).in_force() == [again]


def test_the_causal_chain_decides_not_the_wall_clock() -> None:
    scope = WithdrawalScope(memory_item_ids=(A,))
    first = withdrawal("memwd-2026-11-29-001", scope)
    # Decided "earlier" by a skewed clock, but it names the withdrawal: it lifts it.
    lifted = reinstatement("memwd-2026-11-29-002", scope, first.withdrawal_id, at=T0 - timedelta(days=3))
    assert resolve([first, lifted]).in_force() == []
    # A reinstatement that comes before the withdrawal it names (in log order) lifts nothing.
    assert resolve([lifted, first]).in_force() == [first]


def test_withdrawing_a_scope_again_follows_its_latest_reinstatement() -> None:
    scope = WithdrawalScope(memory_item_ids=(A,))
    first = withdrawal("memwd-2026-11-29-001", scope)
    with pytest.raises(LifecycleError, match="already withdrawn by memwd-2026-11-29-001"):
        plan_withdrawal(resolve([first]), scope, reason="r", actor="ada", now=T0, zone=UTC)
    lifted = reinstatement("memwd-2026-11-29-002", scope, first.withdrawal_id)
    again = plan_withdrawal(resolve([first, lifted]), scope, reason="r", actor="ada", now=T0, zone=UTC)
    assert (again.withdrawal_id, again.supersedes) == ("memwd-2026-11-29-003", lifted.withdrawal_id)
    assert resolve([first, lifted, again]).in_force() == [again]


def test_a_reinstatement_is_planned_only_for_a_withdrawal_in_force_and_its_exact_scope() -> None:
    scope = WithdrawalScope(memory_item_ids=(A, B))
    first = withdrawal("memwd-2026-11-29-001", scope)
    state = resolve([first])
    made = plan_reinstatement(state, first.withdrawal_id, reason="r", actor="ada", now=T0, zone=UTC)
    assert (made.action, made.effect, made.scope, made.supersedes) == (
        "reinstate",
        "restore-eligibility",
        scope,
        first.withdrawal_id,
    )
    other = WithdrawalScope(memory_item_ids=(A,))
    for wid, kwargs, message in [
        ("memwd-2026-11-29-009", {}, "no withdrawal"),
        (first.withdrawal_id, {"scope": other}, "exact scope"),
    ]:
        with pytest.raises(LifecycleError, match=message):
            plan_reinstatement(state, wid, reason="r", actor="ada", now=T0, zone=UTC, **kwargs)
    lifted = resolve([first, made])
    with pytest.raises(LifecycleError, match="no longer in force"):
        plan_reinstatement(lifted, first.withdrawal_id, reason="r", actor="ada", now=T0, zone=UTC)
    with pytest.raises(LifecycleError, match="is a reinstatement"):
        plan_reinstatement(lifted, made.withdrawal_id, reason="r", actor="ada", now=T0, zone=UTC)

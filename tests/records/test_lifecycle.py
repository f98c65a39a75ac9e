"""The lifecycle state machine: the legality table and every helper's happy path and guards."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fg_agent_id import KeyPair

from agent_memory.errors import LifecycleError
from agent_memory.records.lifecycle import (
    LEGAL_TRANSITIONS,
    RULE_FLAG_REASON,
    archive,
    assert_transition,
    begin_transition,
    is_legal,
    refresh_rule_flag,
    resolve_transition,
    supersede,
)
from agent_memory.records.record import Kind, MemoryRecord, Provenance, RecordType, State, Transition
from agent_memory.records.signing import sign_record, verify_record

T0 = datetime(2026, 1, 1, tzinfo=UTC)
NOW = T0 + timedelta(days=3)

# Pinned literally so the table is checked even where ../shared (and its vectors) is absent.
SEVEN_LEGAL_MOVES = {
    ("active", "superseded"),
    ("active", "transitional"),
    ("active", "archived"),
    ("transitional", "active"),
    ("transitional", "superseded"),
    ("transitional", "archived"),
    ("superseded", "archived"),
}


def record(body: str, *, at: datetime = T0, **fields: Any) -> MemoryRecord:
    provenance = Provenance(kind="conversation", ref="archive/2026-01-01.md#mem-2026-01-01-001")
    return MemoryRecord.create(type="fact", body=body, provenance=provenance, created_at=at, **fields)


def state_record(
    body: str, *, at: datetime = T0, subject: str = "host:staging", **fields: Any
) -> MemoryRecord:
    return record(body, at=at, kind=Kind.STATE, subject=subject, **fields)


def successor_of(old: MemoryRecord, body: str = "the newer value", **fields: Any) -> MemoryRecord:
    fields.setdefault("at", old.created_at + timedelta(days=1))
    return record(body, supersedes=old.id, **fields)


def pair() -> tuple[MemoryRecord, MemoryRecord]:
    return record("the build uses make"), record("the build uses just")


# ---------------------------------------------------------------------- the table


def test_legality_table_matches_all_sixteen_origin_vectors(origin_vectors: dict[str, Any]) -> None:
    cases = origin_vectors["lifecycle"]["legality"]
    assert len(cases) == 16
    for case in cases:
        assert is_legal(State(case["from"]), State(case["to"])) is case["legal"], case
    assert {(State(c["from"]), State(c["to"])) for c in cases if c["legal"]} == LEGAL_TRANSITIONS


def test_legal_transitions_are_exactly_the_seven_pinned_moves() -> None:
    assert isinstance(LEGAL_TRANSITIONS, frozenset)
    assert {(a.value, b.value) for a, b in LEGAL_TRANSITIONS} == SEVEN_LEGAL_MOVES


@pytest.mark.parametrize(("from_state", "to_state"), list(itertools.product(State, State)))
def test_is_legal_agrees_with_the_pinned_table_for_every_pair(from_state: State, to_state: State) -> None:
    assert is_legal(from_state, to_state) is ((from_state.value, to_state.value) in SEVEN_LEGAL_MOVES)


def test_is_legal_accepts_the_wire_strings_of_states() -> None:
    assert is_legal(State("active"), State("archived"))
    assert not is_legal(State("archived"), State("active"))


def test_assert_transition_names_the_record_and_the_state_field() -> None:
    archived = archive(record("gone"), "decayed", now=NOW)
    with pytest.raises(LifecycleError) as caught:
        assert_transition(archived, State.ACTIVE)
    assert caught.value.record_id == archived.id
    assert caught.value.field == "state"
    assert "archived -> active" in str(caught.value)
    assert_transition(record("live"), State.TRANSITIONAL)


# ---------------------------------------------------------------------- supersede


def test_supersede_retires_the_old_version_and_links_it_to_the_successor() -> None:
    old = record("the api listens on 8080")
    new = successor_of(old, "the api listens on 9090")
    retired = supersede(old, new, "port changed", now=NOW)
    assert retired.id == old.id
    assert retired.state is State.SUPERSEDED
    assert retired.superseded_by == new.id
    assert retired.state_reason == "port changed"
    assert retired.updated_at == NOW
    assert retired.body == old.body
    assert retired.valid_to is None  # a knowledge record closes no valid-time interval
    assert old.state is State.ACTIVE  # inputs are never changed


def test_supersede_uses_the_current_time_when_no_clock_is_given() -> None:
    old = record("a")
    before = datetime.now(UTC) - timedelta(seconds=1)
    retired = supersede(old, successor_of(old), "newer")
    assert retired.updated_at is not None
    assert before <= retired.updated_at <= datetime.now(UTC)


def test_supersede_of_a_state_record_sets_valid_to_to_the_successors_valid_from() -> None:
    old = state_record("staging runs 1.4", valid_from=T0)
    starts = T0 + timedelta(days=2)
    new = state_record("staging runs 1.5", at=T0 + timedelta(days=5), supersedes=old.id, valid_from=starts)
    retired = supersede(old, new, "newer value for subject host:staging", now=NOW)
    assert retired.valid_to == starts


def test_supersede_of_a_state_record_without_valid_from_uses_the_successors_created_at() -> None:
    old = state_record("staging runs 1.4")
    new = state_record("staging runs 1.5", at=T0 + timedelta(hours=1), supersedes=old.id)
    assert supersede(old, new, "newer", now=NOW).valid_to == new.created_at


def test_supersede_keeps_a_valid_to_that_was_already_set() -> None:
    ended = T0 + timedelta(hours=2)
    old = state_record("staging runs 1.4", valid_to=ended)
    new = state_record("staging runs 1.5", at=T0 + timedelta(days=1), supersedes=old.id)
    assert supersede(old, new, "newer", now=NOW).valid_to == ended


@pytest.mark.parametrize("reason", ["", "   "])
def test_supersede_refuses_an_empty_reason(reason: str) -> None:
    old = record("a")
    with pytest.raises(LifecycleError) as caught:
        supersede(old, successor_of(old), reason, now=NOW)
    assert (caught.value.record_id, caught.value.field) == (old.id, "state_reason")


def test_supersede_refuses_a_successor_that_does_not_name_the_old_record() -> None:
    old, other = record("a"), record("b")
    new = successor_of(other)
    with pytest.raises(LifecycleError) as caught:
        supersede(old, new, "newer", now=NOW)
    assert (caught.value.record_id, caught.value.field) == (new.id, "supersedes")


def test_supersede_refuses_a_record_superseding_itself() -> None:
    old = record("a")
    with pytest.raises(LifecycleError, match="itself"):
        supersede(old, old.evolve(supersedes=old.id), "newer", now=NOW)


def test_supersede_refuses_a_successor_that_is_not_active() -> None:
    old = record("a")
    new = archive(successor_of(old), "decayed", now=NOW)
    with pytest.raises(LifecycleError) as caught:
        supersede(old, new, "newer", now=NOW)
    assert (caught.value.record_id, caught.value.field) == (new.id, "state")


@pytest.mark.parametrize("how", ["superseded", "transitional", "archived"])
def test_supersede_refuses_an_old_record_that_is_not_active(how: str) -> None:
    a, b = pair()
    if how == "superseded":
        old = supersede(a, successor_of(a), "newer", now=NOW)
    elif how == "transitional":
        old = begin_transition(a, b, "they disagree", now=NOW)[0]
    else:
        old = archive(a, "decayed", now=NOW)
    with pytest.raises(LifecycleError) as caught:
        supersede(old, successor_of(a, "another value"), "newer", now=NOW)
    assert (caught.value.record_id, caught.value.field) == (a.id, "state")


def test_supersede_never_crosses_kinds() -> None:
    old = state_record("staging runs 1.4")
    new = successor_of(old)  # knowledge
    with pytest.raises(LifecycleError) as caught:
        supersede(old, new, "newer", now=NOW)
    assert caught.value.field == "kind"


def test_supersede_of_a_state_record_needs_the_identical_subject_and_namespace() -> None:
    old = state_record("staging runs 1.4", subject="host:staging")
    later = T0 + timedelta(days=1)
    fuzzy = state_record("staging runs 1.5", at=later, subject="host:Staging", supersedes=old.id)
    with pytest.raises(LifecycleError) as caught:
        supersede(old, fuzzy, "newer", now=NOW)
    assert caught.value.field == "subject"
    elsewhere = state_record("staging runs 1.5", at=later, supersedes=old.id, namespace="project:other")
    with pytest.raises(LifecycleError) as caught:
        supersede(old, elsewhere, "newer", now=NOW)
    assert caught.value.field == "namespace"


def test_supersede_of_a_state_record_refuses_a_value_whose_valid_time_starts_earlier() -> None:
    old = state_record("staging runs 1.5", valid_from=T0 + timedelta(days=2))
    older = state_record("staging runs 1.4", at=T0 + timedelta(days=3), supersedes=old.id, valid_from=T0)
    with pytest.raises(LifecycleError) as caught:
        supersede(old, older, "newer", now=NOW)
    assert caught.value.field == "valid_from"


def test_every_move_clears_a_signature_while_the_signed_version_still_verifies(seed_keys: KeyPair) -> None:
    signed = sign_record(record("signed at birth"), seed_keys)
    other = sign_record(record("also signed"), seed_keys)
    moved = [
        supersede(signed, successor_of(signed), "newer", now=NOW),
        archive(signed, "decayed", now=NOW),
        *begin_transition(signed, other, "they disagree", now=NOW),
    ]
    for version in moved:
        assert version.signed_by is None
        assert version.signature == ""
    verify_record(signed)
    verify_record(other)


# ---------------------------------------------------------------------- transitions


def test_begin_transition_gives_both_sides_one_shared_block_and_clock() -> None:
    a, b = pair()
    side_a, side_b = begin_transition(a, b, "the build tool disagrees", now=NOW)
    block = Transition(sides=(a.id, b.id), reason="the build tool disagrees")
    for side, original in ((side_a, a), (side_b, b)):
        assert side.id == original.id
        assert side.state is State.TRANSITIONAL
        assert side.transition == block
        assert side.state_reason == "the build tool disagrees"
        assert side.updated_at == NOW


def test_begin_transition_refuses_one_record_on_both_sides() -> None:
    a, _ = pair()
    with pytest.raises(LifecycleError) as caught:
        begin_transition(a, a, "self dispute", now=NOW)
    assert (caught.value.record_id, caught.value.field) == (a.id, "transition")


def test_begin_transition_refuses_an_empty_reason() -> None:
    a, b = pair()
    with pytest.raises(LifecycleError, match="reason"):
        begin_transition(a, b, "", now=NOW)


def test_begin_transition_refuses_a_side_that_is_not_active() -> None:
    a, b = pair()
    retired = supersede(b, successor_of(b), "newer", now=NOW)
    with pytest.raises(LifecycleError) as caught:
        begin_transition(a, retired, "they disagree", now=NOW)
    assert (caught.value.record_id, caught.value.field) == (b.id, "state")
    side_a, _ = begin_transition(a, b, "they disagree", now=NOW)
    with pytest.raises(LifecycleError, match="transitional -> transitional"):
        begin_transition(side_a, record("a third view"), "again", now=NOW)


def test_resolve_transition_returns_the_winner_to_active_and_supersedes_the_loser() -> None:
    a, b = pair()
    side_a, side_b = begin_transition(a, b, "they disagree", now=NOW)
    later = NOW + timedelta(hours=1)
    won, lost = resolve_transition(side_b, side_a, "the justfile is newer", now=later)
    assert (won.id, won.state, won.transition) == (b.id, State.ACTIVE, None)
    assert (lost.id, lost.state, lost.transition) == (a.id, State.SUPERSEDED, None)
    assert lost.superseded_by == b.id
    assert won.state_reason == lost.state_reason == "the justfile is newer"
    assert won.updated_at == lost.updated_at == later


def test_resolve_transition_closes_the_valid_time_of_an_older_state_loser_only() -> None:
    old = state_record("staging runs 1.4", valid_from=T0)
    new = state_record("staging runs 1.5", at=T0 + timedelta(days=1), valid_from=T0 + timedelta(days=1))
    side_old, side_new = begin_transition(old, new, "tainted value", now=NOW)
    _, lost_old = resolve_transition(side_new, side_old, "reviewed", now=NOW)
    assert lost_old.valid_to == new.valid_from
    _, lost_new = resolve_transition(side_old, side_new, "the new value was wrong", now=NOW)
    assert lost_new.valid_to is None


def test_resolve_transition_refuses_records_that_are_not_transitional() -> None:
    a, b = pair()
    side_a, _ = begin_transition(a, b, "they disagree", now=NOW)
    with pytest.raises(LifecycleError) as caught:
        resolve_transition(side_a, b, "a wins", now=NOW)
    assert (caught.value.record_id, caught.value.field) == (b.id, "state")


def test_resolve_transition_refuses_two_sides_of_different_disputes() -> None:
    a, b = pair()
    c, d = record("c"), record("d")
    side_a, _ = begin_transition(a, b, "they disagree", now=NOW)
    side_c, _ = begin_transition(c, d, "they also disagree", now=NOW)
    with pytest.raises(LifecycleError) as caught:
        resolve_transition(side_a, side_c, "a wins", now=NOW)
    assert (caught.value.record_id, caught.value.field) == (a.id, "transition.sides")


def test_resolve_transition_refuses_sides_whose_blocks_differ() -> None:
    a, b = pair()
    side_a, _ = begin_transition(a, b, "they disagree", now=NOW)
    side_b_reversed, _ = begin_transition(b, a, "they disagree", now=NOW)
    with pytest.raises(LifecycleError, match="different transition blocks"):
        resolve_transition(side_a, side_b_reversed, "a wins", now=NOW)


def test_resolve_transition_refuses_an_empty_reason() -> None:
    side_a, side_b = begin_transition(*pair(), "they disagree", now=NOW)
    with pytest.raises(LifecycleError, match="reason"):
        resolve_transition(side_a, side_b, "", now=NOW)


# ---------------------------------------------------------------------- archival


def test_archive_is_legal_from_active_superseded_and_transitional() -> None:
    a, b = pair()
    side_a, _ = begin_transition(a, b, "they disagree", now=NOW)
    candidates = [a, supersede(a, successor_of(a), "newer", now=NOW), side_a]
    for candidate in candidates:
        archived = archive(candidate, "below the salience threshold", now=NOW)
        assert archived.state is State.ARCHIVED
        assert archived.transition is None
        assert archived.state_reason == "below the salience threshold"
        assert archived.updated_at == NOW
        assert archived.body == candidate.body
    assert archive(candidates[1], "decayed", now=NOW).superseded_by == candidates[1].superseded_by


def test_archival_is_terminal() -> None:
    a, b = pair()
    archived = archive(a, "decayed", now=NOW)
    with pytest.raises(LifecycleError, match="archived -> archived"):
        archive(archived, "again", now=NOW)
    with pytest.raises(LifecycleError):
        supersede(archived, successor_of(a), "newer", now=NOW)
    with pytest.raises(LifecycleError):
        begin_transition(archived, b, "they disagree", now=NOW)
    for target in State:
        assert not is_legal(State.ARCHIVED, target)


def test_archive_refuses_an_empty_reason() -> None:
    a, _ = pair()
    with pytest.raises(LifecycleError) as caught:
        archive(a, "", now=NOW)
    assert (caught.value.record_id, caught.value.field) == (a.id, "state_reason")


# ---------------------------------------------------------------------- rule flags


def rule_over(*evidence: MemoryRecord, **fields: Any) -> MemoryRecord:
    provenance = Provenance(kind="consolidation", ref="log/2026-01.jsonl#7")
    return MemoryRecord.create(
        type=RecordType.RULE,
        body="always run the tests before pushing",
        provenance=provenance,
        created_at=T0,
        evidence=tuple(e.id for e in evidence),
        **fields,
    )


def test_refresh_rule_flag_flags_a_rule_whose_evidence_is_all_archived_or_superseded() -> None:
    a, b = pair()
    rule = rule_over(a, b)
    dead = {a.id: archive(a, "decayed", now=NOW), b.id: supersede(b, successor_of(b), "newer", now=NOW)}
    flagged = refresh_rule_flag(rule, dead, now=NOW)
    assert flagged.flagged is True
    assert flagged.flag_reason == RULE_FLAG_REASON == "all evidence records are archived or superseded"
    assert flagged.updated_at == NOW


def test_refresh_rule_flag_clears_the_flag_while_any_evidence_lives() -> None:
    a, b = pair()
    rule = rule_over(a, b, flagged=True, flag_reason=RULE_FLAG_REASON)
    cleared = refresh_rule_flag(rule, {a.id: archive(a, "decayed", now=NOW), b.id: b}, now=NOW)
    assert (cleared.flagged, cleared.flag_reason) == (False, None)


def test_refresh_rule_flag_returns_the_same_object_when_nothing_changes() -> None:
    a, b = pair()
    rule = rule_over(a, b)
    assert refresh_rule_flag(rule, {a.id: a, b.id: b}) is rule
    flagged = rule_over(a, b, flagged=True, flag_reason=RULE_FLAG_REASON)
    dead = {a.id: archive(a, "x", now=NOW), b.id: archive(b, "x", now=NOW)}
    assert refresh_rule_flag(flagged, dead) is flagged


def test_refresh_rule_flag_refuses_a_record_that_is_not_a_rule() -> None:
    a, _ = pair()
    with pytest.raises(LifecycleError) as caught:
        refresh_rule_flag(a, {})
    assert (caught.value.record_id, caught.value.field) == (a.id, "type")


def test_refresh_rule_flag_needs_every_evidence_record() -> None:
    a, b = pair()
    rule = rule_over(a, b)
    with pytest.raises(LifecycleError) as caught:
        refresh_rule_flag(rule, {a.id: a})
    assert (caught.value.record_id, caught.value.field) == (rule.id, "evidence")
    with pytest.raises(LifecycleError, match=b.id):
        refresh_rule_flag(rule, {a.id: a, b.id: a})

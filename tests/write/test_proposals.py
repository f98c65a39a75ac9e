"""The apply gate: each proposal kind applied, and each invalid proposal rejected without a write."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_memory.errors import AgentMemoryError, LifecycleError, ProposalError
from agent_memory.records.lifecycle import archive, begin_transition
from agent_memory.records.record import Kind, MemoryRecord, Provenance, RecordType, State
from agent_memory.stores.inmemory import InMemoryStore
from agent_memory.write.proposals import (
    Proposal,
    ProposalKind,
    apply_proposal,
    apply_proposals,
    validate_proposals,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
NOW = T0 + timedelta(days=7)
UNKNOWN_ID = "mem:" + "f" * 32


def record(body: str, *, at: datetime = T0, **fields: Any) -> MemoryRecord:
    provenance = Provenance(kind="conversation", ref="archive/2026-01-01.md#mem-2026-01-01-001")
    return MemoryRecord.create(type="fact", body=body, provenance=provenance, created_at=at, **fields)


def later(body: str, **fields: Any) -> MemoryRecord:
    return record(body, at=T0 + timedelta(days=1), **fields)


@dataclass
class Seeded:
    """A store holding a few records in known states, and those records by name."""

    store: InMemoryStore
    live: MemoryRecord
    other: MemoryRecord
    gone: MemoryRecord
    port: MemoryRecord
    disputed: MemoryRecord  # its first, active version; the store holds it transitional


@pytest.fixture
def seeded() -> Seeded:
    store = InMemoryStore()
    live, other = record("deploys go through ci"), record("deploys go through a person")
    gone = record("the old wiki lives at /wiki")
    port = record("staging listens on 8080", kind=Kind.STATE, subject="host:staging")
    disputed, rival = record("tests run nightly"), record("tests run on every push")
    for item in (live, other, gone, port, disputed, rival):
        store.put(item)
    store.put(archive(gone, "decayed", now=T0 + timedelta(days=2)))
    for side in begin_transition(disputed, rival, "when do tests run?", now=T0 + timedelta(days=2)):
        store.put(side)
    return Seeded(store, live, other, store.get(gone.id), port, disputed)


def snapshot(store: InMemoryStore) -> dict[str, list[bytes]]:
    return {r.id: [v.canonical_bytes() for v in store.history(r.id)] for r in store.list()}


# ---------------------------------------------------------------------- applied


def test_create_puts_the_new_record_as_its_first_version(seeded: Seeded) -> None:
    new = record("the release branch is cut on fridays")
    written = apply_proposal(seeded.store, Proposal(ProposalKind.CREATE, record=new))
    assert written == [new]
    assert seeded.store.history(new.id) == [new]


def test_create_of_a_rule_whose_evidence_is_stored_is_applied(seeded: Seeded) -> None:
    rule = MemoryRecord.create(
        type=RecordType.RULE,
        body="ship through ci",
        provenance=Provenance(kind="consolidation", ref="log/2026-01.jsonl#3"),
        created_at=T0,
        evidence=(seeded.live.id, seeded.other.id),
    )
    assert apply_proposal(seeded.store, Proposal("create", record=rule)) == [rule]


def test_supersede_puts_the_successor_then_the_retired_old_version(seeded: Seeded) -> None:
    new = later("deploys go through ci and a canary", supersedes=seeded.live.id)
    proposal = Proposal(ProposalKind.SUPERSEDE, record=new, target_id=seeded.live.id, reason="canary added")
    successor, retired = apply_proposal(seeded.store, proposal, now=NOW)
    assert successor == new
    assert (retired.id, retired.state, retired.superseded_by) == (seeded.live.id, State.SUPERSEDED, new.id)
    assert (retired.state_reason, retired.updated_at) == ("canary added", NOW)
    assert seeded.store.get(new.id) == new
    assert [v.state for v in seeded.store.history(seeded.live.id)] == [State.ACTIVE, State.SUPERSEDED]


def test_supersede_of_a_state_record_closes_its_valid_time(seeded: Seeded) -> None:
    new = later("staging listens on 9090", kind=Kind.STATE, subject="host:staging", supersedes=seeded.port.id)
    proposal = Proposal("supersede", record=new, reason="newer value for subject host:staging")
    apply_proposal(seeded.store, proposal, now=NOW)
    assert seeded.store.get(seeded.port.id).valid_to == new.created_at


def test_supersede_by_a_record_already_stored_appends_its_next_version(seeded: Seeded) -> None:
    successor = seeded.other.evolve(supersedes=seeded.live.id)
    apply_proposal(seeded.store, Proposal("supersede", record=successor, reason="near duplicate"), now=NOW)
    assert len(seeded.store.history(seeded.other.id)) == 2
    assert seeded.store.get(seeded.other.id).supersedes == seeded.live.id
    assert seeded.store.get(seeded.live.id).state is State.SUPERSEDED


def test_transition_puts_both_sides_with_one_shared_block(seeded: Seeded) -> None:
    proposal = Proposal(
        "transition", target_id=seeded.live.id, other_id=seeded.other.id, reason="who deploys?"
    )
    side_a, side_b = apply_proposal(seeded.store, proposal, now=NOW)
    assert (side_a.id, side_b.id) == (seeded.live.id, seeded.other.id)
    for side in (side_a, side_b):
        stored = seeded.store.get(side.id)
        assert stored.state is State.TRANSITIONAL
        assert stored.transition is not None
        assert stored.transition.sides == (seeded.live.id, seeded.other.id)


def test_archive_puts_the_archived_version(seeded: Seeded) -> None:
    (archived,) = apply_proposal(seeded.store, Proposal("archive", target_id=seeded.live.id, reason="stale"))
    assert archived.state is State.ARCHIVED
    assert seeded.store.get(seeded.live.id) == archived
    assert archived.updated_at is not None
    assert archived.updated_at > T0  # the default clock is the current time


def test_a_batch_sees_the_versions_its_earlier_proposals_write(seeded: Seeded) -> None:
    first = record("lint runs in pre-commit")
    second = later("lint runs in ci", supersedes=first.id)
    written = apply_proposals(
        seeded.store,
        [
            Proposal("create", record=first),
            Proposal("supersede", record=second, reason="moved to ci"),
            Proposal("archive", target_id=first.id, reason="no longer relevant"),
        ],
        now=NOW,
    )
    assert [(r.id, r.state) for r in written] == [
        (first.id, State.ACTIVE),
        (second.id, State.ACTIVE),
        (first.id, State.SUPERSEDED),
        (first.id, State.ARCHIVED),
    ]
    assert [v.state for v in seeded.store.history(first.id)] == [
        State.ACTIVE,
        State.SUPERSEDED,
        State.ARCHIVED,
    ]


def test_validate_proposals_returns_the_planned_versions_and_writes_nothing(seeded: Seeded) -> None:
    before = snapshot(seeded.store)
    planned = validate_proposals(seeded.store, [Proposal("archive", target_id=seeded.live.id, reason="x")])
    assert [r.state for r in planned] == [State.ARCHIVED]
    assert snapshot(seeded.store) == before


# ---------------------------------------------------------------------- rejected

Build = Callable[[Seeded], Proposal]


def _create_archived(s: Seeded) -> Proposal:
    return Proposal("create", record=archive(record("born dead"), "x", now=NOW))


def _rule_with_unstored_evidence(s: Seeded) -> Proposal:
    rule = MemoryRecord.create(
        type=RecordType.RULE,
        body="a rule over nothing stored",
        provenance=Provenance(kind="consolidation", ref="log/2026-01.jsonl#9"),
        created_at=T0,
        evidence=(s.live.id, UNKNOWN_ID),
    )
    return Proposal("create", record=rule)


INVALID: dict[str, tuple[Build, type[AgentMemoryError]]] = {
    "create without a record": (lambda s: Proposal("create"), ProposalError),
    "create with a target": (
        lambda s: Proposal("create", record=record("x"), target_id=s.live.id),
        ProposalError,
    ),
    "create of a record that is not active": (_create_archived, LifecycleError),
    "create naming supersedes": (
        lambda s: Proposal("create", record=later("y", supersedes=s.live.id)),
        ProposalError,
    ),
    "duplicate create": (lambda s: Proposal("create", record=s.live), ProposalError),
    "create of a tombstone": (
        lambda s: Proposal("create", record=record("z").tombstone("pii")),
        ProposalError,
    ),
    "rule whose evidence is not stored": (_rule_with_unstored_evidence, ProposalError),
    "evidence that is not an id": (
        lambda s: Proposal("create", record=record("e", evidence=("../x",))),
        ProposalError,
    ),
    "supersede of an unknown target": (
        lambda s: Proposal("supersede", record=later("n", supersedes=UNKNOWN_ID), reason="newer"),
        ProposalError,
    ),
    "supersede without supersedes": (
        lambda s: Proposal("supersede", record=later("n"), reason="x"),
        ProposalError,
    ),
    "supersede whose target differs from supersedes": (
        lambda s: Proposal(
            "supersede", record=later("n", supersedes=s.other.id), target_id=s.live.id, reason="newer"
        ),
        ProposalError,
    ),
    "supersede with an other id": (
        lambda s: Proposal(
            "supersede", record=later("n", supersedes=s.live.id), other_id=s.other.id, reason="newer"
        ),
        ProposalError,
    ),
    "supersede by a successor that is not active": (
        lambda s: Proposal(
            "supersede", record=archive(later("n", supersedes=s.live.id), "x", now=NOW), reason="newer"
        ),
        LifecycleError,
    ),
    "supersede of an archived record": (
        lambda s: Proposal("supersede", record=later("n", supersedes=s.gone.id), reason="newer"),
        LifecycleError,
    ),
    "supersede without a reason": (
        lambda s: Proposal("supersede", record=later("n", supersedes=s.live.id)),
        LifecycleError,
    ),
    "supersede across kinds": (
        lambda s: Proposal("supersede", record=later("9090", supersedes=s.port.id), reason="newer"),
        LifecycleError,
    ),
    "supersede by a stored successor that is not active": (
        lambda s: Proposal("supersede", record=s.disputed.evolve(supersedes=s.live.id), reason="dup"),
        LifecycleError,
    ),
    "supersede changing an immutable field of a stored successor": (
        lambda s: Proposal(
            "supersede", record=s.other.evolve(supersedes=s.live.id, namespace="project:x"), reason="dup"
        ),
        ProposalError,
    ),
    "transition with an unknown side": (
        lambda s: Proposal("transition", target_id=s.live.id, other_id=UNKNOWN_ID, reason="x"),
        ProposalError,
    ),
    "transition of a record with itself": (
        lambda s: Proposal("transition", target_id=s.live.id, other_id=s.live.id, reason="x"),
        LifecycleError,
    ),
    "transition of an archived record": (
        lambda s: Proposal("transition", target_id=s.live.id, other_id=s.gone.id, reason="x"),
        LifecycleError,
    ),
    "transition without an other id": (
        lambda s: Proposal("transition", target_id=s.live.id, reason="x"),
        ProposalError,
    ),
    "transition carrying a record": (
        lambda s: Proposal("transition", record=s.live, target_id=s.live.id, other_id=s.other.id, reason="x"),
        ProposalError,
    ),
    "archive of an unknown target": (
        lambda s: Proposal("archive", target_id=UNKNOWN_ID, reason="x"),
        ProposalError,
    ),
    "archive of an archived record": (
        lambda s: Proposal("archive", target_id=s.gone.id, reason="x"),
        LifecycleError,
    ),
    "archive of a malformed id": (
        lambda s: Proposal("archive", target_id="mem:../x", reason="x"),
        ProposalError,
    ),
    "archive without a reason": (lambda s: Proposal("archive", target_id=s.live.id), LifecycleError),
    "archive without a target": (lambda s: Proposal("archive", reason="x"), ProposalError),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_an_invalid_proposal_raises_and_leaves_every_history_byte_identical(
    seeded: Seeded, case: str
) -> None:
    build, error = INVALID[case]
    before = snapshot(seeded.store)
    with pytest.raises(error):
        apply_proposal(seeded.store, build(seeded), now=NOW)
    assert snapshot(seeded.store) == before


def test_a_batch_with_one_invalid_proposal_writes_nothing_at_all(seeded: Seeded) -> None:
    before = snapshot(seeded.store)
    with pytest.raises(LifecycleError):
        apply_proposals(
            seeded.store,
            [
                Proposal("create", record=record("valid on its own")),
                Proposal("archive", target_id=seeded.live.id, reason="valid too"),
                Proposal("archive", target_id=seeded.live.id, reason="archived twice"),
            ],
            now=NOW,
        )
    assert snapshot(seeded.store) == before


def test_an_unknown_proposal_kind_is_refused_on_construction() -> None:
    with pytest.raises(ProposalError) as caught:
        Proposal("redact", target_id=UNKNOWN_ID, reason="erasure is not a proposal")  # type: ignore[arg-type]
    assert caught.value.field == "kind"
    assert set(ProposalKind) == {"create", "supersede", "transition", "archive"}


def test_an_error_names_the_record_and_field_at_fault(seeded: Seeded) -> None:
    with pytest.raises(ProposalError) as caught:
        apply_proposal(seeded.store, Proposal("create", record=seeded.live))
    assert (caught.value.record_id, caught.value.field) == (seeded.live.id, "id")
    with pytest.raises(ProposalError) as caught:
        apply_proposal(seeded.store, Proposal("archive", target_id=UNKNOWN_ID, reason="x"))
    assert (caught.value.record_id, caught.value.field) == (UNKNOWN_ID, "target_id")


def test_something_that_is_not_a_proposal_is_refused(seeded: Seeded) -> None:
    with pytest.raises(ProposalError):
        apply_proposals(seeded.store, [object()])  # type: ignore[list-item]

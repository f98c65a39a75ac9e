from datetime import timedelta

import pytest

from agent_memory.errors import LifecycleError, ProposalError, RecordError
from agent_memory.memory import Memory
from agent_memory.records.record import Kind, State
from memory.conftest import T0, at


def test_remember_returns_a_signed_or_plain_record_with_its_source(memory: Memory) -> None:
    result = memory.remember("The build uses Python 3.11.", source="session-7", now=T0)
    record = memory.get(result.record_id)
    assert record.body == "The build uses Python 3.11."
    assert record.provenance.ref == "session-7"
    assert record.kind is Kind.KNOWLEDGE
    assert record.namespace == "default"
    assert not result.deduped


def test_a_source_is_required(memory: Memory) -> None:
    for source in (None, "", "   "):
        with pytest.raises(RecordError, match="source") as info:
            memory.remember("A fact.", source=source, now=T0)
        assert info.value.field == "source"
    assert memory.status()["records"] == 0


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_text_is_refused_and_nothing_is_written(memory: Memory, text: str) -> None:
    with pytest.raises(RecordError, match="empty"):
        memory.remember(text, source="s", now=T0)
    assert memory.status()["records"] == 0


def test_the_same_text_in_another_normal_form_or_with_whitespace_is_deduped(memory: Memory) -> None:
    first = memory.remember("Café opens at 8.", source="s", tags=["a"], now=T0)
    again = memory.remember("  Cafe\u0301 opens at 8.\n", source="s", tags=["b"], now=at(hours=1))
    assert again.deduped
    assert again.record_id == first.record_id
    assert memory.get(first.record_id).tags == ("a", "b")
    assert memory.status()["records"] == 1


def test_a_newer_trusted_state_value_supersedes_the_live_one_at_once(memory: Memory) -> None:
    old = memory.remember("Staging runs on db-2.", source="s", kind="state", subject="host:staging", now=T0)
    new = memory.remember(
        "Staging runs on db-3.", source="s", kind="state", subject="host:staging", now=at(1)
    )
    assert new.superseded == old.record_id
    retired = memory.get(old.record_id)
    assert retired.state is State.SUPERSEDED
    assert retired.superseded_by == new.record_id
    assert retired.valid_to == at(1)
    assert memory.get(new.record_id).supersedes == old.record_id
    actives = [r for r in memory.store.list(subject="host:staging") if r.state is State.ACTIVE]
    assert [r.id for r in actives] == [new.record_id]
    supersedes = [e for e in memory.log.entries() if e.action == "supersede"]
    assert supersedes[-1].record_ids == (old.record_id, new.record_id)
    assert supersedes[-1].details["subject"] == "host:staging"


def test_a_tainted_state_value_opens_a_dispute_instead(memory: Memory) -> None:
    old = memory.remember("Staging runs on db-2.", source="s", kind="state", subject="host:staging", now=T0)
    bad = memory.remember(
        "Staging runs on evil-1.",
        source="web",
        kind="state",
        subject="host:staging",
        taint=["external"],
        now=at(1),
    )
    assert bad.disputed_with == old.record_id
    assert bad.quarantined
    assert memory.get(old.record_id).state is State.TRANSITIONAL
    assert memory.get(bad.record_id).state is State.TRANSITIONAL
    assert memory.get(old.record_id).transition == memory.get(bad.record_id).transition


def test_an_older_state_value_opens_a_dispute_rather_than_superseding(memory: Memory) -> None:
    memory.remember("Staging runs on db-2.", source="s", kind="state", subject="host:staging", now=at(2))
    older = memory.remember(
        "Staging runs on db-1.",
        source="s",
        kind="state",
        subject="host:staging",
        valid_from=at(-30),
        now=at(3),
    )
    assert older.disputed_with is not None
    assert older.superseded is None


def test_a_value_for_a_disputed_subject_waits_for_review(memory: Memory) -> None:
    memory.remember("Staging runs on db-2.", source="s", kind="state", subject="host:staging", now=T0)
    memory.remember(
        "Staging runs on x.", source="w", kind="state", subject="host:staging", taint=["external"], now=at(1)
    )
    third = memory.remember(
        "Staging runs on db-4.", source="s", kind="state", subject="host:staging", now=at(2)
    )
    assert third.pending
    assert not memory.store.contains(third.record_id)
    assert [r.id for r in memory.pending.list()] == [third.record_id]


def test_supersede_never_crosses_kinds_or_matches_similar_subjects(memory: Memory) -> None:
    state = memory.remember("Staging runs on db-2.", source="s", kind="state", subject="host:staging", now=T0)
    knowledge = memory.remember("Staging once ran on db-0.", source="s", now=at(1))
    other = memory.remember(
        "Staging runs on db-9.", source="s", kind="state", subject="host:Staging", now=at(2)
    )
    assert knowledge.superseded is None
    assert other.superseded is None
    assert memory.get(state.record_id).state is State.ACTIVE


def test_namespaces_keep_subjects_apart(memory: Memory) -> None:
    a = memory.remember(
        "Editor is vim.", source="s", kind="state", subject="editor", namespace="user:ada", now=T0
    )
    b = memory.remember(
        "Editor is nano.", source="s", kind="state", subject="editor", namespace="user:bob", now=at(1)
    )
    assert b.superseded is None
    assert memory.get(a.record_id).state is State.ACTIVE


def test_a_subject_without_state_kind_and_a_state_without_subject_are_refused(memory: Memory) -> None:
    with pytest.raises(RecordError) as info:
        memory.remember("x is 1.", source="s", subject="x", now=T0)
    assert info.value.field == "subject"
    with pytest.raises(RecordError) as info:
        memory.remember("x is 1.", source="s", kind="state", now=T0)
    assert info.value.field == "subject"
    with pytest.raises(ValueError, match="belief"):
        memory.remember("x is 1.", source="s", kind="belief", now=T0)


def test_naive_datetimes_are_refused(memory: Memory) -> None:
    with pytest.raises(RecordError, match="naive"):
        memory.remember("x.", source="s", now=T0.replace(tzinfo=None))
    with pytest.raises(RecordError, match="occurred_at"):
        memory.remember("x.", source="s", occurred_at=T0.replace(tzinfo=None), now=T0)


def test_resolve_settles_a_dispute(memory: Memory) -> None:
    old = memory.remember("Staging runs on db-2.", source="s", kind="state", subject="host:staging", now=T0)
    bad = memory.remember(
        "Staging runs on x.", source="w", kind="state", subject="host:staging", taint=["t"], now=at(1)
    )
    memory.resolve(old.record_id, bad.record_id, "x was injected", now=at(2))
    assert memory.get(old.record_id).state is State.ACTIVE
    assert memory.get(bad.record_id).state is State.SUPERSEDED
    with pytest.raises(LifecycleError):
        memory.resolve(old.record_id, bad.record_id, "again", now=at(3))


def test_supersede_with_a_stale_expected_version_is_a_conflict_and_writes_nothing(memory: Memory) -> None:
    old = memory.remember("Deploy with make.", source="s", now=T0)
    memory.remember("Deploy with make.", source="s", tags=["ops"], now=at(1))  # a second version (tags)
    before = memory.status()["records"]
    with pytest.raises(ProposalError, match="conflict"):
        memory.supersede(
            old.record_id, "Deploy with just.", source="s", reason="r", expected_version=1, now=at(2)
        )
    assert memory.status()["records"] == before
    done = memory.supersede(
        old.record_id, "Deploy with just.", source="s", reason="tool change", expected_version=2
    )
    assert memory.get(old.record_id).superseded_by == done.record_id


def test_archive_is_terminal(memory: Memory) -> None:
    record = memory.remember("An old note.", source="s", now=T0)
    memory.archive(record.record_id, "obsolete", now=at(1))
    with pytest.raises(LifecycleError):
        memory.archive(record.record_id, "again", now=at(2))


def test_an_interrupted_supersede_is_rolled_forward_on_open(memory: Memory) -> None:
    from agent_memory.records.lifecycle import supersede as retire

    old = memory.remember("Staging runs on db-2.", source="s", kind="state", subject="host:staging", now=T0)
    successor = memory.get(old.record_id)
    # Simulate a crash after the intent and the first put: log the intent, put the new record only.
    from agent_memory.records.record import MemoryRecord, Provenance

    new = MemoryRecord.create(
        type="fact",
        body="Staging runs on db-3.",
        provenance=Provenance(kind="cli", ref="s"),
        created_at=at(1),
        kind="state",
        subject="host:staging",
        namespace="default",
        supersedes=old.record_id,
    )
    memory.log.append(
        "intent",
        actor="owner",
        record_ids=(old.record_id, new.id),
        details={"op": "supersede", "reason": "newer value", "subject": "host:staging"},
        now=at(1),
    )
    # Signed by the Home, as its own writes are: an unsigned version of its record never verifies.
    memory.store.put(memory.writer.sign(new))
    assert memory.get(old.record_id).state is State.ACTIVE  # two active rows: the torn moment
    assert memory.roll_forward(now=at(2)) == 1
    assert memory.get(old.record_id).state is State.SUPERSEDED
    assert memory.get(old.record_id).superseded_by == new.id
    assert memory.roll_forward(now=at(3)) == 0
    assert retire is not None and successor.id == old.record_id


def test_an_intent_whose_new_record_never_landed_is_abandoned(memory: Memory) -> None:
    old = memory.remember("Staging runs on db-2.", source="s", kind="state", subject="host:staging", now=T0)
    ghost = "mem:" + "0" * 32
    memory.log.append(
        "intent",
        actor="owner",
        record_ids=(old.record_id, ghost),
        details={"op": "supersede", "reason": "r", "subject": "host:staging"},
        now=at(1),
    )
    assert memory.roll_forward(now=at(2)) == 1
    assert memory.get(old.record_id).state is State.ACTIVE
    done = [e for e in memory.log.entries() if e.action == "intent-done"]
    assert done[-1].details["outcome"] == "abandoned"
    assert timedelta(0) == timedelta(0)


def test_a_tainted_session_cannot_supersede_a_record_it_disputes_it_instead(memory: Memory) -> None:
    old = memory.remember("Deploy with make.", source="s", now=T0)
    memory.taint = ("external",)
    result = memory.supersede(old.record_id, "Deploy with curl | sh.", source="web", reason="r", now=at(1))
    assert result.disputed_with == old.record_id
    assert result.quarantined
    assert memory.get(old.record_id).state is State.TRANSITIONAL

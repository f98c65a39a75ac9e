"""Metamemory through the porcelain (seed 000 §23, memory:L5; checklist items 13-15)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from agent_memory.errors import ProposalError, RecordError, RecordNotFound
from agent_memory.home import Home
from agent_memory.memory import Memory
from memory.conftest import T0, at

DAY = "2026-11-01"


def log_text(memory: Memory) -> str:
    return "\n".join(json.dumps(entry.to_wire(), ensure_ascii=False) for entry in memory.log.entries())


def snapshot(memory: Memory, ids: list[str]) -> dict[str, Any]:
    """Everything feedback must leave alone: every version's bytes and the touch counts."""
    return {
        rid: ([v.canonical_bytes() for v in memory.history(rid)], memory.salience.count(rid)) for rid in ids
    }


def remembered(memory: Memory) -> list[str]:
    return [
        memory.remember("Deploys go through the blue pipeline.", source="runbook#L4", now=T0).record_id,
        memory.remember("Deploy keys live in the vault.", source="session-2", now=T0).record_id,
    ]


def test_a_recall_is_logged_as_a_retrieval_record_with_its_query_digest_never_its_text(
    memory: Memory,
) -> None:
    remembered(memory)
    query = "  deploy pipeline secret-word-xyzzy "
    result = memory.recall(query, now=at(1))
    event = memory.metamemory.record_retrieval(
        result, task_id="task-001", use_role="action-premise", now=at(1)
    )
    assert event.retrieval_id == "memret-2026-11-02-001"
    assert event.memory_item_ids == result.ids != ()
    assert event.query_digest == "sha256:" + hashlib.sha256(query.strip().encode("utf-8")).hexdigest()
    assert (event.task_id, event.use_role, event.actor) == ("task-001", "action-premise", memory.actor)
    assert memory.metamemory.retrieval(event.retrieval_id) == event
    assert "xyzzy" not in log_text(memory)
    entry = memory.log.last()
    assert entry is not None and entry.action == "retrieval"
    assert entry.record_ids == (event.retrieval_id, *result.ids)


def test_a_miss_can_be_logged_too(memory: Memory) -> None:
    result = memory.recall("nothing here", now=T0)
    event = memory.metamemory.record_retrieval(result, now=T0)
    assert event.memory_item_ids == ()
    assert event.use_role == "background"


def test_ids_count_up_per_kind_and_utc_day(memory: Memory) -> None:
    ids = remembered(memory)
    first = memory.metamemory.record_retrieval(ids[:1], now=at(0, 1))
    second = memory.metamemory.record_retrieval(ids[1:], now=at(0, 23))
    outcome = memory.metamemory.record_outcome("task-1", "succeeded", now=at(0, 23))
    feedback = memory.metamemory.attribute_feedback(
        ids, verdict="neutral", attribution_confidence="low", now=at(0, 23)
    )
    tomorrow = memory.metamemory.record_retrieval(ids, now=at(1))
    assert [first.retrieval_id, second.retrieval_id, tomorrow.retrieval_id] == [
        f"memret-{DAY}-001",
        f"memret-{DAY}-002",
        "memret-2026-11-02-001",
    ]
    assert (outcome.outcome_id, feedback.event_id) == (f"memout-{DAY}-001", f"memfb-{DAY}-001")


def test_feedback_is_listed_per_record_oldest_first(memory: Memory) -> None:
    a, b = remembered(memory)
    retrieval = memory.metamemory.record_retrieval([a, b], task_id="t1", use_role="constraint", now=T0)
    outcome = memory.metamemory.record_outcome(
        "t1", "failed", ["runtime:host-check-7"], retrieval_ref=retrieval.retrieval_id, now=at(0, 1)
    )
    misleading = memory.metamemory.attribute_feedback(
        [a],
        verdict="misleading",
        attribution_confidence="high",
        retrieval_ref=retrieval.retrieval_id,
        outcome_ref=outcome.outcome_id,
        now=at(0, 2),
    )
    helpful = memory.metamemory.attribute_feedback(
        [a, b], verdict="helpful", attribution_confidence="low", evidence_refs=["ticket:42"], now=at(0, 3)
    )
    assert memory.metamemory.list_feedback(a) == [misleading, helpful]
    assert memory.metamemory.list_feedback(b) == [helpful]
    assert misleading.use_role == "constraint"  # the retrieval's role
    assert helpful.use_role == "background"
    assert misleading.to_json()["verdict_scheme"] == "intervention-outcome-v1"
    assert misleading.to_json()["attribution_confidence_scheme"] == "ordinal-confidence-v1"
    assert outcome.evidence_refs == ("runtime:host-check-7",)
    assert outcome.retrieval_ref == retrieval.retrieval_id


def test_feedback_never_rewrites_a_record_its_source_or_its_ranking(memory: Memory) -> None:
    ids = remembered(memory)
    before = snapshot(memory, ids)
    score = memory.recall("deploy", now=at(1), touch=False).records[0].score
    retrieval = memory.metamemory.record_retrieval(ids, now=at(1))
    for _ in range(3):
        memory.metamemory.attribute_feedback(
            retrieval_ref=retrieval.retrieval_id,
            verdict="misleading",
            attribution_confidence="high",
            now=at(1),
        )
    memory.metamemory.propose_policy_change(
        "retrieval-trigger:deploy",
        "Verify deploy facts live before acting.",
        [retrieval.retrieval_id],
        expected_benefit="Fewer wrong deploys.",
        risk="Slower deploys.",
        now=at(1),
    )
    assert snapshot(memory, ids) == before
    assert memory.recall("deploy", now=at(1), touch=False).records[0].score == score
    assert memory.status()["records"] == len(ids)


def test_feedback_on_a_retrieval_defaults_to_its_records_and_refuses_others(memory: Memory) -> None:
    a, b = remembered(memory)
    retrieval = memory.metamemory.record_retrieval([a], now=T0)
    event = memory.metamemory.attribute_feedback(
        retrieval_ref=retrieval.retrieval_id, verdict="helpful", attribution_confidence="medium", now=T0
    )
    assert event.memory_item_ids == (a,)
    with pytest.raises(RecordError, match="not among the records") as info:
        memory.metamemory.attribute_feedback(
            [b], retrieval_ref=retrieval.retrieval_id, verdict="helpful", attribution_confidence="low", now=T0
        )
    assert info.value.field == "memory_item_ids"


def test_self_rated_feedback_is_marked_as_weak_evidence(memory: Memory) -> None:
    a, _ = remembered(memory)
    rated = memory.metamemory.attribute_feedback(
        [a], verdict="helpful", attribution_confidence="high", now=T0
    )
    observed = memory.metamemory.attribute_feedback(
        [a], verdict="helpful", attribution_confidence="high", evidence_refs=["ci:run-9"], now=T0
    )
    assert (rated.basis, observed.basis) == ("self-rated", "observed")


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"verdict": "great"}, "verdict"),
        ({"attribution_confidence": "certain"}, "attribution_confidence"),
        ({"use_role": "vibes"}, "use_role"),
        ({"task_id": "two words"}, "task_id"),
        ({"evidence_refs": ["a ref with spaces"]}, "evidence_refs[0]"),
        ({"evidence_refs": "ci:run"}, "evidence_refs"),
        ({"retrieval_ref": "memret-2026-11-01-009"}, "retrieval_ref"),
        ({"outcome_ref": "memout-2026-11-01-009"}, "outcome_ref"),
        ({"observed_at": T0.replace(tzinfo=None)}, "observed_at"),
        ({"ids": []}, "memory_item_ids"),
        ({"now": T0.replace(tzinfo=None)}, "now"),
    ],
)
def test_bad_feedback_names_the_field_and_writes_nothing(
    memory: Memory, options: dict[str, Any], field: str
) -> None:
    ids = remembered(memory)
    head = memory.log.last()
    arguments: dict[str, Any] = {"verdict": "helpful", "attribution_confidence": "low", "now": T0, **options}
    with pytest.raises(RecordError) as info:
        memory.metamemory.attribute_feedback(arguments.pop("ids", ids), **arguments)
    assert info.value.field == field
    assert memory.log.last() == head
    assert memory.metamemory.list_feedback(ids[0]) == []


def test_feedback_on_an_unknown_record_is_not_found(memory: Memory) -> None:
    remembered(memory)
    ghost = "mem:" + "0" * 32
    with pytest.raises(RecordNotFound):
        memory.metamemory.attribute_feedback([ghost], verdict="helpful", attribution_confidence="low", now=T0)
    with pytest.raises(RecordNotFound):
        memory.metamemory.record_retrieval([ghost], now=T0)
    with pytest.raises(RecordNotFound):
        memory.metamemory.list_feedback(ghost)


def test_an_outcome_is_a_word_and_refs_never_a_narrative(memory: Memory) -> None:
    head = memory.log.last()
    with pytest.raises(RecordError) as info:
        memory.metamemory.record_outcome("task-1", "Path matched the live host", now=T0)
    assert info.value.field == "outcome"
    with pytest.raises(RecordError) as info:
        memory.metamemory.record_outcome("task-1", "failed", ["see the logs of last night"], now=T0)
    assert info.value.field == "evidence_refs[0]"
    with pytest.raises(RecordError) as info:
        memory.metamemory.record_retrieval([], query=b"bytes", now=T0)  # type: ignore[arg-type]
    assert info.value.field == "query"
    assert memory.log.last() == head


def test_a_policy_proposal_waits_for_review_and_is_never_applied(memory: Memory) -> None:
    ids = remembered(memory)
    feedback = memory.metamemory.attribute_feedback(
        ids, verdict="misleading", attribution_confidence="medium", now=T0
    )
    before = snapshot(memory, ids)
    proposal = memory.metamemory.propose_policy_change(
        "retrieval-trigger:environment-state",
        "Require live verification when source age exceeds 30 days",
        [feedback.event_id, ids[0], "archive/2026-10-30.md#mem-2026-10-30-002"],
        expected_benefit="Reduce actions based on stale host state",
        risk="Adds verification latency to stable environments",
        now=at(0, 5),
    )
    assert proposal.proposal_id == f"mempolicy-{DAY}-001"
    assert proposal.status == "pending-review"
    assert memory.metamemory.policy_proposals() == [proposal]
    assert snapshot(memory, ids) == before
    entry = memory.log.last()
    assert entry is not None and entry.action == "policy-proposal"
    assert entry.record_ids == (proposal.proposal_id, *proposal.supporting_refs)
    assert "verification latency" not in log_text(memory)  # the prose stays in the proposal


@pytest.mark.parametrize(
    ("refs", "error", "field"),
    [
        ([], RecordError, "supporting_refs"),
        (["memfb-2026-11-01-042"], RecordError, "supporting_refs[0]"),
        (["mem:" + "0" * 32], RecordNotFound, "supporting_refs[0]"),
        (["two words"], RecordError, "supporting_refs[0]"),
    ],
)
def test_a_proposal_needs_supporting_refs_that_exist(
    memory: Memory, refs: list[str], error: type[Exception], field: str
) -> None:
    head = memory.log.last()
    with pytest.raises(error) as info:
        memory.metamemory.propose_policy_change("t", "change", refs, expected_benefit="b", risk="r", now=T0)
    assert getattr(info.value, "field", None) == field
    assert memory.log.last() == head
    assert memory.metamemory.policy_proposals() == []


def test_a_proposal_needs_a_target_token_and_prose(memory: Memory) -> None:
    (rid, _) = remembered(memory)
    for kwargs, field in [
        ({"target": "two words"}, "target"),
        ({"proposed_change": "  "}, "proposed_change"),
        ({"expected_benefit": ""}, "expected_benefit"),
        ({"risk": None}, "risk"),
    ]:
        arguments: dict[str, Any] = {
            "target": "t",
            "proposed_change": "c",
            "supporting_refs": [rid],
            "expected_benefit": "b",
            "risk": "r",
            "now": T0,
            **kwargs,
        }
        with pytest.raises(RecordError) as info:
            memory.metamemory.propose_policy_change(**arguments)
        assert info.value.field == field
    assert memory.metamemory.policy_proposals() == []


@pytest.fixture
def home(tmp_path: Path) -> Path:
    Home.init(tmp_path / "home", git=False, now=T0)
    return tmp_path / "home"


def test_a_home_keeps_proposals_as_files_and_touches_no_rule(home: Path) -> None:
    conventions = (home / "conventions.md").read_bytes()
    settings = (home / "memory.toml").read_bytes()
    with Memory.open(home) as memory:
        rid = remembered(memory)[0]
        proposal = memory.metamemory.propose_policy_change(
            "conventions", "Always verify hosts.", [rid], expected_benefit="b", risk="r", now=T0
        )
    path = home / "proposals" / f"{proposal.proposal_id}.yaml"
    text = path.read_text(encoding="utf-8")
    assert 'status: "pending-review"' in text and 'proposed_change: "Always verify hosts."' in text
    assert (home / "conventions.md").read_bytes() == conventions
    assert (home / "memory.toml").read_bytes() == settings
    with Memory.open(home) as reopened:
        assert reopened.metamemory.policy_proposals() == [proposal]


def test_a_proposal_file_is_never_overwritten(home: Path) -> None:
    stray = home / "proposals" / f"mempolicy-{DAY}-001.yaml"
    stray.parent.mkdir(exist_ok=True)
    stray.write_bytes(b"# somebody's draft\n")
    with Memory.open(home) as memory:
        rid = remembered(memory)[0]
        proposal = memory.metamemory.propose_policy_change(
            "t", "c", [rid], expected_benefit="b", risk="r", now=T0
        )
        assert proposal.proposal_id == f"mempolicy-{DAY}-002"
        assert stray.read_bytes() == b"# somebody's draft\n"
        with pytest.raises(ProposalError) as info:
            memory.metamemory.policy_proposals()
        assert info.value.path == str(stray)


def test_two_processes_on_one_home_see_each_others_events_and_never_share_an_id(home: Path) -> None:
    with Memory.open(home) as first, Memory.open(home) as second:
        rid = remembered(first)[0]
        a = first.metamemory.record_retrieval([rid], now=T0)
        b = second.metamemory.record_retrieval([rid], now=T0)
        assert (a.retrieval_id, b.retrieval_id) == (f"memret-{DAY}-001", f"memret-{DAY}-002")
        event = second.metamemory.attribute_feedback(
            retrieval_ref=a.retrieval_id, verdict="helpful", attribution_confidence="low", now=T0
        )
        assert first.metamemory.list_feedback(rid) == [event]

"""Consolidation passes on hand-made records: every pass only proposes; accepting applies."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from jobkit import T0, at, make

from agent_memory.errors import LifecycleError, ProposalError
from agent_memory.home import Home
from agent_memory.jobs.consolidate import ConsolidationReport, consolidate
from agent_memory.jobs.pending import PENDING_FOLDER, PendingProposal, load_pending, revalidate
from agent_memory.memory import Memory
from agent_memory.recall.salience import Salience
from agent_memory.records.lifecycle import archive, begin_transition
from agent_memory.records.record import MemoryRecord, State
from agent_memory.stores.inmemory import InMemoryStore

SOON = at(days=1)


def store_of(*records: MemoryRecord) -> InMemoryStore:
    store = InMemoryStore()
    for record in records:
        store.put(record)
    return store


def versions(store: InMemoryStore) -> dict[str, int]:
    return {r.id: len(store.history(r.id)) for r in store.list()}


def passes(report: ConsolidationReport) -> list[tuple[str, str]]:
    return [(a.pass_name, a.action) for a in report.actions] + [
        (p.pass_name, p.action) for p in report.proposals
    ]


def proposed(report: ConsolidationReport, name: str) -> list[PendingProposal]:
    return [p for p in report.proposals if p.pass_name == name]


def accept_all(store: InMemoryStore, report: ConsolidationReport) -> None:
    """Accept every proposal of ``report`` as the review flow does: re-validate, then put."""
    for pending in report.proposals:
        for version in revalidate(store, pending, now=SOON):
            store.put(version)


def test_exact_duplicates_get_a_proposal_that_the_strongest_copy_supersedes_the_others() -> None:
    weak = make("Ada drinks green tea", ref="s:1", confidence=0.5)
    strong = make("Ada drinks green tea", ref="s:2", confidence=0.9)
    third = make("Ada drinks green tea", ref="s:3", confidence=0.7)
    store = store_of(weak, strong, third)
    before = versions(store)
    report = consolidate(store, now=SOON)
    assert passes(report) == [("dedup.exact", "supersede")]
    assert versions(store) == before  # a job applies nothing (DESIGN.md §9)
    assert report.proposals[0].reason == f"exact duplicate of {strong.id}"
    assert report.proposals[0].record_ids == tuple(sorted((weak.id, strong.id, third.id)))
    accept_all(store, report)
    assert store.get(weak.id).state is State.SUPERSEDED
    assert store.get(weak.id).superseded_by == strong.id
    assert store.get(third.id).superseded_by == strong.id
    assert store.get(strong.id).state is State.ACTIVE


def test_a_tainted_exact_copy_never_supersedes_the_trusted_one_however_strong() -> None:
    trusted = make("Staging runs on db-4", ref="s:1", confidence=0.5)
    tainted = make("Staging runs on db-4", ref="web:1", confidence=0.99, hours=2, taint=["external"])
    store = store_of(trusted, tainted)
    report = consolidate(store, now=SOON)
    assert store.get(tainted.id).state is State.ACTIVE  # proposed, not applied
    accept_all(store, report)
    assert store.get(tainted.id).superseded_by == trusted.id
    assert store.get(trusted.id).state is State.ACTIVE and store.get(trusted.id).taint is None


def test_a_near_duplicate_merge_is_a_pending_proposal_and_writes_nothing() -> None:
    a = make("Ada prefers green tea in the morning with lemon", ref="s:1")
    b = make("Ada prefers green tea in the morning with honey", ref="s:2", confidence=0.8)
    store = store_of(a, b)
    before = versions(store)
    report = consolidate(store, now=SOON)
    assert passes(report) == [("dedup.near", "merge")]
    assert versions(store) == before
    pending = report.proposals[0]
    assert pending.reason.startswith(f"near-duplicate of {b.id if b.confidence > a.confidence else a.id}")
    written = revalidate(store, pending, now=SOON)
    merged = written[0]
    assert merged.provenance.kind == "consolidation"
    assert set(merged.evidence) == {a.id, b.id}
    retired = {v.id: v for v in written if v.state is State.SUPERSEDED}
    assert set(retired) == {a.id, b.id}
    assert versions(store) == before


def test_near_duplicates_never_merge_state_records() -> None:
    a = make("Ada prefers green tea in the morning with lemon", kind="state", subject="tea:ada")
    b = make("Ada prefers green tea in the morning with honey", kind="state", subject="tea:bob")
    report = consolidate(store_of(a, b), now=SOON)
    assert not proposed(report, "dedup.near")


def test_near_duplicates_that_negate_each_other_are_not_merged_but_disputed() -> None:
    a = make("The nightly backup job runs on the staging cluster")
    b = make("The nightly backup job never runs on the staging cluster")
    store = store_of(a, b)
    report = consolidate(store, now=SOON)
    assert passes(report) == [("contradiction", "transition")]
    assert report.proposals[0].reason == "one side negates the other"
    assert {store.get(a.id).state, store.get(b.id).state} == {State.ACTIVE}
    accept_all(store, report)
    assert {store.get(a.id).state, store.get(b.id).state} == {State.TRANSITIONAL}


def test_a_slot_contradiction_proposes_a_dispute_that_accepting_opens() -> None:
    a = make("The staging database is Postgres 16", ref="s:1")
    b = make("The staging database is Postgres 15", ref="s:2")
    store = store_of(a, b)
    report = consolidate(store, now=SOON)
    assert passes(report) == [("contradiction", "transition")]
    first, second = ("16", "15") if a.id < b.id else ("15", "16")  # pairs are read in id order
    assert (
        report.proposals[0].reason
        == f"slot 'the stag databas' disagrees: 'postgr {first}' vs 'postgr {second}'"
    )
    assert store.get(a.id).transition is None
    accept_all(store, report)
    assert store.get(a.id).transition is not None


def test_episodes_and_rules_are_never_disputed() -> None:
    a = make("The staging database is Postgres 16", type="episode")
    b = make("The staging database is Postgres 15", type="episode")
    report = consolidate(store_of(a, b), now=SOON)
    assert not report.actions and not proposed(report, "contradiction")


def test_a_record_joins_at_most_one_dispute_and_later_pairs_are_deferred() -> None:
    a = make("The staging database is Postgres 16", ref="s:1")
    b = make("The staging database is Postgres 15", ref="s:2")
    c = make("The staging database is Postgres 14", ref="s:3")
    store = store_of(a, b, c)
    report = consolidate(store, now=SOON)
    assert len(proposed(report, "contradiction")) == 1 and not report.actions
    assert [r.detail.startswith("deferred:") for r in report.rejections] == [True, True]


def test_live_duplicates_of_a_state_subject_get_a_supersede_proposal() -> None:
    old = make("staging runs on host a", kind="state", subject="host:staging", valid_from=at(0))
    new = make("staging runs on host b", kind="state", subject="host:staging", valid_from=at(2), hours=1)
    store = store_of(old, new)
    before = versions(store)
    report = consolidate(store, now=SOON)
    state = proposed(report, "state")
    assert [p.reason for p in state] == ["newer value for subject host:staging"]
    assert versions(store) == before
    written = revalidate(store, state[0], now=SOON)
    assert {(v.id, v.state) for v in written} == {(new.id, State.ACTIVE), (old.id, State.SUPERSEDED)}


def test_three_episodes_with_one_signature_propose_a_rule_citing_them() -> None:
    episodes = [
        make(f"Deploy {i} failed at night", type="episode", tags=("deploy",), hours=i) for i in range(3)
    ]
    report = consolidate(store_of(*episodes), now=SOON)
    (pending,) = report.proposals
    assert (pending.pass_name, pending.action) == ("promotion", "create-rule")
    rule = pending.proposals[0].record
    assert rule is not None
    assert rule.evidence == tuple(sorted(e.id for e in episodes))
    assert rule.body == "Recurring pattern across 3 episodes (deploy); latest: Deploy 2 failed at night"


def test_a_signature_most_episodes_share_is_rejected_as_no_pattern() -> None:
    blanket = [make(f"Commit {i} landed", type="episode", tags=("git",), hours=i) for i in range(9)]
    deploys = [make(f"Deploy {i} failed", type="episode", tags=("deploy",), hours=i) for i in range(3)]
    report = consolidate(store_of(*blanket, *deploys), now=SOON)
    assert [p.proposals[0].record.tags for p in report.proposals if p.proposals[0].record] == [("deploy",)]
    (rejected,) = [r for r in report.rejections if r.pass_name.startswith("promotion")]
    assert "shared by 9 of 12 episodes: not a pattern" in rejected.detail


def test_two_episodes_or_an_existing_rule_promote_nothing() -> None:
    episodes = [
        make(f"Deploy {i} failed at night", type="episode", tags=("deploy",), hours=i) for i in range(3)
    ]
    assert not consolidate(store_of(*episodes[:2]), now=SOON).proposals
    rule = make("Deploys fail at night", type="rule", tags=("deploy",), evidence=(episodes[0].id,))
    report = consolidate(store_of(*episodes, rule), now=SOON)
    assert not proposed(report, "promotion")


def test_a_rule_whose_evidence_is_all_archived_gets_a_flag_proposal() -> None:
    episode = make("Deploy failed at night", type="episode")
    rule = make("Deploys fail at night", type="rule", evidence=(episode.id,))
    store = store_of(episode, rule)
    store.put(archive(episode, "old", now=at(1)))
    report = consolidate(store, now=at(2))
    (flag,) = proposed(report, "rule-flags")
    assert flag.action == "flag"
    assert flag.flag is not None and flag.flag.flagged
    assert store.get(rule.id).flagged is False
    assert revalidate(store, flag) == [flag.flag]


def test_decay_proposes_archival_of_faded_records_and_protects_the_rest() -> None:
    faded = make("Ada once mentioned a lunch place downtown", confidence=0.5)
    cited = make("Bob once mentioned a printer jam upstairs", confidence=0.5, type="episode")
    rule = make("Printers jam upstairs", type="rule", evidence=(cited.id,))
    x = make("The office closes at 6 pm on Fridays", ref="s:1", confidence=0.5)
    y = make("The office closes at 7 pm on Fridays", ref="s:2", confidence=0.5)
    store = store_of(faded, cited, rule, x, y)
    for version in begin_transition(x, y, "disagree", now=at(0)):
        store.put(version)
    report = consolidate(store, now=T0 + timedelta(days=365))
    archived = [p.record_ids for p in proposed(report, "decay")]
    assert archived == [(faded.id,)]
    protected = {a.record_ids[0]: a.reason for a in report.actions if a.action == "protect"}
    assert set(protected) == {cited.id, rule.id, x.id, y.id}
    assert protected[cited.id].endswith(f"kept: evidence of active rule {rule.id}")


def test_touches_keep_a_record_from_decaying() -> None:
    record = make("Ada once mentioned a lunch place downtown", confidence=0.5)
    salience = Salience()
    salience.touch([record.id] * 1, now=T0 + timedelta(days=300))
    report = consolidate(store_of(record), now=T0 + timedelta(days=365), salience=salience)
    assert not report.proposals


def test_no_pass_writes_to_the_store_whatever_it_finds() -> None:
    a = make("Ada drinks green tea", ref="s:1")
    b = make("Ada drinks green tea", ref="s:2")
    c = make("The staging database is Postgres 16", ref="s:3")
    d = make("The staging database is Postgres 15", ref="s:4")
    e = make("Ada prefers green tea in the morning with lemon", ref="s:5")
    f = make("Ada prefers green tea in the morning with honey", ref="s:6")
    faded = make("A faded note about a lunch place", ref="s:7", confidence=0.5, hours=-24 * 400)
    store = store_of(a, b, c, d, e, f, faded)
    before = versions(store)
    report = consolidate(store, now=SOON)
    assert {p.pass_name for p in report.proposals} == {"dedup.exact", "contradiction", "dedup.near", "decay"}
    assert not [x for x in report.actions if x.action != "protect"]
    assert versions(store) == before


def test_a_stale_proposal_is_rejected_with_a_reason_and_nothing_is_written() -> None:
    a = make("Ada prefers green tea in the morning with lemon", ref="s:1")
    b = make("Ada prefers green tea in the morning with honey", ref="s:2")
    store = store_of(a, b)
    (pending,) = consolidate(store, now=SOON).proposals
    store.put(archive(store.get(a.id), "changed meanwhile", now=SOON))
    before = versions(store)
    with pytest.raises(ProposalError, match="changed since the proposal was made") as caught:
        revalidate(store, pending, now=SOON)
    assert caught.value.record_id == a.id
    assert versions(store) == before


def test_an_illegal_proposal_file_is_refused_by_the_gate(tmp_path: Path) -> None:
    old = make("A faded note about lunch", confidence=0.5)
    store = store_of(old)
    (pending,) = consolidate(store, now=T0 + timedelta(days=365)).proposals
    path = pending.write(tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["proposals"][0]["kind"] = "transition"
    data["proposals"][0]["other_id"] = old.id
    tampered = PendingProposal.from_json(data, path=str(path))
    with pytest.raises((ProposalError, LifecycleError)):
        revalidate(store, tampered)
    assert versions(store) == {old.id: 1}


def test_a_malformed_proposal_file_is_named_in_the_error(tmp_path: Path) -> None:
    (tmp_path / "cons-bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ProposalError, match=r"cons-bad\.json"):
        load_pending(tmp_path)


def test_withdrawn_records_are_skipped_and_left_untouched() -> None:
    memory = Memory.in_memory()
    keep = make("Ada drinks green tea", ref="s:1", confidence=0.5)
    hidden = make("Ada drinks green tea", ref="s:2", confidence=0.9)
    for record in (keep, hidden):
        memory.store.put(record)
    memory.withdraw(memory_item_ids=[hidden.id], reason="user asked", now=T0)
    report = memory.maintenance.consolidate(now=SOON)
    assert report.stats["skipped_withdrawn"] == 1
    assert not report.actions and not report.proposals
    assert len(memory.history(hidden.id)) == 1
    assert memory.get(keep.id).state is State.ACTIVE


def test_the_porcelain_files_proposals_in_the_home_and_logs_ids_not_content(home: Home) -> None:
    with Memory.open(home.root) as memory:
        memory.remember("Ada prefers green tea in the morning with lemon", source="s:1", now=T0)
        memory.remember("Ada prefers green tea in the morning with honey", source="s:2", now=T0)
        report = memory.maintenance.consolidate(now=SOON)
        event = memory.log.last()
    assert event is not None and event.action == "consolidate"
    assert "green tea" not in json.dumps(event.details)
    assert event.details["proposals"] == [p.id for p in report.proposals]
    filed = load_pending(home.root / PENDING_FOLDER)
    assert [p.id for p in filed] == [p.id for p in report.proposals]
    assert filed[0].to_json() == report.proposals[0].to_json()


def test_a_dry_run_of_the_porcelain_files_and_logs_nothing(home: Home) -> None:
    with Memory.open(home.root) as memory:
        memory.remember("Ada prefers green tea in the morning with lemon", source="s:1", now=T0)
        memory.remember("Ada prefers green tea in the morning with honey", source="s:2", now=T0)
        head = memory.log.last()
        report = memory.maintenance.consolidate(now=SOON, dry_run=True)
        assert memory.log.last() == head
    assert report.proposals
    assert not (home.root / PENDING_FOLDER).exists()


def test_the_porcelain_proposes_the_dispute_and_accept_opens_it(home: Home) -> None:
    # issue 19 item 4: remember two contradicting texts, consolidate -> nothing changes on main.
    with Memory.open(home.root) as memory:
        yes = memory.remember("Deploys happen on Tuesdays", source="s:1", now=T0).record_id
        no = memory.remember("Deploys do not happen on Tuesdays", source="s:2", now=T0).record_id
        notes = {i: len(memory.history(i)) for i in (yes, no)}
        report = memory.maintenance.consolidate(now=SOON)
        assert [(p.pass_name, p.action) for p in report.proposals] == [("contradiction", "transition")]
        assert {i: len(memory.history(i)) for i in (yes, no)} == notes
        assert memory.get(yes).state is State.ACTIVE and memory.get(no).state is State.ACTIVE
        writes = [e for e in memory.log.entries() if e.action in ("supersede", "transition", "intent")]
        assert not writes

        outcome = memory.proposals.accept([report.proposals[0].id], now=SOON)
        assert outcome.done == [report.proposals[0].id]
        assert memory.get(yes).state is State.TRANSITIONAL and memory.get(no).state is State.TRANSITIONAL
        kinds = [str(e.action) for e in memory.log.entries()]
        assert kinds[-4:] == ["batch-intent", "transition", "review", "batch-done"]


def test_a_memory_without_a_home_keeps_its_proposals_where_accept_finds_them() -> None:
    memory = Memory.in_memory()
    weak = make("Ada drinks green tea", ref="s:1", confidence=0.5)
    strong = make("Ada drinks green tea", ref="s:2", confidence=0.9)
    for record in (weak, strong):
        memory.store.put(record)
    report = memory.maintenance.consolidate(now=SOON)
    (pending,) = report.proposals
    assert memory.get(weak.id).state is State.ACTIVE

    assert [p.id for p in memory.proposals.pending()] == [pending.id]
    outcome = memory.proposals.accept(everything=True, now=SOON)
    assert outcome.done == [pending.id] and not outcome.refused
    assert memory.get(weak.id).superseded_by == strong.id
    assert memory.proposals.pending() == []


def test_a_proposal_a_person_declined_is_not_filed_again_for_exact_duplicates(home: Home) -> None:

    with Memory.open(home.root) as memory:
        a = make("Ada drinks green tea", ref="s:1", confidence=0.5)
        b = make("Ada drinks green tea", ref="s:2", confidence=0.9)
        for record in (a, b):
            memory.store.put(memory.writer.sign(record))  # as the Home's writer signs
        (pending,) = memory.maintenance.consolidate(now=SOON).proposals
        memory.proposals.decline([pending.id], reason="keep both", now=SOON)
        again = memory.maintenance.consolidate(now=SOON + timedelta(hours=1))
    assert not again.proposals
    (refusal,) = again.rejections
    assert refusal.detail.startswith(f"declined by a person as {pending.id} (seq ")

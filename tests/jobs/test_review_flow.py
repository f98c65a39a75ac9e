"""Reviewing consolidation proposals on a Home: accept, decline, revert and the regret rate."""

from __future__ import annotations

import json

import pytest
from jobkit import T0, at, make, put, signed_by

from agent_memory.doctor.diagnose import diagnose
from agent_memory.errors import ProposalError
from agent_memory.governance.actors import AuthorityError
from agent_memory.home import Home
from agent_memory.jobs.pending import PendingProposal, revalidate
from agent_memory.jobs.review_flow import review_stats
from agent_memory.memory import Memory
from agent_memory.records.lifecycle import archive
from agent_memory.records.record import State
from agent_memory.records.signing import address_of, verify_record

SOON = at(days=1)
LATER = at(days=2)
LEMON = "Ada prefers green tea in the morning with lemon"
HONEY = "Ada prefers green tea in the morning with honey"


def versions(memory: Memory) -> dict[str, int]:
    return {r.id: len(memory.store.history(r.id)) for r in memory.store.list()}


def seeded(home: Home) -> tuple[Memory, dict[str, PendingProposal]]:
    """A merge proposal (tea) and a state proposal (host), filed by a consolidation run."""
    memory = Memory.open(home.root)
    memory.remember(LEMON, source="s:1", now=T0)
    memory.remember(HONEY, source="s:2", now=T0)
    put(
        home,
        make("staging runs on host a", kind="state", subject="host:staging", valid_from=at(0)),
        make("staging runs on host b", kind="state", subject="host:staging", valid_from=at(2), hours=1),
    )
    report = memory.maintenance.consolidate(now=SOON)
    return memory, {p.pass_name: p for p in report.proposals}


def review_events(memory: Memory) -> list[dict[str, object]]:
    return [dict(e.details) for e in memory.log.entries() if str(e.action) == "review"]


def test_accept_applies_exactly_what_the_gate_validates_and_logs_the_verdict(home: Home) -> None:
    memory, filed = seeded(home)
    merge = filed["dedup.near"]
    expected = signed_by(memory.identity, revalidate(memory.store, merge, now=LATER))
    outcome = memory.proposals.accept([merge.id], now=LATER)
    assert outcome.done == [merge.id] and not outcome.refused
    assert outcome.written == expected
    for version in expected:
        assert memory.store.get(version.id) == [v for v in expected if v.id == version.id][-1]
    (event,) = review_events(memory)
    assert (event["verdict"], event["proposal_id"], event["pass"]) == ("accepted", merge.id, "dedup.near")
    assert event["created"] == [expected[0].id]
    assert merge.id not in {p.id for p in memory.proposals.pending()}
    assert memory.log.last() is not None and memory.log.last().actor == "owner"  # type: ignore[union-attr]


def test_a_proposal_made_stale_by_a_later_change_is_refused_with_its_reason_and_writes_nothing(
    home: Home,
) -> None:
    memory, filed = seeded(home)
    merge = filed["dedup.near"]
    target = merge.record_ids[0]
    memory.archive(target, "changed meanwhile", now=SOON)
    before, head = versions(memory), memory.log.last()
    outcome = memory.proposals.accept([merge.id], now=LATER)
    assert outcome.done == [] and not outcome.written
    ((refused_id, reason),) = outcome.refused
    assert refused_id == merge.id
    assert "changed since the proposal was made" in reason and target in reason
    assert versions(memory) == before
    assert memory.log.last() == head
    assert merge.id in {p.id for p in memory.proposals.pending()}


def test_accept_all_takes_each_pending_proposal_and_refuses_unknown_ids(home: Home) -> None:
    memory, filed = seeded(home)
    outcome = memory.proposals.accept(everything=True, now=LATER)
    assert sorted(outcome.done) == sorted(p.id for p in filed.values())
    again = memory.proposals.accept([filed["state"].id, "cons-0000000000000000"], now=LATER)
    assert again.done == []
    assert [r for _, r in again.refused] == [
        f"proposal {filed['state'].id} was already decided",
        "no pending proposal cons-0000000000000000 under proposals/pending-consolidation",
    ]
    assert review_stats(memory.log) == {"accepted": 2, "declined": 0, "reverted": 0, "regret_rate": 0.0}


def test_decline_writes_nothing_but_the_review_event(home: Home) -> None:
    memory, filed = seeded(home)
    before, head = versions(memory), memory.log.last()
    assert head is not None
    outcome = memory.proposals.decline([filed["state"].id], reason="keep both for now", now=LATER)
    assert outcome.done == [filed["state"].id] and not outcome.written
    assert versions(memory) == before
    added = list(memory.log.entries(since_seq=head.seq))
    assert [(str(e.action), e.details["verdict"]) for e in added] == [("review", "declined")]
    assert [p.id for p in memory.proposals.pending()] == [filed["dedup.near"].id]
    assert (home.root / "proposals" / "pending-consolidation" / f"{filed['state'].id}.json").is_file()


def test_revert_of_a_merge_writes_correction_records_and_the_regret_rate_becomes_one_in_two(
    home: Home,
) -> None:
    memory, filed = seeded(home)
    merge = filed["dedup.near"]
    merged = memory.proposals.accept([merge.id], now=LATER).written[0]
    memory.proposals.accept([filed["state"].id], now=LATER)
    outcome = memory.proposals.revert(merge.id, reason="they differ", now=at(days=3))
    event = review_events(memory)[-1]
    assert (event["verdict"], event["proposal_id"]) == ("reverted", merge.id)
    restored = dict(event["restored"])  # type: ignore[call-overload]
    assert sorted(restored.values()) == sorted(merge.record_ids) and event["created"] == sorted(restored)
    corrections = [v for v in outcome.written if v.id in restored]
    assert sorted(c.body for c in corrections) == sorted([LEMON, HONEY])
    for copy in corrections:  # each keeps its original's source; the revert is named in its reason
        source = memory.get(restored[copy.id])
        assert copy.provenance == source.provenance and copy.provenance.ref in {"s:1", "s:2"}
        assert copy.state is State.ACTIVE and copy.state_reason is not None
        assert copy.state_reason == f"restored {source.id} by reverting maintenance proposal {merge.id}"
    assert memory.get(merged.id).state is State.SUPERSEDED
    assert memory.get(merged.id).superseded_by in {c.id for c in corrections}
    for original in merge.record_ids:  # the originals stay retired, with every version kept
        assert memory.get(original).state is State.SUPERSEDED
    assert review_stats(memory.log)["regret_rate"] == 0.5
    assert memory.status()["maintenance"] == {"accepted": 2, "declined": 0, "reverted": 1, "regret_rate": 0.5}


def test_every_version_accept_and_revert_write_is_signed_by_the_home_as_remember_signs(home: Home) -> None:
    memory, filed = seeded(home)
    assert memory.identity is not None
    before = {r.id: len(memory.store.history(r.id)) for r in memory.store.list()}
    memory.proposals.accept(everything=True, now=LATER)
    memory.proposals.revert(filed["dedup.near"].id, reason="they differ", now=at(days=3))
    written = [
        version
        for record in memory.store.list()
        for version in memory.store.history(record.id)[before.get(record.id, 0) :]
    ]
    assert len(written) >= 6  # merge, supersede, corrections, reverted merge
    assert {v.signed_by for v in written} == {address_of(memory.identity)}
    for version in written:
        verify_record(version)
    findings = diagnose(home)
    (signatures,) = [c for c in findings if c.name == "signatures"]
    unsigned_before = sum(
        1
        for r in memory.store.list()
        for v in memory.store.history(r.id)[: before.get(r.id, 0)]
        if not v.signature
    )
    assert signatures.ok and f"; {unsigned_before} unsigned" in signatures.details[0]


def test_revert_of_a_decay_archival_brings_the_record_back_as_a_new_correction(home: Home) -> None:
    memory = Memory.open(home.root)
    faded = make("A faded note about lunch", confidence=0.5)
    put(home, faded)
    (pending,) = memory.maintenance.consolidate(now=T0.replace(year=2027, month=12)).proposals
    assert pending.action == "archive"
    memory.proposals.accept([pending.id], now=T0.replace(year=2027, month=12))
    outcome = memory.proposals.revert(pending.id, now=T0.replace(year=2028))
    (copy,) = outcome.written
    assert (copy.body, copy.state, copy.supersedes) == (faded.body, State.ACTIVE, None)
    assert memory.get(faded.id).state is State.ARCHIVED


def test_revert_of_a_promotion_archives_the_rule_and_a_flag_returns_to_its_value(home: Home) -> None:
    memory = Memory.open(home.root)
    episodes = [
        make(f"Deploy {i} failed at night", type="episode", tags=("deploy",), hours=i) for i in range(3)
    ]
    put(home, *episodes)
    (promotion,) = memory.maintenance.consolidate(now=SOON).proposals
    (rule,) = memory.proposals.accept([promotion.id], now=SOON).written
    memory.proposals.revert(promotion.id, now=LATER)
    assert memory.get(rule.id).state is State.ARCHIVED
    episode = make("Backups failed on Sunday", type="episode")
    flagged_rule = make("Backups fail on Sundays", type="rule", evidence=(episode.id,))
    put(home, episode, flagged_rule, archive(episode, "old", now=at(1)))
    (flag,) = [p for p in memory.maintenance.consolidate(now=LATER).proposals if p.action == "flag"]
    memory.proposals.accept([flag.id], now=LATER)
    assert memory.get(flagged_rule.id).flagged
    memory.proposals.revert(flag.id, now=at(days=3))
    assert not memory.get(flagged_rule.id).flagged
    assert len(memory.history(flagged_rule.id)) == 3


def test_revert_is_refused_when_not_accepted_already_reverted_or_changed_since(home: Home) -> None:
    memory, filed = seeded(home)
    merge, state = filed["dedup.near"], filed["state"]
    with pytest.raises(ProposalError, match="never accepted"):
        memory.proposals.revert(merge.id, now=LATER)
    memory.proposals.accept(everything=True, now=LATER)
    memory.proposals.revert(merge.id, now=LATER)
    with pytest.raises(ProposalError, match="already reverted"):
        memory.proposals.revert(merge.id, now=LATER)
    survivor = next(r for r in state.record_ids if memory.get(r).state is State.ACTIVE)
    memory.archive(survivor, "gone", now=LATER)
    before, head = versions(memory), memory.log.last()
    with pytest.raises(ProposalError, match="changed since it was accepted") as caught:
        memory.proposals.revert(state.id, now=at(days=3))
    assert caught.value.record_id == survivor
    assert versions(memory) == before and memory.log.last() == head


def test_an_actor_without_the_approve_grant_can_neither_accept_nor_decline(home: Home) -> None:
    seeded(home)[0].close()
    bot = Memory.open(home.root, actor="agent:bot")
    before, head = versions(bot), bot.log.last()
    with pytest.raises(AuthorityError):
        bot.proposals.accept(everything=True, now=LATER)
    with pytest.raises(AuthorityError):
        bot.proposals.decline(everything=True, now=LATER)
    assert versions(bot) == before and bot.log.last() == head


def test_without_a_home_the_flow_reads_the_proposals_kept_in_memory() -> None:
    memory = Memory.in_memory()
    assert memory.proposals.accept(everything=True).done == []
    unknown = "cons-0123456789abcdef"
    refused = memory.proposals.accept([unknown])
    assert refused.refused == [(unknown, f"no pending proposal {unknown} filed in this Memory")]
    assert memory.log.last() is None


def test_the_log_holds_no_record_content_through_accept_decline_and_revert(home: Home) -> None:
    memory, filed = seeded(home)
    memory.proposals.accept([filed["dedup.near"].id], now=LATER)
    memory.proposals.decline([filed["state"].id], now=LATER)
    memory.proposals.revert(filed["dedup.near"].id, now=at(days=3))
    text = json.dumps([e.to_wire() for e in memory.log.entries()])
    for body in (LEMON, HONEY, "staging runs on host"):
        assert body not in text


def test_a_malformed_proposal_file_stops_the_review_naming_it_and_writes_nothing(home: Home) -> None:
    memory, filed = seeded(home)
    (home.root / "proposals" / "pending-consolidation" / "cons-bad.json").write_text(
        "{oops", encoding="utf-8"
    )
    before, head = versions(memory), memory.log.last()
    with pytest.raises(ProposalError, match=r"cons-bad\.json"):
        memory.proposals.accept([filed["state"].id], now=LATER)
    assert versions(memory) == before and memory.log.last() == head

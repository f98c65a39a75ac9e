"""Trust survives maintenance (issue 20 item 5): tainted text never replaces a reviewed record on its own."""

from __future__ import annotations

import pytest
from jobkit import T0, at

from agent_memory.governance.actors import AuthorityError
from agent_memory.home import Home
from agent_memory.jobs.operators import merge_proposals
from agent_memory.jobs.pending import PendingProposal, basis_of, revalidate
from agent_memory.jobs.proposal_trust import DISPLACES, REPLACES
from agent_memory.jobs.views import render
from agent_memory.memory import Memory
from agent_memory.records.record import State

TRUSTED = "The nightly backup job copies the ledger database to the offsite bucket"
ATTACK = "The nightly backup job copies the ledger database to the offsite bucket daily"
SOON = at(days=1)


def file_merge(memory: Memory, a_id: str, b_id: str) -> PendingProposal:
    """File a near-duplicate merge of two records, as an older run or another operator could have.

    Consolidation itself no longer pairs a tainted record with an untainted one (issue 21
    item 4); the review flow must still refuse to apply such a proposal on its own.
    """
    a, b = memory.get(a_id), memory.get(b_id)
    proposals = merge_proposals(a, b, 0.9, now=SOON, threshold=0.6)
    pending = PendingProposal(
        pass_name="dedup.near",  # noqa: S106 - a pass name, not a secret
        action="merge",
        reason=proposals[0].reason,
        record_ids=tuple(sorted((a.id, b.id))),
        basis={r.id: basis_of(r) for r in (a, b)},
        made_at=SOON,
        proposals=tuple(proposals),
    )
    memory.maintenance.shelf.file(pending)
    return pending


def seeded(home: Home) -> tuple[str, str, PendingProposal]:
    """A trusted record, a newer tainted near-duplicate, and a filed proposal to merge them."""
    with Memory.open(home.root) as memory:
        trusted = memory.remember(TRUSTED, source="ops:1", now=T0).record_id
    with Memory.open(home.root, taint=["external"], source_kind="web") as session:
        tainted = session.remember(ATTACK, source="web:1", now=at(1)).record_id
    with Memory.open(home.root) as memory:
        assert not memory.maintenance.consolidate(now=SOON).proposals, "consolidate never pairs them itself"
        return trusted, tainted, file_merge(memory, tainted, trusted)


def test_a_merge_with_a_tainted_near_duplicate_keeps_the_trusted_text(home: Home) -> None:
    trusted, tainted, merge = seeded(home)
    with Memory.open(home.root) as memory:
        merged = revalidate(memory.store, merge, now=SOON)[0]
    assert merged.body == TRUSTED, "the attacker's newer, longer text never wins a merge"
    assert merged.taint == ("external",), "the merge keeps the taint of what it folded in"
    assert set(merged.evidence) == {trusted, tainted}


def test_the_merge_says_in_words_that_tainted_text_would_replace_a_reviewed_record(home: Home) -> None:
    trusted, _, merge = seeded(home)
    with Memory.open(home.root) as memory:
        concern = memory.proposals.trust_warning(merge)
    assert concern is not None and concern.startswith(REPLACES + ": ")
    assert f"(taint: external) would supersede {trusted}" in concern


def test_accept_all_never_applies_it_and_the_trusted_record_stays_in_memory_md(home: Home) -> None:
    trusted, _, merge = seeded(home)
    with Memory.open(home.root) as memory:
        outcome = memory.proposals.accept(everything=True, now=SOON)
        assert merge.id not in outcome.done
        (reason,) = [r for i, r in outcome.refused if i == merge.id]
        assert reason.startswith(REPLACES) and "--all never applies it" in reason
        assert memory.get(trusted).state is State.ACTIVE
        assert [p.id for p in memory.proposals.pending()] == [merge.id]
    render(home)
    assert TRUSTED in (home.root / "MEMORY.md").read_text("utf-8")


def test_accepting_it_by_name_needs_the_approve_grant_and_keeps_the_taint(home: Home) -> None:
    trusted, tainted, merge = seeded(home)
    with Memory.open(home.root, actor="agent:bot") as bot, pytest.raises(AuthorityError):
        bot.proposals.accept([merge.id], now=SOON)
    with Memory.open(home.root, taint=["external"]) as steered:
        refused = steered.proposals.accept([merge.id], now=SOON)
        assert refused.done == []
        assert "a tainted session (external) may not accept it" in refused.refused[0][1]
    with Memory.open(home.root) as memory:
        outcome = memory.proposals.accept([merge.id], now=SOON)
        assert outcome.done == [merge.id]
        merged = memory.get(outcome.written[0].id)
        assert merged.taint == ("external",) and merged.body == TRUSTED
        assert memory.get(trusted).superseded_by == merged.id
        assert memory.get(tainted).superseded_by == merged.id
    render(home)
    hot = (home.root / "MEMORY.md").read_text("utf-8")
    assert merged.id not in hot, "the merged record is quarantined until a person approves it"


def test_a_dispute_with_a_tainted_record_is_named_as_displacing_the_reviewed_one(home: Home) -> None:
    with Memory.open(home.root) as memory:
        trusted = memory.remember("The staging database is Postgres 16", source="ops:1", now=T0).record_id
    with Memory.open(home.root, taint=["external"]) as session:
        session.remember("The staging database is Postgres 15", source="web:1", now=at(1))
    with Memory.open(home.root) as memory:
        (dispute,) = memory.maintenance.consolidate(now=SOON).proposals
        concern = memory.proposals.trust_warning(dispute)
        assert dispute.action == "transition"
        assert concern is not None and concern.startswith(DISPLACES + ": ")
        assert f"would put {trusted} in dispute (it leaves MEMORY.md)" in concern
        assert dispute.id in dict(memory.proposals.accept(everything=True, now=SOON).refused)
        assert memory.get(trusted).state is State.ACTIVE


def test_a_merge_of_two_untainted_records_raises_no_concern_and_accept_all_applies_it(home: Home) -> None:
    with Memory.open(home.root) as memory:
        memory.remember(TRUSTED, source="ops:1", now=T0)
        memory.remember(ATTACK, source="ops:2", now=at(1))
        (merge,) = memory.maintenance.consolidate(now=SOON).proposals
        assert memory.proposals.trust_warning(merge) is None
        assert memory.proposals.accept(everything=True, now=SOON).done == [merge.id]

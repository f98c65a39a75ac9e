"""A person's no is remembered: a reverted or declined proposal is not filed again; a revert keeps sources."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from jobkit import T0, at, make, put

from agent_memory.home import Home
from agent_memory.jobs.consolidate import consolidate
from agent_memory.jobs.pending import ConsolidationReport, PendingProposal, Rejection, basis_of
from agent_memory.jobs.verdicts import Refusals
from agent_memory.log.inmemory import MemoryLog
from agent_memory.memory import Memory
from agent_memory.records.record import MemoryRecord, State
from agent_memory.stores.inmemory import InMemoryStore

SOON, LATER, LATEST = at(days=1), at(days=2), at(days=4)
LEMON = "Ada prefers green tea in the morning with lemon"
HONEY = "Ada prefers green tea in the morning with honey"
SOURCES = {LEMON: "docs/cli.md#L444-L455", HONEY: "docs/cli.md#L460-L470"}
NEAR = "dedup.near"
COMMAND = shutil.which("agent-memory", path=str(Path(sys.executable).parent))


def seeded(home: Home) -> tuple[Memory, dict[str, PendingProposal]]:
    """A merge proposal (tea, two sources) and a state proposal (host), filed by a consolidation run."""
    memory = Memory.open(home.root)
    for text, source in SOURCES.items():
        memory.remember(text, source=source, now=T0)
    put(
        home,
        make("staging runs on host a", ref="s:a", kind="state", subject="host:staging", valid_from=at(0)),
        make(
            "staging runs on host b",
            ref="s:b",
            kind="state",
            subject="host:staging",
            valid_from=at(2),
            hours=1,
        ),
    )
    report = memory.maintenance.consolidate(now=SOON)
    return memory, {p.pass_name: p for p in report.proposals}


def of_pass(items: Iterable[Rejection], pass_name: str) -> list[Rejection]:
    return [r for r in items if r.pass_name == pass_name]


def proposed(report: ConsolidationReport, pass_name: str) -> list[PendingProposal]:
    return [p for p in report.proposals if p.pass_name == pass_name]


def rewritten(memory: Memory, record_id: str) -> MemoryRecord:
    """Write a next version of ``record_id`` (a lower confidence): the record changed since."""
    # Signed by the Home, as its own writes are: an unsigned version of its record never verifies.
    changed = memory.writer.sign(memory.get(record_id).evolve(confidence=0.7, updated_at=LATEST))
    memory.store.put(changed)
    return changed


def test_a_reverted_merge_restores_each_source_and_is_not_proposed_again_until_a_record_changes(
    home: Home,
) -> None:
    memory, filed = seeded(home)
    merge = filed["dedup.near"]
    memory.proposals.accept([merge.id], now=LATER)
    outcome = memory.proposals.revert(merge.id, reason="the two texts said different things", now=at(days=3))
    copies = {v.id: v for v in outcome.written if v.state is State.ACTIVE and v.id not in merge.record_ids}
    assert {c.body: c.provenance.ref for c in copies.values()} == SOURCES
    for copy in copies.values():
        assert copy.provenance.kind == memory.get(merge.record_ids[0]).provenance.kind
        assert copy.state_reason is not None and merge.id in copy.state_reason
    again = memory.maintenance.consolidate(now=LATEST)
    assert [p.pass_name for p in again.proposals] == ["state"]  # the undecided one only
    (refused,) = of_pass(again.rejections, "dedup.near")
    assert refused.detail.startswith(f"reverted by a person ({merge.id}, seq ")
    assert refused.record_ids == tuple(sorted(copies))
    rewritten(memory, sorted(copies)[0])  # a record changed: the person may be asked again
    (merge_again,) = proposed(memory.maintenance.consolidate(now=LATEST), "dedup.near")
    assert merge_again.record_ids == tuple(sorted(copies)) and merge_again.id != merge.id


def test_a_declined_proposal_is_not_filed_again_while_its_records_are_unchanged(home: Home) -> None:
    memory, filed = seeded(home)
    state, merge = filed["state"], filed["dedup.near"]
    memory.proposals.decline([state.id], reason="keep both for now", now=LATER)
    again = memory.maintenance.consolidate(now=LATER)
    assert [p.id for p in again.proposals] == [merge.id]  # undecided: filed again, same id
    (refused,) = of_pass(again.rejections, "state")
    assert refused.detail.startswith(f"declined by a person as {state.id} (seq ")
    assert refused.record_ids == state.record_ids
    rewritten(memory, state.record_ids[0])
    (state_again,) = proposed(memory.maintenance.consolidate(now=LATEST), "state")
    assert state_again.record_ids == state.record_ids and state_again.id != state.id


def test_a_reverted_state_supersede_is_not_proposed_again_over_the_same_records(home: Home) -> None:
    memory, filed = seeded(home)
    state = filed["state"]
    memory.proposals.accept([state.id], now=LATER)
    outcome = memory.proposals.revert(state.id, now=at(days=3))
    (copy_id,) = {v.id for v in outcome.written if v.id not in state.record_ids}
    copy = memory.store.get(copy_id)
    assert copy.provenance.ref == "s:a" and copy.body == "staging runs on host a"
    # The newer value stays: the restored one disputes it, never two active values of one subject.
    assert copy.state is State.TRANSITIONAL and copy.transition is not None
    (rival,) = [side for side in copy.transition.sides if side != copy_id]
    assert memory.store.get(rival).state is State.TRANSITIONAL
    assert not [r for r in memory.store.list(state=State.ACTIVE) if r.subject == copy.subject]
    again = memory.maintenance.consolidate(now=LATEST)
    assert "state" not in {p.pass_name for p in again.proposals}


def test_refusals_read_the_log_only_from_the_records_write_time_and_each_entry_once() -> None:
    log = MemoryLog()
    for n in range(120):  # a long history before the records were written
        log.append("put", actor="owner", record_ids=[f"mem:{n:032x}"], now=T0)
    store = InMemoryStore()
    a, b = make(LEMON, hours=24), make(HONEY, hours=24)
    store.put(a)
    store.put(b)
    (merge,) = consolidate(store, now=at(days=1, hours=1)).proposals
    details = {"verdict": "declined", "proposal_id": merge.id, "pass": merge.pass_name, "reason": ""}
    log.append("review", actor="owner", record_ids=merge.record_ids, details=details, now=at(days=2))
    refusals = Refusals(log)
    again = consolidate(store, now=at(days=3), refused=refusals.refusal)
    assert again.proposals == [] and again.rejections[0].detail.startswith(
        f"declined by a person as {merge.id}"
    )
    assert refusals.reads == 1  # only the decline: it is the one event since the records were written
    assert refusals.refusal(merge, T0) is not None
    assert refusals.reads == 121  # the earlier stretch, once; nothing read twice
    other = PendingProposal("decay", "archive", "old", (a.id,), {a.id: basis_of(a)}, at(days=3))
    assert refusals.refusal(other, T0) is None and refusals.reads == 121
    quiet = Refusals(log)
    consolidate(InMemoryStore(), now=at(days=3), refused=quiet.refusal)
    assert quiet.reads == 0  # no proposal, no log read


def test_the_cli_revert_keeps_sources_and_the_next_consolidate_does_not_merge_again(tmp_path: Path) -> None:
    assert COMMAND, "the agent-memory command is not installed next to this Python"
    env = {k: v for k, v in os.environ.items() if k != "AGENT_MEMORY_HOME"}

    def run(*args: str) -> str:
        done = subprocess.run(
            [COMMAND, *args], capture_output=True, text=True, env=env, check=False, timeout=120
        )
        assert done.returncode == 0, done.stderr + done.stdout
        return done.stdout

    root = str(tmp_path / "cli-home")
    run("init", root, "--no-git")
    for text, source in SOURCES.items():
        run("remember", text, "--source", source, "--home", root)
    (proposal,) = json.loads(run("consolidate", "--home", root, "--json"))["proposals"]
    run("accept", proposal["id"], "--home", root)
    reverted = json.loads(
        run(
            "revert",
            proposal["id"],
            "--home",
            root,
            "--reason",
            "the two texts said different things",
            "--json",
        )
    )
    shown = [json.loads(run("show", i, "--home", root, "--json")) for i in reverted["written"]]
    copies = [r for r in shown if r["state"] == "active"]
    assert {r["body"]: r["provenance"]["ref"] for r in copies} == SOURCES
    again = json.loads(run("consolidate", "--home", root, "--json"))
    assert again["proposals"] == []
    (refused,) = again["rejections"]
    assert refused["pass"] == NEAR
    assert refused["detail"].startswith(f"reverted by a person ({proposal['id']}")
    assert sorted(refused["record_ids"]) == sorted(r["id"] for r in copies)
    assert json.loads(run("proposals", "--home", root, "--json"))["proposals"] == []

"""Maintenance branches: proposals and their versions committed in a worktree, the live Home untouched."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import pytest
from jobkit import T0, ZONE, at, signed_by

from agent_memory.errors import ProposalError
from agent_memory.home import Home
from agent_memory.jobs.branches import VERSIONS_FOLDER, branch_name, commit_maintenance_branch
from agent_memory.jobs.pending import PENDING_FOLDER, PendingProposal, revalidate
from agent_memory.memory import Memory

GIT = shutil.which("git") or "git"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(root: Path, *args: str) -> str:
    return subprocess.run([GIT, *args], cwd=root, capture_output=True, text=True, check=True).stdout


def filed(home: Home) -> tuple[Memory, list[PendingProposal]]:
    memory = Memory.open(home.root)
    memory.remember("Ada prefers green tea in the morning with lemon", source="s:1", now=T0)
    memory.remember("Ada prefers green tea in the morning with honey", source="s:2", now=T0)
    return memory, memory.maintenance.consolidate(now=at(days=1), branch=False).proposals


def test_the_branch_name_is_the_utc_stamp_without_colons() -> None:
    assert branch_name(at(hours=1.5)) == "maintenance/20261129T160000Z"
    with pytest.raises(ProposalError, match="naive"):
        branch_name(datetime(2026, 11, 29))


def test_proposals_and_their_versions_are_committed_on_a_branch_the_live_home_never_switches_to(
    tmp_path: Path,
) -> None:
    home = Home.init(tmp_path / "home", timezone=ZONE, git=True, now=T0)
    memory, pending = filed(home)
    head, status = git(home.root, "rev-parse", "HEAD"), git(home.root, "status", "--porcelain")
    branch = commit_maintenance_branch(home.root, memory.store, pending, now=at(days=1))
    assert branch == "maintenance/20261130T143000Z"
    assert git(home.root, "symbolic-ref", "--short", "HEAD").strip() == "main"
    assert git(home.root, "rev-parse", "HEAD") == head
    assert git(home.root, "status", "--porcelain") == status
    assert len(git(home.root, "worktree", "list").splitlines()) == 1
    (proposal,) = pending
    shown = git(home.root, "show", f"{branch}:{VERSIONS_FOLDER}/{proposal.id}.json")
    wires = json.loads(shown)["versions"]
    assert wires == [v.to_wire() for v in revalidate(memory.store, proposal, now=at(days=1))]
    on_branch = json.loads(git(home.root, "show", f"{branch}:{PENDING_FOLDER}/{proposal.id}.json"))
    assert on_branch == proposal.to_json()
    merged = subprocess.run([GIT, "merge-base", "--is-ancestor", branch, "main"], cwd=home.root, check=False)
    assert merged.returncode == 1  # kept for audit, never merged
    assert head.strip() in git(home.root, "rev-list", branch)
    with pytest.raises(ProposalError, match="already exists"):
        commit_maintenance_branch(home.root, memory.store, pending, now=at(days=1))


def test_a_home_that_is_not_a_git_repository_gets_no_branch(home: Home) -> None:
    memory, pending = filed(home)
    assert pending
    assert commit_maintenance_branch(home.root, memory.store, pending, now=at(days=1)) is None
    assert not (home.root / ".git").exists()


def test_distill_then_consolidate_in_one_second_commit_two_branches(tmp_path: Path) -> None:
    from agent_memory.jobs.archive import archive_inbox
    from agent_memory.jobs.inbox import capture

    home = Home.init(tmp_path / "home", timezone=ZONE, git=True, now=T0)
    capture(home, "Bo keeps the release checklist in the wiki", source="chat:1", at=T0)
    archive_inbox(home, now=at(hours=1))
    memory, _ = filed(home)
    distilled = memory.maintenance.distill(now=at(days=1))
    consolidated = memory.maintenance.consolidate(now=at(days=1))
    assert distilled.branch == "maintenance/20261130T143000Z"
    assert consolidated.branch == "maintenance/20261130T143000Z-2"
    (proposal,) = distilled.proposals
    shown = json.loads(git(home.root, "show", f"{distilled.branch}:{PENDING_FOLDER}/{proposal.id}.json"))
    assert shown["anchors"] == ["archive/2026-11-29.md#mem-2026-11-29-001"]
    assert git(home.root, "symbolic-ref", "--short", "HEAD").strip() == "main"
    events = [e.details for e in memory.log.entries() if e.action in ("distill", "consolidate")]
    assert [e["branch"] for e in events[-2:]] == [distilled.branch, consolidated.branch]


def test_accept_and_revert_read_a_proposal_from_its_branch_when_the_live_file_is_gone(tmp_path: Path) -> None:

    home = Home.init(tmp_path / "home", timezone=ZONE, git=True, now=T0)
    memory = Memory.open(home.root)
    memory.remember("Ada prefers green tea in the morning with lemon", source="s:1", now=T0)
    memory.remember("Ada prefers green tea in the morning with honey", source="s:2", now=T0)
    report = memory.maintenance.consolidate(now=at(days=1))
    (proposal,) = report.proposals
    assert report.branch is not None
    (home.root / PENDING_FOLDER / f"{proposal.id}.json").unlink()
    assert [p.id for p in memory.proposals.pending()] == [proposal.id]
    expected = signed_by(memory.identity, revalidate(memory.store, proposal, now=at(days=2)))
    outcome = memory.proposals.accept([proposal.id], now=at(days=2))
    assert outcome.done == [proposal.id] and outcome.written == expected
    assert memory.proposals.revert(proposal.id, now=at(days=3)).done == [proposal.id]

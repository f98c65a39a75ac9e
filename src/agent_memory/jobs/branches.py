"""Maintenance branches: pending proposals and the versions they would add, committed for audit.

DESIGN.md §9 "Maintenance branches" (seed 003: jobs only propose, on a branch): a run's
proposals are committed on a git branch ``maintenance/<UTC stamp>`` (``20261129T160000Z``, no
colons), built in a temporary ``git worktree`` so the live Home never changes branch and its
working tree is not touched. The commit holds, per proposal, its file
``proposals/pending-consolidation/<id>.json`` and ``proposals/maintenance-versions/<id>.json``:
``{"proposal": id, "versions": [wire records]}`` as :func:`~agent_memory.jobs.pending.revalidate`
returns them at ``now``, or ``{"proposal": id, "problem": reason}`` when it is already stale. The branch
is kept and never merged; ``accept`` applies proposals on the live Home through the gate.

A Home that is not a git repository (or a machine without git) gets no branch: the flow stays
in ``proposals/`` (:func:`commit_maintenance_branch` returns ``None``). Two runs in one second
(``distill`` then ``consolidate`` from a script) may ask for a free name: ``…Z-2``, ``…Z-3``.
:func:`branch_proposals` reads the proposals back from every maintenance branch, so ``accept``
still finds one whose live file under ``proposals/`` was lost.

Invariant: the live Home's branch, index and working tree are never changed; the temporary
worktree is removed whatever happens (the branch stays only when its commit was made).
Note: the version files hold record bodies in git history; erasing such content later
needs the branch deleted by hand (erasure does not rewrite git history).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from agent_memory.errors import AgentMemoryError, ConfigError, ProposalError
from agent_memory.jobs.pending import PENDING_FOLDER, PendingProposal, is_proposal_id, revalidate
from agent_memory.stores.base import RecordStore

__all__ = [
    "BRANCH_PREFIX",
    "VERSIONS_FOLDER",
    "branch_name",
    "branch_proposals",
    "commit_maintenance_branch",
    "current_branch",
    "is_git_home",
]

BRANCH_PREFIX = "maintenance/"
VERSIONS_FOLDER = Path("proposals") / "maintenance-versions"


def branch_name(now: datetime) -> str:
    """Return ``maintenance/YYYYMMDDTHHMMSSZ`` for an aware time (converted to UTC).

    Raises:
        ProposalError: ``now`` is naive (field ``now``).
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise ProposalError("naive datetime: a time zone is required", field="now")
    return BRANCH_PREFIX + now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    git = shutil.which("git") or "git"
    return subprocess.run(  # noqa: S603 - fixed git arguments, no shell
        [git, *args], cwd=root, capture_output=True, text=True, check=False
    )


def _run(root: Path, *args: str) -> str:
    done = _git(root, *args)
    if done.returncode != 0:
        raise ConfigError(f"git {args[0]} failed: {done.stderr.strip()}", path=str(root))
    return done.stdout


def is_git_home(root: Path) -> bool:
    """Return whether ``root`` is a git repository with a commit and git is installed."""
    if shutil.which("git") is None or not (root / ".git").exists():
        return False
    return _git(root, "rev-parse", "--verify", "-q", "HEAD").returncode == 0


def current_branch(root: Path) -> str | None:
    """Return the branch the Home's working tree is on, or ``None`` (no git Home, detached HEAD)."""
    if not is_git_home(root):
        return None
    done = _git(root, "symbolic-ref", "-q", "--short", "HEAD")
    return done.stdout.strip() or None if done.returncode == 0 else None


def _exists(root: Path, branch: str) -> bool:
    return _git(root, "rev-parse", "--verify", "-q", f"refs/heads/{branch}").returncode == 0


def commit_maintenance_branch(
    root: Path,
    store: RecordStore,
    proposals: Sequence[PendingProposal],
    *,
    now: datetime,
    next_free: bool = False,
) -> str | None:
    """Commit ``proposals`` and the versions they would add on a new ``maintenance/<stamp>`` branch.

    Args:
        root: The Home folder.
        store: The Home's store (the versions are computed against its current records).
        proposals: The run's pending proposals (nothing is committed for an empty list).
        now: The run's time (aware); it names the branch.
        next_free: When the name is taken, use ``<name>-2``, ``<name>-3`` … instead of refusing.

    Returns:
        The branch name, or ``None`` when ``root`` is not a git repository with a commit,
        git is not installed, or there is nothing to commit.

    Raises:
        ProposalError: The branch already exists (named; without ``next_free``), or ``now``
            is naive.
        ConfigError: A git command failed (its message); the live Home is unchanged.
    """
    branch = branch_name(now)
    if not proposals or not is_git_home(root):
        return None
    if _exists(root, branch):
        if not next_free:
            raise ProposalError(f"the maintenance branch {branch} already exists", field="branch")
        branch = next(f"{branch}-{n}" for n in range(2, 10_000) if not _exists(root, f"{branch}-{n}"))
    scratch = Path(tempfile.mkdtemp(prefix="agent-memory-maintenance-"))
    tree = scratch / "worktree"
    try:
        _run(root, "worktree", "add", "-q", "-b", branch, str(tree), "HEAD")
        try:
            _fill(tree, store, proposals, now)
            _run(tree, "add", "--", str(PENDING_FOLDER), str(VERSIONS_FOLDER))
            identity: list[str] = []
            if not _git(tree, "config", "user.email").stdout.strip():
                identity = ["-c", "user.name=agent-memory", "-c", "user.email=agent-memory@localhost"]
            _run(tree, *identity, "commit", "-q", "-m", f"maintenance: {len(proposals)} proposals for review")
        except BaseException:
            _git(root, "worktree", "remove", "--force", str(tree))
            _git(root, "branch", "-D", branch)
            raise
        _run(root, "worktree", "remove", "--force", str(tree))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        _git(root, "worktree", "prune")
    return branch


def _fill(tree: Path, store: RecordStore, proposals: Sequence[PendingProposal], now: datetime) -> None:
    versions = tree / VERSIONS_FOLDER
    versions.mkdir(parents=True, exist_ok=True)
    for pending in proposals:
        pending.write(tree / PENDING_FOLDER)
        entry: dict[str, object] = {"proposal": pending.id}
        try:
            entry["versions"] = [v.to_wire() for v in revalidate(store, pending, now=now)]
        except AgentMemoryError as exc:
            entry["problem"] = str(exc)
        text = json.dumps(entry, ensure_ascii=False, sort_keys=True, indent=2) + "\n"
        (versions / f"{pending.id}.json").write_text(text, encoding="utf-8")


def branch_proposals(root: Path) -> dict[str, PendingProposal]:
    """Return ``{id: proposal}`` for every proposal file on a ``maintenance/*`` branch (oldest branch wins).

    Returns ``{}`` when ``root`` is not a git repository. A file that does not parse is left
    out (the live folder's reader reports such files).

    Raises:
        ConfigError: A git command failed.
    """
    if not is_git_home(root):
        return {}
    refs = _run(root, "for-each-ref", "--format=%(refname:short)", f"refs/heads/{BRANCH_PREFIX}")
    found: dict[str, PendingProposal] = {}
    for branch in sorted(refs.split()):
        listing = _git(root, "ls-tree", "--name-only", f"{branch}:{PENDING_FOLDER.as_posix()}")
        for name in listing.stdout.split() if listing.returncode == 0 else []:
            proposal_id = name.removesuffix(".json")
            if proposal_id in found or not is_proposal_id(proposal_id):
                continue
            shown = _git(root, "show", f"{branch}:{PENDING_FOLDER.as_posix()}/{name}")
            try:
                found[proposal_id] = PendingProposal.from_json(
                    json.loads(shown.stdout), path=f"{branch}:{name}"
                )
            except (ValueError, AgentMemoryError):
                continue
    return found

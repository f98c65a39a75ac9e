"""``agent-memory consolidate`` run as a user runs it: every change a filed proposal; accept applies."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from installed import T0, Cli, snapshot

from agent_memory.home import Home
from agent_memory.jobs.pending import PENDING_FOLDER, load_pending
from agent_memory.records.record import MemoryRecord, Provenance
from signing_store import signing_store


@pytest.fixture
def home(cli: Cli) -> Path:
    """A Home with a slot contradiction and a near-duplicate pair (notes written as ``remember`` would)."""
    path = cli.root / "home"
    cli.ok("init", str(path), "--no-git")
    store = signing_store(Home.open(path))
    for n, text in enumerate(
        [
            "The staging database is Postgres 16",
            "The staging database is Postgres 15",
            "Ada prefers green tea in the morning with lemon",
            "Ada prefers green tea in the morning with honey",
        ]
    ):
        store.put(
            MemoryRecord.create(
                type="fact", body=text, provenance=Provenance("cli", f"test:{n}"), created_at=T0
            )
        )
    return path


def notes_and_proposals(home: Path) -> dict[str, bytes]:
    """What consolidation may change (``.cache/`` is derived index bookkeeping, touched on open)."""
    return {k: v for k, v in snapshot(home).items() if not k.startswith(".cache/")}


def notes(home: Path) -> dict[str, bytes]:
    return {k: v for k, v in snapshot(home).items() if k.startswith("notes/")}


def test_consolidate_files_the_dispute_and_the_merge_and_accept_opens_the_dispute(
    cli: Cli, home: Path
) -> None:
    before = notes(home)
    report = json.loads(cli.ok("consolidate", "--home", str(home), "--json"))
    assert report["actions"] == []
    assert sorted((p["pass"], p["action"]) for p in report["proposals"]) == [
        ("contradiction", "transition"),
        ("dedup.near", "merge"),
    ]
    filed = load_pending(home / PENDING_FOLDER)
    assert sorted(p.id for p in filed) == sorted(p["id"] for p in report["proposals"])
    assert notes(home) == before, "a maintenance job changes no note (DESIGN.md §9)"
    shown = json.loads(cli.ok("status", "--home", str(home), "--json"))
    assert shown["open_disputes"] == 0 and shown["by_state"] == {"active": 4}
    (dispute,) = [p["id"] for p in report["proposals"] if p["action"] == "transition"]
    cli.ok("accept", dispute, "--home", str(home))
    shown = json.loads(cli.ok("status", "--home", str(home), "--json"))
    assert shown["open_disputes"] == 1 and shown["by_state"] == {"active": 2, "transitional": 2}


def test_consolidate_dry_run_changes_no_file(cli: Cli, home: Path) -> None:
    before = notes_and_proposals(home)
    out = cli.ok("consolidate", "--dry-run", "--home", str(home))
    assert "would propose contradiction" in out and "would propose dedup.near" in out
    assert "nothing applied" in out
    assert notes_and_proposals(home) == before


def _git(root: Path, *args: str) -> str:
    git = shutil.which("git") or "git"
    return subprocess.run([git, *args], cwd=root, capture_output=True, text=True, check=True).stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_consolidate_in_a_git_home_commits_no_note_on_main_and_proposes_on_a_branch(cli: Cli) -> None:
    # issue 19 item 4, as reported: the dispute pair used to be committed on main.
    path = cli.root / "githome"
    cli.ok("init", str(path))
    yes = cli.ok("remember", "Deploys happen on Tuesdays", "--home", str(path)).strip()
    no = cli.ok("remember", "Deploys do not happen on Tuesdays", "--home", str(path)).strip()
    head = _git(path, "rev-parse", "HEAD").strip()
    report = json.loads(cli.ok("consolidate", "--home", str(path), "--json"))
    assert [(p["pass"], p["action"]) for p in report["proposals"]] == [("contradiction", "transition")]
    assert report["branch"] and report["branch"].startswith("maintenance/")
    assert _git(path, "symbolic-ref", "--short", "HEAD").strip() != report["branch"]
    changed = _git(path, "diff", "--name-only", head, "HEAD").split()
    assert changed and not [c for c in changed if c.startswith("notes/")], changed
    on_branch = _git(path, "ls-tree", "-r", "--name-only", report["branch"]).split()
    assert f"{PENDING_FOLDER.as_posix()}/{report['proposals'][0]['id']}.json" in on_branch
    for record_id in (yes, no):
        shown = json.loads(cli.ok("show", record_id, "--home", str(path), "--json"))
        assert shown["state"] == "active"
    cli.ok("accept", report["proposals"][0]["id"], "--home", str(path))
    for record_id in (yes, no):
        shown = json.loads(cli.ok("show", record_id, "--home", str(path), "--json"))
        assert shown["state"] == "transitional"
    assert [c for c in _git(path, "diff", "--name-only", "HEAD~1", "HEAD").split() if c.startswith("notes/")]


def test_consolidate_outside_a_home_fails_with_one_line(cli: Cli) -> None:
    result = cli("consolidate", "--home", str(cli.root / "nowhere"))
    assert result.returncode == 3
    assert result.stderr.startswith("agent-memory: error:")

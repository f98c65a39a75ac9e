"""``agent-memory consolidate`` run as a user runs it: applied passes, filed proposals, dry runs."""

import json
from pathlib import Path

import pytest
from installed import T0, Cli, snapshot

from agent_memory.home import Home
from agent_memory.jobs.pending import PENDING_FOLDER, load_pending
from agent_memory.records.record import MemoryRecord, Provenance


@pytest.fixture
def home(cli: Cli) -> Path:
    """A Home with a slot contradiction and a near-duplicate pair (notes written as ``remember`` would)."""
    path = cli.root / "home"
    cli.ok("init", str(path), "--no-git")
    store = Home.open(path).store()
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


def test_consolidate_opens_the_dispute_and_files_the_merge_for_review(cli: Cli, home: Path) -> None:
    report = json.loads(cli.ok("consolidate", "--home", str(home), "--json"))
    assert [(a["pass"], a["action"], a["after"]) for a in report["actions"]] == [
        ("contradiction", "transition", ["transitional", "transitional"])
    ]
    assert [(p["pass"], p["action"]) for p in report["proposals"]] == [("dedup.near", "merge")]
    filed = load_pending(home / PENDING_FOLDER)
    assert [p.id for p in filed] == [report["proposals"][0]["id"]]
    shown = json.loads(cli.ok("status", "--home", str(home), "--json"))
    assert shown["open_disputes"] == 1 and shown["by_state"] == {"active": 2, "transitional": 2}


def test_consolidate_dry_run_changes_no_file(cli: Cli, home: Path) -> None:
    before = notes_and_proposals(home)
    out = cli.ok("consolidate", "--dry-run", "--home", str(home))
    assert "would apply  contradiction" in out and "proposed     dedup.near" in out
    assert notes_and_proposals(home) == before


def test_consolidate_outside_a_home_fails_with_one_line(cli: Cli) -> None:
    result = cli("consolidate", "--home", str(cli.root / "nowhere"))
    assert result.returncode == 3
    assert result.stderr.startswith("agent-memory: error:")

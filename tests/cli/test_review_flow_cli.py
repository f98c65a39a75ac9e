"""``agent-memory proposals / accept / decline / revert`` run as a user runs them, and the regret rate."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from installed import T0, Cli, snapshot

from agent_memory.home import Home
from agent_memory.records.lifecycle import archive
from agent_memory.records.record import MemoryRecord, Provenance
from signing_store import signing_store

LEMON = "Ada prefers green tea in the morning with lemon"
HONEY = "Ada prefers green tea in the morning with honey"


@pytest.fixture
def home(cli: Cli) -> Path:
    """A Home whose consolidation filed one near-duplicate merge proposal."""
    path = cli.root / "home"
    cli.ok("init", str(path), "--no-git")
    store = signing_store(Home.open(path))
    for n, text in enumerate([LEMON, HONEY]):
        store.put(
            MemoryRecord.create(
                type="fact", body=text, provenance=Provenance("cli", f"test:{n}"), created_at=T0
            )
        )
    cli.ok("consolidate", "--home", str(path))
    return path


def listed(cli: Cli, home: Path) -> dict[str, object]:
    result: dict[str, object] = json.loads(cli.ok("proposals", "--home", str(home), "--json"))
    return result


def maintenance(cli: Cli, home: Path) -> dict[str, object]:
    shown: dict[str, object] = json.loads(cli.ok("status", "--home", str(home), "--json"))["maintenance"]
    return shown


def test_proposals_shows_a_table_and_the_diff_of_the_versions_it_would_add(cli: Cli, home: Path) -> None:
    (row,) = listed(cli, home)["proposals"]  # type: ignore[misc]
    assert (row["pass"], row["action"], row["valid"]) == ("dedup.near", "merge", True)
    assert f'+body: "{LEMON}"' in row["diff"] or f'+body: "{HONEY}"' in row["diff"]
    text = cli.ok("proposals", "--home", str(home))
    assert text.splitlines()[0].split() == ["id", "pass", "action", "valid", "records"]
    assert f"=== {row['id']}" in text and "1 pending; 0 accepted" in text


def test_accept_then_revert_makes_the_regret_rate_one(cli: Cli, home: Path) -> None:
    (row,) = listed(cli, home)["proposals"]  # type: ignore[misc]
    out = cli.ok("accept", row["id"], "--home", str(home))
    assert out.startswith(f"accepted  {row['id']}")
    assert maintenance(cli, home) == {"accepted": 1, "declined": 0, "reverted": 0, "regret_rate": 0.0}
    again = cli("accept", row["id"], "--home", str(home))
    assert again.returncode == 1 and "was already decided" in again.stdout
    reverted = json.loads(cli.ok("revert", row["id"], "--home", str(home), "--json"))
    assert reverted["done"] == [row["id"]] and len(reverted["written"]) == 3
    assert maintenance(cli, home)["regret_rate"] == 1.0
    assert "reverted (regret rate 1.00)" in cli.ok("status", "--home", str(home))
    log = (home / "log.jsonl").read_text(encoding="utf-8") if (home / "log.jsonl").exists() else ""
    assert LEMON not in log and HONEY not in log


def test_a_stale_proposal_is_refused_by_accept_and_nothing_changes(cli: Cli, home: Path) -> None:
    (row,) = listed(cli, home)["proposals"]  # type: ignore[misc]
    store = signing_store(Home.open(home))
    target = row["record_ids"][0]
    store.put(archive(store.get(target), "changed meanwhile", now=T0.replace(month=2)))
    assert listed(cli, home)["proposals"][0]["valid"] is False  # type: ignore[index]
    before = {k: v for k, v in snapshot(home).items() if not k.startswith(".cache/")}
    result = cli("accept", "--all", "--home", str(home))
    assert result.returncode == 1
    assert result.stdout.startswith(f"refused   {row['id']}: {target}: stale proposal")
    assert "changed since the proposal was made" in result.stdout
    assert {k: v for k, v in snapshot(home).items() if not k.startswith(".cache/")} == before


def test_decline_writes_only_the_verdict_and_needs_ids_or_all(cli: Cli, home: Path) -> None:
    usage = cli("decline", "--home", str(home))
    assert usage.returncode == 2 and "--all" in usage.stderr
    notes = {k: v for k, v in snapshot(home).items() if k.startswith("notes/")}
    out = cli.ok("decline", "--all", "--reason", "not now", "--home", str(home))
    assert out.startswith("declined")
    assert {k: v for k, v in snapshot(home).items() if k.startswith("notes/")} == notes
    assert listed(cli, home)["proposals"] == []
    assert maintenance(cli, home) == {"accepted": 0, "declined": 1, "reverted": 0, "regret_rate": None}


def test_proposals_branch_commits_them_on_a_maintenance_branch_of_a_git_home(cli: Cli, home: Path) -> None:
    assert listed(cli, home)["branch"] is None
    assert json.loads(cli.ok("proposals", "--branch", "--json", "--home", str(home)))["branch"] is None
    git_home = cli.root / "git-home"
    cli.ok("init", str(git_home))
    store = signing_store(Home.open(git_home))
    for n, text in enumerate([LEMON, HONEY]):
        store.put(
            MemoryRecord.create(
                type="fact", body=text, provenance=Provenance("cli", f"test:{n}"), created_at=T0
            )
        )
    cli.ok("consolidate", "--home", str(git_home))
    shown = json.loads(cli.ok("proposals", "--branch", "--json", "--home", str(git_home)))
    assert re.fullmatch(r"maintenance/\d{8}T\d{6}Z(-\d+)?", shown["branch"])
    git = shutil.which("git") or "git"
    branches = subprocess.run(
        [git, "branch", "--list", "maintenance/*"], cwd=git_home, capture_output=True, text=True, check=True
    ).stdout
    assert shown["branch"] in branches


TRUSTED = "The nightly backup job copies the ledger database to the offsite bucket"
ATTACK = "The nightly backup job copies the ledger database to the offsite bucket daily"
WEB = ("--taint", "external", "--source", "web")


def test_a_tainted_record_never_displaces_the_trusted_one_through_accept_all(cli: Cli) -> None:
    # issue 20 item 5: a dispute consolidate proposes between a trusted and a tainted record.
    home = cli.home("dispute")
    trusted = cli.ok("remember", "The staging database is Postgres 16", "--home", str(home)).strip()
    cli.ok("remember", "The staging database is Postgres 15", *WEB, "--home", str(home))
    cli.ok("consolidate", "--home", str(home))
    (row,) = listed(cli, home)["proposals"]  # type: ignore[misc]
    assert (row["pass"], row["auto_applicable"]) == ("contradiction", False)
    assert row["trust"].startswith("tainted text would displace a reviewed record: ")
    assert f"would put {trusted} in dispute (it leaves MEMORY.md)" in row["trust"]
    assert "! tainted text would displace a reviewed record" in cli.ok("review", "--home", str(home))
    result = cli("accept", "--all", "--home", str(home))
    assert result.returncode == 1 and f"refused   {row['id']}: tainted text would displace" in result.stdout
    cli.ok("render", "--home", str(home))
    assert "Postgres 16" in (home / "MEMORY.md").read_text("utf-8")


def test_a_merge_into_a_trusted_record_is_named_shown_and_applied_only_by_id(cli: Cli) -> None:
    # issue 20 item 5, as reported: accept --all let a merged tainted record supersede the trusted one.
    from agent_memory.jobs.operators import merge_proposals
    from agent_memory.jobs.pending import PENDING_FOLDER, PendingProposal, basis_of

    home = cli.home("merge")
    trusted = cli.ok("remember", TRUSTED, "--source", "ops:1", "--home", str(home)).strip()
    tainted = cli.ok("remember", ATTACK, *WEB, "--home", str(home)).strip()
    store = signing_store(Home.open(home))
    a, b = store.get(tainted), store.get(trusted)
    merge = merge_proposals(a, b, 0.9, now=T0.replace(year=2027), threshold=0.6)
    PendingProposal(  # filed by an older run, or another operator: the review flow must hold it
        pass_name="dedup.near",  # noqa: S106 - a pass name, not a secret
        action="merge",
        reason=merge[0].reason,
        record_ids=tuple(sorted((a.id, b.id))),
        basis={r.id: basis_of(r) for r in (a, b)},
        made_at=T0.replace(year=2027),
        proposals=tuple(merge),
    ).write(home / PENDING_FOLDER)
    (row,) = listed(cli, home)["proposals"]  # type: ignore[misc]
    assert row["trust"].startswith("tainted text would replace a reviewed record: ")
    assert f"(taint: external) would supersede {trusted}" in row["trust"]
    table = cli.ok("proposals", "--home", str(home), "--no-diff")
    assert "! tainted text would replace a reviewed record" in table and "accept --all skips it" in table
    assert "! tainted text would replace a reviewed record" in cli.ok("review", "--home", str(home))
    result = cli("accept", "--all", "--home", str(home))
    assert result.returncode == 1 and f"refused   {row['id']}: tainted text would replace" in result.stdout
    cli.ok("render", "--home", str(home))
    assert TRUSTED in (home / "MEMORY.md").read_text("utf-8")
    accepted = json.loads(cli.ok("accept", row["id"], "--home", str(home), "--json"))
    merged = json.loads(cli.ok("show", accepted["written"][0], "--home", str(home), "--json"))
    assert merged["body"] == TRUSTED and merged["taint"] == ["external"]
    assert sorted(merged["evidence"]) == sorted([trusted, tainted])

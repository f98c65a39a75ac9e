import hashlib
import json
from pathlib import Path

import pytest
from installed import Cli, seed, snapshot

from agent_memory.home import Home


@pytest.fixture
def home(cli: Cli) -> Path:
    home = cli.home()
    opened = Home.open(home)
    seed(opened.store(), opened.identity())
    return home


def test_a_retrieval_outcome_and_feedback_round_trip_through_the_command(cli: Cli, home: Path) -> None:
    h = ("--home", str(home))
    ids = json.loads(cli.ok("recall", "staging tea", "--json", *h))["records"]
    tea = next(r["id"] for r in ids if "tea" in r["body"])
    notes_before = snapshot(home / "notes")
    retrieval = json.loads(
        cli.ok(
            "feedback",
            "retrieval",
            tea,
            "--query",
            "green tea?",
            "--task",
            "t-7",
            "--use-role",
            "constraint",
            "--json",
            *h,
        )
    )
    assert retrieval["memory_item_ids"] == [tea]
    assert retrieval["query_digest"] == "sha256:" + hashlib.sha256(b"green tea?").hexdigest()
    memret = retrieval["retrieval_id"]
    memout = cli.ok(
        "feedback", "outcome", "t-7", "failed", "--evidence", "ci:run-3", "--retrieval", memret, *h
    ).strip()
    memfb = cli.ok(
        "feedback",
        "attribute",
        "--retrieval",
        memret,
        "--outcome",
        memout,
        "--verdict",
        "misleading",
        "--confidence",
        "high",
        *h,
    ).strip()
    assert memret.startswith("memret-") and memout.startswith("memout-") and memfb.startswith("memfb-")
    listed = json.loads(cli.ok("feedback", "list", tea, "--json", *h))
    assert listed["tally"] == {"misleading": 1}
    (event,) = listed["events"]
    assert (event["event_id"], event["use_role"], event["basis"]) == (memfb, "constraint", "observed")
    assert cli.ok("feedback", "list", tea, *h).splitlines()[-1] == "misleading 1"
    assert snapshot(home / "notes") == notes_before
    assert "green tea?" not in "".join(p.read_text(encoding="utf-8") for p in (home / "log").glob("*.jsonl"))


def test_a_policy_proposal_is_written_for_review_and_listed(cli: Cli, home: Path) -> None:
    h = ("--home", str(home))
    conventions = (home / "conventions.md").read_bytes()
    proposal_id = cli.ok(
        "feedback",
        "propose",
        "--target",
        "retrieval-trigger:env",
        "--change",
        "Verify hosts live.",
        "--ref",
        "archive/2026-01-01.md#mem-2026-01-01-001",
        "--benefit",
        "Fewer stale actions.",
        "--risk",
        "Latency.",
        *h,
    ).strip()
    assert (home / "proposals" / f"{proposal_id}.yaml").is_file()
    (listed,) = json.loads(cli.ok("feedback", "proposals", "--json", *h))
    assert (listed["proposal_id"], listed["status"]) == (proposal_id, "pending-review")
    assert (home / "conventions.md").read_bytes() == conventions


def test_bad_feedback_is_one_line_and_exit_status_3_and_writes_nothing(cli: Cli, home: Path) -> None:
    h = ("--home", str(home))
    log_before = snapshot(home / "log")
    unknown = cli(
        "feedback", "attribute", "mem:" + "0" * 32, "--verdict", "helpful", "--confidence", "low", *h
    )
    assert unknown.returncode == 3
    assert (
        unknown.stderr.startswith("agent-memory: error: mem:0000") and len(unknown.stderr.splitlines()) == 1
    )
    spaced = cli("feedback", "outcome", "task one", "failed", *h)
    assert spaced.returncode == 3 and "task_id" in spaced.stderr
    usage = cli("feedback", "attribute", "--verdict", "great", "--confidence", "low", *h)
    assert usage.returncode == 2
    assert snapshot(home / "log") == log_before

"""Issue 19 cases 1, 2, 3 and 6 through the installed command.

A cut log is noticed; doctor after an erasure reports the level the Home reaches; deleting
``.cache/`` keeps recall the same; §21.3 reads the inbox.
"""

import json
import shutil
from pathlib import Path
from typing import Any

from installed import Cli

from agent_memory.memory import Memory


def cut_last_line(home: Path) -> None:
    (month,) = sorted((home / "log").glob("*.jsonl"))
    month.write_bytes(b"".join(month.read_bytes().splitlines(keepends=True)[:-1]))


def test_cutting_the_withdrawal_off_the_log_fails_log_verify_and_doctor(cli: Cli) -> None:
    home = str(cli.home())
    record = cli.ok(
        "remember", "The staging password rotates on Fridays.", "--source", "test", "--home", home
    )
    cli.ok("withdraw", "--record", record.strip(), "--reason", "failed-exploration", "--home", home)
    assert cli.ok("log", "--verify", "--home", home).startswith("log ok:")
    cut_last_line(Path(home))
    # The withdrawal is gone, so the record would come back: recall refuses instead, naming the cut.
    recall = cli("recall", "staging password", "--json", "--home", home)
    assert recall.returncode != 0 and record.strip() not in recall.stdout
    assert "entries were cut" in recall.stderr and "git checkout -- log/" in recall.stderr
    verify = cli("log", "--verify", "--home", home)
    assert verify.returncode == 1
    assert "log FAILED: " in verify.stderr and "its tail was cut" in verify.stderr
    assert "checkpoint file" in verify.stderr
    doctor = cli("doctor", "--json", "--home", home)
    assert doctor.returncode == 1
    report = json.loads(doctor.stdout)
    (log_check,) = [c for c in report["checks"] if c["name"] == "log"]
    assert log_check["status"] == "fail" and "its tail was cut" in log_check["details"][0]
    assert "recall, views and export expose no record" in log_check["details"][1]
    levels = {level["level"]: level for level in report["conformance"]["levels"]}
    assert not levels["memory:L1"]["met"] and "the operation log verifies" in levels["memory:L1"]["reason"]


def test_item_21_3_is_judged_on_the_inbox_the_seed_calls_memory_md(cli: Cli) -> None:
    home = Path(cli.home())
    items = {
        i["ref"]: i
        for i in json.loads(cli.ok("doctor", "--json", "--home", str(home)))["conformance"]["checklist"]
    }
    item = items["000 §21.3"]
    assert item["status"] == "pass" and "inbox.md (the seed's memory.md)" in item["reason"]
    assert "MEMORY.md" not in item["reason"]
    (home / "inbox.md").unlink()
    items = {
        i["ref"]: i
        for i in json.loads(cli("doctor", "--json", "--home", str(home)).stdout)["conformance"]["checklist"]
    }
    assert items["000 §21.3"]["status"] == "fail" and "inbox.md" in items["000 §21.3"]["reason"]


def conformance(cli: Cli, home: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(cli.ok("doctor", "--json", "--home", home))["conformance"]
    return report


def test_doctor_after_an_erasure_reports_the_level_the_home_reaches_with_every_reason(cli: Cli) -> None:
    home = str(cli.home())
    cli.ok("remember", "Deploys happen on Tuesdays.", "--source", "test", "--home", home)
    wiki = cli.ok(
        "remember",
        "The wiki lives at wiki.example.",
        "--source",
        "test",
        "--taint",
        "external",
        "--home",
        home,
    )
    cli.ok("approve", wiki.strip(), "--home", home)  # a review event (L4)
    cli.ok("capture", "Staging runs on db-2.", "--source", "chat", "--home", home)
    cli.ok("archive-inbox", "--home", home)  # L2
    cli.ok("consolidate", "--home", home)  # L3
    (Path(home) / "golden.yaml").write_text(
        "- query: when do deploys happen?\n  expect: {contains: Tuesdays}\n", encoding="utf-8"
    )
    cli.ok("render", "--home", home)
    assert conformance(cli, home)["level"] == "memory:L4"
    cli.ok(
        "erase",
        wiki.strip(),
        "--reason",
        "asked by the owner",
        "--authority",
        "owner",
        "--yes",
        "--home",
        home,
    )
    cli.ok("render", "--home", home)
    after = conformance(cli, home)
    assert after["level"] == "memory:L4"
    items = {item["ref"]: item for item in after["checklist"]}
    assert (
        items["000 §21.11"]["status"] == "pass"
        and "1 erased record(s) are tombstones" in items["000 §21.11"]["reason"]
    )
    assert items["000 §21.21"]["status"] == "pass"
    assert len(items) == 21 and all(item["reason"] for item in items.values())
    cli.ok("feedback", "outcome", "task-1", "succeeded", "--home", home)
    assert conformance(cli, home)["level"] == "memory:L5"


def test_deleting_cache_keeps_recall_the_same_for_the_issue_s_eight_questions(cli: Cli) -> None:
    home = cli.home()
    topics = ["backups", "deploys", "certificates", "on-call", "logs", "passwords", "dashboards", "the VPN"]
    with Memory.open(home) as memory:
        for n in range(40):
            who, what = ["Ana", "Bilal", "Chen", "Dora", "Emeka"][n % 5], topics[(n * 3) % 8]
            memory.remember(f"{who} looks after {what}, item {n}.", source="test")
        asked = [f"who looks after {topic}?" for topic in topics]
        for question in asked:  # touches: salience now weighs in
            memory.recall(question, k=10)

    def ids(at: Path, question: str) -> list[str]:
        found = json.loads(cli.ok("recall", question, "--k", "10", "--json", "--home", str(at)))
        return [r["id"] for r in found["records"]]

    twin = cli.root / "twin"
    shutil.copytree(home, twin)
    shutil.rmtree(twin / ".cache")
    for question in asked:
        assert ids(twin, question) == ids(home, question), question

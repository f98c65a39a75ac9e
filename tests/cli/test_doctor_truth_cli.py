"""The installed ``agent-memory doctor`` on a fresh user's trial: missing notes, warnings, §21.19."""

import json
import shutil
from pathlib import Path

import pytest
from installed import Cli, snapshot


@pytest.fixture
def home(cli: Cli) -> Path:
    path = cli.root / "home"
    cli.ok("init", str(path), "--no-git", "--timezone", "UTC")
    return path


def test_a_note_deleted_by_hand_fails_doctor_and_doctor_fix_exits_1(cli: Cli, home: Path) -> None:
    record = cli.ok("remember", "Tea is served at four.", "--home", str(home)).strip()
    cli.ok("render", "--home", str(home))
    shutil.rmtree(home / "notes" / record.removeprefix("mem:"))
    found = cli("doctor", "--home", str(home))
    assert found.returncode == 1 and "FAIL notes" in found.stdout and record in found.stdout
    assert "git checkout -- notes/" in found.stdout and found.stdout.startswith("problems found: ")
    views = snapshot(home / "topics")
    fixed = cli("doctor", "--fix", "--home", str(home), "--json")
    assert fixed.returncode == 1
    checks = {c["name"]: c for c in json.loads(fixed.stdout)["checks"]}
    assert checks["notes"]["status"] == "fail" and not checks["notes"]["fixable"]
    assert snapshot(home / "topics") == views


def test_remember_without_render_is_healthy_with_a_warning_naming_render(cli: Cli, home: Path) -> None:
    cli.ok("remember", "Tea is served at four.", "--home", str(home))
    cli.ok("render", "--home", str(home))
    cli.ok("remember", "Lunch is at noon.", "--home", str(home))
    result = cli("doctor", "--home", str(home))
    assert result.returncode == 0, result.stdout
    assert "warn views" in result.stdout and "agent-memory render" in result.stdout
    assert "FAIL" not in result.stdout
    assert result.stdout.startswith("healthy: 9 of 10 checks ok, 1 warning(s)")


def test_the_readme_tour_withdraw_keeps_item_19_passing(cli: Cli, home: Path) -> None:
    h = ("--home", str(home))
    cli.ok("remember", "Staging runs on db-3.", "--kind", "state", "--subject", "host:staging", *h)
    db4 = cli.ok("remember", "Staging runs on db-4.", "--kind", "state", "--subject", "host:staging", *h)
    cli.ok("render", *h)
    cli.ok("withdraw", "--record", db4.strip(), "--reason", "wrong ticket", *h)
    result = cli("doctor", *h, "--json")
    assert result.returncode == 0
    report = json.loads(result.stdout)
    (item,) = [i for i in report["conformance"]["checklist"] if i["ref"] == "000 §21.19"]
    assert item["status"] == "pass", item["reason"]
    assert report["conformance"]["level"] != "memory:L0"

import json
from pathlib import Path

import pytest
from installed import Cli, snapshot


@pytest.fixture
def home(cli: Cli) -> Path:
    """A Home made by the command, with one remembered record and rendered views."""
    path = cli.root / "home"
    cli.ok("init", str(path), "--no-git", "--timezone", "UTC")
    cli.ok("remember", "The staging host is db-3.", "--home", str(path))
    cli.ok("render", "--home", str(path))
    return path


def test_doctor_on_a_healthy_home_prints_a_short_verdict_and_no_checklist(cli: Cli, home: Path) -> None:
    out = cli.ok("doctor", "--home", str(home))
    lines = out.splitlines()
    assert lines[0].startswith("healthy: 10 of 10 checks ok, memory:L1 reached (memory:L2 needs: ")
    assert lines[-1] == "every check and the full conformance checklist: agent-memory doctor --verbose"
    assert len(lines) <= 4 and "§21" not in out and "ok   log" not in out


def test_doctor_verbose_prints_every_check_and_the_conformance_table(cli: Cli, home: Path) -> None:
    out = cli.ok("doctor", "--home", str(home), "--verbose")
    assert "ok   log" in out and "FAIL" not in out
    assert "conformance: memory:L1" in out and "000 §21.21" in out and "003 MUST 5" in out
    report = json.loads(cli.ok("doctor", "--home", str(home), "--json"))
    assert report["healthy"] is True and report["fixed"] == []
    assert report["conformance"]["level"] == "memory:L1"
    assert len(report["conformance"]["checklist"]) == 21
    # Item 21.20 is judged from the exports the log names, and says what it cannot read here.
    [portability] = [line for line in out.splitlines() if "000 §21.20" in line]
    assert "0 export(s) in the log" in portability
    assert "migrate carries every control before any record" in portability


def test_doctor_fix_re_renders_a_stale_view_and_leaves_an_edited_archive_alone(cli: Cli, home: Path) -> None:
    cli.ok("remember", "Tea is served at four.", "--home", str(home))  # MEMORY.md is now stale
    cli.ok("capture", "Deploys go out on Tuesdays.", "--source", "test", "--home", str(home))
    cli.ok("archive-inbox", "--home", str(home))
    (archived,) = (home / "archive").glob("*.md")
    archived.write_bytes(archived.read_bytes().replace(b"Tuesdays", b"Fridays"))
    before = snapshot(home / "notes") | snapshot(home / "archive")

    found = cli("doctor", "--home", str(home), "--json")
    assert found.returncode == 1
    checks = {c["name"]: c for c in json.loads(found.stdout)["checks"]}
    assert not checks["archive"]["ok"] and archived.name in checks["archive"]["details"][0]
    assert checks["views"]["status"] == "warn" and checks["views"]["fixable"]

    fixed = cli("doctor", "--fix", "--home", str(home))
    assert fixed.returncode == 1  # the archive is the raw journal: reported, never "repaired"
    assert "fixed views: re-rendered" in fixed.stdout and "warn views" not in fixed.stdout
    assert "FAIL archive" in fixed.stdout and fixed.stdout.startswith("problems found: 9 of 10 checks ok")
    assert snapshot(home / "notes") | snapshot(home / "archive") == before
    assert "Tea is served at four." in (home / "MEMORY.md").read_text(encoding="utf-8")


def test_doctor_outside_a_home_is_an_error_with_a_hint(cli: Cli) -> None:
    result = cli("doctor", "--home", str(cli.root / "nowhere"))
    assert result.returncode == 3 and "hint:" in result.stderr

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from installed import Cli

from agent_memory.log import JsonlLog

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ID_A = "mem:" + "a" * 32


@pytest.fixture
def home(cli: Cli) -> Path:
    """A folder whose log/ holds three events (the log command needs nothing else of a Home)."""
    home = cli.root / "memory"
    home.mkdir()
    log = JsonlLog(home / "log")
    log.append("init", actor="owner", now=T0)
    log.append("put", actor="agent:claude", record_ids=[ID_A], details={"version": 1}, now=T0)
    log.append("review", actor="owner", record_ids=[ID_A], details={"decision": "approve"}, now=T0)
    return home


def test_log_prints_one_line_per_entry_oldest_first(cli: Cli, home: Path) -> None:
    assert cli.ok("log", "--home", str(home)).splitlines() == [
        "1 2026-01-01T00:00:00.000Z owner init - {}",
        f'2 2026-01-01T00:00:00.000Z agent:claude put {ID_A} {{"version":1}}',
        f'3 2026-01-01T00:00:00.000Z owner review {ID_A} {{"decision":"approve"}}',
    ]


def test_log_json_prints_the_stored_lines(cli: Cli, home: Path) -> None:
    out = cli.ok("log", "--home", str(home), "--json")
    assert out == (home / "log" / "2026-01.jsonl").read_text(encoding="utf-8")
    assert [json.loads(line)["seq"] for line in out.splitlines()] == [1, 2, 3]


def test_since_and_limit_page_forward(cli: Cli, home: Path) -> None:
    out = cli.ok("log", "--home", str(home), "--since", "1", "--limit", "1")
    assert [line.split()[0] for line in out.splitlines()] == ["2"]
    assert cli.ok("log", "--home", str(home), "--since", "3") == ""


def test_the_home_comes_from_the_environment_when_not_given(cli: Cli, home: Path) -> None:
    result = cli("log", "--json", env={"AGENT_MEMORY_HOME": str(home)})
    assert result.returncode == 0 and len(result.stdout.splitlines()) == 3


def test_verify_reports_the_entry_count_as_text_and_json(cli: Cli, home: Path) -> None:
    assert cli.ok("log", "--home", str(home), "--verify") == "log ok: 3 entries\n"
    found = json.loads(cli.ok("log", "--home", str(home), "--verify", "--json"))
    assert (found["ok"], found["entries"], found["failures"]) == (True, 3, [])
    assert found["warnings"] == ["not a Home: no checkpoint to compare with"]


def test_verify_of_an_edited_log_exits_one_naming_the_file_and_line(cli: Cli, home: Path) -> None:
    month = home / "log" / "2026-01.jsonl"
    month.write_bytes(month.read_bytes().replace(b'"version":1', b'"version":2'))
    result = cli("log", "--home", str(home), "--verify")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("log FAILED: ")
    assert "2026-01.jsonl: line 3: seq 3: prev does not match" in result.stderr
    as_json = cli("log", "--home", str(home), "--verify", "--json")
    assert as_json.returncode == 1 and json.loads(as_json.stdout.splitlines()[0])["ok"] is False


def test_a_folder_without_a_log_has_an_empty_log(cli: Cli) -> None:
    assert cli.ok("log", "--home", str(cli.root), "--verify") == "log ok: 0 entries\n"
    assert cli.ok("log", "--home", str(cli.root)) == ""


def test_a_missing_home_is_one_line_with_a_hint_and_exit_three(cli: Cli) -> None:
    result = cli("log", "--home", str(cli.root / "nowhere"))
    assert result.returncode == 3
    first, hint = result.stderr.splitlines()
    assert first == f"agent-memory: error: {cli.root / 'nowhere'}: no Home here: not a directory"
    assert hint.startswith("hint: pass --home PATH")


def test_listing_a_damaged_log_prints_what_it_can_then_names_the_line(cli: Cli, home: Path) -> None:
    month = home / "log" / "2026-01.jsonl"
    month.write_bytes(month.read_bytes() + b"garbage\n")
    result = cli("log", "--home", str(home))
    assert result.returncode == 3
    assert len(result.stdout.splitlines()) == 3
    assert (
        result.stderr.startswith("agent-memory: error: ")
        and "2026-01.jsonl: line 4: not JSON" in result.stderr
    )


def test_the_log_command_never_writes_not_even_to_cut_a_torn_tail(cli: Cli, home: Path) -> None:
    month = home / "log" / "2026-01.jsonl"
    month.write_bytes(month.read_bytes() + b'{"seq":4')
    before = month.read_bytes()
    assert len(cli.ok("log", "--home", str(home)).splitlines()) == 3
    result = cli("log", "--home", str(home), "--verify")
    assert result.returncode == 1 and "torn tail" in result.stderr
    assert month.read_bytes() == before

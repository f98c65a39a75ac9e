import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agent_memory.cli.log import log as log_command
from agent_memory.errors import ConfigError, LogError
from agent_memory.log import JsonlLog

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ID_A = "mem:" + "a" * 32


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "memory"
    home.mkdir()
    log = JsonlLog(home / "log")
    log.append("init", actor="owner", now=T0)
    log.append("put", actor="agent:claude", record_ids=[ID_A], details={"version": 1}, now=T0)
    log.append("review", actor="owner", record_ids=[ID_A], details={"decision": "approve"}, now=T0)
    return home


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(log_command, list(args), env=env)


def test_log_prints_one_line_per_entry_oldest_first(home: Path) -> None:
    result = run("--home", str(home))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "1 2026-01-01T00:00:00.000Z owner init - {}",
        f'2 2026-01-01T00:00:00.000Z agent:claude put {ID_A} {{"version":1}}',
        f'3 2026-01-01T00:00:00.000Z owner review {ID_A} {{"decision":"approve"}}',
    ]


def test_log_json_prints_the_stored_lines(home: Path) -> None:
    result = run("--home", str(home), "--json")
    assert result.exit_code == 0, result.output
    stored = (home / "log" / "2026-01.jsonl").read_text(encoding="utf-8")
    assert result.stdout == stored
    assert [json.loads(line)["seq"] for line in result.stdout.splitlines()] == [1, 2, 3]


def test_since_and_limit_page_forward(home: Path) -> None:
    result = run("--home", str(home), "--since", "1", "--limit", "1")
    assert [line.split()[0] for line in result.stdout.splitlines()] == ["2"]
    assert run("--home", str(home), "--since", "3").stdout == ""


def test_the_home_comes_from_the_environment_when_not_given(home: Path) -> None:
    result = run("--json", env={"AGENT_MEMORY_HOME": str(home)})
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 3


def test_verify_reports_the_entry_count(home: Path) -> None:
    result = run("--home", str(home), "--verify")
    assert result.exit_code == 0
    assert result.stdout == "log ok: 3 entries\n"
    assert json.loads(run("--home", str(home), "--verify", "--json").stdout) == {"ok": True, "entries": 3}


def test_verify_of_an_edited_log_exits_one_naming_the_file_and_line(home: Path) -> None:
    month = home / "log" / "2026-01.jsonl"
    month.write_bytes(month.read_bytes().replace(b'"version":1', b'"version":2'))
    result = run("--home", str(home), "--verify")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert (
        "log FAILED:" in result.stderr
        and "2026-01.jsonl: line 3: seq 3: prev does not match" in result.stderr
    )
    as_json = run("--home", str(home), "--verify", "--json")
    assert as_json.exit_code == 1 and json.loads(as_json.stdout)["ok"] is False


def test_a_home_without_a_log_folder_has_an_empty_log(tmp_path: Path) -> None:
    assert run("--home", str(tmp_path), "--verify").stdout == "log ok: 0 entries\n"
    assert run("--home", str(tmp_path)).stdout == ""


def test_a_missing_home_is_a_config_error(tmp_path: Path) -> None:
    result = run("--home", str(tmp_path / "nowhere"))
    assert isinstance(result.exception, ConfigError)
    assert "no Home here" in str(result.exception)


def test_listing_a_damaged_log_raises_the_log_error_for_the_cli_to_print(home: Path) -> None:
    month = home / "log" / "2026-01.jsonl"
    month.write_bytes(month.read_bytes() + b"garbage\n")
    result = run("--home", str(home))
    assert isinstance(result.exception, LogError)
    assert "2026-01.jsonl: line 4: not JSON" in str(result.exception)
    assert len(result.stdout.splitlines()) == 3  # what was readable was printed first


def test_the_log_command_never_writes(home: Path) -> None:
    month = home / "log" / "2026-01.jsonl"
    month.write_bytes(month.read_bytes() + b'{"seq":4')  # a torn tail
    before = month.read_bytes()
    assert run("--home", str(home)).exit_code == 0
    result = run("--home", str(home), "--verify")
    assert result.exit_code == 1 and "torn tail" in result.stderr
    assert month.read_bytes() == before

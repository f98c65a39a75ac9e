"""Streamable HTTP, the Home's resources, start-up failures, and the session's identity."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS
from mcp_harness import COMMAND, TOOLS, Connect

from agent_memory.errors import AgentMemoryError, RecordError
from agent_memory.mcp import RESOURCES, Session, one_line


def test_the_http_transport_serves_the_same_tools_and_writes_to_the_home(home: Path, http: Connect) -> None:
    with http(home, "--agent", "remote") as client:
        names = {tool.name for tool in client.tools()}
        written = client.ok("remember", text="The HTTP transport works over loopback")
        recalled = client.ok("recall", query="HTTP transport loopback")
        status = client.ok("status")
    assert names == TOOLS
    assert [r["id"] for r in recalled["records"]] == [written["record_id"]]
    assert status["actor"] == "agent:remote" and status["records"] == 1
    assert list((home / "notes").rglob("000001.md")), "the record is a note file in the Home"


def test_resources_serve_the_home_files_as_they_are_now_and_a_missing_one_is_a_clear_error(
    home: Path, stdio: Connect
) -> None:
    (home / "index.md").unlink(missing_ok=True)
    with stdio(home) as client:
        uris = client.resources()
        hot = client.read("memory://home/MEMORY.md")
        with (home / "conventions.md").open("a", encoding="utf-8") as rules:
            rules.write("- Dates are ISO 8601.\n")
        conventions = client.read("memory://home/conventions.md")
        with pytest.raises(MCPError) as missing:
            client.read("memory://home/index.md")
    assert sorted(uris) == sorted(f"memory://home/{name}" for name in RESOURCES)
    assert hot == (home / "MEMORY.md").read_text(encoding="utf-8")
    assert conventions.endswith("- Dates are ISO 8601.\n")
    assert missing.value.error.code == INVALID_PARAMS
    assert "index.md: not found in this Home" in missing.value.error.message
    assert "agent-memory render" in missing.value.error.message


def _serve(home: Path, *options: str, python: str | None = None) -> subprocess.CompletedProcess[str]:
    assert COMMAND is not None
    if python is None:
        argv = [COMMAND, "serve", "--home", str(home), *options]
    else:
        argv = [sys.executable, "-c", python, "serve", "--home", str(home), *options]
    return subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, env=dict(os.environ)
    )


def test_serve_without_the_sdk_prints_one_line_with_the_install_command(home: Path) -> None:
    blocked = "import sys; sys.modules['mcp'] = None; from agent_memory.cli import main; main(sys.argv[1:])"
    result = _serve(home, python=blocked)
    assert result.returncode == 3
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("agent-memory: error: cannot start the MCP server:")
    assert "pip install 'agent-memory[mcp]'" in line


def test_a_broken_import_inside_agent_memory_is_not_disguised_as_a_missing_sdk(home: Path) -> None:
    broken = (
        "import sys; sys.modules['agent_memory.mcp.tools'] = None; "
        "from agent_memory.cli import main; main(sys.argv[1:])"
    )
    result = _serve(home, python=broken)
    assert result.returncode not in (0, 3)
    assert "agent_memory.mcp.tools" in result.stderr and "pip install" not in result.stderr


def test_serve_refuses_a_malformed_agent_name_or_a_missing_home_before_serving(
    home: Path, tmp_path: Path
) -> None:
    bad_agent = _serve(home, "--agent", "two words")
    no_home = _serve(tmp_path / "nowhere")
    assert bad_agent.returncode == 3 and bad_agent.stdout == ""
    assert bad_agent.stderr.startswith("agent-memory: error: agent: agent name 'two words' must be")
    assert no_home.returncode == 3 and "no memory.toml here" in no_home.stderr
    assert "agent-memory init" in no_home.stderr


def test_the_default_source_names_the_agent_the_local_day_and_a_client_of_another_name() -> None:
    session = Session(Path("home"), "claude", zone=ZoneInfo("Pacific/Auckland"))
    evening_utc = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)  # already the 30th in Auckland
    assert session.default_source("cursor", evening_utc) == "mcp:claude@2026-11-30#cursor"
    assert session.default_source("claude", evening_utc) == "mcp:claude@2026-11-30"
    assert session.default_source(None, evening_utc) == "mcp:claude@2026-11-30"
    assert session.actor == "agent:claude"


@pytest.mark.parametrize(
    ("agent", "taint"), [("", ()), ("a b", ()), ("x" * 65, ()), ("ok", ("",)), ("ok", ("a\nb",))]
)
def test_a_session_refuses_malformed_agent_names_and_taint_labels(agent: str, taint: tuple[str, ...]) -> None:
    with pytest.raises(AgentMemoryError, match="must be 1-64 letters") as caught:
        Session(Path("home"), agent, taint)
    assert caught.value.field == ("agent" if agent != "ok" else "taint")


def test_one_line_joins_the_message_and_hint_without_line_breaks() -> None:
    error = RecordError("bad\nvalue", field="subject", hint="use\nkind=state")
    assert one_line(error) == "subject: bad value (hint: use kind=state)"

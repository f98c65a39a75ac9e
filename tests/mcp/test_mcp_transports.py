"""Streamable HTTP (with per-connection taint), the Home's resources, start-up failures, the session.

The HTTP tests share one server for the module (agent:remote, granted withdraw and erase)
and open as many connections to it as they need.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS
from mcp_harness import COMMAND, TOOLS, connect, grant, http_server, new_home, stored

from agent_memory.errors import AgentMemoryError, RecordError
from agent_memory.mcp import RESOURCES, TAINT_HEADER, Session, one_line
from agent_memory.memory import Memory

TAINTED = {TAINT_HEADER: "external"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """One ``serve --http --agent remote`` for the module: its Home and URL."""
    root = tmp_path_factory.mktemp("http")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(root / "config"))
        home = new_home(root / "home")
        grant(home, "agent:remote", "erase", "withdraw")
        with http_server(home, root, "--agent", "remote") as url:
            yield home, url


def test_the_http_transport_serves_the_same_tools_and_writes_to_the_home(served: tuple[Path, str]) -> None:
    home, url = served
    with connect(url) as client:
        names = {tool.name for tool in client.tools()}
        before = client.ok("status")["records"]
        written = client.ok("remember", text="The HTTP transport works over loopback")
        recalled = client.ok("recall", query="HTTP transport loopback")
        status = client.ok("status")
    assert names == TOOLS
    assert [r["id"] for r in recalled["records"]] == [written["record_id"]]
    assert status["actor"] == "agent:remote" and status["records"] == before + 1 and status["taint"] == []
    assert (home / "notes" / written["record_id"][4:] / "000001.md").is_file(), "the record is a note file"


def test_a_tainted_http_connection_writes_quarantined_records_and_a_concurrent_untainted_one_does_not(
    served: tuple[Path, str],
) -> None:
    home, url = served
    texts = [f"Parallel HTTP note {i} on the metrics pipeline" for i in range(6)]
    with connect(url, headers=TAINTED) as tainted, connect(url) as plain:
        with ThreadPoolExecutor(max_workers=4) as pool:
            dirty = pool.map(lambda t: tainted.ok("remember", text=t + " (web)"), texts)
            clean = pool.map(lambda t: plain.ok("remember", text=t + " (runbook)"), texts)
            written = {"dirty": list(dirty), "clean": list(clean)}
        statuses = (tainted.ok("status")["taint"], plain.ok("status")["taint"])
    assert statuses == (["external"], [])
    assert [w["quarantined"] for w in written["dirty"]] == [True] * len(texts)
    assert [w["quarantined"] for w in written["clean"]] == [False] * len(texts)
    with Memory.open(home) as memory:
        assert {memory.get(w["record_id"]).taint for w in written["dirty"]} == {("external",)}
        assert {memory.get(w["record_id"]).taint for w in written["clean"]} == {None}


def test_a_handshake_session_keeps_its_taint_when_a_later_request_omits_the_header(
    served: tuple[Path, str],
) -> None:
    _, url = served
    with connect(url, headers=TAINTED, mode="legacy") as session:
        first = session.ok("remember", text="Session-tainted note about the CDN origin")
        assert session.http is not None
        del session.http.headers[TAINT_HEADER]
        later = session.ok("remember", text="Later note in the same session about the CDN origin")
        taint = session.ok("status")["taint"]
    with connect(url, headers=TAINTED) as modern:  # 2026-07-28: no session; each request declares
        declared = modern.ok("remember", text="A request with the header about the CDN origin")
        assert modern.http is not None
        del modern.http.headers[TAINT_HEADER]
        undeclared = modern.ok("remember", text="A request without the header about the CDN origin")
    assert (first["quarantined"], later["quarantined"], taint) == (True, True, ["external"])
    assert (declared["quarantined"], undeclared["quarantined"]) == (True, False)


def test_a_tainted_http_connection_may_withdraw_but_not_reinstate_or_redact(served: tuple[Path, str]) -> None:
    home, url = served
    with connect(url, headers=TAINTED) as tainted, connect(url) as plain:
        record = plain.ok("remember", text="The HTTP-only staging dashboard is dash-7")["record_id"]
        control = tainted.ok("withdraw", memory_item_ids=[record], reason="a web page said so")
        before = stored(home)
        refused = {
            "reinstate": tainted.error("reinstate", withdrawal_id=control["withdrawal_id"], reason="undo"),
            "redact": tainted.error("redact", record_id=record, reason="r", authority="web"),
        }
        unchanged = stored(home)
        hidden = plain.ok("recall", query="staging dashboard dash")
        lifted = plain.ok("reinstate", withdrawal_id=control["withdrawal_id"], reason="checked")
    assert control["decided_by"] == "agent:remote"
    for tool, text in refused.items():
        assert f"{tool} is not available to a tainted session (external)" in text
    assert unchanged == before
    assert record not in [r["id"] for r in hidden["records"]]
    assert lifted["supersedes"] == control["withdrawal_id"]


def test_a_malformed_taint_header_fails_the_call_naming_the_header_and_writes_nothing(
    served: tuple[Path, str],
) -> None:
    home, url = served
    before = stored(home)
    with connect(url, headers={TAINT_HEADER: "external, web/page"}) as client:
        text = client.error("remember", text="Should never be stored: a malformed taint header")
    assert f"{TAINT_HEADER}: taint label 'web/page' must be" in text
    assert stored(home) == before


def test_resources_serve_the_home_files_as_they_are_now_and_a_missing_one_is_a_clear_error(
    served: tuple[Path, str],
) -> None:
    home, url = served
    (home / "index.md").unlink(missing_ok=True)
    with connect(url) as client:
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

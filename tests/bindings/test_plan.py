import json
from pathlib import Path

import pytest

from agent_memory.bindings import AGENTS, BEGIN, apply_changes, memory_root, plan_binding
from agent_memory.cli.bind import AGENT_NAMES
from agent_memory.errors import ConfigError

COMMAND = ["/opt/am/bin/agent-memory"]


def test_the_command_offers_exactly_the_known_agents() -> None:
    assert set(AGENT_NAMES) == set(AGENTS)


def test_the_memory_root_is_relative_inside_the_project_and_absolute_outside(tmp_path: Path) -> None:
    project = tmp_path / "project"
    assert memory_root(project / "memory", project) == "memory"
    assert memory_root(project, project) == "."
    assert memory_root(tmp_path / "elsewhere", project) == str((tmp_path / "elsewhere").resolve())


def test_planning_writes_nothing_and_applying_writes_each_file(tmp_path: Path) -> None:
    changes = plan_binding("gemini-cli", tmp_path, tmp_path / "memory", command=COMMAND)
    assert [(c.shown, c.role, c.action) for c in changes] == [
        ("GEMINI.md", "instructions", "create"),
        (".gemini/settings.json", "mcp", "create"),
    ]
    assert list(tmp_path.iterdir()) == []
    apply_changes(changes)
    server = json.loads((tmp_path / ".gemini" / "settings.json").read_text(encoding="utf-8"))["mcpServers"]
    home = str((tmp_path / "memory").resolve())
    assert server == {
        "agent-memory": {"command": COMMAND[0], "args": ["serve", "--home", home, "--agent", "gemini-cli"]}
    }
    again = plan_binding("gemini-cli", tmp_path, tmp_path / "memory", command=COMMAND)
    assert [c.action for c in again] == ["unchanged", "unchanged"]


def test_an_instruction_file_that_is_a_symlink_is_updated_through_the_link(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("# Shared rules\n", encoding="utf-8")
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")
    apply_changes(plan_binding("claude-code", tmp_path, tmp_path / "memory", command=COMMAND))
    assert (tmp_path / "CLAUDE.md").is_symlink()
    text = (tmp_path / "AGENTS.md").read_text(encoding="utf-8")
    assert text.startswith("# Shared rules\n") and text.count(BEGIN) == 1


def test_an_opencode_2_file_gets_the_server_under_mcp_servers(tmp_path: Path) -> None:
    (tmp_path / "opencode.json").write_text(
        json.dumps({"mcp": {"servers": {"web": {"type": "remote", "url": "https://x"}}}}), encoding="utf-8"
    )
    apply_changes(plan_binding("opencode", tmp_path, tmp_path / "memory", command=COMMAND))
    servers = json.loads((tmp_path / "opencode.json").read_text(encoding="utf-8"))["mcp"]["servers"]
    assert set(servers) == {"web", "agent-memory"}
    assert servers["agent-memory"]["type"] == "local" and "enabled" not in servers["agent-memory"]
    assert servers["agent-memory"]["command"][:2] == [COMMAND[0], "serve"]


def test_an_unknown_agent_or_a_folder_in_place_of_a_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown agent 'cursor'"):
        plan_binding("cursor", tmp_path, tmp_path / "memory", command=COMMAND)
    (tmp_path / "GEMINI.md").mkdir()
    with pytest.raises(ConfigError, match=r"^GEMINI\.md: is a folder"):
        plan_binding("gemini-cli", tmp_path, tmp_path / "memory", command=COMMAND)

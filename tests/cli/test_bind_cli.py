import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from installed import COMMAND, Cli, snapshot

from agent_memory.home import Home

BEGIN, END = "<!-- agent-memory:begin -->", "<!-- agent-memory:end -->"

# agent -> (instruction file, MCP file or None, keys from the MCP file's top to our entry)
AGENTS: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "claude-code": ("CLAUDE.md", ".mcp.json", ("mcpServers", "agent-memory")),
    "codex": ("AGENTS.md", ".codex/config.toml", ("mcp_servers", "agent-memory")),
    "gemini-cli": ("GEMINI.md", ".gemini/settings.json", ("mcpServers", "agent-memory")),
    "kiro": (".kiro/steering/agent-memory.md", ".kiro/settings/mcp.json", ("mcpServers", "agent-memory")),
    "copilot": (".github/copilot-instructions.md", ".vscode/mcp.json", ("servers", "agent-memory")),
    "opencode": ("AGENTS.md", "opencode.json", ("mcp", "agent-memory")),
    "openab": ("AGENTS.md", None, ()),
}


@pytest.fixture
def project(cli: Cli) -> Path:
    """A project folder with a Home at ./memory inside it."""
    folder = cli.root / "project"
    keys = cli.root / "config" / "agent-memory" / "keys" / "project.key"
    Home.init(folder / "memory", timezone="UTC", key_file=keys, git=False)  # `init` has its own tests
    return folder


def program(cli: Cli) -> str:
    """The program a binding registers: the running ``agent-memory``'s absolute path, PATH or not."""
    assert COMMAND and Path(COMMAND).is_absolute()
    return COMMAND


def bind(cli: Cli, project: Path, *args: str) -> Any:
    return cli("bind", *args, "--project", str(project), "--home", str(project / "memory"))


def entry(project: Path, mcp_file: str, keys: tuple[str, ...]) -> Any:
    text = (project / mcp_file).read_text(encoding="utf-8")
    value: Any = tomllib.loads(text) if mcp_file.endswith(".toml") else json.loads(text)
    for key in keys:
        value = value[key]
    return value


@pytest.mark.parametrize("agent", list(AGENTS))
def test_bind_writes_one_block_and_registers_the_server_and_binding_again_changes_nothing(
    cli: Cli, project: Path, agent: str
) -> None:
    instructions, mcp_file, keys = AGENTS[agent]
    first = bind(cli, project, agent)
    assert first.returncode == 0, first.stderr
    text = (project / instructions).read_text(encoding="utf-8")
    assert text.count(BEGIN) == text.count(END) == 1 and "Memory root: `memory`" in text
    assert f"create    {instructions}" in first.stdout
    if mcp_file is not None:
        server = entry(project, mcp_file, keys)
        args = ["serve", "--home", str((project / "memory").resolve()), "--agent", agent]
        command = (
            server["command"] if isinstance(server["command"], list) else [server["command"], *server["args"]]
        )
        assert command == [program(cli), *args]
    before = snapshot(project)
    again = bind(cli, project, agent)
    assert again.returncode == 0 and set(again.stdout.split()[::2]) == {"unchanged"}
    assert snapshot(project) == before


def test_text_and_servers_outside_the_binding_are_kept(cli: Cli, project: Path) -> None:
    (project / "CLAUDE.md").write_text("# Team rules\n\nRun the tests.\n", encoding="utf-8")
    other = {"command": "uvx", "args": ["mcp-server-git"]}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"git": other}}), encoding="utf-8")
    assert bind(cli, project, "claude-code").returncode == 0
    text = (project / "CLAUDE.md").read_text(encoding="utf-8")
    assert text.startswith("# Team rules\n\nRun the tests.\n\n" + BEGIN)
    assert entry(project, ".mcp.json", ("mcpServers", "git")) == other
    # A person edits around the block; binding again keeps their edit and replaces only the block.
    (project / "CLAUDE.md").write_text(text + "\n## Later\n\nMore rules.\n", encoding="utf-8")
    (project / "CLAUDE.md").write_text(
        (project / "CLAUDE.md")
        .read_text(encoding="utf-8")
        .replace("Memory root: `memory`", "Memory root: `x`"),
        encoding="utf-8",
    )
    assert "update    CLAUDE.md" in bind(cli, project, "claude-code").stdout
    assert (project / "CLAUDE.md").read_text(encoding="utf-8") == text + "\n## Later\n\nMore rules.\n"


def test_codex_settings_outside_the_server_table_are_kept(cli: Cli, project: Path) -> None:
    config = project / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o4"\n\n[mcp_servers.git]\ncommand = "uvx"\n', encoding="utf-8")
    assert bind(cli, project, "codex").returncode == 0
    settings = tomllib.loads(config.read_text(encoding="utf-8"))
    assert settings["model"] == "o4" and settings["mcp_servers"]["git"] == {"command": "uvx"}
    assert config.read_text(encoding="utf-8").startswith(
        'model = "o4"\n\n[mcp_servers.git]\ncommand = "uvx"\n'
    )


def test_print_shows_every_file_and_writes_nothing(cli: Cli, project: Path) -> None:
    before = snapshot(project)
    result = bind(cli, project, "kiro", "--print")
    assert result.returncode == 0 and snapshot(project) == before
    assert (
        "==> .kiro/steering/agent-memory.md (create, not written) <==\n---\ninclusion: always\n---\n"
        in result.stdout
    )
    assert "==> .kiro/settings/mcp.json (create, not written) <==" in result.stdout
    assert '"agent-memory": {' in result.stdout and "inclusion: always" in result.stderr


def test_print_with_json_prints_the_plan_as_json_and_writes_nothing(cli: Cli, project: Path) -> None:
    before = snapshot(project)
    result = bind(cli, project, "kiro", "--print", "--json")
    assert result.returncode == 0 and snapshot(project) == before
    out = json.loads(result.stdout)
    shown = {entry["path"]: entry for entry in out["files"]}
    steering = shown[".kiro/steering/agent-memory.md"]
    assert steering["action"] == "create" and steering["written"] is False
    assert steering["text"].startswith("---\ninclusion: always\n---\n")
    assert '"agent-memory": {' in shown[".kiro/settings/mcp.json"]["text"] and out["agent"] == "kiro"


def test_invalid_json_stops_the_binding_with_the_file_named_and_nothing_written(
    cli: Cli, project: Path
) -> None:
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"mcpServers": {"git": }', encoding="utf-8")
    before = snapshot(project)
    result = bind(cli, project, "gemini-cli")
    assert result.returncode == 3 and result.stdout == ""
    assert result.stderr.startswith("agent-memory: error: .gemini/settings.json: not valid JSON (line 1")
    assert snapshot(project) == before and not (project / "GEMINI.md").exists()


def test_openab_gets_agents_md_only_and_a_note_on_the_cli_it_hosts(cli: Cli, project: Path) -> None:
    result = bind(cli, project, "openab", "--json")
    out = json.loads(result.stdout)
    assert out["files"] == [{"path": "AGENTS.md", "role": "instructions", "action": "create"}]
    assert "working_dir" in out["note"] and "agent-memory bind kiro" in out["note"]
    assert "`agent-memory recall" in (project / "AGENTS.md").read_text(encoding="utf-8")


def test_print_needs_no_home_yet(cli: Cli, project: Path) -> None:
    result = cli(
        "bind", "claude-code", "--print", "--project", str(project), "--home", str(cli.root / "later")
    )
    assert result.returncode == 0, result.stderr
    assert "==> CLAUDE.md (create, not written) <==" in result.stdout and "later" in result.stdout
    assert not (cli.root / "later").exists() and not (project / "CLAUDE.md").exists()


def test_bind_needs_a_home_and_a_project_folder(cli: Cli, project: Path) -> None:
    no_home = cli("bind", "codex", "--project", str(project), "--home", str(cli.root / "nowhere"))
    no_project = cli(
        "bind", "codex", "--project", str(cli.root / "nowhere"), "--home", str(project / "memory")
    )
    unknown = cli("bind", "cursor", "--home", str(project / "memory"))
    assert no_home.returncode == 3 and "not a Home" in no_home.stderr
    assert no_project.returncode == 3 and "not a folder" in no_project.stderr
    assert unknown.returncode == 2 and "'cursor' is not one of" in unknown.stderr
    assert not (project / "AGENTS.md").exists()

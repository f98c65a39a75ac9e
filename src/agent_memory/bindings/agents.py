"""The agents ``agent-memory bind`` knows: each one's instruction file and MCP configuration (seed 000 §19).

Checked against each product's documentation (November 2026); seed 000 §19 asks a binding to
verify its runtime, so each :class:`Agent` carries a note the CLI prints after binding:

===========  =================================  ==========================================
agent        hot entry (instruction file)       MCP server registration
===========  =================================  ==========================================
claude-code  ``CLAUDE.md``                      ``.mcp.json`` ``mcpServers`` (project scope)
codex        ``AGENTS.md``                      ``.codex/config.toml`` ``[mcp_servers.…]``
gemini-cli   ``GEMINI.md``                      ``.gemini/settings.json`` ``mcpServers``
kiro         ``.kiro/steering/agent-memory.md`` ``.kiro/settings/mcp.json`` ``mcpServers``
copilot      ``.github/copilot-instructions.md`` ``.vscode/mcp.json`` ``servers``
opencode     ``AGENTS.md``                      ``opencode.json`` ``mcp`` (``mcp.servers`` in V2)
openab       ``AGENTS.md``                      none of its own (see its note)
===========  =================================  ==========================================

Invariant: every path is relative to the project folder; nothing is ever written outside it
(Codex's user-wide ``~/.codex/config.toml`` is named in the note, never written).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AGENTS", "Agent", "McpTarget", "server_entry"]


@dataclass(frozen=True, slots=True)
class McpTarget:
    """Where and how an agent registers MCP servers.

    Attributes:
        path: The configuration file, relative to the project.
        format: ``json`` or ``toml``.
        container: JSON keys leading to the object of servers.
        shape: Which entry layout the agent expects (see :func:`server_entry`).
        new_file: Top-level keys a new JSON file starts with.
    """

    path: str
    format: str
    container: tuple[str, ...] = ()
    shape: str = "stdio"
    new_file: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Agent:
    """One agent product and how to bind it.

    Attributes:
        name: The ``bind`` argument.
        title: The product's name.
        instructions: Its instruction file, relative to the project.
        mcp: Its MCP configuration, or ``None`` when it has none of its own.
        frontmatter: Text a new instruction file starts with, before the block.
        note: What a person should know after binding (printed by the CLI).
    """

    name: str
    title: str
    instructions: str
    mcp: McpTarget | None
    frontmatter: str = ""
    note: str = ""


def server_entry(shape: str, command: Sequence[str]) -> dict[str, Any]:
    """Return the server's configuration object for an agent's ``shape``.

    Args:
        shape: ``claude``, ``stdio`` (command + args), ``kiro``, ``vscode``, ``opencode``
            (one command array), ``opencode-v2`` or ``codex``.
        command: The full command line that runs the server over stdio.

    Raises:
        ValueError: Unknown shape.
    """
    program, args = command[0], list(command[1:])
    shapes: dict[str, dict[str, Any]] = {
        "claude": {"type": "stdio", "command": program, "args": args, "env": {}},
        "stdio": {"command": program, "args": args},
        "codex": {"command": program, "args": args},
        "kiro": {"command": program, "args": args, "disabled": False},
        "vscode": {"type": "stdio", "command": program, "args": args},
        "opencode": {"type": "local", "command": [program, *args], "enabled": True},
        "opencode-v2": {"type": "local", "command": [program, *args]},
    }
    if shape not in shapes:
        raise ValueError(f"unknown MCP entry shape {shape!r}")
    return copy.deepcopy(shapes[shape])


AGENTS: dict[str, Agent] = {
    agent.name: agent
    for agent in (
        Agent(
            "claude-code",
            "Claude Code",
            "CLAUDE.md",
            McpTarget(".mcp.json", "json", ("mcpServers",), "claude"),
            note="Claude Code asks you to approve a project server from .mcp.json on first use; "
            "/mcp shows it.",
        ),
        Agent(
            "codex",
            "Codex",
            "AGENTS.md",
            McpTarget(".codex/config.toml", "toml", shape="codex"),
            note="Codex reads .codex/config.toml only in a trusted project. For every project, copy "
            "its [mcp_servers.agent-memory] table into ~/.codex/config.toml (bind never writes "
            "your home folder).",
        ),
        Agent(
            "gemini-cli",
            "Gemini CLI",
            "GEMINI.md",
            McpTarget(".gemini/settings.json", "json", ("mcpServers",), "stdio"),
            note="Restart Gemini CLI in the project; /mcp lists the server.",
        ),
        Agent(
            "kiro",
            "Kiro",
            ".kiro/steering/agent-memory.md",
            McpTarget(".kiro/settings/mcp.json", "json", ("mcpServers",), "kiro"),
            frontmatter="---\ninclusion: always\n---\n\n",
            note="The steering file is included in every Kiro chat (inclusion: always).",
        ),
        Agent(
            "copilot",
            "GitHub Copilot",
            ".github/copilot-instructions.md",
            McpTarget(".vscode/mcp.json", "json", ("servers",), "vscode"),
            note="VS Code offers the server to Copilot's agent mode; start it from .vscode/mcp.json "
            "or 'MCP: List Servers'.",
        ),
        Agent(
            "opencode",
            "OpenCode",
            "AGENTS.md",
            McpTarget(
                "opencode.json",
                "json",
                ("mcp",),
                "opencode",
                new_file={"$schema": "https://opencode.ai/config.json"},
            ),
            note="opencode.json must be plain JSON for bind to merge it (an opencode.jsonc is not read).",
        ),
        Agent(
            "openab",
            "OpenAB-hosted agent",
            "AGENTS.md",
            None,
            note="OpenAB is a thin bridge with no instruction or MCP configuration of its own: it runs a "
            "coding CLI in its [agent] working_dir, and that CLI reads AGENTS.md there. Bind the CLI it "
            "runs as well (e.g. agent-memory bind kiro --project WORKING_DIR) to give it the MCP "
            "server, and keep the Home on the persistent volume.",
        ),
    )
}

"""``agent-memory bind AGENT``: give an agent the memory protocol and the MCP server (seed 000 §8, §19).

The logic is in :mod:`agent_memory.bindings`; this module turns it into a command.
"""

from __future__ import annotations

import click

from agent_memory.cli.common import echo_json, home_option, json_option

# Spelled out (not read from agent_memory.bindings) so that --help imports nothing heavy.
AGENT_NAMES = ("claude-code", "codex", "gemini-cli", "kiro", "copilot", "opencode", "openab")


@click.command()
@click.argument("agent", type=click.Choice(AGENT_NAMES))
@click.option("--print", "print_only", is_flag=True, help="Print what would be written; write nothing.")
@click.option(
    "--project",
    metavar="PATH",
    default=".",
    show_default=True,
    help="The project folder the agent works in (its instruction files live there).",
)
@home_option
@json_option
def bind(agent: str, print_only: bool, project: str, home: str | None, as_json: bool) -> None:
    """Bind AGENT to the Home: a memory-protocol block in its instruction file, and the MCP server.

    The block does the five things of seed 000 §8: the identity rules pointer
    (conventions.md), the memory root, when to read memory, when to write it, and how a
    "forget" request is routed (withdrawal first, erasure only on authority). It sits
    between <!-- agent-memory:begin --> and <!-- agent-memory:end --> in CLAUDE.md
    (claude-code), AGENTS.md (codex, opencode, openab), GEMINI.md (gemini-cli),
    .kiro/steering/agent-memory.md (kiro) or .github/copilot-instructions.md (copilot);
    binding again updates that block in place and leaves the rest of the file as it was.

    The MCP server ("agent-memory serve --home HOME --agent AGENT") is merged into
    .mcp.json, .codex/config.toml, .gemini/settings.json, .kiro/settings/mcp.json,
    .vscode/mcp.json or opencode.json, keeping every other server; OpenAB has no
    configuration of its own. A file that cannot be merged (invalid JSON or TOML, stray
    markers) stops the binding with nothing written. Prints one line per file (create,
    update, unchanged) and a note on the agent. With --print, nothing is written and the
    Home need not exist yet (with --json: each file's path, role, action and text, written
    false). Exit status 3 on error.
    """
    from pathlib import Path

    from agent_memory.bindings import AGENTS, apply_changes, default_server_command, plan_binding
    from agent_memory.cli.common import open_home
    from agent_memory.errors import ConfigError
    from agent_memory.home import resolve_home

    root = Path(resolve_home(home)) if print_only else open_home(home).root
    folder = Path(project)
    if not folder.is_dir():
        raise ConfigError("not a folder", path=project, hint="pass --project with the agent's project folder")
    changes = plan_binding(agent, folder, root, command=default_server_command())
    note = AGENTS[agent].note
    if print_only and as_json:
        files = [{**change.to_json(), "written": False, "text": change.text} for change in changes]
        echo_json({"agent": agent, "files": files, "note": note})
        return
    if print_only:
        for change in changes:
            click.echo(f"==> {change.shown} ({change.action}, not written) <==")
            click.echo(change.text, nl=not change.text.endswith("\n"))
        click.echo(note, err=True)
        return
    apply_changes(changes)
    if as_json:
        echo_json({"agent": agent, "files": [change.to_json() for change in changes], "note": note})
        return
    for change in changes:
        click.echo(f"{change.action:<9} {change.shown}")
    click.echo(note, err=True)

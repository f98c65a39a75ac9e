"""``agent-memory serve``: run the MCP server over stdio or streamable HTTP (DESIGN.md §8; issue 8 item 3)."""

from __future__ import annotations

import click

from agent_memory.cli.common import home_option


@click.command()
@click.option("--http", is_flag=True, help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind with --http.")
@click.option(
    "--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="Port for --http."
)
@click.option(
    "--taint",
    "taints",
    multiple=True,
    metavar="LABEL",
    help="Taint every write of this server (e.g. external): quarantined until a person approves.",
)
@click.option(
    "--agent",
    default="mcp",
    show_default=True,
    metavar="NAME",
    help="Agent name: writes act as agent:NAME and default their source to mcp:NAME@<date>.",
)
# The default is agent_memory.mcp.commits.COMMIT_DELAY, repeated: that package needs the SDK.
@click.option(
    "--commit-delay",
    type=click.FloatRange(min=0),
    default=2.0,
    show_default=True,
    metavar="SECONDS",
    help="Commit writes to the Home's git repository once no write has come for this long.",
)
@home_option
def serve(
    http: bool,
    host: str,
    port: int,
    taints: tuple[str, ...],
    agent: str,
    commit_delay: float,
    home: str | None,
) -> None:
    """Serve the Home to MCP clients (stdio by default; --http for streamable HTTP on 127.0.0.1).

    Tools: remember, recall, status, supersede, resolve, review (stale marks only),
    consolidate, withdraw, reinstate, forget, redact, feedback, and the aliases
    nas_remember and nas_recall. With --taint, writes are quarantined and supersede,
    resolve, review, reinstate, redact and consolidate (except dry runs) are refused;
    over HTTP a connection adds taint with the X-Agent-Memory-Taint header. Resources:
    MEMORY.md, conventions.md and index.md of the Home. When the Home is a git
    repository, writes are committed while the server runs, after --commit-delay seconds
    without a write (and at least every 30 s), and the rest when it stops. See
    docs/mcp.md. Needs the mcp extra: pip install 'agent-memory[mcp]'.
    """
    from agent_memory.errors import AgentMemoryError

    try:
        from agent_memory.mcp import serve as run
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] != "mcp":
            raise  # a fault of agent-memory itself, not a missing SDK: keep the traceback
        raise AgentMemoryError(f"cannot start the MCP server: {exc}") from None
    if http:
        click.echo(f"agent-memory: serving MCP at http://{host}:{port}/mcp", err=True)
    run(home, agent=agent, taint=taints, http=http, host=host, port=port, commit_delay=commit_delay)

"""``agent-memory serve``: run the MCP server over stdio or streamable HTTP (DESIGN.md §8; issue 8 item 3)."""

from __future__ import annotations

import inspect

import click

from agent_memory.cli.common import home_option

TOOLS_MARK = "{tools}"
REFUSED_MARK = "{refused}"


def tool_lists() -> tuple[str, str]:
    """Return the served tools and the ones refused to a tainted session, as help sentences.

    Both come from the server's registry (:data:`agent_memory.mcp.tools.TOOLS` and
    ``TAINT_REFUSED``), so the help cannot drift from what ``serve`` offers.

    Returns:
        ``(tools, refused)``: e.g. ``"remember, recall, …, and the aliases nas_remember and
        nas_recall"`` and ``"supersede, …, and consolidate (except dry runs)"``. Without the
        mcp extra (the registry needs the SDK) both say where the list is documented.
    """
    try:
        from agent_memory.mcp.tools import TAINT_REFUSED, TOOLS
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] != "mcp":
            raise
        missing = "listed in docs/mcp.md (this help lists them once the mcp extra is installed)"
        return missing, "those docs/mcp.md names"
    methods = [name for name, _, method, _ in TOOLS if name == method]
    aliases = [name for name, _, method, _ in TOOLS if name != method]
    tools = ", ".join(methods) + (f", and the aliases {' and '.join(aliases)}" if aliases else "")
    refused = [f"{name} ({allows})" if allows else name for name, allows in TAINT_REFUSED.items()]
    return tools, ", ".join(refused[:-1]) + f" and {refused[-1]}"


class _ServeCommand(click.Command):
    """``serve``, whose help fills in the tool lists from the server's registry when shown."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Write the help text with :data:`TOOLS_MARK` and :data:`REFUSED_MARK` filled in."""
        tools, refused = tool_lists()
        text = inspect.cleandoc(self.help or "").replace(TOOLS_MARK, tools).replace(REFUSED_MARK, refused)
        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text(text)


@click.command(cls=_ServeCommand)
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

    Tools: {tools}; review gives stale marks only. With --taint, writes are
    quarantined and {refused} are refused;
    over HTTP a connection adds taint with the X-Agent-Memory-Taint header. Resources:
    MEMORY.md, conventions.md and index.md of the Home. When the Home is a git
    repository, writes are committed while the server runs, after --commit-delay seconds
    without a write (and at least every 30 s), and the rest when it stops. See
    docs/mcp.md. The MCP SDK is part of the default install.
    """
    from agent_memory.errors import AgentMemoryError

    try:
        from agent_memory.mcp import serve as run
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] != "mcp":
            raise  # a fault of agent-memory itself, not a missing SDK: keep the traceback
        raise AgentMemoryError(f"cannot start the MCP server: {exc}") from None
    from agent_memory.mcp import heap

    heap.limit_malloc_arenas()  # before the server starts any thread
    if http:
        click.echo(f"agent-memory: serving MCP at http://{host}:{port}/mcp", err=True)
    run(home, agent=agent, taint=taints, http=http, host=host, port=port, commit_delay=commit_delay)

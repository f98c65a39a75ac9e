"""``agent-memory ui``: serve the review page for one Home on 127.0.0.1 (issue 22; docs/ui.md)."""

from __future__ import annotations

import click

from agent_memory.cli.common import home_option

__all__ = ["ui"]


@click.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1 (0: a free one).",
)
@click.option("--no-browser", is_flag=True, help="Print the address only; do not open a browser.")
@home_option
def ui(port: int, no_browser: bool, home: str | None) -> None:
    """Serve a review page for the Home on 127.0.0.1: browse, search and decide in a browser.

    Browse and search (recall's ranking, with scores and reasons), each record's sources,
    versions and withdrawals, the review queue (quarantine, disputes, pending values,
    maintenance proposals, promotions) and what the agent sees (MEMORY.md, the views, golden
    tests, the doctor). Every button acts as the Home's configured person through the same
    checks as the CLI command of the same name. --home may also name a database
    (sqlite:PATH, postgresql://…). The address printed carries a secret token made at start; the
    page is served on the loopback interface only. Runs until Ctrl-C (exit status 0). See docs/ui.md.
    """
    from agent_memory.ui.server import run

    try:
        run(home, port=port, open_browser=not no_browser, say=lambda line: click.echo(line, err=True))
    except KeyboardInterrupt:  # uvicorn stops on Ctrl-C, then raises it again: the way to stop, not a failure
        click.echo("agent-memory: stopped", err=True)

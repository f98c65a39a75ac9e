"""``agent-memory migrate``: copy every version of every record between two stores (issue 3 §6).

The work is :func:`agent_memory.transfer.migrate.migrate_urls`; this module parses options and prints.
Errors (a bad URL, a conflict, a failed verification) propagate as ``AgentMemoryError`` for
:func:`agent_memory.cli.main` to print as one line with exit status 3.
"""

from __future__ import annotations

import click

from agent_memory.cli.common import echo_json, home_option, json_option, quiet_option
from agent_memory.cli.progress import progress

__all__ = ["migrate"]


@click.command()
@click.option("--to", "to_url", required=True, metavar="URL", help="The store to copy into.")
@click.option(
    "--from",
    "from_url",
    metavar="URL",
    default=None,
    help="The store to copy from [default: home:<the Home>, its notes].",
)
@home_option
@json_option
@quiet_option
def migrate(to_url: str, from_url: str | None, home: str | None, as_json: bool, quiet: bool) -> None:
    """Copy every version of every record from one store into another, then verify both sides.

    \b
    URLs:
      notes:PATH, file:PATH   Markdown notes (PATH/<hex>/000001.md)
      json:PATH               canonical JSON, the origin's layout (PATH/<hex>/000001.json)
      sqlite:PATH             a SQLite database file
      postgresql://USER@HOST:PORT/DB[?schema=NAME]   a PostgreSQL schema (default agent_memory)
      home:PATH               the notes of the Home at PATH (create it first with init)

    Versions are copied oldest first. Records whose identical history the target holds are
    skipped, so running it again is safe; a record with another history in the target is an
    error naming it, and nothing is written. Erased records arrive erased. Withdrawal
    controls travel first, in log order with their supersedes chains, so a withdrawn record
    is never exposed in the target; a target without a log (notes:, json:) refuses a source
    with a withdrawal in force. At the end every record's sha256 digest over its versions is
    compared on both sides. A migrate event goes to the target's log (a Home, a SQLite file
    or PostgreSQL schema) and to the source Home's.
    Keep passwords out of the URL: libpq reads ~/.pgpass and PGPASSWORD.
    """  # noqa: D301 - click's \b keeps the URL table's line breaks
    from agent_memory.home import resolve_home
    from agent_memory.transfer.migrate import migrate_urls

    source = from_url or f"home:{resolve_home(home)}"
    with progress("migrating", quiet=quiet or as_json) as bar:
        report, logged = migrate_urls(source, to_url, progress=bar)
    if as_json:
        echo_json({**report.to_json(), "logged_in": logged})
        return
    click.echo(
        f"migrated {report.source} -> {report.target}: {report.source_records} records; "
        f"{len(report.copied)} copied, {len(report.restored)} erased ones restored, "
        f"{len(report.extended)} extended, {len(report.skipped)} skipped (already there); "
        f"{report.versions_written} versions written"
    )
    click.echo(
        f"verified: the digests of all {report.source_records} records match on both sides; "
        f"the target holds {report.target_records} records ({report.manifest()})"
    )
    click.echo(f"logged in: {', '.join(logged)}" if logged else "logged in: no log at either end")

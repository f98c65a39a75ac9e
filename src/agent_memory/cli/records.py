"""``agent-memory show`` and ``history``: read one record, or every version of it (seed 001 stores)."""

from __future__ import annotations

import click

from agent_memory.cli.common import echo_json, home_option, json_option, open_home


@click.command()
@click.argument("record_id")
@home_option
@json_option
def show(record_id: str, home: str | None, as_json: bool) -> None:
    """Print the latest version of RECORD_ID as its note file (or its wire object with --json)."""
    from agent_memory.notes import dump_note

    record = open_home(home).store().get(record_id)
    if as_json:
        echo_json(record.to_wire())
    else:
        click.echo(dump_note(record).decode("utf-8"), nl=False)


@click.command()
@click.argument("record_id")
@home_option
@json_option
def history(record_id: str, home: str | None, as_json: bool) -> None:
    """Print every version of RECORD_ID, oldest first: version, time, state and why it changed."""
    versions = open_home(home).store().history(record_id)
    if as_json:
        echo_json([{"version": n, **v.to_wire()} for n, v in enumerate(versions, start=1)])
        return
    for number, version in enumerate(versions, start=1):
        assert version.updated_at is not None  # noqa: S101 - always set by the record
        reason = f"  ({version.state_reason})" if version.state_reason else ""
        link = f"  -> {version.superseded_by}" if version.superseded_by else ""
        click.echo(f"{number:>6}  {version.updated_at.isoformat()}  {version.state.value}{link}{reason}")

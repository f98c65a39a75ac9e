"""``agent-memory log``: read and check a Home's operation log (``<home>/log/*.jsonl``).

Read-only: the command never appends, repairs or cuts a torn tail (DESIGN.md §3, §9; seed 000
§7.1 capability 5, §8 "Timeline"). Errors other than a failed check propagate as
``AgentMemoryError`` for :func:`agent_memory.cli.main` to print.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import click

__all__ = ["log"]


@click.command("log")
@click.option(
    "--home",
    type=click.Path(path_type=Path, file_okay=False),
    envvar="AGENT_MEMORY_HOME",
    default="memory",
    show_default="$AGENT_MEMORY_HOME, else ./memory",
    help="The Home whose log/ folder to read.",
)
@click.option(
    "--verify", "check", is_flag=True, help="Check every line and the hash chain instead of listing."
)
@click.option("--json", "as_json", is_flag=True, help="Print each entry's stored JSON line.")
@click.option(
    "--since",
    type=click.IntRange(min=0),
    default=0,
    metavar="SEQ",
    help="Only entries after this sequence number.",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N", help="At most N entries.")
def log(home: Path, check: bool, as_json: bool, since: int, limit: int | None) -> None:
    """Print the operation log of a Home, oldest first, one entry per line.

    Each line reads ``SEQ TIME ACTOR ACTION IDS DETAILS``: IDS comma-separated (``-`` when
    none), DETAILS as compact JSON. ``--json`` prints the stored line itself, the canonical
    JSON object ``{"action", "actor", "details", "prev", "record_ids", "seq", "time"}``.
    ``--since SEQ --limit N`` pages forward through the log.

    ``--verify`` checks every line, the sequence numbers, the hash chain and the month files,
    and prints ``log ok: N entries`` (exit 0) or the first problem found, naming the file and
    line (exit 1). A torn tail (an append cut short by a crash) counts as a problem; the next
    append removes it. Nothing is ever written.
    """
    from agent_memory.errors import ConfigError, LogError
    from agent_memory.log.jsonl import JsonlLog

    if not home.is_dir():
        raise ConfigError(
            "no Home here: not a directory",
            path=str(home),
            hint="pass --home PATH or set AGENT_MEMORY_HOME; agent-memory init PATH creates a Home",
        )
    oplog = JsonlLog(home / "log")
    if check:
        try:
            count = oplog.verify()
        except LogError as exc:
            if as_json:
                click.echo(json.dumps({"ok": False, "error": str(exc)}, ensure_ascii=False))
            click.echo(f"log FAILED: {exc}", err=True)
            raise click.exceptions.Exit(1) from None
        if as_json:
            click.echo(json.dumps({"ok": True, "entries": count}))
        else:
            click.echo(f"log ok: {count} entries")
        return
    for entry in itertools.islice(oplog.entries(since_seq=since), limit):
        if as_json:
            click.echo(entry.line.decode("utf-8"))
        else:
            ids = ",".join(entry.record_ids) or "-"
            details = json.dumps(entry.details, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
            time = entry.to_wire()["time"]
            click.echo(f"{entry.seq} {time} {entry.actor} {entry.action} {ids} {details}")

"""``agent-memory log``: read and check a Home's operation log (``<home>/log/*.jsonl``).

Read-only: the command never appends, repairs or cuts a torn tail (DESIGN.md §3, §9; seed 000
§7.1 capability 5, §8 "Timeline"). Errors other than a failed check propagate as
``AgentMemoryError`` for :func:`agent_memory.cli.main` to print.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from agent_memory.log.jsonl import JsonlLog

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
    "--verify",
    "check",
    is_flag=True,
    help="Check every line, the hash chain and the signed checkpoints of its head instead of listing.",
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
    then compares the log with every signed checkpoint of its head it can find (issue 19): the
    checkpoint file beside the Home's key and the ``Agent-Memory-Checkpoint`` trailer of each
    git commit. It prints ``log ok: N entries`` and the witnesses (exit 0), or one
    ``log FAILED:`` line per problem, naming the file and line or the witness that disagreed:
    a cut tail, a missing month file, a line rewritten with the chain recomputed, reordered
    lines (exit 1). Warnings (entries no checkpoint covers yet, no checkpoint at all) go to
    stderr and keep exit 0. A torn tail (an append cut short by a crash) counts as a problem;
    the next append removes it. Nothing is ever written. ``--json`` prints
    ``{"ok", "entries", "failures", "warnings", "witnesses", "error"}``.
    """
    from agent_memory.errors import ConfigError
    from agent_memory.log.jsonl import JsonlLog

    if not home.is_dir():
        raise ConfigError(
            "no Home here: not a directory",
            path=str(home),
            hint="pass --home PATH or set AGENT_MEMORY_HOME; agent-memory init PATH creates a Home",
        )
    oplog = JsonlLog(home / "log")
    if check:
        _verify(home, oplog, as_json)
        return
    for entry in itertools.islice(oplog.entries(since_seq=since), limit):
        if as_json:
            click.echo(entry.line.decode("utf-8"))
        else:
            ids = ",".join(entry.record_ids) or "-"
            details = json.dumps(entry.details, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
            time = entry.to_wire()["time"]
            click.echo(f"{entry.seq} {time} {entry.actor} {entry.action} {ids} {details}")


def _verify(home: Path, oplog: JsonlLog, as_json: bool) -> None:
    from agent_memory.doctor.log_audit import LogAudit, audit_log
    from agent_memory.errors import LogError
    from agent_memory.home import Home

    if (home / "memory.toml").is_file():
        audit = audit_log(Home.open(home))
    else:  # a bare log folder: the chain only, no witness to compare with
        try:
            audit = LogAudit(oplog.verify(), (), ("not a Home: no checkpoint to compare with",), ())
        except LogError as exc:
            audit = LogAudit(0, (str(exc),), (), ())
    if as_json:
        click.echo(
            json.dumps(
                {
                    "ok": audit.ok,
                    "entries": audit.entries,
                    "failures": list(audit.failures),
                    "warnings": list(audit.warnings),
                    "witnesses": list(audit.witnesses),
                    **({"error": audit.failures[0]} if audit.failures else {}),
                },
                ensure_ascii=False,
            )
        )
    for line in audit.warnings:
        click.echo(f"log warning: {line}", err=True)
    if not audit.ok:
        for line in audit.failures:
            click.echo(f"log FAILED: {line}", err=True)
        raise click.exceptions.Exit(1)
    if not as_json:
        click.echo(f"log ok: {audit.entries} entries")
        for line in audit.witnesses:
            click.echo(f"  {line}")

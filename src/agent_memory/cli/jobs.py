"""Jobs commands: capture, inbox, archive-inbox, schedule and render (seed 000 §8-§13; DESIGN.md §8).

Each command opens the Home and calls :mod:`agent_memory.jobs` in-process. Checks that find
problems (malformed inbox lines, edited archive files, hand-edited views) print one line per
problem on stderr and exit with status 1; refusals (nothing written) exit with status 3.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import click

from agent_memory.cli.common import (
    commit_home,
    echo_json,
    home_option,
    json_option,
    non_empty,
    open_home,
    quiet_option,
)
from agent_memory.cli.progress import progress

_KINDS = click.Choice(["state", "knowledge"])


@click.command()
@click.argument("text")
@click.option("--kind", type=_KINDS, default="knowledge", show_default=True, help="state or knowledge.")
@click.option("--subject", metavar="KEY", default=None, help="Exact key of a state item, e.g. host:staging.")
@click.option(
    "--source",
    metavar="REF",
    required=True,
    callback=non_empty,
    help="Where it came from (required, seed 000 §9).",
)
@click.option("--taint", "taints", multiple=True, metavar="LABEL", help="The session's taint, e.g. external.")
@click.option(
    "--at",
    metavar="TIME",
    default=None,
    help="When it was captured (ISO-8601; without an offset: the Home's time zone) [default: now].",
)
@home_option
@json_option
def capture(
    text: str,
    kind: str,
    subject: str | None,
    source: str,
    taints: tuple[str, ...],
    at: str | None,
    home: str | None,
    as_json: bool,
) -> None:
    """Append TEXT to the Home's inbox.md and print its id (mem-YYYY-MM-DD-NNN).

    The line is seed 000's minimum inbox format; the id's day is the local day in the Home's
    time zone and NNN is one more than that day's highest ordinal. archive-inbox later moves
    the line to archive/YYYY-MM-DD.md, where archive/YYYY-MM-DD.md#<id> anchors it for good.
    A state item needs --subject; when unsure, capture as knowledge.
    """
    from agent_memory.jobs.inbox import capture as capture_item
    from agent_memory.jobs.inbox import parse_local_time

    started = time.time()
    opened = open_home(home)
    when = parse_local_time(at, opened.settings.zone, field="--at") if at is not None else None
    item = capture_item(opened, text, kind=kind, source=source, subject=subject, taint=taints, at=when)
    commit_home(opened, "capture", since=started)
    if as_json:
        echo_json(item.to_json())
    else:
        click.echo(item.id)


@click.command()
@home_option
@json_option
def inbox(home: str | None, as_json: bool) -> None:
    """Check inbox.md: list its items and report each malformed line with its number.

    Nothing is changed: a malformed line stays where it is until you fix it. Exit status 1
    when a line is malformed (archive-inbox refuses to run until then).
    """
    from agent_memory.jobs.inbox import INBOX, read_inbox

    opened = open_home(home)
    parsed = read_inbox(opened)
    if as_json:
        echo_json(
            {
                "items": [item.to_json() for item in parsed.items],
                "problems": [{"line": p.line, "reason": p.reason, "text": p.raw} for p in parsed.problems],
            }
        )
    else:
        for item in parsed.items:
            label = item.kind.value + (f" {item.subject}" if item.subject else "")
            taint = f" [taint: {', '.join(item.taint)}]" if item.taint else ""
            click.echo(f"{item.line:>5}  {item.id}  ({label}) {item.text}{taint}")
        for problem in parsed.problems:
            click.echo(f"{opened.root / INBOX}:{problem.line}: {problem.reason}", err=True)
        click.echo(f"{len(parsed.items)} item(s), {len(parsed.problems)} malformed line(s)", err=True)
    if parsed.problems:
        raise click.exceptions.Exit(1)


@click.command("archive-inbox")
@click.option("--check", is_flag=True, help="Only verify archive/ against the log; write nothing.")
@home_option
@json_option
def archive_inbox(check: bool, home: str | None, as_json: bool) -> None:
    """Archive inbox.md into archive/YYYY-MM-DD.md (append-only) and start a fresh inbox.

    Deterministic, no model (seed 000 §13). Each item goes to the archive file of its own
    day; an inbox without items is skipped (logged). The log keeps a digest of every
    appended segment, so an archive file edited afterwards is found and reported, never
    repaired: archive-inbox refuses to append to it. Exit status 1 when an archive file
    fails the check, 3 when the run was refused (malformed inbox lines, an edited target).
    """
    from agent_memory.jobs.archive import archive_inbox as run
    from agent_memory.jobs.archive import check_archive

    started = time.time()
    opened = open_home(home)
    if check:
        problems = check_archive(opened)
        if as_json:
            echo_json({"problems": [str(p) for p in problems]})
        for problem in problems:
            click.echo(f"{opened.root / problem.file}: {problem.kind}: {problem.detail}", err=True)
        if not as_json and not problems:
            click.echo("archive ok")
        if problems:
            raise click.exceptions.Exit(1)
        return
    result = run(opened)
    commit_home(opened, "archive-inbox", since=started)
    if as_json:
        echo_json(result.to_json())
    elif result.finished is not None:
        click.echo(f"finished the interrupted run of log seq {result.finished}")
    elif result.skipped:
        click.echo("skipped: the inbox holds no item")
    else:
        files = ", ".join(segment.file for segment in result.segments)
        click.echo(f"archived {len(result.item_ids)} item(s) into {files}")
    for problem in result.problems:
        click.echo(f"{opened.root / problem.file}: {problem.kind}: {problem.detail}", err=True)
    if result.problems:
        raise click.exceptions.Exit(1)


@click.command()
@click.option(
    "--print",
    "print_",
    type=click.Choice(["cron", "systemd", "launchd"]),
    required=True,
    help="Which scheduler's entry to print.",
)
@click.option("--time", "at", metavar="HH:MM", default="04:10", show_default=True, help="Time of day.")
@home_option
def schedule(print_: str, at: str, home: str | None) -> None:
    """Print the crontab line, systemd user units or launchd plist that runs archive-inbox daily.

    Nothing is installed: the output says where to put it. No agent-memory daemon runs;
    the machine's scheduler calls the installed command with absolute paths (seed 000 §13).
    """
    from datetime import time

    from agent_memory.jobs.schedule import schedule_text

    try:
        when = time.fromisoformat(at)
    except ValueError:
        raise click.BadParameter(f"not a time of day: {at!r}", param_hint="--time") from None
    click.echo(schedule_text(print_, open_home(home), _command(), at=when.replace(second=0)), nl=False)


@click.command()
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="MEMORY.md budget in tokens.",
)
@click.option("--force", is_flag=True, help="Overwrite views edited by hand (their edits are lost).")
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 if a view is out of date or edited, or a note is refused.",
)
@home_option
@json_option
@quiet_option
def render(budget: int, force: bool, check: bool, home: str | None, as_json: bool, quiet: bool) -> None:
    """Write MEMORY.md, index.md and topics/*.md from the Home's notes and log.

    MEMORY.md (loaded at every session start) holds only active records that are untainted
    or approved, not withdrawn, within --budget tokens (4 characters each); index.md maps the
    topics with their triggers; topics/ keep history as history. Rendering twice gives the
    same bytes. A view edited by hand is reported and not overwritten unless --force.
    A note that does not parse or verify (an edited frontmatter, a removed signature) is
    left out of every view and named on stderr; the exit status is then 1.
    """
    from agent_memory.jobs.views import render as run

    started = time.time()
    opened = open_home(home)
    with progress("rendering views", quiet=quiet or as_json):
        result = run(opened, force=force, budget_tokens=budget, check=check)
    if not check:
        commit_home(opened, "render", since=started)
    if as_json:
        echo_json(result.to_json())
    else:
        verb = "would write" if check else "wrote"
        if result.written:
            click.echo(f"{verb} {', '.join(result.written)}")
        if result.removed:
            click.echo(f"{'would remove' if check else 'removed'} {', '.join(result.removed)}")
        click.echo(f"{len(result.unchanged)} view(s) unchanged")
        over = f" ({result.over_budget} more over the budget)" if result.over_budget else ""
        records = f"{result.shown} record{'' if result.shown == 1 else 's'}"
        click.echo(
            f"MEMORY.md: {records} whose bodies use {result.used_tokens} of the {budget}-token budget "
            f"(4 characters a token; headings, dates and sources not counted){over}"
        )
    discarded = set(result.written) | set(result.removed) if force and not check else set()
    for problem in result.problems:
        note = " (discarded by --force)" if problem.path in discarded else ""
        click.echo(f"{opened.root / problem.path}: {problem.detail}{note}", err=True)
    for refused in result.refused:
        click.echo(f"refused (left out of every view): {refused}", err=True)
    if result.refused:
        click.echo(
            "hint: run `agent-memory doctor`; restore the note from git or `agent-memory sync`", err=True
        )
    if result.refused or (check and (result.written or result.removed or result.problems)):
        raise click.exceptions.Exit(1)


def _command() -> list[str]:
    """The argv that starts this agent-memory: the installed script next to this Python, else -m."""
    beside = shutil.which("agent-memory", path=str(Path(sys.executable).parent))
    found = beside or shutil.which("agent-memory")
    return [str(Path(found).absolute())] if found else [sys.executable, "-m", "agent_memory"]

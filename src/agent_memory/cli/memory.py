"""Porcelain commands: remember, recall, supersede, resolve, archive and status (DESIGN.md §8)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import click

from agent_memory.cli.common import default_source, echo_json, home_option, json_option, non_empty
from agent_memory.records.fields import screen_plain

if TYPE_CHECKING:
    from agent_memory.memory import Memory
    from agent_memory.records.record import MemoryRecord

_KINDS = click.Choice(["state", "knowledge"])


def _open(home: str | None, taint: tuple[str, ...] = ()) -> Memory:
    from agent_memory.home import resolve_home
    from agent_memory.memory import Memory

    return Memory.open(resolve_home(home), taint=taint, source_kind="cli")


def _time(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    from agent_memory.errors import RecordError
    from agent_memory.records.wire import parse_timestamp

    try:
        return parse_timestamp(value, option)
    except RecordError as exc:
        raise click.BadParameter(exc.detail, param_hint=f"--{option.replace('_', '-')}") from None


@click.command()
@click.argument("text")
@click.option(
    "--source",
    metavar="REF",
    default=None,
    callback=non_empty,
    help="Where it came from [default: cli:<user>@<date>].",
)
@click.option(
    "--type",
    "type_",
    metavar="T",
    default="fact",
    show_default=True,
    help="What it is: fact, episode (an event), procedure (how to), rule (needs --evidence).",
)
@click.option(
    "--kind",
    type=_KINDS,
    default=None,
    help="How it updates: state (one current value per --subject) or knowledge (adds up) [default].",
)
@click.option(
    "--subject", metavar="KEY", default=None, help="Exact key of a state record, e.g. host:staging."
)
@click.option("--tag", "tags", multiple=True, metavar="T", help="A tag; repeat for more.")
@click.option(
    "--evidence",
    "evidence",
    multiple=True,
    metavar="ID",
    help="A record (mem:…) it rests on; repeat for more. A --type rule needs one.",
)
@click.option("--taint", "taints", multiple=True, metavar="LABEL", help="A taint label, e.g. external.")
@click.option("--namespace", default="default", show_default=True, help="Tenancy key (user:…, project:…).")
@click.option("--occurred-at", metavar="TIME", default=None, help="When it happened (ISO-8601 with offset).")
@click.option(
    "--valid-from", metavar="TIME", default=None, help="When it starts to hold (ISO-8601 with offset)."
)
@click.option("--confidence", type=click.FloatRange(0, 1), default=0.9, show_default=True)
@home_option
@json_option
def remember(
    text: str,
    source: str | None,
    type_: str,
    kind: str | None,
    subject: str | None,
    tags: tuple[str, ...],
    evidence: tuple[str, ...],
    taints: tuple[str, ...],
    namespace: str,
    occurred_at: str | None,
    valid_from: str | None,
    confidence: float,
    home: str | None,
    as_json: bool,
) -> None:
    """Remember TEXT and print the record id.

    Two separate axes describe a record: --type says what it is (fact, episode,
    procedure, rule; a rule names the records it rests on with --evidence) and --kind
    how it updates (knowledge adds up; state keeps one current value per --subject).

    An identical live record is not copied (deduped). A state record with the subject of a
    live one supersedes it when newer and untainted, and otherwise opens a dispute. Control
    characters (other than tabs and line breaks) in TEXT, --subject, --tag or --source are
    refused, naming the field; nothing is written.
    """
    if kind == "state" and not subject:
        raise click.UsageError("--kind state needs --subject KEY (the one current value is per subject)")
    screen_plain(text=text, subject=subject, tags=tags, source=source)
    with _open(home) as memory:
        result = memory.remember(
            text,
            source=source or default_source(),
            type=type_,
            kind=kind,
            subject=subject,
            tags=tags,
            evidence=evidence,
            taint=taints,
            namespace=namespace,
            occurred_at=_time(occurred_at, "occurred_at"),
            valid_from=_time(valid_from, "valid_from"),
            confidence=confidence,
        )
    if as_json:
        echo_json(result.to_json())
        return
    click.echo(result.record_id)
    for flag, text_ in (
        (result.deduped, "deduped: an identical record exists"),
        (result.superseded, f"superseded {result.superseded}"),
        (result.disputed_with, f"disputes {result.disputed_with}: resolve with agent-memory resolve"),
        (result.pending, "pending review: its subject is already disputed"),
        (result.quarantined, "quarantined until reviewed (tainted)"),
    ):
        if flag:
            click.echo(text_, err=True)


def _words(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """Click callback: refuse an empty or blank QUERY (a usage error, exit 2), as the MCP tool does."""
    if not value.strip():
        raise click.BadParameter("must hold at least one word (an empty query matches nothing)")
    return value


@click.command()
@click.argument("query", callback=_words)
@click.option(
    "--budget",
    "budget",
    type=click.IntRange(min=1),
    default=2000,
    show_default=True,
    help="Token budget (4 chars/token).",
)
@click.option("--k", "k", type=click.IntRange(min=1), default=None, help="At most this many records.")
@click.option("--include-history", is_flag=True, help="Also show superseded predecessors.")
@click.option("--include-archived", is_flag=True, help="Also consider archived records.")
@click.option("--as-of", metavar="TIME", default=None, help="What the Home believed at this record time.")
@click.option("--valid-at", metavar="TIME", default=None, help="What held at this valid time.")
@click.option("--namespace", default=None, help="Only this namespace.")
@home_option
@json_option
def recall(
    query: str,
    budget: int,
    k: int | None,
    include_history: bool,
    include_archived: bool,
    as_of: str | None,
    valid_at: str | None,
    namespace: str | None,
    home: str | None,
    as_json: bool,
) -> None:
    """Recall what the Home knows about QUERY, within a token budget, as dated, sourced testimony.

    Prints the prompt block (one dated, sourced line per record, disputes grouped), then one
    line per record in rank order: its rank, id, kind/state (and review state when there is
    one), score and the reasons it was included. When nothing matches, the block says so and
    a one-line note goes to stderr; the exit status is still 0. --json prints the records
    with the same fields (DESIGN.md §8). An empty or blank QUERY is a usage error (exit 2).
    """
    with _open(home) as memory:
        result = memory.recall(
            query,
            budget_tokens=budget,
            k=k,
            include_history=include_history,
            include_archived=include_archived,
            as_of=_time(as_of, "as_of"),
            valid_at=_time(valid_at, "valid_at"),
            namespace=namespace,
        )
    if as_json:
        echo_json(result.to_json())
        return
    click.echo(result.as_prompt_block())
    for note in result.notes:
        if "could not be read" in note:
            click.echo(f"agent-memory: {note}", err=True)
    if not result.records:
        click.echo(f"agent-memory: no records matched {' '.join(query.split())!r}", err=True)
        return
    click.echo()
    width = len(str(len(result.records)))
    for rank, item in enumerate(result.records, start=1):
        record = item.record
        label = f"{record.type.value} {record.effective_kind.value}/{record.state.value}"
        if str(item.review) != "none":
            label += f"/{item.review}"
        click.echo(
            f"{rank:>{width}}. {record.id}  {label}  score {item.score:.3f}  {'; '.join(item.reasons)}"
        )


@click.command()
@click.argument("old_id")
@click.argument("text")
@click.option("--reason", required=True, help="Why the old record is replaced.")
@click.option(
    "--source", metavar="REF", default=None, callback=non_empty, help="Where the correction came from."
)
@click.option("--expected-version", type=int, default=None, help="Fail unless OLD_ID has this many versions.")
@home_option
@json_option
def supersede(
    old_id: str,
    text: str,
    reason: str,
    source: str | None,
    expected_version: int | None,
    home: str | None,
    as_json: bool,
) -> None:
    """Replace the active record OLD_ID with a new record of TEXT (same kind, subject, namespace).

    Control characters (other than tabs and line breaks) in TEXT or --source are refused, and
    so is a TEXT identical to OLD_ID's current text (exit 3; nothing is written either way).
    """
    screen_plain(text=text, source=source)
    with _open(home) as memory:  # Memory.supersede refuses a TEXT identical to the current one
        result = memory.supersede(
            old_id, text, source=source or default_source(), reason=reason, expected_version=expected_version
        )
    if as_json:
        echo_json(result.to_json())
    else:
        click.echo(result.record_id)


@click.command()
@click.argument("winner_id")
@click.argument("loser_id")
@click.option("--reason", required=True, help="Why the winner is right.")
@home_option
@json_option
def resolve(winner_id: str, loser_id: str, reason: str, home: str | None, as_json: bool) -> None:
    """Settle a dispute: WINNER_ID returns to active, LOSER_ID is superseded by it.

    ``--json`` prints ``{"records": [{"record_id", "state"}, …]}``, winner first.
    """
    with _open(home) as memory:
        versions = memory.resolve(winner_id, loser_id, reason)
    if as_json:
        echo_json({"records": [_moved(v) for v in versions]})
    else:
        click.echo(f"resolved: {winner_id} active, {loser_id} superseded")


@click.command(name="archive")
@click.argument("record_id")
@click.option("--reason", required=True, help="Why it is retired.")
@home_option
@json_option
def archive_(record_id: str, reason: str, home: str | None, as_json: bool) -> None:
    """Retire RECORD_ID (terminal; the content is kept, recall shows it only with --include-archived).

    ``--json`` prints ``{"records": [{"record_id", "state"}]}``.
    """
    with _open(home) as memory:
        retired = memory.archive(record_id, reason)
    if as_json:
        echo_json({"records": [_moved(retired)]})
    else:
        click.echo(f"archived {record_id}")


def _moved(record: MemoryRecord) -> dict[str, object]:
    """A version a lifecycle command wrote, as its ``--json`` names it."""
    return {"record_id": record.id, "state": record.state.value}


def _counts(counts: dict[str, int]) -> str:
    """``{"active": 3, "superseded": 1}`` as ``3 active, 1 superseded`` (``none`` when empty)."""
    return ", ".join(f"{n} {name}" for name, n in counts.items()) or "none"


@click.command()
@home_option
@json_option
def status(home: str | None, as_json: bool) -> None:
    """Show counts by state, type and kind, open disputes, quarantine, and whether each index is fresh."""
    with _open(home) as memory:
        report = memory.status()
    if as_json:
        echo_json(report)
        return
    click.echo(f"records      {report['records']}: {_counts(report['by_state'])}")
    click.echo(f"types        {_counts(report['by_type'])}  (--type: what a record is)")
    click.echo(f"kinds        {_counts(report['by_kind'])}  (--kind: state by subject, knowledge adds up)")
    click.echo(f"disputes     {report['open_disputes']} open, {report['pending']} pending review")
    click.echo(f"quarantined  {report['quarantined']}")
    review = report["maintenance"]
    rate = "n/a" if review["regret_rate"] is None else f"{review['regret_rate']:.2f}"
    click.echo(
        f"maintenance  {review['accepted']} accepted, {review['declined']} declined, "
        f"{review['reverted']} reverted (regret rate {rate})"
    )
    search = report["search"]
    click.echo(f"search       {', '.join(search['recipes'])}: {search['why']}")
    for name, why in search["unavailable"].items():
        click.echo(f"unavailable  {name}: {why}")
    from agent_memory.doctor.diagnose import index_state  # worded as doctor's indexes check words it

    for index in report["indexes"]:
        click.echo(f"index        {index['name']} ({index['kind']}): {index_state(index)}")
    for problem in report["unreadable"]:
        click.echo(f"unreadable   {problem}")

"""``agent-memory show``, ``history`` and ``list``: read records and their versions (seed 001 stores)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from agent_memory.cli.common import echo_json, home_option, json_option, open_home

if TYPE_CHECKING:
    from agent_memory.records.record import MemoryRecord
    from agent_memory.stores.files import FileStore


@click.command()
@click.argument("record_id")
@home_option
@json_option
def show(record_id: str, home: str | None, as_json: bool) -> None:
    """Print the latest version of RECORD_ID as its note file (or its wire object with --json).

    A pending record (held back for review because its subject was disputed, DESIGN.md §9)
    is shown as it waits in ``proposals/pending/``, marked: a ``pending: …`` line on stderr
    before the note, or ``"pending": true`` added to the wire object with ``--json`` (a
    stored record's object has no ``pending`` key).

    Raises:
        RecordNotFound: Neither a stored nor a pending record has that id (exit status 3).
    """
    from agent_memory.errors import RecordNotFound
    from agent_memory.records.note import dump_note
    from agent_memory.write.held import PendingRecords

    opened = open_home(home)
    pending = False
    try:
        record = opened.store().get(record_id)
    except RecordNotFound:
        held = PendingRecords.for_home(opened.root).find(record_id)
        if held is None:
            raise
        record, pending = held, True
    if as_json:
        echo_json({**record.to_wire(), "pending": True} if pending else record.to_wire())
        return
    if pending:
        click.echo(
            f"pending: {record_id} is not stored yet: it waits for review because its subject was "
            f"disputed; `agent-memory accept {record_id}` writes it, "
            f"`agent-memory decline {record_id}` drops it",
            err=True,
        )
    click.echo(dump_note(record).decode("utf-8"), nl=False)


@click.command()
@click.argument("record_id")
@home_option
@json_option
def history(record_id: str, home: str | None, as_json: bool) -> None:
    """Print every version of RECORD_ID, oldest first: version, time, state and why it changed.

    Read through the verified read path, as ``Memory.history``: a version whose note was
    edited by hand, lost its signature or is signed by a key the Home does not trust is an
    error naming it (exit 3), never shown.
    """
    from agent_memory.stores.verified import verified_history

    opened = open_home(home)
    versions = verified_history(
        opened.store(), record_id, home_signer=opened.signer(), trusted=opened.settings.trusted_signers
    )
    if as_json:
        echo_json([{"version": n, **v.to_wire()} for n, v in enumerate(versions, start=1)])
        return
    for number, version in enumerate(versions, start=1):
        assert version.updated_at is not None  # noqa: S101 - always set by the record
        reason = f"  ({version.state_reason})" if version.state_reason else ""
        link = f"  -> {version.superseded_by}" if version.superseded_by else ""
        click.echo(f"{number:>6}  {version.updated_at.isoformat()}  {version.state.value}{link}{reason}")


@click.command(name="list")
@click.option(
    "--state", type=click.Choice(["active", "superseded", "transitional", "archived"]), default=None
)
@click.option(
    "--type",
    "type_",
    type=click.Choice(["fact", "episode", "procedure", "rule"]),
    default=None,
    help="Only records of this type (what a record is).",
)
@click.option("--tag", default=None, help="Only records with this tag.")
@click.option(
    "--kind",
    type=click.Choice(["state", "knowledge"]),
    default=None,
    help="Only this kind (how it updates: state by subject, knowledge adds up).",
)
@click.option("--subject", default=None, help="Only state records with this exact subject.")
@click.option("--namespace", default=None, help="Only this namespace.")
@home_option
@json_option
def list_(
    state: str | None,
    type_: str | None,
    tag: str | None,
    kind: str | None,
    subject: str | None,
    namespace: str | None,
    home: str | None,
    as_json: bool,
) -> None:
    """List the latest version of every record matching the filters, oldest first (by created_at, id).

    One line per record, in aligned columns: id, state (``active/withdrawn`` while a
    withdrawal in force covers it), type (fact, episode, procedure, rule: what the record
    is), kind[:subject] (knowledge adds up; state holds one current value per subject),
    the date of its valid time and the first 80 characters of its body. Unreadable notes
    are skipped and named on stderr.
    """
    from agent_memory.records.record import Kind, RecordType, State
    from agent_memory.stores.base import filter_records

    opened = open_home(home)
    store = opened.store()
    records, problems = _readable(store)
    selected = filter_records(
        records,
        state=State(state) if state else None,
        type=RecordType(type_) if type_ else None,
        tag=tag,
        kind=Kind(kind) if kind else None,
        subject=subject,
        namespace=namespace,
    )
    for problem in problems:
        click.echo(f"unreadable: {problem}", err=True)
    if as_json:
        echo_json([r.to_wire() for r in selected])
        return
    from agent_memory.governance.gate import Gate

    view = Gate(opened.log(), store).view()
    rows = []
    for record in selected:
        kind = record.effective_kind.value + (f":{record.subject}" if record.subject else "")
        body = record.body.replace("\n", " ")
        body = body if len(body) <= 80 else body[:79] + "…"
        day = record.effective_valid_from.date().isoformat()
        state = record.state.value if view.is_exposed(record) else f"{record.state.value}/withdrawn"
        rows.append((record.id, state, record.type.value, kind, day, body))
    # Columns as wide as their widest cell, so active/withdrawn or a long subject never shifts a row.
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(4)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True)]
        click.echo("  ".join([*cells, row[4], row[5]]))


def _readable(store: FileStore) -> tuple[list[MemoryRecord], list[str]]:
    """Read every record's latest version, collecting unreadable notes instead of stopping."""
    from agent_memory.errors import StoreError

    records, problems = [], []
    for record_id in sorted(store.version_tokens()):
        try:
            records.append(store.get(record_id))
        except StoreError as exc:
            problems.append(str(exc))
    return records, problems

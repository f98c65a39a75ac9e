"""``agent-memory doctor``: integrity checks of a Home, and repair of what is derived (issue 8, item 2)."""

from __future__ import annotations

import click

from agent_memory.cli.common import echo_json, home_option, json_option, open_home

_LABELS = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}


@click.command()
@home_option
@json_option
@click.option(
    "--fix",
    is_flag=True,
    help="Repair what is derived (indexes, open intents, stale views, the salience sidecar).",
)
def doctor(home: str | None, as_json: bool, fix: bool) -> None:
    """Check the Home: notes, signatures, log chain, intents, indexes, views, archive, state, salience.

    Each check prints ``ok``, ``warn`` or ``FAIL`` and one line per problem, naming the
    file, record, log seq or index. ``FAIL`` is what loses or breaks truth (a note
    missing from notes/ that the log wrote, a damaged note, a broken log chain, an
    interrupted write, a hand-edited view); ``warn`` is derived state that is stale and
    names its fix (views not rendered since the last write, an index behind the notes:
    the next recall, ``render`` or ``doctor --fix`` rebuilds it). With ``--fix``, repair
    only what can be made again from the notes and the log: rebuild dirty indexes, roll
    forward interrupted writes, re-render stale views (never views edited by hand) and
    reset a damaged salience sidecar (a note missing from notes/ is never
    "fixed"). Notes, log and archive content are never changed.

    Then the conformance report: the seed 000 ``memory:L0``-``L5`` level the Home meets,
    each §21 checklist item and each seed 003 MUST as pass, fail or not-applicable with
    its reason (it does not change the exit status).

    Exit status 0 when healthy (after any repairs; warnings allowed), 1 when a failure
    remains, 3 when the Home cannot be opened. (DESIGN.md §8.)
    """
    from agent_memory.doctor.diagnose import doctor as run_doctor

    report = run_doctor(open_home(home), fix=fix)
    if as_json:
        echo_json(report.to_json())
    else:
        for line in report.fixed:
            click.echo(f"fixed {line}")
        for check in report.checks:
            click.echo(f"{_LABELS[check.status]} {check.name}")
            for detail in check.details:
                click.echo(f"     {detail}")
        conformance = report.conformance
        if conformance is not None:
            click.echo(f"conformance: {conformance.label}")
            for number, (met, reason) in enumerate(conformance.levels):
                click.echo(f"  {'met ' if met else 'not '} memory:L{number}: {reason}")
            for item in (*conformance.checklist, *conformance.musts):
                click.echo(f"  {item.status:<14} {item.ref} {item.text}: {item.reason}")
        warned = f" with {len(report.warnings)} warning(s)" if report.warnings else ""
        click.echo(f"healthy{warned}" if report.healthy else "problems found", err=True)
    if not report.healthy:
        raise click.exceptions.Exit(1)

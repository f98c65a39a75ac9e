"""``agent-memory doctor``: integrity checks of a Home, and repair of what is derived (issue 8, item 2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from agent_memory.cli.common import echo_json, home_option, json_option, open_home, quiet_option
from agent_memory.cli.progress import progress

if TYPE_CHECKING:
    from agent_memory.doctor.diagnose import DoctorReport

__all__ = ["doctor", "report_lines", "verdict"]

_LABELS = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}


@click.command()
@home_option
@json_option
@click.option(
    "--fix",
    is_flag=True,
    help="Repair what is derived (indexes, open intents, stale views, the salience sidecar).",
)
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Print every check and the whole conformance checklist, not only the verdict and problems.",
)
@quiet_option
def doctor(home: str | None, as_json: bool, fix: bool, verbose: bool, quiet: bool) -> None:
    """Check the Home: notes, signatures, log chain, intents, indexes, views, archive, state, salience.

    By default it prints a short verdict: ``healthy`` or ``problems found``, the checks
    that passed, the seed 000 ``memory:L0``-``L5`` level reached and what the next level
    needs, then only the checks that warn or FAIL (one line per problem, naming the
    file, record, log seq or index) and the checklist items not met (``unmet``). ``--verbose``
    prints every check and the whole conformance report (each §21 checklist item and
    each seed 003 MUST as pass, fail or not-applicable with its reason); ``--json`` gives
    the same in full, for machines.

    ``FAIL`` is what loses or breaks truth (a note missing from notes/ that the log wrote,
    a damaged note, a broken log chain, an interrupted write, a hand-edited view);
    ``warn`` is derived state that is stale and names its fix (views not rendered since
    the last write, an index behind the notes: the next recall, ``render`` or ``doctor
    --fix`` rebuilds it). With ``--fix``, repair only what can be made again from the
    notes and the log: rebuild dirty indexes, roll forward interrupted writes, re-render
    stale views (never views edited by hand) and reset a damaged salience sidecar (a
    note missing from notes/ is never "fixed"). Notes, log and archive content are never
    changed. A spinner shows on stderr while it runs (only on a terminal; not with
    --quiet or --json).

    Exit status 0 when healthy (after any repairs; warnings allowed), 1 when a failure
    remains, 3 when the Home cannot be opened; the conformance level does not change it.
    (DESIGN.md §8.)
    """
    from agent_memory.doctor.diagnose import doctor as run_doctor

    opened = open_home(home)
    with progress(f"checking {opened.root}", quiet=quiet or as_json):
        report = run_doctor(opened, fix=fix)
    if as_json:
        echo_json(report.to_json())
    else:
        for line in report_lines(report, verbose=verbose):
            click.echo(line)
    if not report.healthy:
        raise click.exceptions.Exit(1)


def verdict(report: DoctorReport) -> str:
    """Return doctor's one-line verdict, e.g. ``healthy: 9 of 9 checks ok, memory:L4 reached``.

    The level part names what the next level needs when one is not met.
    """
    passed = sum(1 for check in report.checks if check.status == "ok")
    warned = len(report.warnings)
    state = "healthy" if report.healthy else "problems found"
    parts = [f"{passed} of {len(report.checks)} checks ok"]
    if warned:
        parts.append(f"{warned} warning(s)")
    conformance = report.conformance
    if conformance is not None:
        reached = f"{conformance.label} reached"
        following = 0 if conformance.level is None else conformance.level + 1
        if following < len(conformance.levels):
            reached += f" (memory:L{following} needs: {conformance.levels[following][1]})"
        parts.append(reached)
    return f"{state}: {', '.join(parts)}"


def report_lines(report: DoctorReport, *, verbose: bool = False) -> list[str]:
    """Return doctor's text output: the verdict, then problems only (everything with ``verbose``).

    Args:
        report: What :func:`~agent_memory.doctor.diagnose.doctor` found.
        verbose: Every check with its details and the whole conformance checklist.

    Returns:
        Lines without newlines; the first is :func:`verdict` unless ``verbose``, where the
        checks come first as before and the verdict last.
    """
    lines = [f"fixed {line}" for line in report.fixed]
    shown = report.checks if verbose else [c for c in report.checks if c.status != "ok"]
    for check in shown:
        lines.append(f"{_LABELS[check.status]} {check.name}")
        lines.extend(f"     {detail}" for detail in check.details)
    conformance = report.conformance
    if conformance is not None:
        items = (*conformance.checklist, *conformance.musts)
        if verbose:
            lines.append(f"conformance: {conformance.label}")
            for number, (met, reason) in enumerate(conformance.levels):
                lines.append(f"  {'met ' if met else 'not '} memory:L{number}: {reason}")
            lines.extend(f"  {item.status:<14} {item.ref} {item.text}: {item.reason}" for item in items)
        else:
            lines.extend(
                f"unmet {item.ref} {item.text}: {item.reason}" for item in items if item.status == "fail"
            )
    if verbose:
        lines.append(verdict(report))
    else:
        lines.insert(0, verdict(report))
        lines.append("every check and the full conformance checklist: agent-memory doctor --verbose")
    return lines

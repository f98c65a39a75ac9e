"""Maintenance commands: ``consolidate`` (issue 7 item 4; DESIGN.md §5 "Maintenance").

``consolidate`` applies only what a job may apply on its own (exact dedup, opening a
dispute; DESIGN.md §9) and files every other change as a pending proposal under
``proposals/pending-consolidation/`` for the review flow. ``--dry-run`` writes nothing.
"""

from __future__ import annotations

import click

from agent_memory.cli.common import echo_json, home_option, json_option

__all__ = ["consolidate"]


@click.command()
@home_option
@click.option("--dry-run", is_flag=True, help="Report what would be done; write nothing.")
@json_option
def consolidate(home: str | None, dry_run: bool, as_json: bool) -> None:
    """Consolidate the Home: dedup, near-duplicates, state, contradictions, promotion, rule flags, decay.

    Exact duplicates are superseded by their strongest copy and contradictions open a
    dispute at once; merges, state supersedes, promotions, rule flags and decay archival are
    written as pending proposals (``proposals/pending-consolidation/<id>.json``), never
    applied. Prints one line per action, proposal and rejection with its reason; ``--json``
    prints ``{"actions", "proposals", "rejections", "stats", "dry_run"}``. Exit status 3 when
    the Home cannot be read or written.
    """
    from agent_memory.home import resolve_home
    from agent_memory.memory import Memory

    with Memory.open(resolve_home(home), source_kind="cli") as memory:
        report = memory.consolidate(dry_run=dry_run)
    if as_json:
        echo_json({**report.to_json(), "dry_run": dry_run})
        return
    stats = report.stats
    prefix = "would apply" if dry_run else "applied"
    click.echo(
        f"{stats['records']} records read ({stats['skipped_withdrawn']} withdrawn skipped), "
        f"{stats['pairs']} candidate pairs"
    )
    for action in report.actions:
        verb = "protected" if action.action == "protect" else prefix
        click.echo(f"{verb:<11}  {action.pass_name:<13} {action.action:<10} {' '.join(action.record_ids)}")
        click.echo(f"{'':<13}{action.reason}")
    for pending in report.proposals:
        click.echo(
            f"proposed     {pending.pass_name:<13} {pending.action:<10} {pending.id}  "
            + " ".join(pending.record_ids)
        )
        click.echo(f"{'':<13}{pending.reason}")
    for rejection in report.rejections:
        click.echo(f"rejected     {rejection.pass_name:<13} {' '.join(rejection.record_ids)}")
        click.echo(f"{'':<13}{rejection.detail}")
    click.echo(
        f"{len(report.actions)} actions, {len(report.proposals)} proposals"
        f"{'' if dry_run else ' filed'}, {len(report.rejections)} rejections"
    )

"""Maintenance commands: ``distill`` and ``consolidate`` (issue 7 items 3-4; DESIGN.md §5 "Maintenance").

``distill`` turns archived inbox lines into proposals, and ``consolidate`` files every change
it finds as a pending proposal: neither applies anything (DESIGN.md §9 "What jobs may apply on
their own: nothing"; ``accept`` applies). Both file under
``proposals/pending-consolidation/`` for the review flow (``proposals``, ``accept``,
``reject``, ``revert``) and, in a git Home, commit the run's proposals on a
``maintenance/<UTC stamp>`` branch. ``--dry-run`` writes nothing.
"""

from __future__ import annotations

import click

from agent_memory.cli.common import echo_json, home_option, json_option, quiet_option
from agent_memory.cli.progress import progress

__all__ = ["consolidate", "distill"]


@click.command()
@home_option
@click.option("--dry-run", is_flag=True, help="Report what would be done; write nothing.")
@json_option
@quiet_option
def consolidate(home: str | None, dry_run: bool, as_json: bool, quiet: bool) -> None:
    """Consolidate the Home: dedup, near-duplicates, state, contradictions, promotion, rule flags, decay.

    Applies nothing: every change — superseding exact duplicates by their strongest copy,
    opening a dispute between contradicting records, near-duplicate merges, state
    supersedes, promotions, rule flags, decay archival — is filed as a pending proposal
    (``proposals/pending-consolidation/<id>.json``; in a git Home also committed on a
    ``maintenance/<UTC stamp>`` branch) for ``proposals``, ``accept`` and ``reject``. Prints one
    line per proposal, protected record and rejection with its reason; ``--json`` prints
    ``{"actions", "proposals", "rejections", "stats", "branch", "dry_run"}`` (``actions`` are
    the records decay left alone). A spinner shows on stderr while it runs (only on a
    terminal; not with --quiet or --json). Exit status 3 when the Home cannot be read or written.
    """
    from agent_memory.home import resolve_home
    from agent_memory.memory import Memory

    with (
        progress("consolidating", quiet=quiet or as_json),
        Memory.open(resolve_home(home), source_kind="cli") as memory,
    ):
        report = memory.maintenance.consolidate(dry_run=dry_run)
    if as_json:
        echo_json({**report.to_json(), "dry_run": dry_run})
        return
    stats = report.stats
    click.echo(
        f"{stats['records']} records read ({stats['skipped_withdrawn']} withdrawn skipped), "
        f"{stats['pairs']} candidate pairs"
    )
    for action in report.actions:
        click.echo(f"protected    {action.pass_name:<13} {action.action:<10} {' '.join(action.record_ids)}")
        click.echo(f"{'':<13}{action.reason}")
    verb = "would propose" if dry_run else "proposed"
    for pending in report.proposals:
        click.echo(
            f"{verb:<12} {pending.pass_name:<13} {pending.action:<10} {pending.id}  "
            + " ".join(pending.record_ids)
        )
        click.echo(f"{'':<13}{pending.reason}")
    for rejection in report.rejections:
        click.echo(f"rejected     {rejection.pass_name:<13} {' '.join(rejection.record_ids)}")
        click.echo(f"{'':<13}{rejection.detail}")
    click.echo(
        f"{len(report.proposals)} proposals{'' if dry_run else ' filed'}, nothing applied; "
        f"{len(report.actions)} protected, {len(report.rejections)} rejections"
    )
    if report.branch:
        click.echo(f"committed on {report.branch}")
    if report.proposals and not dry_run:
        click.echo("review: agent-memory proposals; accept ID… or reject ID")


@click.command()
@home_option
@click.option(
    "--operator",
    type=click.Choice(["heuristic", "llm"]),
    default="heuristic",
    show_default=True,
    help="heuristic: deterministic rules, no model; llm: the endpoint of memory.toml [llm].",
)
@click.option("--namespace", default="default", show_default=True, help="Namespace of the proposed records.")
@click.option("--dry-run", is_flag=True, help="Report what would be proposed; write nothing.")
@json_option
@quiet_option
def distill(
    home: str | None, operator: str, namespace: str, dry_run: bool, as_json: bool, quiet: bool
) -> None:
    """Distill archived inbox lines into proposals for review (autodream, seed 000 §14).

    Reads archive/*.md (never the live inbox), skips lines a withdrawal hides, lines an
    earlier run distilled, and archive files that fail the archive check; proposes one record
    per kept statement, sourced to its line (archive/YYYY-MM-DD.md#mem-…) with the line's
    kind, subject, taint and day; a state line supersedes its subject's value only by the
    exact subject. Nothing is applied: review with proposals, then accept, reject or revert.
    ``--json`` prints {"operator", "proposals", "held", "skipped", "rejections", "withdrawn",
    "problems", "stats", "branch", "log_seq"}. Exit status 3 when the Home cannot be read,
    the operator cannot be made, or the LLM endpoint fails (nothing written). A spinner
    shows on stderr while it runs (only on a terminal; not with --quiet or --json).
    """
    from agent_memory.home import resolve_home
    from agent_memory.memory import Memory

    with (
        progress(f"distilling ({operator})", quiet=quiet or as_json),
        Memory.open(resolve_home(home), source_kind="cli") as memory,
    ):
        report = memory.maintenance.distill(operator=operator, namespace=namespace, dry_run=dry_run)
    if as_json:
        echo_json({**report.to_json(), "dry_run": dry_run})
        return
    stats = report.to_json()["stats"]
    click.echo(
        f"{stats['lines']} archived lines: {stats['already_distilled']} distilled before, "
        f"{stats['withdrawn']} withdrawn, {stats['eligible']} read by {report.operator}"
    )
    for pending in report.proposals:
        click.echo(f"proposed   {pending.id}  {pending.action:<9} {' '.join(pending.anchors)}")
        click.echo(f"{'':<11}{pending.reason}")
    for anchor, record_id in report.held.items():
        click.echo(f"held       {anchor}  already held as {record_id}")
    for anchor, why in report.skipped.items():
        click.echo(f"skipped    {anchor}  {why}")
    for rejection in report.rejections:
        click.echo(f"rejected   {' '.join(rejection.record_ids) or '-'}  {rejection.detail}")
    for problem in report.selection.problems:
        click.echo(f"not read   {problem}", err=True)
    verb = "would file" if dry_run else "filed"
    click.echo(
        f"{len(report.proposals)} proposals {verb}, {len(report.held)} held, "
        f"{len(report.skipped)} skipped, {len(report.rejections)} rejected"
    )
    if report.branch:
        click.echo(f"committed on {report.branch}")

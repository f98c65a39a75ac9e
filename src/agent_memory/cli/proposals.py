"""Reviewing maintenance proposals: ``proposals``, ``accept``, ``decline``, ``revert`` (issue 7 item 5).

The proposals are the ones ``distill`` and ``consolidate`` file under
``proposals/pending-consolidation/``; the flow is :mod:`agent_memory.jobs.review_flow`
(DESIGN.md §9 "Maintenance branches").

Naming: DESIGN.md §9 calls the verdicts ``accept``/``reject``. ``reject ID`` dispatches by the
id's shape: a proposal id (``cons-…``, ``dist-…``) is declined here (:func:`reject_proposal`),
a record id (``mem:…``) is a quarantine verdict (``approve``/``reject``, cli/governance.py);
``decline`` stays as the proposal-only spelling, which also takes several ids or ``--all``.
Exit status: 0 when every named proposal got its verdict, 1 when any was refused (its reason
printed, nothing written for it), 3 on an error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from agent_memory.cli.common import echo_json, home_option, json_option

if TYPE_CHECKING:
    from agent_memory.jobs.review_flow import Outcome
    from agent_memory.memory import Memory

__all__ = ["accept", "decline", "proposals", "reject_proposal", "revert"]


def _open(home: str | None) -> Memory:
    from agent_memory.home import resolve_home
    from agent_memory.memory import Memory

    return Memory.open(resolve_home(home), source_kind="cli")


def _report(outcome: Outcome, verb: str, as_json: bool) -> int:
    if as_json:
        echo_json(outcome.to_json())
    else:
        for proposal_id in outcome.done:
            click.echo(f"{verb:<9} {proposal_id}")
        for proposal_id, reason in outcome.refused:
            click.echo(f"refused   {proposal_id}: {reason}")
        if outcome.written:
            click.echo(
                f"wrote {len(outcome.written)} versions: "
                + " ".join(dict.fromkeys(v.id for v in outcome.written))
            )
    return 1 if outcome.refused else 0


def _chosen(ids: tuple[str, ...], everything: bool) -> None:
    if bool(ids) == everything:
        raise click.UsageError("name proposal ids or give --all (not both)")


@click.command()
@home_option
@click.option("--diff/--no-diff", default=True, help="Show the versions each proposal would add.")
@click.option(
    "--branch",
    "to_branch",
    is_flag=True,
    help="Also commit them and their versions on a new maintenance/<UTC stamp> branch (git Homes).",
)
@json_option
def proposals(home: str | None, diff: bool, to_branch: bool, as_json: bool) -> None:
    """List pending maintenance proposals: a table, then a diff of the versions each would add.

    Each proposal is re-validated against the current records (nothing is written); a stale
    or illegal one is marked ``STALE`` with its reason. ``--json`` prints a list of
    ``{"id", "pass", "action", "record_ids", "reason", "made_at", "valid", "problem",
    "diff"}``, and ``{"proposals": [...], "stats": {...}, "branch": name | null}`` around it
    with the regret rate. ``--branch`` commits the pending proposals and the versions they
    would add on ``maintenance/<UTC stamp>`` through a temporary git worktree (the live Home
    never changes branch; the branch is kept for audit, never merged); a Home that is not a
    git repository gets none. Exit status 3 when a proposal file is unreadable or git fails.
    """
    from datetime import UTC, datetime

    from agent_memory.errors import AgentMemoryError
    from agent_memory.jobs.branches import commit_maintenance_branch
    from agent_memory.jobs.pending import revalidate
    from agent_memory.jobs.review_flow import diff_versions, pending_proposals, review_stats
    from agent_memory.wire import format_timestamp

    rows = []
    with _open(home) as memory:
        for pending in pending_proposals(memory):
            problem, text = "", ""
            try:
                text = diff_versions(memory.store, revalidate(memory.store, pending))
            except AgentMemoryError as exc:
                problem = str(exc)
            rows.append((pending, problem, text))
        stats = review_stats(memory.log)
        branch = None
        if to_branch and memory.home is not None:  # always set by Memory.open
            found = [p for p, _, _ in rows]
            branch = commit_maintenance_branch(
                memory.home.root, memory.store, found, now=datetime.now(UTC), next_free=True
            )
    if as_json:
        echo_json(
            {
                "proposals": [
                    {
                        "id": p.id,
                        "pass": p.pass_name,
                        "action": p.action,
                        "record_ids": list(p.record_ids),
                        "reason": p.reason,
                        "made_at": format_timestamp(p.made_at),
                        "valid": not problem,
                        "problem": problem,
                        "diff": text,
                    }
                    for p, problem, text in rows
                ],
                "stats": stats,
                "branch": branch,
            }
        )
        return
    click.echo(f"{'id':<22} {'pass':<11} {'action':<11} {'valid':<6} records")
    for pending, problem, _ in rows:
        valid = "STALE" if problem else "yes"
        click.echo(
            f"{pending.id:<22} {pending.pass_name:<11} {pending.action:<11} {valid:<6} "
            + " ".join(pending.record_ids)
        )
        click.echo(f"{'':<23}{problem or pending.reason}")
    rate = "n/a" if stats["regret_rate"] is None else f"{stats['regret_rate']:.2f}"
    click.echo(
        f"{len(rows)} pending; {stats['accepted']} accepted, {stats['declined']} declined, "
        f"{stats['reverted']} reverted (regret rate {rate})"
    )
    if to_branch:
        click.echo(
            f"committed on {branch}"
            if branch
            else "no branch: the Home is not a git repository with a commit"
        )
    if diff:
        for pending, _, text in rows:
            if text:
                click.echo(f"\n=== {pending.id}\n{text}")


@click.command()
@home_option
@click.argument("proposal_ids", nargs=-1)
@click.option("--all", "everything", is_flag=True, help="Accept every pending proposal.")
@json_option
@click.pass_context
def accept(
    ctx: click.Context, home: str | None, proposal_ids: tuple[str, ...], everything: bool, as_json: bool
) -> None:
    """Accept maintenance proposals: re-validate each against the current records and apply it.

    Each goes through the proposal gate; a stale one (a record changed since it was made)
    or an illegal one is refused with its reason and writes nothing. Needs the ``approve``
    grant. Exit status 1 when any was refused, 2 without ids or ``--all``.
    """
    from agent_memory.jobs.review_flow import accept as accept_

    _chosen(proposal_ids, everything)
    with _open(home) as memory:
        outcome = accept_(memory, proposal_ids, everything=everything)
    ctx.exit(_report(outcome, "accepted", as_json))


@click.command()
@home_option
@click.argument("proposal_ids", nargs=-1)
@click.option("--all", "everything", is_flag=True, help="Decline every pending proposal.")
@click.option("--reason", default="", help="Why (your words; logged, so quote no record content).")
@json_option
@click.pass_context
def decline(
    ctx: click.Context,
    home: str | None,
    proposal_ids: tuple[str, ...],
    everything: bool,
    reason: str,
    as_json: bool,
) -> None:
    """Decline maintenance proposals (DESIGN.md §9's ``reject``, which takes one proposal id too).

    Writes no record: only a ``review`` event with verdict ``declined``. Needs the
    ``approve`` grant. Exit status 1 when any id was refused (unknown or already decided).
    """
    from agent_memory.jobs.review_flow import decline as decline_

    _chosen(proposal_ids, everything)
    with _open(home) as memory:
        outcome = decline_(memory, proposal_ids, everything=everything, reason=reason)
    ctx.exit(_report(outcome, "declined", as_json))


def reject_proposal(home: str | None, proposal_id: str, reason: str, as_json: bool) -> int:
    """Decline one maintenance proposal for ``agent-memory reject PROPOSAL_ID`` (DESIGN.md §9 naming).

    Returns:
        The exit status: 0 when declined, 1 when refused (unknown or already decided).

    Raises:
        AuthorityError: The actor lacks the ``approve`` grant; nothing written.
    """
    from agent_memory.jobs.review_flow import decline as decline_

    with _open(home) as memory:
        outcome = decline_(memory, [proposal_id], reason=reason)
    return _report(outcome, "declined", as_json)


@click.command()
@home_option
@click.argument("proposal_id")
@click.option("--reason", default="", help="Why (your words; logged, so quote no record content).")
@json_option
def revert(home: str | None, proposal_id: str, reason: str, as_json: bool) -> None:
    """Revert an accepted maintenance proposal with correction records; nothing is deleted.

    A record it created is superseded by a correction restoring what it replaced (or
    archived), the others it retired come back as new correction records, a flag returns to
    its earlier value. Counts toward the regret rate shown by ``status``. Exit status 3 when
    it was never accepted, was already reverted, or a record changed since.
    """
    from agent_memory.jobs.review_flow import revert as revert_

    with _open(home) as memory:
        outcome = revert_(memory, proposal_id, reason=reason)
    _report(outcome, "reverted", as_json)

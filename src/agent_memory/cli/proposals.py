"""Reviewing maintenance proposals: ``proposals``, ``accept``, ``decline``, ``revert`` (issue 7 item 5).

The proposals are the ones ``distill`` and ``consolidate`` file under
``proposals/pending-consolidation/``; the flow is :mod:`agent_memory.jobs.review_flow`
(DESIGN.md §9 "Maintenance branches").

Naming: DESIGN.md §9 calls the verdicts ``accept``/``reject``. ``reject ID`` dispatches by the
id's shape: a proposal id (``cons-…``, ``dist-…``) is declined here (:func:`reject_proposal`),
a record id (``mem:…``) is a quarantine verdict (``approve``/``reject``, cli/governance.py);
``decline`` stays as the proposal-only spelling, which also takes several ids or ``--all``.

Pending records (``mem:…`` ids that ``review`` lists in queue ``pending``: state values held
back because their subject was disputed, DESIGN.md §9) are proposals too: ``accept ID`` writes
one through the normal write path, ``decline ID`` (or ``reject ID``) drops it
(:class:`~agent_memory.governance.reviewing.Reviews`); ``--all`` names only maintenance
proposals. Exit status: 0 when every named proposal got its verdict, 1 when any was refused (its reason
printed, nothing written for it), 3 on an error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from agent_memory.cli.common import echo_json, home_option, json_option

if TYPE_CHECKING:
    from agent_memory.jobs.review_flow import Outcome
    from agent_memory.memory import Memory

__all__ = [
    "accept",
    "decide_pending",
    "decline",
    "decline_pending_record",
    "proposals",
    "reject_proposal",
    "revert",
]


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
            count = len(outcome.written)
            click.echo(
                f"wrote {count} version{'' if count == 1 else 's'}: "
                + " ".join(dict.fromkeys(v.id for v in outcome.written))
            )
    return 1 if outcome.refused else 0


def _chosen(ids: tuple[str, ...], everything: bool) -> None:
    if bool(ids) == everything:
        raise click.UsageError("name proposal ids or give --all (not both)")


def _split(ids: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Return ``(maintenance proposal ids, other ids)``: the others are taken as pending records."""
    from agent_memory.jobs.pending import is_proposal_id

    return [i for i in ids if is_proposal_id(i)], [i for i in ids if not is_proposal_id(i)]


def _merged(first: Outcome, second: Outcome) -> Outcome:
    first.done.extend(second.done)
    first.refused.extend(second.refused)
    first.written.extend(second.written)
    return first


def decide_pending(memory: Memory, record_ids: list[str], *, accept: bool, reason: str = "") -> Outcome:
    """Accept or decline pending records (``mem:…``) one at a time, for ``accept``/``decline``/``reject``.

    Accepting writes each through the normal write path
    (:meth:`~agent_memory.governance.reviewing.Reviews.accept_pending`); declining drops
    it with a logged reason. An id refused (not pending, or its subject still disputed) goes
    to ``refused`` with the reason and changes nothing.

    Returns:
        The outcome: ids done, ids refused with their reasons, versions written (the accepted
        record and the record it superseded or disputes).

    Raises:
        AuthorityError: The actor lacks the ``approve`` grant; nothing written.
    """
    from agent_memory.errors import AgentMemoryError
    from agent_memory.governance.actors import AuthorityError
    from agent_memory.jobs.review_flow import Outcome

    outcome = Outcome()
    for record_id in dict.fromkeys(record_ids):
        try:
            if not accept:
                memory.reviews.decline_pending(record_id, reason)
                outcome.done.append(record_id)
                continue
            result = memory.reviews.accept_pending(record_id, reason)
        except AuthorityError:
            raise
        except AgentMemoryError as exc:
            outcome.refused.append((record_id, _why_refused(memory, record_id, exc)))
            continue
        outcome.done.append(record_id)
        touched = [result.record_id, result.superseded, result.disputed_with]
        outcome.written.extend(memory.get(i) for i in dict.fromkeys(touched) if i is not None)
    return outcome


def _stored(memory: Memory, record_id: str) -> bool:
    from agent_memory.errors import AgentMemoryError

    try:
        return memory.store.contains(record_id)
    except AgentMemoryError:  # not shaped like a record id: surely not stored
        return False


def _why_refused(memory: Memory, record_id: str, exc: Exception) -> str:
    from agent_memory.errors import AgentMemoryError, ProposalError

    if isinstance(exc, ProposalError) and _stored(memory, record_id):
        return "a stored record, not a pending one (approve/reject mark stored records)"
    if not isinstance(exc, AgentMemoryError):
        return str(exc)
    return exc.detail + (f" ({exc.hint})" if exc.hint else "")


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
    or illegal one is marked ``STALE`` with its reason. One that would let tainted text
    replace or displace a reviewed record says so on a line starting ``! tainted text would
    …`` (``accept --all`` skips it; naming it with ``accept ID`` applies it and keeps the
    taint). ``--json`` prints a list of ``{"id", "pass", "action", "record_ids", "reason",
    "made_at", "valid", "problem", "trust" (those words, or null), "auto_applicable", "diff"}``,
    and ``{"proposals": [...], "stats": {...}, "branch": name | null}`` around it with the
    regret rate. ``--branch`` commits the pending proposals and the versions they
    would add on ``maintenance/<UTC stamp>`` through a temporary git worktree (the live Home
    never changes branch; the branch is kept for audit, never merged); a Home that is not a
    git repository gets none. Exit status 3 when a proposal file is unreadable or git fails.
    """
    from datetime import UTC, datetime

    from agent_memory.errors import AgentMemoryError
    from agent_memory.jobs.branches import commit_maintenance_branch
    from agent_memory.jobs.pending import revalidate
    from agent_memory.jobs.review_flow import diff_versions, review_stats
    from agent_memory.records.wire import format_timestamp

    rows = []
    concerns: dict[str, str | None] = {}
    with _open(home) as memory:
        for pending in memory.proposals.pending():
            problem, text = "", ""
            try:
                text = diff_versions(memory.store, revalidate(memory.store, pending))
            except AgentMemoryError as exc:
                problem = str(exc)
            rows.append((pending, problem, text))
            concerns[pending.id] = memory.proposals.trust_warning(pending)
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
                        "trust": concerns[p.id],
                        "auto_applicable": concerns[p.id] is None,
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
        concern = concerns[pending.id]
        if concern:
            click.echo(f"{'':<23}! {concern}: accept --all skips it; accept {pending.id} applies it")
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
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="Accept every pending maintenance proposal (not pending records).",
)
@json_option
@click.pass_context
def accept(
    ctx: click.Context, home: str | None, proposal_ids: tuple[str, ...], everything: bool, as_json: bool
) -> None:
    """Accept maintenance proposals (re-validated, then applied) or write pending records (mem:…).

    Each goes through the proposal gate; a stale one (a record changed since it was made)
    or an illegal one is refused with its reason and writes nothing. A pending record id
    (``mem:…``, queue ``pending`` in ``review``) is written now as ``remember`` would write it:
    it supersedes or disputes its subject's live value by the usual rules, and is refused
    while that subject is still disputed (``resolve`` it first). ``--all`` takes only
    maintenance proposals, and never one that would let tainted text replace or displace a
    reviewed record (``proposals`` marks those): name it to accept it; what it writes keeps
    its taint. Needs the ``approve`` grant. Exit status 1 when any was refused,
    2 without ids or ``--all``.
    """
    from agent_memory.jobs.review_flow import Outcome

    _chosen(proposal_ids, everything)
    flow_ids, record_ids = _split(proposal_ids)
    with _open(home) as memory:
        outcome = (
            memory.proposals.accept(flow_ids, everything=everything) if flow_ids or everything else Outcome()
        )
        outcome = _merged(outcome, decide_pending(memory, record_ids, accept=True))
    ctx.exit(_report(outcome, "accepted", as_json))


@click.command()
@home_option
@click.argument("proposal_ids", nargs=-1)
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="Decline every pending maintenance proposal (not pending records).",
)
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
    """Decline maintenance proposals, or drop pending records (mem:…) without writing them.

    A maintenance proposal writes no record: only a ``review`` event with verdict
    ``declined`` (DESIGN.md §9's ``reject`` takes one proposal id too). A pending record id
    (``mem:…``, queue ``pending`` in ``review``: a state value held back because its subject
    was disputed) is dropped: its file under ``proposals/pending/`` is removed and a
    ``review`` event ``pending-declined`` logs the reason. ``--all`` takes only maintenance proposals.
    Needs the ``approve`` grant. Exit status 1 when any id was refused (unknown or already
    decided).
    """
    from agent_memory.jobs.review_flow import Outcome

    _chosen(proposal_ids, everything)
    flow_ids, record_ids = _split(proposal_ids)
    with _open(home) as memory:
        outcome = (
            memory.proposals.decline(flow_ids, everything=everything, reason=reason)
            if flow_ids or everything
            else Outcome()
        )
        outcome = _merged(outcome, decide_pending(memory, record_ids, accept=False, reason=reason))
    ctx.exit(_report(outcome, "declined", as_json))


def reject_proposal(home: str | None, proposal_id: str, reason: str, as_json: bool) -> int:
    """Decline one maintenance proposal for ``agent-memory reject PROPOSAL_ID`` (DESIGN.md §9 naming).

    Returns:
        The exit status: 0 when declined, 1 when refused (unknown or already decided).

    Raises:
        AuthorityError: The actor lacks the ``approve`` grant; nothing written.
    """
    with _open(home) as memory:
        outcome = memory.proposals.decline([proposal_id], reason=reason)
    return _report(outcome, "declined", as_json)


def decline_pending_record(home: str | None, record_id: str, reason: str, as_json: bool) -> int:
    """Drop one pending record for ``agent-memory reject RECORD_ID`` (the ``decline`` verdict).

    Returns:
        The exit status: 0 when dropped, 1 when refused (no longer pending).

    Raises:
        AuthorityError: The actor lacks the ``approve`` grant; nothing changed.
    """
    with _open(home) as memory:
        outcome = decide_pending(memory, [record_id], accept=False, reason=reason)
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
    with _open(home) as memory:
        outcome = memory.proposals.revert(proposal_id, reason=reason)
    _report(outcome, "reverted", as_json)

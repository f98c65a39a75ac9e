"""Governance commands: ``withdraw``, ``reinstate``, ``controls``, ``review``, ``approve``, ``reject``.

Seed 000 §12.2 (withdrawal and reinstatement control records), seed 003 and DESIGN.md §9
(quarantine, review marks as log events, actors). Every command acts as the Home's owner
(``memory.toml`` ``[actors] owner``), who holds every grant; the decisions are recorded in
the operation log with that actor. A refused decision prints one line and writes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from agent_memory.cli.common import echo_json, home_option, json_option, scope_options

if TYPE_CHECKING:
    from agent_memory.governance.controls import ControlState, WithdrawalControl
    from agent_memory.memory import Memory

__all__ = ["approve", "controls", "reinstate", "reject", "review", "withdraw"]


def _open(home: str | None) -> Memory:
    from agent_memory.home import resolve_home
    from agent_memory.memory import Memory

    return Memory.open(resolve_home(home), source_kind="cli")


def _still_excluding(state: ControlState, control: WithdrawalControl) -> list[str]:
    return [c.withdrawal_id for c in state.in_force() if c.scope == control.scope]


@click.command()
@scope_options
@click.option("--reason", required=True, help="Why (e.g. failed-exploration); not a verdict on truth.")
@home_option
@json_option
def withdraw(
    records: tuple[str, ...],
    archive_refs: tuple[str, ...],
    sources: tuple[str, ...],
    namespaces: tuple[str, ...],
    reason: str,
    home: str | None,
    as_json: bool,
) -> None:
    """Withdraw a scope from recall and export until it is reinstated; print the withdrawal id.

    The scope is the union of the selectors (at least one). What derives from a withdrawn
    record (its evidence or source points at it) is withdrawn too. Nothing is deleted and no
    record changes: the withdrawal is a control record in the log (seed 000 §12.2). Views
    already rendered (MEMORY.md, index.md, topics/) are rendered again at once; a view
    edited by hand is left alone with a warning (it may still show the scope).
    """
    with _open(home) as memory:
        control = memory.withdraw(
            memory_item_ids=records,
            archive_refs=archive_refs,
            source_or_run_refs=sources,
            namespaces=namespaces,
            reason=reason,
        )
    if as_json:
        echo_json(control.to_wire())
    else:
        click.echo(control.withdrawal_id)
    if memory.withdrawals.views_note:
        click.echo(f"warning: {memory.withdrawals.views_note}", err=True)


@click.command()
@click.argument("withdrawal_id")
@click.option("--reason", required=True, help="Why the scope may be used again.")
@home_option
@json_option
def reinstate(withdrawal_id: str, reason: str, home: str | None, as_json: bool) -> None:
    """Lift the withdrawal WITHDRAWAL_ID (memwd-…); print the reinstatement id.

    The reinstatement has the withdrawal's exact scope and names it. Another withdrawal of
    the same records still keeps them out (fail closed); the command says which.
    """
    with _open(home) as memory:
        control = memory.reinstate(withdrawal_id, reason)
        still = _still_excluding(memory.gate.state(), control)
    if as_json:
        echo_json({**control.to_wire(), "still_withdrawn_by": still})
        return
    click.echo(control.withdrawal_id)
    if still:
        click.echo(f"the scope is still withdrawn by {', '.join(still)}", err=True)


@click.command()
@home_option
@json_option
def controls(home: str | None, as_json: bool) -> None:
    """List every withdrawal and reinstatement, oldest first, marking the withdrawals in force."""
    with _open(home) as memory:
        state = memory.gate.state()
    in_force = {id(c) for c in state.in_force()}
    if as_json:
        echo_json([{**c.to_wire(), "in_force": id(c) in in_force} for c in state.controls])
        return
    if not state.controls:
        click.echo("no withdrawals")
    for control in state.controls:
        mark = "IN FORCE" if id(control) in in_force else "-"
        lifts = f" (lifts {control.supersedes})" if control.action == "reinstate" else ""
        click.echo(
            f"{control.withdrawal_id}  {control.action}{lifts}  {mark}  {control.scope.describe()}  "
            f"by {control.decided_by}: {control.reason}"
        )


@click.command()
@click.option("--namespace", default=None, help="Only this namespace.")
@home_option
@json_option
def review(namespace: str | None, home: str | None, as_json: bool) -> None:
    """List what waits for a person: quarantined and pending records, then maintenance proposals.

    A record is quarantined while it is tainted (e.g. external) and no person approved it;
    it is recallable, marked, and never autoloaded. Review state comes only from review
    events in the log. Withdrawn records are not listed, only counted. Maintenance proposals
    (from distill and consolidate) are listed one a line; ``agent-memory proposals`` shows
    what each would write, ``accept ID`` or ``reject ID`` decides it. A pending record (a
    state value held back because its subject was disputed) is decided the same way:
    ``accept ID`` writes it once the dispute is resolved, ``decline ID`` drops it. A proposal
    that would let tainted text replace or displace a reviewed record is followed by a line
    ``! tainted text would …`` naming the records. ``--json`` adds ``"proposals": [{"id",
    "pass", "action", "record_ids", "reason", "trust"}]`` to the queue (``trust``: those words
    or null).
    """
    with _open(home) as memory:
        queue = memory.reviews.queue(namespace=namespace)
        waiting = memory.proposals.pending()
        concerns = {p.id: memory.proposals.trust_warning(p) for p in waiting}
    if as_json:
        proposals = [
            {
                "id": p.id,
                "pass": p.pass_name,
                "action": p.action,
                "record_ids": list(p.record_ids),
                "reason": p.reason,
                "trust": concerns[p.id],
            }
            for p in waiting
        ]
        echo_json({**queue.to_json(), "proposals": proposals})
        return
    if not queue.items and not waiting:
        click.echo("nothing to review")
    for item in queue.items:
        body = item.record.body if len(item.record.body) <= 100 else item.record.body[:99] + "…"
        click.echo(f"{item.record.id}  {item.queue}  review={item.review}  {item.why}")
        click.echo(f"    {body}")
    if queue.withdrawn:
        click.echo(f"({queue.withdrawn} more withdrawn: not shown)")
    for pending in waiting:
        click.echo(f"{pending.id}  proposal  {pending.pass_name} {pending.action}  {pending.reason}")
        if concerns[pending.id]:
            click.echo(f"    ! {concerns[pending.id]}: accept --all skips it")
    held = sum(1 for item in queue.items if item.queue == "pending")
    if held:
        click.echo(
            f"{held} pending record(s): accept ID writes one (once its subject's dispute is resolved), "
            "decline ID drops it"
        )
    if waiting:
        click.echo(
            f"{len(waiting)} proposal(s): `agent-memory proposals` shows their diffs; accept ID or decline ID"
        )


def _decide(record_id: str, verdict: str, reason: str, home: str | None, as_json: bool) -> None:
    from agent_memory.errors import ProposalError

    with _open(home) as memory:
        if memory.pending.find(record_id) is not None:
            raise ProposalError(
                "is a pending record (held back because its subject was disputed), not a stored one",
                record_id=record_id,
                hint=f"`agent-memory accept {record_id}` writes it (resolve the dispute first), "
                f"`agent-memory decline {record_id}` drops it",
            )
        memory.review(record_id, verdict, reason)
        actor = memory.actor
    past = {"approve": "approved", "reject": "rejected"}[verdict]
    if as_json:
        echo_json({"record_id": record_id, "verdict": verdict, "actor": actor, "reason": reason})
    else:
        click.echo(f"{past} {record_id} (by {actor})")


@click.command()
@click.argument("record_ids", nargs=-1, required=True, metavar="RECORD_ID...")
@click.option("--reason", default="", help="Why, in a sentence (the same for every record).")
@home_option
@json_option
def approve(record_ids: tuple[str, ...], reason: str, home: str | None, as_json: bool) -> None:
    """Approve the quarantined records RECORD_ID…: they may then be autoloaded (review events in the log).

    Every id is checked before any is approved (DESIGN.md §9): an
    unknown id (RecordNotFound), a pending proposal (ProposalError), or a record neither
    quarantined nor rejected (LifecycleError) refuses the whole command and nothing is
    approved. An id given twice is approved once. All approvals share one opened Home (one
    git commit). Prints ``approved ID (by ACTOR)`` per record; ``--json`` prints
    ``{"record_id", "verdict", "actor", "reason"}`` for one id, a list of them for several.
    """
    from agent_memory.errors import LifecycleError, ProposalError

    wanted = list(dict.fromkeys(record_ids))
    none = "; none of the records given was approved" if len(wanted) > 1 else ""
    with _open(home) as memory:
        pending = {record.id for record in memory.pending.list()}
        book = memory.review_book
        for record_id in wanted:
            if record_id in pending:
                raise ProposalError(
                    "is a pending record (held back because its subject was disputed), not a stored one",
                    record_id=record_id,
                    hint=f"`agent-memory accept {record_id}` writes it (resolve the dispute first), "
                    f"`agent-memory decline {record_id}` drops it" + none,
                )
            record = memory.get(record_id)
            if book.state_of(record) not in ("quarantined", "rejected"):
                why = "it is not tainted, so it was never quarantined and needs no approval"
                if record.taint:
                    why = "it is already approved"
                raise LifecycleError(
                    f"nothing to approve: {why}",
                    record_id=record_id,
                    field="verdict",
                    hint="`agent-memory review` lists the quarantined records" + none,
                )
        memory.reviews.review_many(wanted, "approve", reason)
        actor = memory.actor
    done = [{"record_id": rid, "verdict": "approve", "actor": actor, "reason": reason} for rid in wanted]
    if as_json:
        echo_json(done[0] if len(done) == 1 else done)
        return
    for record_id in wanted:
        click.echo(f"approved {record_id} (by {actor})")


@click.command()
@click.argument("record_id")
@click.option("--reason", default="", help="Why, in a sentence.")
@home_option
@json_option
def reject(record_id: str, reason: str, home: str | None, as_json: bool) -> None:
    """Reject RECORD_ID: kept for the record, down-weighted like superseded, never autoloaded.

    Given a maintenance proposal id (cons-…, dist-…) instead, decline that proposal; given a
    pending record (queue ``pending`` in ``review``), drop it as ``decline`` does (DESIGN.md §9).
    """
    from agent_memory.jobs.pending import is_proposal_id

    if is_proposal_id(record_id):
        from agent_memory.cli.proposals import reject_proposal

        raise click.exceptions.Exit(reject_proposal(home, record_id, reason, as_json))
    with _open(home) as memory:
        held = memory.pending.find(record_id) is not None
    if held:
        from agent_memory.cli.proposals import decline_pending_record

        raise click.exceptions.Exit(decline_pending_record(home, record_id, reason, as_json))
    _decide(record_id, "reject", reason, home, as_json)

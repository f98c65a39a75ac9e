"""Promotion commands: ``promote``, ``promotions``, ``promote-accept``, ``promote-reject`` (seed 000 §17).

``promote`` writes a governed proposal under ``proposals/promotions/``; only
``promote-accept``, by an actor holding the ``promote`` grant (the command line acts as the
Home's owner, who holds every grant), appends the rule to ``conventions.md``. Every decision
is a ``review`` event in the operation log naming the actor; a refused one prints one line,
exits 3 and writes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from agent_memory.cli.common import echo_json, home_option, json_option

if TYPE_CHECKING:
    from agent_memory.governance.promotion import PromotionProposal
    from agent_memory.memory import Memory

__all__ = ["promote", "promote_accept", "promote_reject", "promotions"]


def _open(home: str | None) -> Memory:
    from agent_memory.home import resolve_home
    from agent_memory.memory import Memory

    return Memory.open(resolve_home(home), source_kind="cli")


def _show(proposal: PromotionProposal, as_json: bool) -> None:
    if as_json:
        echo_json(proposal.to_json())
    else:
        click.echo(proposal.proposal_id)


@click.command()
@click.argument("record_id")
@click.option("--reason", required=True, help="Why the rule is stable (confirmed by whom, how often).")
@click.option(
    "--text",
    "rule",
    default=None,
    metavar="RULE",
    help="The rule as it should read [default: the record's text].",
)
@home_option
@json_option
def promote(record_id: str, reason: str, rule: str | None, home: str | None, as_json: bool) -> None:
    """Propose promoting RECORD_ID into conventions.md; print the proposal id (mempromo-…).

    Nothing is applied: the proposal waits in proposals/promotions/ until `promote-accept`.
    Refused (exit 3) when the record is not active, is withdrawn, erased, quarantined or
    rejected, or when the rule holds a secret.
    """
    with _open(home) as memory:
        proposal = memory.promotions.propose(record_id, rule_text=rule, reason=reason)
    _show(proposal, as_json)


@click.command()
@click.option(
    "--status",
    type=click.Choice(["pending-review", "accepted", "rejected"]),
    default=None,
    help="Only proposals with this status.",
)
@home_option
@json_option
def promotions(status: str | None, home: str | None, as_json: bool) -> None:
    """List promotion proposals: id, status, source record and rule (a JSON list with --json)."""
    with _open(home) as memory:
        found = memory.promotions(status=status)
    if as_json:
        echo_json([proposal.to_json() for proposal in found])
        return
    if not found:
        click.echo("no promotion proposals")
    for p in found:
        click.echo(f"{p.proposal_id}  {p.status}  {p.source_record}  {p.rule}")


@click.command("promote-accept")
@click.argument("proposal_id")
@click.option("--reason", required=True, help="Why you accept it (your decision, recorded in the log).")
@home_option
@json_option
def promote_accept(proposal_id: str, reason: str, home: str | None, as_json: bool) -> None:
    """Accept PROPOSAL_ID: record the decision, then append its rule to conventions.md.

    Refused (exit 3, nothing written) without the promote grant, for a decided proposal, or
    when the source record is no longer active or is withdrawn.
    """
    with _open(home) as memory:
        proposal = memory.promotions.accept(proposal_id, reason=reason)
    if as_json:
        echo_json(proposal.to_json())
    else:
        click.echo(f"{proposal.proposal_id} accepted: conventions.md now holds the rule")


@click.command("promote-reject")
@click.argument("proposal_id")
@click.option("--reason", required=True, help="Why you reject it (recorded in the proposal and the log).")
@home_option
@json_option
def promote_reject(proposal_id: str, reason: str, home: str | None, as_json: bool) -> None:
    """Reject PROPOSAL_ID with a reason; conventions.md is not touched."""
    with _open(home) as memory:
        proposal = memory.promotions.reject(proposal_id, reason=reason)
    if as_json:
        echo_json(proposal.to_json())
    else:
        click.echo(f"{proposal.proposal_id} rejected")

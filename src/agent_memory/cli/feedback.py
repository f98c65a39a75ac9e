"""``agent-memory feedback …``: metamemory from the command line (seed 000 §23, ``memory:L5``).

Subcommands log a retrieval, a task outcome or feedback on retrieved records, list a
record's feedback, and write or list policy proposals. Every one writes only to the
operation log (and a proposal file under ``proposals/``): no record, source or rule changes,
and nothing a proposal says is applied (:mod:`agent_memory.metamemory.book`).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING

import click

from agent_memory.cli.common import echo_json, home_option, json_option

if TYPE_CHECKING:
    from agent_memory.memory import Memory

__all__ = ["feedback"]

_ROLES = click.Choice(
    ["background", "action-premise", "constraint", "analogy", "conflict-source", "verification-target"]
)
_ROLE_HELP = "How the records were used."


def _open(home: str | None) -> Memory:
    from agent_memory.home import resolve_home
    from agent_memory.memory import Memory

    return Memory.open(resolve_home(home), source_kind="cli")


def _time(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    from agent_memory.errors import RecordError
    from agent_memory.records.wire import parse_timestamp

    try:
        return parse_timestamp(value, option.strip("-").replace("-", "_"))
    except RecordError as exc:
        raise click.BadParameter(exc.detail, param_hint=option) from None


@click.group()
def feedback() -> None:
    """Record how memory performed: retrievals, outcomes, feedback, policy proposals (seed 000 §23).

    Events name ids, refs and words from closed sets, never free text: a query is kept as its
    sha256 digest. Feedback never changes a record; a proposal is never applied by itself.
    """


@feedback.command()
@click.argument("record_ids", nargs=-1, metavar="ID...")
@click.option("--query", default=None, help="The query the records answered (only its digest is kept).")
@click.option("--task", "task_id", metavar="TASK", default=None, help="The task served (one token).")
@click.option("--use-role", type=_ROLES, default="background", show_default=True, help=_ROLE_HELP)
@home_option
@json_option
def retrieval(
    record_ids: tuple[str, ...],
    query: str | None,
    task_id: str | None,
    use_role: str,
    home: str | None,
    as_json: bool,
) -> None:
    """Log that the records ID... were retrieved for a task; print the memret-… id."""
    with _open(home) as memory:
        event = memory.metamemory.record_retrieval(
            record_ids, query=query, task_id=task_id, use_role=use_role
        )
    echo_json(event.to_json()) if as_json else click.echo(event.retrieval_id)


@feedback.command()
@click.argument("task_id", metavar="TASK")
@click.argument("outcome", type=click.Choice(["succeeded", "failed", "partial", "abandoned", "unknown"]))
@click.option(
    "--evidence", "evidence_refs", multiple=True, metavar="REF", help="Evidence anchor; repeatable."
)
@click.option("--retrieval", "retrieval_ref", metavar="MEMRET", default=None, help="The retrieval it used.")
@click.option("--observed-at", metavar="TIME", default=None, help="When it was observed (ISO-8601).")
@home_option
@json_option
def outcome(
    task_id: str,
    outcome: str,
    evidence_refs: tuple[str, ...],
    retrieval_ref: str | None,
    observed_at: str | None,
    home: str | None,
    as_json: bool,
) -> None:
    """Log what became of TASK (OUTCOME); print the memout-… id."""
    with _open(home) as memory:
        event = memory.metamemory.record_outcome(
            task_id,
            outcome,
            evidence_refs,
            retrieval_ref=retrieval_ref,
            observed_at=_time(observed_at, "--observed-at"),
        )
    echo_json(event.to_json()) if as_json else click.echo(event.outcome_id)


@feedback.command()
@click.argument("record_ids", nargs=-1, metavar="[ID]...")
@click.option("--verdict", required=True, type=click.Choice(["helpful", "misleading", "neutral", "unknown"]))
@click.option(
    "--confidence",
    "attribution_confidence",
    required=True,
    type=click.Choice(["low", "medium", "high"]),
    help="How sure you are that the records contributed (not whether they are true).",
)
@click.option(
    "--use-role", type=_ROLES, default=None, help=_ROLE_HELP + " [default: --retrieval's, else background]"
)
@click.option("--task", "task_id", metavar="TASK", default=None, help="The task (one token).")
@click.option(
    "--retrieval", "retrieval_ref", metavar="MEMRET", default=None, help="Judge this retrieval's records."
)
@click.option("--outcome", "outcome_ref", metavar="MEMOUT", default=None, help="The outcome judged against.")
@click.option(
    "--evidence", "evidence_refs", multiple=True, metavar="REF", help="Evidence anchor; repeatable."
)
@click.option("--observed-at", metavar="TIME", default=None, help="When it was observed (ISO-8601).")
@home_option
@json_option
def attribute(
    record_ids: tuple[str, ...],
    verdict: str,
    attribution_confidence: str,
    use_role: str | None,
    task_id: str | None,
    retrieval_ref: str | None,
    outcome_ref: str | None,
    evidence_refs: tuple[str, ...],
    observed_at: str | None,
    home: str | None,
    as_json: bool,
) -> None:
    """Log a verdict on records ID... (or on --retrieval's); print the memfb-… id.

    Without --evidence or --outcome the feedback is logged as self-rated: weak evidence.
    """
    with _open(home) as memory:
        event = memory.metamemory.attribute_feedback(
            record_ids,
            verdict=verdict,
            attribution_confidence=attribution_confidence,
            use_role=use_role,
            task_id=task_id,
            retrieval_ref=retrieval_ref,
            outcome_ref=outcome_ref,
            evidence_refs=evidence_refs,
            observed_at=_time(observed_at, "--observed-at"),
        )
    echo_json(event.to_json()) if as_json else click.echo(event.event_id)


@feedback.command(name="list")
@click.argument("record_id", metavar="ID")
@home_option
@json_option
def list_(record_id: str, home: str | None, as_json: bool) -> None:
    """Show the feedback on record ID, oldest first, with a tally of verdicts."""
    with _open(home) as memory:
        events = memory.metamemory.list_feedback(record_id)
    tally = dict(sorted(Counter(e.verdict for e in events).items()))
    if as_json:
        echo_json({"record_id": record_id, "tally": tally, "events": [e.to_json() for e in events]})
        return
    for event in events:
        refs = " ".join(event.evidence_refs) or "-"
        click.echo(
            f"{event.event_id} {event.verdict} ({event.attribution_confidence}, {event.basis}) "
            f"{event.use_role} by {event.actor} evidence: {refs}"
        )
    click.echo(", ".join(f"{verdict} {n}" for verdict, n in tally.items()) or "no feedback")


@feedback.command()
@click.option("--target", required=True, metavar="ELEMENT", help="The policy element or rule (one token).")
@click.option("--change", "proposed_change", required=True, help="What should change.")
@click.option(
    "--ref", "supporting_refs", multiple=True, required=True, metavar="REF", help="Evidence; repeatable."
)
@click.option("--benefit", "expected_benefit", required=True, help="The expected benefit.")
@click.option("--risk", required=True, help="What could go wrong.")
@home_option
@json_option
def propose(
    target: str,
    proposed_change: str,
    supporting_refs: tuple[str, ...],
    expected_benefit: str,
    risk: str,
    home: str | None,
    as_json: bool,
) -> None:
    """Write a pending policy proposal to proposals/ for a person to review; print its id.

    Nothing is applied: the proposal waits until a person decides and records the decision.
    """
    with _open(home) as memory:
        proposal = memory.metamemory.propose_policy_change(
            target, proposed_change, supporting_refs, expected_benefit=expected_benefit, risk=risk
        )
    echo_json(proposal.to_json()) if as_json else click.echo(proposal.proposal_id)


@feedback.command()
@home_option
@json_option
def proposals(home: str | None, as_json: bool) -> None:
    """List the policy proposals, by id, with their status and target."""
    with _open(home) as memory:
        found = memory.metamemory.policy_proposals()
    if as_json:
        echo_json([p.to_json() for p in found])
        return
    for proposal in found:
        click.echo(f"{proposal.proposal_id} {proposal.status} {proposal.target}: {proposal.proposed_change}")

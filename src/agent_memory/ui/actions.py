"""The page's actions: each button calls the porcelain method its CLI command calls, and says what it did.

One function per action, ``(memory, form) -> message``, in :data:`ACTIONS` by the form's
``action`` name. Each does exactly what the CLI command of the same name does, through the
same :class:`~agent_memory.memory.Memory` methods, grants and gate, acting as the Home's
configured person: ``approve``/``reject`` (cli/governance.py), ``resolve``, ``supersede`` and
``archive`` (cli/memory.py), ``withdraw``/``reinstate``, ``erase`` (cli/erasure.py, with its
confirmation and authority), ``accept``/``decline``/``revert`` of maintenance proposals and
pending records (cli/proposals.py) and ``promote-accept``/``promote-reject``
(cli/promotion.py), and ``render`` (cli/jobs.py).

Invariants: a refusal raises the error the CLI turns into its message (``agent-memory: error:
…``; the page shows the same text and hint) and writes nothing; a proposal refused by the
review flow is reported as the CLI reports it (``refused ID: reason``). Messages quote ids,
never record content.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from agent_memory.errors import AgentMemoryError, LifecycleError, ProposalError, RecordError

if TYPE_CHECKING:
    from agent_memory.jobs.review_flow import Outcome
    from agent_memory.memory import Memory

__all__ = ["ACTIONS", "Refused", "run_action"]

Form = Mapping[str, str]


class Refused(AgentMemoryError):
    """An action the page refuses before calling the porcelain (a missing field, no confirmation)."""


def _field(form: Form, name: str, *, required: bool = True) -> str:
    value = form.get(name, "")
    if required and not value.strip():
        raise RecordError("is required", field=name)
    return value


def _outcome(outcome: Outcome, verb: str) -> str:
    """Word an outcome as the CLI's ``_report`` does; raise :class:`Refused` when anything was refused."""
    lines = [f"{verb} {proposal_id}" for proposal_id in outcome.done]
    lines += [f"refused {proposal_id}: {reason}" for proposal_id, reason in outcome.refused]
    if outcome.written:
        ids = " ".join(dict.fromkeys(v.id for v in outcome.written))
        lines.append(f"wrote {len(outcome.written)} versions: {ids}")
    if outcome.refused:
        raise Refused("; ".join(lines))
    return "; ".join(lines)


def _pending_ids(memory: Memory) -> set[str]:
    return {record.id for record in memory.pending.list()}


def _not_pending(memory: Memory, record_id: str) -> None:
    """Refuse a verdict on a pending record as ``agent-memory approve``/``reject`` does."""
    if record_id in _pending_ids(memory):
        raise ProposalError(
            "is a pending record (held back because its subject was disputed), not a stored one",
            record_id=record_id,
            hint=f"`agent-memory accept {record_id}` writes it (resolve the dispute first), "
            f"`agent-memory decline {record_id}` drops it",
        )


def approve(memory: Memory, form: Form) -> str:
    """Approve a quarantined record (``agent-memory approve ID --reason R``)."""
    record_id = _field(form, "record_id")
    _not_pending(memory, record_id)
    memory.reviews.review_many([record_id], "approve", form.get("reason", ""))
    return f"approved {record_id} (by {memory.actor})"


def reject(memory: Memory, form: Form) -> str:
    """Reject a quarantined record (``agent-memory reject ID --reason R``)."""
    record_id = _field(form, "record_id")
    _not_pending(memory, record_id)
    memory.review(record_id, "reject", form.get("reason", ""))
    return f"rejected {record_id} (by {memory.actor})"


def resolve(memory: Memory, form: Form) -> str:
    """Settle a dispute (``agent-memory resolve WINNER LOSER --reason R``)."""
    winner, loser = _field(form, "winner_id"), _field(form, "loser_id")
    memory.resolve(winner, loser, _field(form, "reason"))
    return f"resolved: {winner} active, {loser} superseded"


def supersede(memory: Memory, form: Form) -> str:
    """Save an edit as a new record superseding the old (``agent-memory supersede OLD TEXT --reason R``)."""
    from agent_memory.records.record import check_plain_text
    from agent_memory.ui.opened import ui_source

    old_id, text = _field(form, "record_id"), _field(form, "text")
    # A browser sends a textarea's line breaks as CR LF; the CLI's argument would hold LF.
    text = text.replace("\r\n", "\n")
    check_plain_text(text, "text")
    expected = form.get("expected_version", "").strip()
    result = memory.supersede(
        old_id,
        text,
        source=ui_source(),
        reason=_field(form, "reason"),
        expected_version=int(expected) if expected.isdigit() else None,
    )
    return f"{result.record_id} supersedes {old_id}"


def archive(memory: Memory, form: Form) -> str:
    """Retire a record (``agent-memory archive ID --reason R``)."""
    record_id = _field(form, "record_id")
    memory.archive(record_id, _field(form, "reason"))
    return f"archived {record_id}"


def withdraw(memory: Memory, form: Form) -> str:
    """Withdraw one record from recall, views and export (``agent-memory withdraw --record ID``)."""
    record_id = _field(form, "record_id")
    control = memory.withdraw(memory_item_ids=[record_id], reason=_field(form, "reason"))
    note = f"; warning: {memory.withdrawals.views_note}" if memory.withdrawals.views_note else ""
    return f"{control.withdrawal_id} withdraws {record_id}{note}"


def reinstate(memory: Memory, form: Form) -> str:
    """Lift a withdrawal (``agent-memory reinstate WITHDRAWAL_ID --reason R``)."""
    withdrawal_id = _field(form, "withdrawal_id")
    control = memory.reinstate(withdrawal_id, _field(form, "reason"))
    still = [c.withdrawal_id for c in memory.gate.state().in_force() if c.scope == control.scope]
    tail = f"; the scope is still withdrawn by {', '.join(still)}" if still else ""
    return f"{control.withdrawal_id} lifts {withdrawal_id}{tail}"


def erase(memory: Memory, form: Form) -> str:
    """Erase a record irreversibly (``agent-memory erase ID --reason R --authority WHO``, confirmed).

    The confirmation the CLI asks for is the form's ``confirm`` box; without it nothing is
    erased. As in the CLI, an unknown or already erased id is refused before that.
    """
    record_id = _field(form, "record_id")
    if memory.store.history(record_id)[-1].redacted:  # RecordNotFound: unknown id
        raise LifecycleError("already erased", record_id=record_id)
    if form.get("confirm") != "yes":
        raise Refused(
            "aborted: erasing cannot be undone; tick the confirmation box to erase",
            record_id=record_id,
            field="confirm",
        )
    # Empty reason or authority: erase's own refusal ("an erasure needs a non-empty …").
    receipt = memory.erase([record_id], reason=form.get("reason", ""), authority=form.get("authority", ""))
    holders = ", ".join(f"{h.holder_ref}: {h.result}" for h in receipt.holders)
    return f"{receipt.erasure_id}: {', '.join(receipt.scope_refs)} ({holders})"


def accept(memory: Memory, form: Form) -> str:
    """Accept a maintenance proposal or write a pending record (``agent-memory accept ID``)."""
    from agent_memory.cli.proposals import decide_pending
    from agent_memory.jobs.pending import is_proposal_id

    proposal_id = _field(form, "proposal_id")
    if is_proposal_id(proposal_id):
        return _outcome(memory.proposals.accept([proposal_id]), "accepted")
    return _outcome(decide_pending(memory, [proposal_id], accept=True), "accepted")


def decline(memory: Memory, form: Form) -> str:
    """Decline a maintenance proposal or drop a pending record (``agent-memory decline ID --reason R``)."""
    from agent_memory.cli.proposals import decide_pending
    from agent_memory.jobs.pending import is_proposal_id

    proposal_id, reason = _field(form, "proposal_id"), form.get("reason", "")
    if is_proposal_id(proposal_id):
        return _outcome(memory.proposals.decline([proposal_id], reason=reason), "declined")
    return _outcome(decide_pending(memory, [proposal_id], accept=False, reason=reason), "declined")


def revert(memory: Memory, form: Form) -> str:
    """Revert an accepted maintenance proposal (``agent-memory revert ID --reason R``)."""
    proposal_id = _field(form, "proposal_id")
    return _outcome(memory.proposals.revert(proposal_id, reason=form.get("reason", "")), "reverted")


def promote_accept(memory: Memory, form: Form) -> str:
    """Accept a promotion into ``conventions.md`` (``agent-memory promote-accept ID --reason R``)."""
    proposal = memory.promotions.accept(_field(form, "proposal_id"), reason=_field(form, "reason"))
    return f"accepted {proposal.proposal_id}: its rule is appended to {proposal.target}"


def promote_reject(memory: Memory, form: Form) -> str:
    """Reject a promotion (``agent-memory promote-reject ID --reason R``)."""
    proposal = memory.promotions.reject(_field(form, "proposal_id"), reason=_field(form, "reason"))
    return f"rejected {proposal.proposal_id}"


def render(memory: Memory, form: Form) -> str:
    """Write the views from the notes and log (``agent-memory render``)."""
    from agent_memory.jobs.views import render as render_views

    home = memory.home
    if home is None:
        raise Refused("views live in a Home's files; this memory is a database", field="render")
    started = time.time()
    result = render_views(home)
    with home.writer_lock():  # render logs nothing, so it is committed as `agent-memory render` is
        home.autocommit("agent-memory: render", since=started)
    kept = f"; left as edited by hand: {', '.join(result.kept)}" if result.kept else ""
    wrote = ", ".join(result.written) or "nothing changed"
    return f"rendered: {wrote} (MEMORY.md shows {result.shown} record(s)){kept}"


ACTIONS: dict[str, Callable[[Memory, Form], str]] = {
    "approve": approve,
    "reject": reject,
    "resolve": resolve,
    "supersede": supersede,
    "archive": archive,
    "withdraw": withdraw,
    "reinstate": reinstate,
    "erase": erase,
    "accept": accept,
    "decline": decline,
    "revert": revert,
    "promote-accept": promote_accept,
    "promote-reject": promote_reject,
    "render": render,
}
"""Every action the page can post, by name."""


def run_action(memory: Memory, name: str, form: Form) -> str:
    """Run the action ``name`` with the posted ``form``; return what it did, in words.

    Raises:
        Refused: No such action, a field missing, a confirmation not given, or a proposal
            the review flow refused (the CLI's ``refused ID: reason``).
        AgentMemoryError: Whatever the porcelain refuses (the CLI's messages).
    """
    action = ACTIONS.get(name)
    if action is None:
        raise Refused(f"no action {name!r} (one of {', '.join(ACTIONS)})", field="action")
    return action(memory, form)

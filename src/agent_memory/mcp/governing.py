"""The governance tools: review, decide_pending, consolidate, withdraw, reinstate, forget, redact.

A mixin of :class:`agent_memory.mcp.tools.Tools` (the copy and conventions are the same:
each docstring is what the model reads). Who may call what (DESIGN.md §9 "Actors"; issue 8
item 3; issue 6):

==============  =====================================  ===========================================
tool            grant (``memory.toml`` ``[actors]``)  tainted caller
==============  =====================================  ===========================================
review          ``mark`` (or ``approve``) for          refused (it would re-weigh trusted records)
                ``stale``; approve/reject are never
                served over MCP
decide_pending  ``approve``                            refused (accepting may replace a trusted
                                                       value)
consolidate     none                                   ``dry_run`` only (no pass it starts applies)
withdraw        ``withdraw``                           allowed: it only hides, reversibly, and is
                                                       logged with the actor
forget          ``withdraw`` (it withdraws)            allowed, as withdraw
reinstate       ``withdraw``                           refused (it lifts a withdrawal)
redact          ``erase``                              refused (irreversible)
==============  =====================================  ===========================================

Approving or rejecting a quarantined record is a person's decision (DESIGN.md §9: an
attributable review event), and an MCP session acts as ``agent:<name>``, a model driven by
whatever it has read, never an attributable person: those verdicts are refused here whatever
``memory.toml`` grants that agent, so a model can never approve content it may itself have
been fed. The mark, erase and withdraw grants do apply: ``memory.toml`` names the agents
trusted with them. A refused call writes nothing.

``decide_pending`` is the proposal verdict the CLI gives with ``accept ID``/``decline ID`` on
a pending record: a state value held back because its subject was disputed. It approves no
content: accepting writes the value through the normal write path (DESIGN.md §9 "Write-time
supersede"), so a value from a tainted session still only disputes and stays quarantined.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from agent_memory.errors import AgentMemoryError, LifecycleError, ProposalError
from agent_memory.mcp.arguments import (
    REASON_CHARS,
    ArchiveRefs,
    Namespaces,
    RecordIds,
    SourceRefs,
    Statement,
)
from agent_memory.mcp.calls import as_tool_error, refuse_when_tainted
from agent_memory.mcp.receipts import ConsolidateOut, ControlOut, ForgetOut, RedactOut, ReinstateOut
from agent_memory.mcp.results import PendingOut, RecordId, ReviewOut
from agent_memory.records.wire import format_timestamp, utc_now

if TYPE_CHECKING:
    from agent_memory.mcp.calls import ConnectionTaint
    from agent_memory.mcp.session import Session
    from agent_memory.memory import Memory

__all__ = ["GovernanceTools"]

_LIFT = "lifting a withdrawal is a person's decision once a session has read unreviewed input"
_ERASE = "erasure is irreversible and must not follow unreviewed input"
# decide_pending's hints name MCP tools and their arguments (the porcelain's name CLI commands).
_SETTLE_FIRST = (
    "call resolve with winner_id and loser_id (the two records named), then decide_pending "
    "with verdict accept again"
)
_STORED = "recall shows it; supersede replaces it, and review with verdict stale marks it no longer true"
_UNKNOWN_PENDING = "give the record_id a remember call returned with pending: true"


class GovernanceTools:
    """Review marks, consolidation, withdrawal, reinstatement, forget and redaction as MCP tools."""

    if TYPE_CHECKING:
        memory: Memory
        session: Session
        taints: ConnectionTaint

    def review(
        self,
        record_id: Annotated[RecordId, Field(description="The record to mark.")],
        verdict: Annotated[
            Literal["stale", "approve", "reject"],
            Field(description="stale: no longer true or useful. approve/reject are a person's decision."),
        ],
        reason: Annotated[str, Field(max_length=REASON_CHARS, description="Why, in a sentence.")] = "",
        ctx: Context[Any, Any] | None = None,
    ) -> ReviewOut:
        """Mark a record stale, so recall down-weights it like superseded history.

        Use it when a recalled record no longer holds and you have no correction. Needs the
        mark grant for this agent in memory.toml. Approving or rejecting quarantined records
        is a person's decision: those verdicts are refused here. Not available to a tainted
        session.
        """
        with as_tool_error():
            refuse_when_tainted(
                "review", self.taints.of(ctx), record_id=record_id, hint="ask a person to review the record"
            )
            if verdict != "stale":
                raise AgentMemoryError(
                    f"{verdict} is a person's decision and is not served over MCP: this session acts "
                    f"as {self.session.actor}, and an agent's grant in memory.toml does not apply here",
                    record_id=record_id,
                    field="verdict",
                    hint=f"a person runs `agent-memory {verdict} {record_id}`",
                )
            now = utc_now()
            self.memory.review(record_id, verdict, reason, now=now)
            return ReviewOut(
                record_id=record_id,
                verdict="stale",
                actor=self.session.actor,
                reviewed_at=format_timestamp(now),
            )

    def decide_pending(
        self,
        record_id: Annotated[
            RecordId, Field(description="The pending record (remember said pending: true).")
        ],
        verdict: Annotated[
            Literal["accept", "decline"],
            Field(description="accept: write it now, as remember would. decline: drop it."),
        ],
        reason: Annotated[str, Field(max_length=REASON_CHARS, description="Why, in a sentence.")] = "",
        ctx: Context[Any, Any] | None = None,
    ) -> PendingOut:
        """Accept or decline a pending record: a state value held back because its subject was disputed.

        Accept once the dispute is resolved: the value is written as remember would write it
        (it supersedes or disputes the live value; a tainted value stays quarantined). While
        the subject is still disputed, accept is refused. Decline drops the value. Needs the
        approve grant for this agent in memory.toml; not available to a tainted session.
        """
        with as_tool_error():
            refuse_when_tainted(
                "decide_pending",
                self.taints.of(ctx),
                record_id=record_id,
                hint="ask a person to accept or decline it",
            )
            now = utc_now()
            try:
                if verdict == "accept":
                    result = self.memory.reviews.accept_pending(record_id, reason, now=now)
                else:
                    self.memory.reviews.decline_pending(record_id, reason, now=now)
                    result = None
            except LifecycleError as error:
                if error.field == "subject":  # still disputed: the porcelain's hint names the CLI
                    error.hint = _SETTLE_FIRST
                raise
            except ProposalError as error:
                if self.memory.store.contains(record_id):
                    raise ProposalError(
                        "is a stored record, not a pending one (already accepted, or never held "
                        "back): only a value held back for review is decided here",
                        record_id=record_id,
                        hint=_STORED,
                    ) from None
                error.hint = _UNKNOWN_PENDING
                raise
            return PendingOut.of(
                record_id, verdict, result, actor=self.session.actor, decided_at=format_timestamp(now)
            )

    def consolidate(
        self,
        dry_run: Annotated[
            bool, Field(description="Only report what would be done; write, file and log nothing.")
        ] = False,
        ctx: Context[Any, Any] | None = None,
    ) -> ConsolidateOut:
        """Run the consolidation pass over memory and report what it proposes.

        It changes no record: exact-duplicate supersedes, disputes between contradicting
        records, near-duplicate merges, state fixes, promotions, rule flags and decay
        archival are all filed as pending proposals for a person to accept. Withdrawn
        records are skipped. A tainted session may only use dry_run.
        """
        with as_tool_error():
            if not dry_run:
                refuse_when_tainted(
                    "consolidate",
                    self.taints.of(ctx),
                    why="the proposals it files would change trusted records once accepted",
                    hint="call it with dry_run=true to see the report",
                )
            report = self.memory.maintenance.consolidate(dry_run=dry_run)
            filed = "proposals/pending-consolidation" if self.memory.home is not None else None
            return ConsolidateOut.of(report, dry_run=dry_run, filed_in=filed)

    def withdraw(
        self,
        reason: Annotated[Statement, Field(description="Why; not a verdict on truth (≤ 1000 characters).")],
        memory_item_ids: RecordIds = (),
        archive_refs: ArchiveRefs = (),
        source_or_run_refs: SourceRefs = (),
        namespaces: Namespaces = (),
        ctx: Context[Any, Any] | None = None,
    ) -> ControlOut:
        """Withdraw a scope from recall, views and export until it is reinstated.

        Use it when records must stop influencing answers (wrong project, a user asked).
        Nothing is deleted and no record changes; what derives from a withdrawn record is
        withdrawn too. Give at least one selector; the scope is their union. Needs the
        withdraw grant for this agent in memory.toml.
        """
        with as_tool_error():
            self.taints.of(ctx)  # a malformed taint header fails the call before anything is written
            control = self.memory.withdraw(
                memory_item_ids=memory_item_ids,
                archive_refs=archive_refs,
                source_or_run_refs=source_or_run_refs,
                namespaces=namespaces,
                reason=reason,
            )
            return ControlOut.of(control)

    def reinstate(
        self,
        withdrawal_id: Annotated[
            str,
            Field(
                pattern=r"^memwd-\d{4}-\d{2}-\d{2}-\d{3,}$", description="The withdrawal to lift (memwd-…)."
            ),
        ],
        reason: Annotated[Statement, Field(description="Why the scope may be used again.")],
        ctx: Context[Any, Any] | None = None,
    ) -> ReinstateOut:
        """Lift a withdrawal: its exact scope may be recalled again.

        Another withdrawal of the same scope still keeps it out (listed in the result).
        Needs the withdraw grant; not available to a tainted session.
        """
        with as_tool_error():
            refuse_when_tainted(
                "reinstate", self.taints.of(ctx), why=_LIFT, hint="ask a person to reinstate it"
            )
            control = self.memory.reinstate(withdrawal_id, reason)
            still = [c.withdrawal_id for c in self.memory.gate.state().in_force() if c.scope == control.scope]
            return ReinstateOut.of(control, still_withdrawn_by=still)

    def forget(
        self,
        memory_item_ids: RecordIds = (),
        archive_refs: ArchiveRefs = (),
        source_or_run_refs: SourceRefs = (),
        namespaces: Namespaces = (),
        reason: Annotated[Statement, Field(description="Why; not a verdict on truth.")] = "forget-request",
        ctx: Context[Any, Any] | None = None,
    ) -> ForgetOut:
        """Route a request to forget: withdraw what entered memory and report all five surfaces.

        Never erases: the Memory line names a reversible withdrawal. The other lines say
        honestly what memory cannot undo (your context, project files, temporary
        workspaces, promoted rules). Give at least one selector. Needs the withdraw grant.
        """
        with as_tool_error():
            self.taints.of(ctx)
            receipt = self.memory.withdrawals.forget(
                memory_item_ids=memory_item_ids,
                archive_refs=archive_refs,
                source_or_run_refs=source_or_run_refs,
                namespaces=namespaces,
                reason=reason,
            )
            return ForgetOut.of(receipt)

    def redact(
        self,
        record_id: Annotated[RecordId, Field(description="The record to erase.")],
        reason: Annotated[
            Statement, Field(description="Why; kept in the tombstone. Never quote the content.")
        ],
        authority: Annotated[
            Statement, Field(description="Who or what authorized it: a person, ticket or request id.")
        ],
        cascade: Annotated[
            Sequence[RecordId],
            Field(
                max_length=100,
                description="Records that quote or point at it, to erase too (listed in a receipt).",
            ),
        ] = (),
        ctx: Context[Any, Any] | None = None,
    ) -> RedactOut:
        """Erase a record irreversibly from every holder and return the erasure receipt.

        Only for content that must not be kept (a user's erasure request, a leaked secret);
        to stop using a record, use withdraw. Needs a reason, an authority and the erase
        grant for this agent in memory.toml; not available to a tainted session.
        """
        # rewrite_git stays off: rewriting a repository's history is a person's call (CLI).
        with as_tool_error():
            refuse_when_tainted(
                "redact",
                self.taints.of(ctx),
                why=_ERASE,
                record_id=record_id,
                hint="ask a person to erase it",
            )
            receipt = self.memory.erase([record_id], reason=reason, authority=authority, cascade=cascade)
            return RedactOut.of(record_id, receipt)

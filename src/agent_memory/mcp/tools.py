"""The MCP tools: each porcelain operation an agent may call, with its schema, copy and annotations.

The tool functions are the methods of :class:`Tools` (the governance and maintenance ones
come from :class:`~agent_memory.mcp.governing.GovernanceTools`); each docstring is the
description the model reads (what the tool does and when to use it) and each parameter
carries its unit and limit in its schema (issue 8 item 3; STYLE.md "Words"). Names and
shapes: origin-notes §1.18 (``remember``, ``recall``, ``consolidate``, ``redact``,
``status``), seed 003 (``nas_remember``/``nas_recall``), ours (``supersede``, ``resolve``,
``review``, ``decide_pending``, ``feedback``, ``withdraw``, ``reinstate``, ``forget``).

Invariants:

- every write goes through :class:`~agent_memory.memory.Memory` as the session's actor with
  the call's taint (the server's and the connection's, :class:`.calls.ConnectionTaint`),
  and names a source (the caller's, else ``mcp:<agent>@<local day>``);
- a tainted caller remembers (quarantined), reads and gives feedback, but ``supersede`` and
  ``resolve`` are refused: they would let unreviewed input replace a trusted record or
  settle a dispute without a person (the governance tools' rules: :mod:`.governing`);
- a porcelain error reaches the model as a tool error whose text is the one-line message.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from pydantic import Field

from agent_memory.mcp.arguments import (
    MAX_BUDGET,
    MAX_EVIDENCE,
    MAX_JUDGED,
    MAX_K,
    MAX_TAGS,
    QUERY_CHARS,
    SOURCE_CHARS,
    SUBJECT_CHARS,
    TAG_CHARS,
    TEXT_CHARS,
    Moment,
    Reason,
    Source,
    Text,
)
from agent_memory.mcp.calls import ConnectionTaint, as_tool_error, client_name, hints, refuse_when_tainted
from agent_memory.mcp.governing import GovernanceTools
from agent_memory.mcp.results import (
    FeedbackOut,
    RecallOut,
    RecordId,
    RememberOut,
    ResolveOut,
    StatusOut,
)
from agent_memory.memory import Memory
from agent_memory.records.fields import screen_plain
from agent_memory.records.wire import format_timestamp, parse_timestamp, utc_now

if TYPE_CHECKING:
    from agent_memory.mcp.session import Session

__all__ = ["TAINT_REFUSED", "TOOLS", "UNCOMMITTED", "Tools"]


# remember is idempotent by exact dedup; supersede/resolve/consolidate retire records from
# current answers; withdraw/reinstate/forget append reversible controls (a repeat is refused
# or finds nothing new); redact is irreversible, and a repeat is refused as already erased.
_WRITE = hints(read_only=False, destructive=False, idempotent=True)
_REPLACE = hints(read_only=False, destructive=True, idempotent=False)
_MARK = hints(read_only=False, destructive=False, idempotent=True)
_LOG = hints(read_only=False, destructive=False, idempotent=False)
_READ = hints(read_only=True, destructive=False, idempotent=True)
_TOUCH = hints(read_only=False, destructive=False, idempotent=False)
_CONTROL = hints(read_only=False, destructive=False, idempotent=True)
_ERASE = hints(read_only=False, destructive=True, idempotent=True)
# Accepting a pending value may supersede the live one; declining drops the held value; a
# repeat is refused (nothing waits under that id any more).
_DECIDE = hints(read_only=False, destructive=True, idempotent=True)

TOOLS: tuple[tuple[str, str, str, ToolAnnotations], ...] = (
    ("remember", "Remember", "remember", _WRITE),
    ("recall", "Recall", "recall", _TOUCH),
    ("status", "Memory status", "status", _READ),
    ("supersede", "Supersede a record", "supersede", _REPLACE),
    ("resolve", "Resolve a dispute", "resolve", _REPLACE),
    ("review", "Mark a record stale", "review", _MARK),
    ("decide_pending", "Accept or decline a pending record", "decide_pending", _DECIDE),
    ("consolidate", "Consolidate memory", "consolidate", _REPLACE),
    ("withdraw", "Withdraw a scope", "withdraw", _CONTROL),
    ("reinstate", "Reinstate a withdrawn scope", "reinstate", _CONTROL),
    ("forget", "Forget (withdraw, with a surface receipt)", "forget", _CONTROL),
    ("redact", "Erase a record", "redact", _ERASE),
    ("feedback", "Feedback on recalled records", "feedback", _LOG),
    ("nas_remember", "Remember (alias)", "remember", _WRITE),
    ("nas_recall", "Recall (alias)", "recall", _TOUCH),
)
"""The tool registry: ``(name, title, method of Tools, annotations)``; an alias names another's method.

``build_server`` serves exactly these and ``agent-memory serve --help`` lists them from here.
"""

TAINT_REFUSED: dict[str, str] = {
    "supersede": "",
    "resolve": "",
    "review": "",
    "decide_pending": "",
    "reinstate": "",
    "redact": "",
    "consolidate": "except dry runs",
}
"""Tools a tainted caller is refused (``refuse_when_tainted``), each with the exception it allows.

Listed by ``agent-memory serve --help``; tests/mcp/test_mcp_registry.py checks each refusal.
"""

UNCOMMITTED = frozenset({"recall", "nas_recall"})
"""Tools that write only derived, git-ignored state (the salience sidecar): no commit follows them."""


def _time(value: str | None, field: str) -> datetime | None:
    return None if value is None else parse_timestamp(value, field)


class Tools(GovernanceTools):
    """The tool functions over one Memory and session; each docstring is the copy the model reads.

    Every tool raises ``ToolError`` (the SDK's anticipated tool failure, which reaches the model
    as an ``is_error`` result) carrying :func:`one_line` of the porcelain's
    ``AgentMemoryError`` — unknown record, illegal move, naive time, a write with bad fields —
    or of this layer's refusals (a verdict only a person may give; a tainted caller replacing,
    settling, re-weighing, reinstating or erasing records). Nothing is written when a tool fails.

    Args:
        memory: The porcelain every tool calls.
        session: Who the calls act as, and the taint their writes inherit.
    """

    def __init__(self, memory: Memory, session: Session) -> None:
        self.memory = memory
        self.session = session
        self.taints = ConnectionTaint(session.taint)

    def _source(self, given: str | None, ctx: Context[Any, Any] | None) -> str:
        if given is not None and given.strip():
            return given.strip()
        return self.session.default_source(client_name(ctx), utc_now())

    def remember(
        self,
        text: Annotated[
            Text, Field(description=f"One self-contained statement (≤ {TEXT_CHARS} characters).")
        ],
        tags: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=TAG_CHARS)]] | None,
            Field(max_length=MAX_TAGS, description=f"Labels (≤ {MAX_TAGS}, each ≤ {TAG_CHARS} characters)."),
        ] = None,
        source: Source = None,
        kind: Annotated[
            Literal["knowledge", "state"] | None,
            Field(
                description="How it updates: state keeps one current value per subject; "
                "knowledge (default) adds up."
            ),
        ] = None,
        subject: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=SUBJECT_CHARS,
                description="Exact key of a state record, e.g. host:staging. Only with kind=state.",
            ),
        ] = None,
        type: Annotated[
            Literal[
                "fact", "episode", "procedure", "rule", "semantic", "episodic", "procedural", "preference"
            ],
            Field(
                description="What it is (kind says how it updates); preference is stored as a fact "
                "tagged preference; a rule needs evidence."
            ),
        ] = "fact",
        evidence: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=64)]] | None,
            Field(
                max_length=MAX_TAGS,
                description="Ids (mem:…) of the records it rests on; required for type=rule.",
            ),
        ] = None,
        occurred_at: Annotated[Moment, Field(description="When it happened (RFC 3339 with offset).")] = None,
        valid_from: Annotated[
            Moment, Field(description="When it starts to hold (RFC 3339 with offset).")
        ] = None,
        ctx: Context[Any, Any] | None = None,
    ) -> RememberOut:
        """Store a durable memory: a fact, decision, preference or procedure worth keeping.

        Use it when you learn something that should outlive this conversation. An identical
        live memory is not copied (deduped). A state memory (kind=state with a subject) replaces
        the current value of that subject when newer; otherwise, or when this session is
        tainted, both values stay side by side as a dispute for a person to resolve.
        """
        with as_tool_error():
            screen_plain(text=text, subject=subject, tags=tags, source=source)
            taint = self.taints.of(ctx)
            used = self._source(source, ctx)
            result = self.memory.remember(
                text,
                source=used,
                taint=taint,
                type=type,
                kind=kind,
                subject=subject,
                tags=tags or (),
                evidence=evidence or (),
                occurred_at=_time(occurred_at, "occurred_at"),
                valid_from=_time(valid_from, "valid_from"),
            )
            return RememberOut.of(result, used)

    def recall(
        self,
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=QUERY_CHARS,
                pattern=r"\S",
                description="What you want to know; plain words (at least one).",
            ),
        ],
        budget_tokens: Annotated[
            int,
            Field(
                ge=1,
                le=MAX_BUDGET,
                description=f"Token budget for the bodies (4 characters/token, ≤ {MAX_BUDGET}).",
            ),
        ] = 2000,
        include_history: Annotated[bool, Field(description="Also return superseded predecessors.")] = False,
        include_archived: Annotated[bool, Field(description="Also consider archived records.")] = False,
        as_of: Annotated[
            Moment, Field(description="Answer as the Home believed at this time (RFC 3339).")
        ] = None,
        valid_at: Annotated[Moment, Field(description="Only what held at this time (RFC 3339).")] = None,
        k: Annotated[
            int | None, Field(ge=1, le=MAX_K, description=f"At most this many records (≤ {MAX_K}).")
        ] = None,
    ) -> RecallOut:
        """Find what memory holds about a question, as whole records within a token budget.

        Use it before answering from past work, decisions or the user's preferences. Paste
        prompt_block into your reasoning: each line is dated and sourced; disputed and
        quarantined (unreviewed, tainted) records are marked and must not be taken as settled.
        """
        with as_tool_error():
            result = self.memory.recall(
                query,
                budget_tokens=budget_tokens,
                include_history=include_history,
                include_archived=include_archived,
                as_of=_time(as_of, "as_of"),
                valid_at=_time(valid_at, "valid_at"),
                k=k,
            )
            return RecallOut.of(result)

    def status(self, ctx: Context[Any, Any] | None = None) -> StatusOut:
        """Report the Home's counts: records by state, type and kind, open disputes, quarantine, indexes.

        Use it to check that memory is reachable and healthy, and which actor and taint this
        session writes with.
        """
        with as_tool_error():
            taint = self.taints.of(ctx)
            report = self.memory.status()
            return StatusOut.of(
                report, actor=self.session.actor, taint=list(taint), home=str(self.session.home)
            )

    def supersede(
        self,
        old_id: Annotated[RecordId, Field(description="The active record to replace.")],
        text: Annotated[Text, Field(description=f"The corrected statement (≤ {TEXT_CHARS} characters).")],
        reason: Reason,
        source: Source = None,
        expected_version: Annotated[
            int | None,
            Field(ge=1, description="Fail unless old_id has this many versions (a concurrency guard)."),
        ] = None,
        ctx: Context[Any, Any] | None = None,
    ) -> RememberOut:
        """Replace an active record with a corrected one (same kind, subject and namespace).

        Use it when a recalled record is wrong or out of date. The old record is kept as
        superseded history, never deleted. A text identical to the current one is refused.
        Not available to a tainted session.
        """
        with as_tool_error():
            refuse_when_tainted("supersede", self.taints.of(ctx), record_id=old_id)
            screen_plain(text=text, source=source)
            used = self._source(source, ctx)  # Memory.supersede refuses a text identical to the current one
            result = self.memory.supersede(
                old_id, text, source=used, reason=reason, expected_version=expected_version
            )
            return RememberOut.of(result, used)

    def resolve(
        self,
        winner_id: Annotated[RecordId, Field(description="The side of the dispute that is right.")],
        loser_id: Annotated[RecordId, Field(description="The other side; it becomes superseded.")],
        reason: Reason,
        ctx: Context[Any, Any] | None = None,
    ) -> ResolveOut:
        """Settle a dispute between two transitional records: the winner returns to active.

        Use it only when the evidence is clear (e.g. the user confirmed one value). Not
        available to a tainted session.
        """
        with as_tool_error():
            refuse_when_tainted("resolve", self.taints.of(ctx), record_id=winner_id)
            now = utc_now()
            self.memory.resolve(winner_id, loser_id, reason, now=now)
            return ResolveOut(
                winner_id=winner_id, loser_id=loser_id, reason=reason, resolved_at=format_timestamp(now)
            )

    def feedback(
        self,
        record_ids: Annotated[
            list[RecordId],
            Field(
                min_length=1,
                max_length=MAX_JUDGED,
                description=f"The recalled records judged (1-{MAX_JUDGED}).",
            ),
        ],
        verdict: Annotated[
            Literal["helpful", "misleading", "neutral", "unknown"],
            Field(description="How the records worked out in the task."),
        ],
        attribution_confidence: Annotated[
            Literal["low", "medium", "high"],
            Field(description="How sure you are that they shaped the result (not whether they are true)."),
        ] = "medium",
        use_role: Annotated[
            Literal[
                "background",
                "action-premise",
                "constraint",
                "analogy",
                "conflict-source",
                "verification-target",
            ],
            Field(description="How you used the records."),
        ] = "background",
        task_id: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=200,
                pattern=r"^\S+$",
                description="Your task's id, if any (no spaces).",
            ),
        ] = None,
        evidence_refs: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=SOURCE_CHARS, pattern=r"^\S+$")]] | None,
            Field(
                max_length=MAX_EVIDENCE,
                description=f"Where the outcome can be checked: anchors, tickets, URLs (≤ {MAX_EVIDENCE}).",
            ),
        ] = None,
        ctx: Context[Any, Any] | None = None,
    ) -> FeedbackOut:
        """Report whether recalled records helped or misled you in a task.

        Use it after acting on recalled records, especially when one misled you. The
        feedback is logged and attributed to this session; it never changes a record.
        """
        with as_tool_error():
            self.taints.of(ctx)  # a malformed taint header fails the call before anything is logged
            event = self.memory.metamemory.attribute_feedback(
                record_ids,
                verdict=verdict,
                attribution_confidence=attribution_confidence,
                use_role=use_role,
                task_id=task_id,
                evidence_refs=evidence_refs or (),
            )
            return FeedbackOut.of(event.to_json())

    def table(self) -> list[tuple[str, str, Callable[..., Any], ToolAnnotations]]:
        """Return ``(name, title, function, annotations)`` for each tool of :data:`TOOLS` (aliases too)."""
        return [(name, title, getattr(self, method), hints) for name, title, method, hints in TOOLS]

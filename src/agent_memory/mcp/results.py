"""The structured results of the MCP tools: one pydantic model per tool, sent as its output schema.

Every model is a closed JSON object (:class:`Out`: ``additionalProperties: false``) whose
arrays all declare ``items`` and whose timestamps are RFC 3339 strings with an offset (the
wire's ``2026-01-01T00:00:00.000Z``), so strict clients accept the schemas (issue 8 item 3).
The shapes keep the origin library's keys first (origin-notes §1.18: ``record_id``/``deduped``;
``prompt_block``/``records`` with ``id``, ``body``, ``state``, ``score``, ``reasons``) and add
ours after them. The models are built
from the porcelain's own JSON (:meth:`RememberResult.to_json`, :meth:`RecallResult.to_json`,
:meth:`Memory.status`), so the CLI's ``--json`` and the MCP tools never drift apart.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_memory.memory import RememberResult
from agent_memory.recall.select import RecallResult

__all__ = [
    "FeedbackOut",
    "Out",
    "PendingOut",
    "RecallOut",
    "RecalledOut",
    "RecordId",
    "RememberOut",
    "ResolveOut",
    "ReviewOut",
    "StateName",
    "StatusOut",
    "Timestamp",
]

Timestamp = Annotated[
    str,
    Field(
        json_schema_extra={"format": "date-time"},
        description="RFC 3339 time with an offset, e.g. 2026-11-29T16:00:00.000Z.",
    ),
]
RecordId = Annotated[str, Field(pattern=r"^mem:[0-9a-f]{32}$", description="A record id: mem: + 32 hex.")]
StateName = Literal["active", "transitional", "superseded", "archived"]


class Out(BaseModel):
    """A closed result object: its schema says ``additionalProperties: false``, and it holds.

    Only declared fields are ever dumped, so a strict client can reject anything else.
    """

    model_config = ConfigDict(json_schema_extra={"additionalProperties": False})


class RememberOut(Out):
    """What remember (or supersede) did with the text."""

    record_id: RecordId
    deduped: bool = Field(description="An identical live record existed; it was touched, not copied.")
    superseded: RecordId | None = Field(description="The record this one replaced, if any.")
    disputed_with: RecordId | None = Field(
        description="The record this one now disputes (both transitional until a person resolves it)."
    )
    pending: bool = Field(description="Its subject was already disputed: it waits for review.")
    quarantined: bool = Field(description="Written by a tainted session: recallable, never autoloaded.")
    source: str = Field(description="The source anchor stored with the record.")

    @classmethod
    def of(cls, result: RememberResult, source: str) -> RememberOut:
        """Build the tool result from the porcelain's result and the source it was given."""
        return cls.model_validate({**result.to_json(), "source": source})


class RecalledOut(Out):
    """One recalled record, whole, with why it was chosen."""

    id: RecordId
    body: str = Field(description="The record's text.")
    state: StateName
    score: float = Field(description="Final score, higher is better; 0 for a partner or predecessor.")
    reasons: list[str] = Field(description="Why it is in the result (relevance, dispute, quarantine…).")
    review: Literal["approved", "rejected", "stale", "quarantined", "none"] = Field(
        description="Review state; quarantined means tainted and not yet approved by a person."
    )
    stale: bool = Field(description="Marked stale by a review: no longer a current factual basis.")
    type: Literal["fact", "episode", "procedure", "rule"] = Field(
        description="What the record is: a fact, an episode (an event), a procedure, a rule."
    )
    kind: Literal["state", "knowledge"] = Field(
        description="How it updates: state holds one current value per subject; knowledge adds up."
    )
    subject: str | None = Field(description="The exact key of a state record.")
    namespace: str
    source: str | None = Field(description="Where the record came from.")
    valid_from: Timestamp
    valid_to: Timestamp | None = Field(description="When it stopped holding, if it did.")
    recorded_at: Timestamp = Field(description="When this version was written (record time).")
    tokens: int = Field(description="Estimated size of the body in tokens (4 characters per token).")


class RecallOut(Out):
    """The records that answer a query, in rank order, within the token budget."""

    prompt_block: str = Field(description="The records as dated, sourced lines to paste into context.")
    records: list[RecalledOut]
    query: str
    budget_tokens: int
    total_tokens: int = Field(description="Tokens used by the returned bodies.")
    notes: list[str] = Field(description="Why something was left out (e.g. nothing fits the budget).")

    @classmethod
    def of(cls, result: RecallResult) -> RecallOut:
        """Build the tool result from the porcelain's recall result."""
        return cls.model_validate(result.to_json())


class IndexOut(Out):
    """One search index and whether it matches the store."""

    name: str
    kind: str
    indexed: int = Field(description="Records the index holds.")
    records: int = Field(description="Readable records in the store.")
    dirty: bool = Field(description="The index is behind the store (it catches up on the next recall).")


class StatusOut(Out):
    """Counts of the Home and who this session acts as."""

    records: int
    by_state: dict[str, int]
    by_type: dict[str, int]
    by_kind: dict[str, int]
    open_disputes: int
    pending: int = Field(description="Records waiting for review because their subject was disputed.")
    quarantined: int = Field(description="Tainted records not yet approved by a person.")
    agent: str | None = Field(description="The Home's signing address (amp:key:…).")
    indexes: list[IndexOut]
    unreadable: list[str] = Field(description="Note files that failed to parse or verify.")
    actor: str = Field(description="Who this session's writes are attributed to (agent:<name>).")
    taint: list[str] = Field(description="Labels every write of this session inherits, e.g. external.")
    home: str = Field(description="The Home folder this server serves.")

    @classmethod
    def of(cls, report: dict[str, Any], *, actor: str, taint: list[str], home: str) -> StatusOut:
        """Build the tool result from :meth:`Memory.status` and the session's settings."""
        return cls.model_validate({**report, "actor": actor, "taint": taint, "home": home})


class ResolveOut(Out):
    """A dispute that was settled."""

    winner_id: RecordId
    loser_id: RecordId
    reason: str
    resolved_at: Timestamp


class ReviewOut(Out):
    """A review mark that was logged."""

    record_id: RecordId
    verdict: Literal["stale"]
    actor: str
    reviewed_at: Timestamp


class PendingOut(Out):
    """A verdict on a pending record (a state value held back while its subject was disputed)."""

    record_id: RecordId = Field(description="The pending record decided.")
    verdict: Literal["accept", "decline"]
    kept_as: RecordId | None = Field(
        description="The record the value now lives in: record_id, or the identical live record it "
        "joined; null when declined."
    )
    superseded: RecordId | None = Field(description="The live value it replaced, if any.")
    disputed_with: RecordId | None = Field(
        description="The live value it now disputes (a tainted or older value disputes instead)."
    )
    quarantined: bool = Field(description="Its text came from a tainted session: still unreviewed.")
    actor: str
    decided_at: Timestamp

    @classmethod
    def of(
        cls, record_id: str, verdict: str, result: RememberResult | None, *, actor: str, decided_at: str
    ) -> PendingOut:
        """Build the result from the porcelain's (``None`` for a decline, which writes no record)."""
        return cls.model_validate(
            {
                "record_id": record_id,
                "verdict": verdict,
                "kept_as": result.record_id if result else None,
                "superseded": result.superseded if result else None,
                "disputed_with": result.disputed_with if result else None,
                "quarantined": bool(result and result.quarantined),
                "actor": actor,
                "decided_at": decided_at,
            }
        )


class FeedbackOut(Out):
    """A feedback event that was logged (seed 000 §23.2); no record changed."""

    event_id: str = Field(pattern=r"^memfb-\d{4}-\d{2}-\d{2}-\d{3,}$", description="memfb-YYYY-MM-DD-NNN.")
    memory_item_ids: list[RecordId]
    verdict: Literal["helpful", "misleading", "neutral", "unknown"]
    attribution_confidence: Literal["low", "medium", "high"]
    use_role: str
    basis: Literal["observed", "self-rated"] = Field(
        description="observed when evidence is cited, else self-rated."
    )
    task_id: str | None
    evidence_refs: list[str]
    observed_at: Timestamp
    actor: str

    @classmethod
    def of(cls, event: dict[str, Any]) -> FeedbackOut:
        """Build the tool result from :meth:`FeedbackEvent.to_json`."""
        return cls.model_validate(event)

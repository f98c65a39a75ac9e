"""Metamemory events (seed 000 §23.2, §23.6): retrieval records, outcomes and feedback, as values.

Each event is one entry of the operation log: the action (``retrieval``, ``outcome``,
``feedback``), then its id (``memret-…``, ``memout-…``, ``memfb-…``) and the memory record
ids it concerns as the entry's ``record_ids``, then everything else in ``details``. This
module holds the frozen values, their vocabularies (closed sets: the seed's ``use_role``
list, ``intervention-outcome-v1`` verdicts, ``ordinal-confidence-v1`` confidences and our
outcome words), how they are read back from log entries, and the input checks that keep free
text out of the log (:mod:`agent_memory.metamemory.book` explains why). It imports no adapter.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

from agent_memory.errors import RecordError
from agent_memory.log.base import LogEntry
from agent_memory.records.wire import format_timestamp, parse_timestamp

__all__ = [
    "ATTRIBUTION_CONFIDENCES",
    "OUTCOMES",
    "USE_ROLES",
    "VERDICTS",
    "FeedbackEvent",
    "OutcomeRecord",
    "RetrievalRecord",
    "query_digest",
]

USE_ROLES = (
    "background",
    "action-premise",
    "constraint",
    "analogy",
    "conflict-source",
    "verification-target",
)
VERDICTS = ("helpful", "misleading", "neutral", "unknown")
ATTRIBUTION_CONFIDENCES = ("low", "medium", "high")
OUTCOMES = ("succeeded", "failed", "partial", "abandoned", "unknown")
_TOKEN = re.compile(r"\A\S{1,1000}\Z")


@dataclass(frozen=True, slots=True)
class _Event:
    def to_json(self) -> dict[str, Any]:
        """Return the fields as JSON: timestamps canonical, tuples as lists."""
        out: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            out[item.name] = (
                format_timestamp(value)
                if isinstance(value, datetime)
                else list(value)
                if isinstance(value, tuple)
                else value
            )
        return out


@dataclass(frozen=True, slots=True)
class RetrievalRecord(_Event):
    """A logged retrieval (seed 000 §23.2 ``retrieval_record``): what a recall handed to a task.

    Attributes:
        retrieval_id: ``memret-YYYY-MM-DD-NNN``.
        memory_item_ids: The records returned, in rank order (empty for a miss).
        use_role: One of :data:`USE_ROLES`.
        query_digest: ``sha256:<hex>`` of the query (:func:`query_digest`), or ``None``.
        task_id: The task it served, if named.
        retrieved_at: When it was logged (aware UTC).
        actor: Who recalled.
    """

    retrieval_id: str
    memory_item_ids: tuple[str, ...]
    use_role: str
    query_digest: str | None
    task_id: str | None
    retrieved_at: datetime
    actor: str


@dataclass(frozen=True, slots=True)
class OutcomeRecord(_Event):
    """A logged task outcome (seed 000 §23.6 ``record_outcome``).

    Attributes:
        outcome_id: ``memout-YYYY-MM-DD-NNN``.
        task_id: The task.
        outcome: One of :data:`OUTCOMES`.
        evidence_refs: Where the outcome can be checked (runtime logs, anchors, tickets).
        retrieval_ref: The retrieval that served the task, if named.
        observed_at: When the outcome was observed (aware UTC).
        actor: Who reported it.
    """

    outcome_id: str
    task_id: str
    outcome: str
    evidence_refs: tuple[str, ...]
    retrieval_ref: str | None
    observed_at: datetime
    actor: str


@dataclass(frozen=True, slots=True)
class FeedbackEvent(_Event):
    """A verdict on how retrieved records took part in an action (seed 000 §23.2).

    Attributes:
        event_id: ``memfb-YYYY-MM-DD-NNN``.
        memory_item_ids: The records judged.
        verdict: ``helpful``, ``misleading``, ``neutral`` or ``unknown`` (intervention-outcome-v1).
        attribution_confidence: ``low``, ``medium`` or ``high`` (ordinal-confidence-v1): how
            sure the reporter is that the records contributed, not whether they are true.
        use_role: One of :data:`USE_ROLES`.
        basis: ``observed`` (evidence or an outcome is cited) or ``self-rated``.
        task_id: The task, if named.
        retrieval_ref: The ``memret-…`` the records came from, if named.
        outcome_ref: The ``memout-…`` judged against, if named.
        evidence_refs: Further evidence.
        observed_at: When (aware UTC).
        actor: Who judged.
    """

    event_id: str
    memory_item_ids: tuple[str, ...]
    verdict: str
    attribution_confidence: str
    use_role: str
    basis: str
    task_id: str | None
    retrieval_ref: str | None
    outcome_ref: str | None
    evidence_refs: tuple[str, ...]
    observed_at: datetime
    actor: str

    def to_json(self) -> dict[str, Any]:
        """Return the fields with the seed's scheme names (``verdict_scheme``, …) beside them."""
        return {
            **_Event.to_json(self),
            "verdict_scheme": "intervention-outcome-v1",
            "attribution_confidence_scheme": "ordinal-confidence-v1",
        }


def query_digest(query: str) -> str:
    """Return ``sha256:<64 hex>`` of the NFC-normalised, stripped query (what the log keeps)."""
    text = unicodedata.normalize("NFC", query).strip()
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def retrieval_from(entry: LogEntry) -> RetrievalRecord:
    """Read a :class:`RetrievalRecord` back from its ``retrieval`` log entry."""
    d = entry.details
    first, *ids = entry.record_ids
    return RetrievalRecord(
        first, tuple(ids), d["use_role"], d["query_digest"], d["task_id"], entry.time, entry.actor
    )


def outcome_from(entry: LogEntry) -> OutcomeRecord:
    """Read an :class:`OutcomeRecord` back from its ``outcome`` log entry."""
    d = entry.details
    return OutcomeRecord(
        entry.record_ids[0],
        d["task_id"],
        d["outcome"],
        tuple(d["evidence_refs"]),
        d["retrieval_ref"],
        parse_timestamp(d["observed_at"], "observed_at"),
        entry.actor,
    )


def feedback_from(entry: LogEntry) -> FeedbackEvent:
    """Read a :class:`FeedbackEvent` back from its ``feedback`` log entry."""
    d = entry.details
    first, *ids = entry.record_ids
    return FeedbackEvent(
        first,
        tuple(ids),
        d["verdict"],
        d["attribution_confidence"],
        d["use_role"],
        d["basis"],
        d["task_id"],
        d["retrieval_ref"],
        d["outcome_ref"],
        tuple(d["evidence_refs"]),
        parse_timestamp(d["observed_at"], "observed_at"),
        entry.actor,
    )


def utc_day(moment: datetime) -> str:
    """Return the UTC day ``YYYY-MM-DD`` of an aware time (the day in an event id)."""
    return check_aware(moment, "now").astimezone(UTC).date().isoformat()


def check_aware(moment: object, name: str) -> datetime:
    """Return ``moment`` if it is an aware datetime; else raise ``RecordError`` naming ``name``."""
    if not isinstance(moment, datetime):
        raise RecordError(f"must be a datetime, got {type(moment).__name__}", field=name)
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise RecordError("naive datetime: a time zone is required", field=name)
    return moment


def check_choice(value: object, allowed: Sequence[str], name: str) -> str:
    """Return ``value`` if it is one of ``allowed``; else raise ``RecordError`` naming ``name``."""
    if not isinstance(value, str) or value not in allowed:
        raise RecordError(f"must be one of {', '.join(allowed)}; got {value!r}", field=name)
    return value


def check_token(value: object, name: str) -> str:
    """Return ``value`` if it is one token (1-1000 characters, no whitespace); else raise ``RecordError``."""
    if not isinstance(value, str) or not _TOKEN.match(value):
        raise RecordError(
            f"must be one token without spaces (an id or an anchor), got {value!r}: "
            "the log keeps ids and refs, never free text",
            field=name,
        )
    return value


def check_optional_token(value: object, name: str) -> str | None:
    """Like :func:`check_token`, but ``None`` passes."""
    return None if value is None else check_token(value, name)


def check_tokens(values: Iterable[str], name: str) -> tuple[str, ...]:
    """Return the tokens of a list, de-duplicated in order; ``RecordError`` names ``name[i]`` of a bad one."""
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise RecordError("must be a list of refs", field=name)
    return tuple(dict.fromkeys(check_token(v, f"{name}[{i}]") for i, v in enumerate(values)))


def check_prose(value: object, name: str) -> str:
    """Return non-empty text NFC-normalised and stripped; else raise ``RecordError`` naming ``name``."""
    if not isinstance(value, str) or not value.strip():
        raise RecordError("must be non-empty text", field=name)
    return unicodedata.normalize("NFC", value).strip()

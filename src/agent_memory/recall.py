"""Recall: scored, state-aware, budgeted selection of whole records, each with its reasons.

The rules (seed 001 "Recall", origin-notes §1.13; seed 000 §15.2; seed 003 read path;
DESIGN.md §5, §9 "Time", "Tokens"):

- relevance: per index, positive scores divided by that index's best; the best across indexes;
- score = relevance × state weight (active 1.0, transitional 0.8, superseded 0.3, archived 0.1;
  a record marked stale by review weighs like superseded) × recency ``max(0.1, 0.5^(age/30 days))``
  (age from ``updated_at`` to ``now``) × salience ``1 + n/(n+5)`` × confidence; ≤ 0 is dropped;
- archived records only with ``include_archived``; superseded ones only with
  ``include_history`` (as predecessors of a hit) or when ``valid_at`` falls in their valid time;
- whole records within the token budget (4 characters per token of the body), ties by id;
  a transitional record comes with its other side in one unit, or neither; a unit that does
  not fit is skipped and the next tried;
- ``as_of`` reads each record as the version written at or before that record time;
  ``valid_at`` keeps records whose valid time ``[valid_from, valid_to)`` contains it;
- a tainted record not approved by review is returned marked quarantined, never hidden.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from agent_memory.errors import RecordError, RecordNotFound
from agent_memory.records import Kind, MemoryRecord, State
from agent_memory.search.base import Hit
from agent_memory.wire import format_timestamp

__all__ = [
    "CANDIDATES_PER_INDEX",
    "STATE_WEIGHTS",
    "RecallQuery",
    "RecallResult",
    "RecalledRecord",
    "approx_tokens",
    "fuse_relevance",
    "select",
]

STATE_WEIGHTS = {State.ACTIVE: 1.0, State.TRANSITIONAL: 0.8, State.SUPERSEDED: 0.3, State.ARCHIVED: 0.1}
STALE_WEIGHT = 0.3
RECENCY_HALF_LIFE_DAYS = 30.0
RECENCY_FLOOR = 0.1
CANDIDATES_PER_INDEX = 32
CHARS_PER_TOKEN = 4


def approx_tokens(record: MemoryRecord) -> int:
    """Estimate a record's tokens as in seed 001: ``max(1, len(body) // 4)``."""
    return max(1, len(record.body) // CHARS_PER_TOKEN)


def fuse_relevance(results: Iterable[Sequence[Hit]]) -> dict[str, float]:
    """Normalise each index's positive scores by its best and keep each id's best across indexes.

    Returns:
        ``{record id: relevance in (0, 1]}``.
    """
    relevance: dict[str, float] = {}
    for hits in results:
        positive = [h for h in hits if h.score > 0]
        if not positive:
            continue
        best = max(h.score for h in positive)
        for hit in positive:
            relevance[hit.record_id] = max(relevance.get(hit.record_id, 0.0), hit.score / best)
    return relevance


@dataclass(frozen=True, slots=True)
class RecallQuery:
    """What to recall; see :meth:`agent_memory.memory.Memory.recall` for the meaning of each field."""

    query: str
    budget_tokens: int = 2000
    include_history: bool = False
    include_archived: bool = False
    as_of: datetime | None = None
    valid_at: datetime | None = None
    namespace: str | None = None
    k: int | None = None

    def __post_init__(self) -> None:
        if (
            isinstance(self.budget_tokens, bool)
            or not isinstance(self.budget_tokens, int)
            or self.budget_tokens < 1
        ):
            raise RecordError(
                f"must be a whole number of tokens ≥ 1, got {self.budget_tokens!r}", field="budget_tokens"
            )
        if self.k is not None and (not isinstance(self.k, int) or self.k < 1):
            raise RecordError(f"must be a positive whole number, got {self.k!r}", field="k")
        for name in ("as_of", "valid_at"):
            moment = getattr(self, name)
            if moment is not None and (moment.tzinfo is None or moment.utcoffset() is None):
                raise RecordError("naive datetime: a time zone is required", field=name)


@dataclass(frozen=True, slots=True)
class RecalledRecord:
    """One record in a recall result.

    Attributes:
        record: The version recalled (the latest, or the one current ``as_of``).
        score: Its final score (0 for records brought in as a partner or predecessor).
        tokens: Its estimated size (4 characters per token).
        reasons: Why it is here: the origin's strings plus ours (quarantine, stale, time).
        review: ``approved``, ``rejected``, ``stale``, ``quarantined`` or ``none`` (untainted, unreviewed).
    """

    record: MemoryRecord
    score: float
    tokens: int
    reasons: tuple[str, ...]
    review: str = "none"

    def to_json(self) -> dict[str, object]:
        """Return the MCP/CLI shape: id, body, state, score, reasons, plus review and dates."""
        return {
            "id": self.record.id,
            "body": self.record.body,
            "state": self.record.state.value,
            "score": round(self.score, 6),
            "reasons": list(self.reasons),
            "review": self.review,
            "kind": self.record.effective_kind.value,
            "subject": self.record.subject,
            "source": self.record.provenance.ref,
            "valid_from": format_timestamp(self.record.effective_valid_from),
            "tokens": self.tokens,
        }


@dataclass(frozen=True, slots=True)
class RecallResult:
    """The records recalled for a query, in rank order, and notes on what was left out."""

    query: str
    records: tuple[RecalledRecord, ...]
    budget_tokens: int
    total_tokens: int
    notes: tuple[str, ...] = field(default_factory=tuple)

    def as_prompt_block(self) -> str:
        """Render the block an agent pastes into its context (see :mod:`agent_memory.prompt_block`)."""
        from agent_memory.prompt_block import render

        return render(self)

    def to_json(self) -> dict[str, object]:
        """Return ``{"query", "records", "budget_tokens", "total_tokens", "notes", "prompt_block"}``."""
        return {
            "query": self.query,
            "records": [r.to_json() for r in self.records],
            "budget_tokens": self.budget_tokens,
            "total_tokens": self.total_tokens,
            "notes": list(self.notes),
            "prompt_block": self.as_prompt_block(),
        }


ReviewLookup = Callable[[MemoryRecord], str]
VersionLookup = Callable[[str], MemoryRecord | None]


def select(
    request: RecallQuery,
    relevance: dict[str, float],
    version_of: VersionLookup,
    *,
    now: datetime,
    boost: Callable[[str], float],
    review_of: ReviewLookup,
) -> RecallResult:
    """Score the candidates and fill the budget with whole units (the core of recall).

    Args:
        request: The query and its options.
        relevance: ``{id: relevance}`` from :func:`fuse_relevance`.
        version_of: Returns the version to use for an id (latest or ``as_of``), or ``None``
            when the record did not exist yet or must not be exposed.
        now: The clock recency is measured from.
        boost: Salience multiplier by id (``1 + n/(n+5)``).
        review_of: The review state of a record (``approved``, ``stale``, ``quarantined`` …).
    """
    scored: list[tuple[float, MemoryRecord, list[str]]] = []
    for record_id, rel in relevance.items():
        record = version_of(record_id)
        if record is None or record.redacted:
            continue
        reasons = [f"matched query (relevance {rel:.4f})"]
        if not _visible(record, request, reasons):
            continue
        review = review_of(record)
        weight = STALE_WEIGHT if review == "stale" else STATE_WEIGHTS[record.state]
        score = rel * weight * _recency(record, now) * boost(record.id) * record.confidence
        if score > 0:
            scored.append((score, record, reasons))
    scored.sort(key=lambda item: (-item[0], item[1].id))
    chosen: list[RecalledRecord] = []
    taken: set[str] = set()
    total = 0
    smallest_skipped: int | None = None
    for score, record, reasons in scored:
        if record.id in taken:
            continue
        unit = _unit(record, score, reasons, request, version_of, review_of, taken)
        size = sum(member.tokens for member in unit)
        if total + size > request.budget_tokens:
            smallest_skipped = size if smallest_skipped is None else min(smallest_skipped, size)
            continue
        if request.k is not None and len(chosen) + len(unit) > request.k:
            continue
        chosen.extend(unit)
        taken.update(member.record.id for member in unit)
        total += size
    notes = []
    if not chosen and smallest_skipped is not None:
        notes.append(
            f"no record fits within {request.budget_tokens} tokens "
            f"(the smallest match needs {smallest_skipped})"
        )
    elif not scored:
        notes.append("no record matched the query")
    return RecallResult(request.query, tuple(chosen), request.budget_tokens, total, tuple(notes))


def _visible(record: MemoryRecord, request: RecallQuery, reasons: list[str]) -> bool:
    if request.namespace is not None and record.effective_namespace != request.namespace:
        return False
    if request.valid_at is not None:
        start, end = record.effective_valid_from, record.valid_to
        if start > request.valid_at or (end is not None and end <= request.valid_at):
            return False
        if record.state is State.SUPERSEDED:
            reasons.append(f"held at {format_timestamp(request.valid_at)} (valid time)")
            return True
    if request.as_of is not None:
        reasons.append(f"as believed at {format_timestamp(request.as_of)} (record time)")
    if record.state is State.ARCHIVED:
        return request.include_archived
    if record.state is State.SUPERSEDED:
        return request.include_history
    return True


def _recency(record: MemoryRecord, now: datetime) -> float:
    assert record.updated_at is not None  # noqa: S101 - always set by the record
    age_days = max(0.0, (now - record.updated_at).total_seconds() / 86400.0)
    decay: float = 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)
    return max(RECENCY_FLOOR, decay)


def _unit(
    record: MemoryRecord,
    score: float,
    reasons: list[str],
    request: RecallQuery,
    version_of: VersionLookup,
    review_of: ReviewLookup,
    taken: set[str],
) -> list[RecalledRecord]:
    review = review_of(record)
    unit = [
        RecalledRecord(
            record, score, approx_tokens(record), tuple(reasons + _review_reasons(record, review)), review
        )
    ]
    if record.transition is not None:
        for side in record.transition.sides:
            partner = version_of(side) if side != record.id and side not in taken else None
            if partner is not None and not partner.redacted:
                partner_review = review_of(partner)
                why = [
                    f"other side of the transition with {record.id}",
                    *_review_reasons(partner, partner_review),
                ]
                unit.append(RecalledRecord(partner, 0.0, approx_tokens(partner), tuple(why), partner_review))
    if request.include_history:
        current = record
        seen = {r.record.id for r in unit} | taken
        while current.supersedes and current.supersedes not in seen:
            predecessor = version_of(current.supersedes)
            if predecessor is None or predecessor.redacted:
                break
            seen.add(predecessor.id)
            pred_review = review_of(predecessor)
            why = [f"superseded predecessor of {current.id}", *_review_reasons(predecessor, pred_review)]
            unit.append(RecalledRecord(predecessor, 0.0, approx_tokens(predecessor), tuple(why), pred_review))
            current = predecessor
    return unit


def _review_reasons(record: MemoryRecord, review: str) -> list[str]:
    if review == "quarantined":
        labels = ", ".join(record.taint or ())
        return [f"quarantined: tainted ({labels}) and not yet reviewed; never autoloaded"]
    if review == "stale":
        return ["marked stale by review: down-weighted like superseded"]
    if review == "rejected":
        return ["rejected by review: kept for the record, not to act on"]
    if record.effective_kind is Kind.STATE and record.state is State.SUPERSEDED and record.superseded_by:
        return [f"superseded by {record.superseded_by}: follow it for the current value"]
    return []


def version_as_of(history: Sequence[MemoryRecord], as_of: datetime | None) -> MemoryRecord | None:
    """Return the last version written at or before ``as_of`` (the latest when ``as_of`` is None)."""
    if not history:
        return None
    if as_of is None:
        return history[-1]
    eligible = [v for v in history if v.updated_at is not None and v.updated_at <= as_of]
    return eligible[-1] if eligible else None


def lookup_versions(
    get: Callable[[str], MemoryRecord],
    history_of: Callable[[str], list[MemoryRecord]],
    as_of: datetime | None,
) -> VersionLookup:
    """Build a :data:`VersionLookup`: the store's ``get``, or its ``history`` read ``as_of`` a record time."""

    def version_of(record_id: str) -> MemoryRecord | None:
        try:
            return get(record_id) if as_of is None else version_as_of(history_of(record_id), as_of)
        except RecordNotFound:
            return None

    return version_of

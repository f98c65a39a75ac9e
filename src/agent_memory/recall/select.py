"""Recall: scored, state-aware, budgeted selection of whole records, each with its reasons.

The rules (seed 001 "Recall", origin-notes §1.13; seed 000 §15.2; seed 003 read path;
DESIGN.md §5, §9 "Time", "Tokens"):

- relevance: per index, positive scores divided by that index's best; the best across indexes;
  a superseded match lends its relevance to the record that replaced it (followed through
  ``superseded_by`` to the current value): a question its past value answers is a question
  about the subject, and the current value answers it too (issue 21);
- score = relevance × state weight (active 1.0, transitional 0.8, superseded 0.3, archived 0.1;
  a record a person marked stale, or rejected, weighs like superseded: ``min(weight, 0.3)``)
  × recency ``1 − w · (1 − max(0.1, 0.5^(age/30 days)))`` (seed 001's decay when ``w`` = 1; age
  to ``now`` from the start of the valid time, or from ``updated_at``; the basis, half-life and
  ``w``, or recency off, from ``memory.toml`` ``[recall]``:
  :class:`~agent_memory.settings.RecallSettings`, by default valid time and ``w`` = 0.1)
  × salience ``1 + n/(n+5)`` (``n`` touches) × confidence; a score ≤ 0 is dropped;
- archived records only with ``include_archived``; superseded ones only with
  ``include_history`` (as hits, and as the ``supersedes`` trail of a hit) or when
  ``valid_at`` falls in their valid time;
- candidates are ranked by (−score, id); each forms a unit with its transition partner and,
  with ``include_history``, its ``supersedes`` chain; companions are scored like the origin's
  (the primary's relevance × their own weight, recency, salience and confidence); whole
  units within the token budget (4 characters per token of the body), never a record cut;
  a unit that does not fit (budget or ``k``) is skipped and the next one tried; the chosen
  records are shown by (−score, id), so the scores order them as shown (the prompt block still
  groups a dispute's sides at the better one's rank);
- ``as_of`` reads each record as the version written at or before that record time;
  ``valid_at`` keeps records whose valid time ``[valid_from, valid_to)`` contains it;
- a tainted record not approved by review is returned marked quarantined, never hidden;
- every record carries its reasons: the origin's exact strings (``matched query (relevance
  0.1234)`` with four decimals, ``other side of the transition with <id>``,
  ``superseded predecessor of <id>``)
  and ``current value after <id>, which matched the query (relevance 0.1234)`` for a lent one,
  and ours (record time, valid time, quarantine, stale, rejected, superseded state); the
  result's notes say why matches were left out.

Reads: candidates are filtered and scored on their :class:`~agent_memory.records.card.Card`
(the fields these rules use; an index that keeps cards gives them all in one query), and
only the members of the units that fit are read, verified and checked against their cards;
any difference means the index was behind, and the selection is made again from the
records (issue 23: at 100,000 notes, about 70 reads per recall instead of about 200).

Invariant: the result never holds part of a record, never one side of a dispute without the
other when both are readable, and never more than ``budget_tokens`` tokens or ``k`` records;
every record in it scores above 0 and none scores above one shown before it.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from agent_memory.errors import RecordError
from agent_memory.governance.review_book import is_stale
from agent_memory.log.fold import one_pass
from agent_memory.recall.card_reads import CardLookup, CardsOf, StaleCard, kept_cards, read_card
from agent_memory.recall.version_lookup import VersionLookup, asking, lookup_versions, version_as_of
from agent_memory.records.card import Card, approx_tokens
from agent_memory.records.record import Kind, MemoryRecord, State
from agent_memory.records.wire import format_timestamp

__all__ = [
    "CANDIDATES_PER_INDEX",
    "STATE_WEIGHTS",
    "RecallQuery",
    "RecallResult",
    "RecalledRecord",
    "approx_tokens",
    "is_stale",
    "lookup_versions",
    "review_reasons",
    "select",
    "version_as_of",
]

STATE_WEIGHTS = {State.ACTIVE: 1.0, State.TRANSITIONAL: 0.8, State.SUPERSEDED: 0.3, State.ARCHIVED: 0.1}
STALE_WEIGHT = STATE_WEIGHTS[State.SUPERSEDED]
RECENCY_HALF_LIFE_DAYS = 30.0
RECENCY_FLOOR = 0.1
CANDIDATES_PER_INDEX = 100
"""Candidates recall asks of its indexes (or ``4 × k`` when more): the origin asked 32, which
capped a large budget at 32 records; the default hybrid asks each part for 100 anyway."""

Ranked = MemoryRecord | Card
"""What recall filters and scores: a record version, or its card (the same fields)."""
ReviewLookup = Callable[[Ranked], str]


@dataclass(frozen=True, slots=True)
class RecallQuery:
    """What to recall; see :meth:`agent_memory.memory.Memory.recall` for the meaning of each field.

    Raises:
        RecordError: Naming the field: a query that is not text, a budget or ``k`` that is
            not a whole number ≥ 1, a time that is not an aware datetime, a namespace that
            is not text.
    """

    query: str
    budget_tokens: int = 2000
    include_history: bool = False
    include_archived: bool = False
    as_of: datetime | None = None
    valid_at: datetime | None = None
    namespace: str | None = None
    k: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.query, str):
            raise RecordError(f"must be text, got {type(self.query).__name__}", field="query")
        if not _whole(self.budget_tokens):
            raise RecordError(
                f"must be a whole number of tokens ≥ 1, got {self.budget_tokens!r}", field="budget_tokens"
            )
        if self.k is not None and not _whole(self.k):
            raise RecordError(f"must be a whole number ≥ 1, got {self.k!r}", field="k")
        for name in ("as_of", "valid_at"):
            moment = getattr(self, name)
            if moment is None:
                continue
            if not isinstance(moment, datetime):
                raise RecordError(f"must be a datetime, got {type(moment).__name__}", field=name)
            if moment.tzinfo is None or moment.utcoffset() is None:
                raise RecordError("naive datetime: a time zone is required", field=name)
        if self.namespace is not None and not isinstance(self.namespace, str):
            raise RecordError(f"must be text, got {type(self.namespace).__name__}", field="namespace")


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


@dataclass(frozen=True, slots=True)
class RecalledRecord:
    """One record in a recall result.

    Attributes:
        record: The version recalled (the latest, or the one current ``as_of``).
        score: Its score (for a companion: the primary's relevance × its own factors).
        tokens: Its estimated size (4 characters per token).
        reasons: Why it is here: the origin's strings plus ours (time, quarantine, stale).
        review: ``rejected``, ``quarantined``, ``stale``, ``approved`` or ``none``.
    """

    record: MemoryRecord
    score: float
    tokens: int
    reasons: tuple[str, ...]
    review: str = "none"

    def to_json(self) -> dict[str, object]:
        """Return the MCP/CLI shape: id, body, state, score, reasons, plus review, dates and source."""
        record = self.record
        return {
            "id": record.id,
            "body": record.body,
            "state": record.state.value,
            "score": round(self.score, 6),
            "reasons": list(self.reasons),
            "review": str(self.review),
            "stale": is_stale(self.review),
            "type": record.type.value,
            "kind": record.effective_kind.value,
            "subject": record.subject,
            "namespace": record.effective_namespace,
            "source": record.provenance.ref,
            "valid_from": format_timestamp(record.effective_valid_from),
            "valid_to": format_timestamp(record.valid_to) if record.valid_to else None,
            "recorded_at": format_timestamp(record.updated_at or record.created_at),
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

    @property
    def ids(self) -> tuple[str, ...]:
        """The recalled record ids, in rank order."""
        return tuple(item.record.id for item in self.records)

    def as_prompt_block(self) -> str:
        """Render the block an agent pastes into its context (see :mod:`agent_memory.recall.prompt_block`)."""
        from agent_memory.recall.prompt_block import render

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


@dataclass(frozen=True, slots=True)
class _Scorer:
    now: datetime
    boost: Callable[[str], float]
    review_of: ReviewLookup
    reviews: dict[str, str] = field(default_factory=dict)
    half_life_days: float | None = RECENCY_HALF_LIFE_DAYS
    recency_weight: float = 1.0
    recency_from: str = "updated"

    def review(self, record: Ranked) -> str:
        if record.id not in self.reviews:
            self.reviews[record.id] = self.review_of(record)
        return self.reviews[record.id]

    def score(self, record: Ranked, relevance: float) -> float:
        review = self.review(record)
        weight = STATE_WEIGHTS[record.state]
        if review == "rejected" or is_stale(review):
            weight = min(weight, STALE_WEIGHT)
        recency = _recency(record, self.now, self.half_life_days, self.recency_weight, self.recency_from)
        return relevance * weight * recency * self.boost(record.id) * record.confidence


def select(
    request: RecallQuery,
    relevance: dict[str, float],
    version_of: VersionLookup,
    *,
    now: datetime,
    boost: Callable[[str], float],
    review_of: ReviewLookup,
    withheld: Callable[[str], bool] = lambda _: False,
    recency_half_life_days: float | None = RECENCY_HALF_LIFE_DAYS,
    recency_weight: float = 1.0,
    recency_from: str = "updated",
    cards: CardsOf | None = None,
) -> RecallResult:
    """Score the candidates and fill the budget with whole units (the core of recall).

    Candidates are ranked on their :class:`~agent_memory.records.card.Card` and only the
    records of the units that fit are read (``version_of``); each is checked against the
    card it was ranked by. With ``cards``, the cards come from the index (one batch, no
    note read); a card that differs from the version read means the index was behind, and
    the whole selection is made again from the records, so the result is always the one
    the records give.

    Args:
        request: The query and its options.
        relevance: ``{id: relevance in (0, 1]}``, the indexes' rankings fused by
            :func:`~agent_memory.search.hybrid.fuse` (``weighted``, ``max``, combined by ``max``).
        version_of: Returns the version to use for an id (latest or ``as_of``), or ``None``
            when the record did not exist yet or cannot be read.
        now: The clock recency is measured from (aware).
        boost: Salience multiplier by id (``1 + n/(n+5)``, in [1, 2)).
        review_of: The review state of a record or its card (by ``id`` and ``taint``; see
            :mod:`agent_memory.governance.review_book`); asked inside
            :func:`~agent_memory.log.fold.one_pass`, so a review book reads its log once.
        withheld: Whether an id ``version_of`` gave no version for is withdrawn (counted as
            such in the notes, never shown), rather than unreadable or erased.
        recency_half_life_days: Days after which recency halves (seed 001: 30); ``None``
            turns recency off (every record 1.0; ``memory.toml`` ``[recall] recency = "off"``).
        recency_weight: The share of a score recency can take away, in [0, 1] (seed 001: 1;
            a Home's default 0.1, :class:`~agent_memory.settings.RecallSettings`).
        recency_from: ``updated`` (age from ``updated_at``, seed 001) or ``valid`` (from the
            start of the record's valid time).
        cards: ``ids -> {id: card}`` of an index (:meth:`~agent_memory.search.catalog.IndexCatalog.cards`;
            ids it does not hold left out, ``None`` when it keeps none): only for the latest
            versions (no ``as_of``) and while no withdrawal is in force, since a card cannot
            say whether a record is withdrawn. ``None``: every candidate is read.
    """
    run = functools.partial(
        _select,
        request,
        relevance,
        version_of,
        now=now,
        boost=boost,
        review_of=review_of,
        withheld=withheld,
        recency_half_life_days=recency_half_life_days,
        recency_weight=recency_weight,
        recency_from=recency_from,
    )
    with one_pass():
        if cards is not None:
            try:
                with asking(()):  # no batch of every candidate: only the records returned are read
                    return run(kept_cards(cards, version_of, relevance))
            except StaleCard:
                pass  # the index was behind the store: every candidate is read below
        with asking(relevance):
            return run(functools.partial(read_card, version_of))


def _select(
    request: RecallQuery,
    relevance: dict[str, float],
    version_of: VersionLookup,
    card_of: CardLookup,
    *,
    now: datetime,
    boost: Callable[[str], float],
    review_of: ReviewLookup,
    withheld: Callable[[str], bool],
    recency_half_life_days: float | None,
    recency_weight: float,
    recency_from: str,
) -> RecallResult:
    scorer = _Scorer(
        now,
        boost,
        review_of,
        half_life_days=recency_half_life_days,
        recency_weight=recency_weight,
        recency_from=recency_from,
    )
    hidden: Counter[str] = Counter()
    scored: list[tuple[float, str, Card, float, list[str]]] = []
    lent = _lend_to_successors(relevance, card_of)
    for record_id, rel in (relevance | {i: r for i, (r, _) in lent.items()}).items():
        card = card_of(record_id)
        if card is None and withheld(record_id):
            hidden["withdrawn"] += 1
            continue
        if card is None or card.redacted:
            hidden["not yet recorded" if card is None and request.as_of else "unreadable"] += 1
            continue
        reasons = [f"matched query (relevance {relevance[record_id]:.4f})"] if record_id in relevance else []
        if record_id in lent:
            predecessor = lent[record_id][1]
            reasons.append(
                f"current value after {predecessor}, which matched the query (relevance {rel:.4f})"
            )
        cause = _hidden_by(card, request, reasons)
        if cause:
            hidden[cause] += 1
            continue
        score = scorer.score(card, rel)
        if score > 0:
            scored.append((score, card.id, card, rel, reasons))
    scored.sort(key=lambda item: (-item[0], item[1]))
    # The units that fit are chosen on the cards alone, then read together (one batch where
    # the store has one) and each member checked against its card.
    fitting: list[tuple[list[tuple[Card, str | None]], list[str], float, float, list[str]]] = []
    taken: set[str] = set()
    total = 0
    count = 0
    over_budget: list[int] = []
    over_k = 0
    for score, _, card, rel, reasons in scored:
        if card.id in taken:
            continue
        members, unseen = _members(card, request, card_of, taken)
        size = sum(member.tokens for member, _ in members)
        if total + size > request.budget_tokens:
            over_budget.append(size)
            continue
        if request.k is not None and count + len(members) > request.k:
            over_k += 1
            continue
        fitting.append((members, unseen, score, rel, reasons))
        taken.update(member.id for member, _ in members)
        total += size
        count += len(members)
    chosen: list[RecalledRecord] = []
    with asking(taken):
        for members, unseen, score, rel, reasons in fitting:
            chosen.extend(_unit(members, unseen, score, rel, reasons, version_of, scorer))
    notes = _notes(request, bool(relevance), hidden, over_budget, over_k, bool(chosen))
    shown = sorted(chosen, key=lambda item: (-item.score, item.record.id))
    return RecallResult(request.query, tuple(shown), request.budget_tokens, total, tuple(notes))


def _lend_to_successors(
    relevance: dict[str, float], card_of: CardLookup, *, hops: int = 16
) -> dict[str, tuple[float, str]]:
    """Return ``{successor id: (relevance, predecessor id)}`` for successors a superseded match lends to.

    A superseded candidate's relevance goes to the end of its ``superseded_by`` chain (at most
    ``hops`` steps, the version ``card_of`` gives, so ``as_of`` reads the chain as it stood)
    when that is more than the successor's own. Only the best lender per successor is kept.
    """
    lent: dict[str, tuple[float, str]] = {}
    for record_id, rel in relevance.items():
        card = card_of(record_id)
        if card is None or card.state is not State.SUPERSEDED or not card.superseded_by:
            continue
        current, seen = card, {record_id}
        for _ in range(hops):
            successor_id = current.superseded_by
            if not successor_id or successor_id in seen:
                break
            successor = card_of(successor_id)
            if successor is None or successor.redacted:
                break
            seen.add(successor_id)
            current = successor
            if current.state is not State.SUPERSEDED:
                break
        if current.id == record_id:
            continue
        best = max(relevance.get(current.id, 0.0), lent.get(current.id, (0.0, ""))[0])
        if rel > best:
            lent[current.id] = (rel, record_id)
    return lent


def _hidden_by(record: Ranked, request: RecallQuery, reasons: list[str]) -> str | None:
    """Return why ``record`` is left out (a note's key), or ``None`` and add its time reasons."""
    if request.namespace is not None and record.effective_namespace != request.namespace:
        return "namespace"
    if request.as_of is not None:
        reasons.append(f"as believed at {format_timestamp(request.as_of)} (record time)")
    if request.valid_at is not None:
        start, end = record.effective_valid_from, record.valid_to
        if start > request.valid_at:
            return "not yet valid"
        if end is not None and end <= request.valid_at:
            return "no longer valid"
        reasons.append(f"held at {format_timestamp(request.valid_at)} (valid time)")
        if record.state is State.SUPERSEDED:
            return None
    if record.state is State.ARCHIVED and not request.include_archived:
        return "archived"
    if record.state is State.SUPERSEDED and not request.include_history:
        return "superseded"
    return None


_HIDDEN_NOTES = {
    "archived": "{n} archived (shown with --include-archived; include_archived in Python and MCP)",
    "superseded": (
        "{n} superseded (shown with --include-history, include_history in Python and MCP, "
        "or a valid time inside theirs)"
    ),
    "namespace": "{n} in other namespaces than {namespace}",
    "not yet valid": "{n} not yet valid at {valid_at} (valid time)",
    "no longer valid": "{n} no longer valid at {valid_at} (valid time)",
    "not yet recorded": "{n} not yet recorded at {as_of} (record time)",
    "unreadable": "{n} listed by an index but unreadable or erased in the store",
    "withdrawn": "{n} withdrawn (not shown until reinstated)",
}


def _notes(
    request: RecallQuery,
    matched: bool,
    hidden: Counter[str],
    over_budget: list[int],
    over_k: int,
    any_chosen: bool,
) -> list[str]:
    if not matched:
        return ["no record matched the query"]
    notes = []
    if hidden:
        values = {
            "namespace": request.namespace,
            "valid_at": format_timestamp(request.valid_at) if request.valid_at else "",
            "as_of": format_timestamp(request.as_of) if request.as_of else "",
        }
        parts = [_HIDDEN_NOTES[key].format(n=n, **values) for key, n in sorted(hidden.items())]
        notes.append("matches left out: " + "; ".join(parts))
    if over_budget:
        notes.append(
            f"{len(over_budget)} more match(es) did not fit within {request.budget_tokens} tokens "
            f"(the smallest needs {min(over_budget)})"
        )
    if over_k:
        notes.append(f"{over_k} more match(es) left out by k={request.k}")
    if not any_chosen and not over_budget and not over_k and not hidden:
        notes.append("no match scored above zero")
    return notes


def _recency(record: Ranked, now: datetime, half_life_days: float | None, weight: float, basis: str) -> float:
    """Return ``1 − weight · (1 − max(0.1, 0.5^(age/half-life)))``, in [1 − weight·0.9, 1]; 1.0 when off.

    The age is in days to ``now`` from ``updated_at`` (``basis`` ``updated``, seed 001) or from
    the start of the valid time (``valid``); a time after ``now`` counts as age 0.
    """
    if half_life_days is None or weight == 0:
        return 1.0
    assert record.updated_at is not None  # noqa: S101 - always set by the record
    start = record.updated_at if basis == "updated" else record.effective_valid_from
    age_days = max(0.0, (now - start).total_seconds() / 86400.0)
    decay: float = max(RECENCY_FLOOR, 0.5 ** (age_days / half_life_days))
    return 1.0 - weight * (1.0 - decay)


def _members(
    card: Card, request: RecallQuery, card_of: CardLookup, taken: set[str]
) -> tuple[list[tuple[Card, str | None]], list[str]]:
    """Return a candidate's unit as cards, each with why it comes along, and the sides left out.

    The unit is the candidate (why ``None``), the other side of its transition, and with
    ``include_history`` its ``supersedes`` chain; a side that cannot be read or is erased is
    left out and named.
    """
    members: list[tuple[Card, str | None]] = [(card, None)]
    unseen: list[str] = []
    for side in card.sides or ():
        if side == card.id or side in taken:
            continue
        partner = card_of(side)
        if partner is None or partner.redacted:
            unseen.append(side)
            continue
        members.append((partner, f"other side of the transition with {card.id}"))
    if request.include_history:
        current = card
        seen = {member.id for member, _ in members} | taken
        while current.supersedes and current.supersedes not in seen:
            predecessor = card_of(current.supersedes)
            if predecessor is None or predecessor.redacted:
                break
            seen.add(predecessor.id)
            members.append((predecessor, f"superseded predecessor of {current.id}"))
            current = predecessor
    return members, unseen


def _unit(
    members: list[tuple[Card, str | None]],
    unseen: list[str],
    score: float,
    relevance: float,
    reasons: list[str],
    version_of: VersionLookup,
    scorer: _Scorer,
) -> list[RecalledRecord]:
    """Read and check each member of a unit that fits, and give each its score and reasons.

    Raises:
        StaleCard: A member's version differs from the card it was ranked by.
    """
    unit = []
    for card, why in members:
        record = version_of(card.id)
        if record is None or Card.of(record) != card:
            raise StaleCard(card.id)
        if why is None:
            item = _member(record, score, reasons, scorer)
            for side in unseen:
                item = _with_reason(item, f"its other side {side} cannot be shown (unreadable or erased)")
            unit.append(item)
        else:
            unit.append(_member(record, scorer.score(record, relevance), [why], scorer))
    return unit


def _member(record: MemoryRecord, score: float, reasons: list[str], scorer: _Scorer) -> RecalledRecord:
    review = scorer.review(record)
    why = tuple(reasons + review_reasons(record, review))
    return RecalledRecord(record, score, approx_tokens(record), why, review)


def _with_reason(item: RecalledRecord, reason: str) -> RecalledRecord:
    return RecalledRecord(item.record, item.score, item.tokens, (*item.reasons, reason), item.review)


def review_reasons(record: MemoryRecord, review: str) -> list[str]:
    """Return the reasons recall adds for ``record``'s review state and succession, in recall's words.

    ``agent-memory recall`` prints them after each record; the review page shows the same
    words beside the record (quarantine, rejection, a stale mark, a superseded state value).
    """
    reasons = []
    if review == "quarantined":
        labels = ", ".join(record.taint or ())
        reasons.append(f"quarantined: tainted ({labels}) and not yet reviewed; never autoloaded")
    if review == "rejected":
        reasons.append(
            "rejected by review: kept for the record, not to act on; down-weighted like superseded"
        )
    if is_stale(review):
        reasons.append("marked stale by review: down-weighted like superseded")
    if record.effective_kind is Kind.STATE and record.state is State.SUPERSEDED and record.superseded_by:
        reasons.append(f"superseded by {record.superseded_by}: follow it for the current value")
    return reasons

"""Heuristic operators of consolidation: read records, return proposals; never write (DESIGN.md §4).

Each operator is a pure function of the records it is given and the pass time (origin-notes
§1.12, §1.14): it decides whether a pair is a near-duplicate or a contradiction, builds the
merged record, the promoted rule, the next flag of a rule, or the salience of a record. What
becomes of its output (applied on its own, or kept as a pending proposal for review) is
decided by :mod:`.consolidate` under DESIGN.md §9 "What jobs may apply on their own".

Invariant: no operator touches a store, a log or a clock; the same records and ``now`` give
the same proposals, byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_memory.errors import ProposalError
from agent_memory.jobs.text import Facts, content_terms, differing_facts, infer_slots, jaccard, trigrams
from agent_memory.recall.salience import Touch
from agent_memory.records.lifecycle import RULE_FLAG_REASON
from agent_memory.records.record import Kind, MemoryRecord, Provenance, RecordType, State
from agent_memory.write.proposals import Proposal, ProposalKind

__all__ = [
    "ARCHIVE_THRESHOLD",
    "HALF_LIFE_DAYS",
    "NEAR_DUP_THRESHOLD",
    "OVERLAP_THRESHOLD",
    "PROMOTION_THRESHOLD",
    "REINFORCEMENT_BONUS",
    "Terms",
    "contradiction_reason",
    "decay_salience",
    "merge_proposals",
    "near_dup_similarity",
    "promote",
    "rule_flag",
    "signature",
    "strength",
]

NEAR_DUP_THRESHOLD = 0.6
OVERLAP_THRESHOLD = 0.5
PROMOTION_THRESHOLD = 3
HALF_LIFE_DAYS = 30.0
REINFORCEMENT_BONUS = 0.25
ARCHIVE_THRESHOLD = 0.05
_LIVE = (State.ACTIVE, State.TRANSITIONAL)


@dataclass(frozen=True, slots=True)
class Terms:
    """What the heuristics read from one record: terms, polarity, slots, facts and trigrams.

    Read once per record and pass (:mod:`.consolidate` keeps one per record of its run), so
    a record compared with many others is read once, and nothing of its text outlives the run.

    Attributes:
        terms: Stemmed content terms of the body (:func:`~.text.content_terms`).
        negative: Whether the body is negated.
        slots: The record's own ``slots``; when it has none, the slot
            :func:`~.text.infer_slots` reads from its body (the origin's extractors store
            that slot at write time; ``remember`` does not, so it is inferred here, never written).
        facts: The body's numbers, dates and names (:class:`~.text.Facts`).
        trigrams: The body's distinct character trigrams (:func:`~.text.trigrams`), as a
            tuple of interned strings: a run holds one per record it compares, and a tuple
            takes a small part of a set's memory (issue 23: over 20,000 notes a dry run grew
            378 MB past the loaded Home with sets, 75 MB with tuples); :meth:`similarity`
            makes the one set a pair needs.
    """

    terms: frozenset[str]
    negative: bool
    slots: Mapping[str, Any]
    facts: Facts
    trigrams: tuple[str, ...]

    @classmethod
    def of(cls, record: MemoryRecord) -> Terms:
        """Return what the heuristics read from ``record``."""
        terms, negative = content_terms(record.body)
        slots = record.slots or infer_slots(record.body)
        return cls(terms, negative, slots, Facts.of(record.body), tuple(trigrams(record.body)))

    def similarity(self, other: Terms) -> float:
        """Return the trigram Jaccard in [0, 1] of the two bodies, as :func:`~.text.jaccard` of their sets."""
        if not self.trigrams or not other.trigrams:
            return 0.0
        shared = len(frozenset(self.trigrams).intersection(other.trigrams))  # both hold distinct trigrams
        return shared / (len(self.trigrams) + len(other.trigrams) - shared)


def strength(record: MemoryRecord) -> tuple[float, datetime, str]:
    """Return the origin's strength key ``(confidence, created_at, id)``; larger is stronger."""
    return (record.confidence, record.created_at, record.id)


def _negates(a: Terms, b: Terms) -> bool:
    return a.negative != b.negative and jaccard(a.terms, b.terms) >= OVERLAP_THRESHOLD


def _slot_conflict(a: Terms, b: Terms) -> str | None:
    for key in sorted(set(a.slots) & set(b.slots)):
        if a.slots[key] != b.slots[key]:
            return f"slot {key!r} disagrees: {a.slots[key]!r} vs {b.slots[key]!r}"
    return None


def near_dup_similarity(a: MemoryRecord, b: MemoryRecord, ta: Terms, tb: Terms) -> float | None:
    """Return the trigram Jaccard in [0, 1] of two bodies, or ``None`` where the operator abstains.

    Abstains (origin-notes §1.12 ``TrigramNearDupOperator``) on episodes, on a shared slot
    with different values, and on a pair where one side negates the other; (DESIGN.md §9) on
    anything but two ``knowledge`` records of one namespace and type; and (issue 21) on two
    texts that state different facts, whatever their wording shares (numbers, identifiers,
    dates or names differ: :func:`~.text.differing_facts`), and on a tainted record beside an
    untainted one, so a merge never lets tainted text supersede an untainted record.
    """
    if a.type is RecordType.EPISODE or b.type is RecordType.EPISODE or a.type is not b.type:
        return None
    if a.effective_kind is not Kind.KNOWLEDGE or b.effective_kind is not Kind.KNOWLEDGE:
        return None
    if a.effective_namespace != b.effective_namespace:
        return None
    if _slot_conflict(ta, tb) is not None or _negates(ta, tb):
        return None
    if bool(a.taint) != bool(b.taint):
        return None
    if differing_facts(ta.facts, tb.facts) is not None:
        return None
    return ta.similarity(tb)


def merge_proposals(
    a: MemoryRecord, b: MemoryRecord, similarity: float, *, now: datetime, threshold: float
) -> list[Proposal]:
    """Return the two supersedes that fold a near-duplicate pair into one new record (origin-notes §1.12).

    The merged record has the keeper's body and type, provenance
    ``{consolidation, "merge:<other id>"}``, slots other ∪ keeper (keeper wins), the
    keeper's confidence, evidence = both ids sorted, tags = sorted union, taint = union,
    ``created_at = now``. The keeper is the stronger side (:func:`strength`), except that an
    untainted side always keeps over a tainted one (DESIGN.md §9 trust; issue 20 item 5): a
    tainted near-duplicate never brings its text into a trusted record, however new or
    confident it is (the merge still inherits its taint, so it is quarantined until approved).
    The merged record supersedes the other side ("near-duplicate of <keeper> …"), then its next
    version supersedes the keeper ("merged into <merged>").

    Raises:
        ProposalError: The result would not be a merge of exactly these two records.
    """
    strong, weak = (a, b) if (not a.taint, *strength(a)) >= (not b.taint, *strength(b)) else (b, a)
    taint = sorted({*(strong.taint or ()), *(weak.taint or ())})
    merged = MemoryRecord.create(
        type=strong.type,
        body=strong.body,
        slots={**weak.slots, **strong.slots},
        provenance=Provenance(kind="consolidation", ref=f"merge:{weak.id}"),
        created_at=now,
        confidence=strong.confidence,
        evidence=tuple(sorted((strong.id, weak.id))),
        tags=tuple(sorted({*strong.tags, *weak.tags})),
        namespace=strong.namespace,
        taint=tuple(taint) or None,
        supersedes=weak.id,
    )
    first = Proposal(
        ProposalKind.SUPERSEDE,
        record=merged,
        target_id=weak.id,
        reason=f"near-duplicate of {strong.id} (trigram similarity {similarity:.4f} >= {threshold})",
    )
    second = Proposal(
        ProposalKind.SUPERSEDE,
        record=merged.evolve(supersedes=strong.id),
        target_id=strong.id,
        reason=f"merged into {merged.id}",
    )
    _check_merge(first, strong, weak)
    return [first, second]


def _check_merge(proposal: Proposal, strong: MemoryRecord, weak: MemoryRecord) -> None:
    record = proposal.record
    if (
        proposal.kind is not ProposalKind.SUPERSEDE
        or record is None
        or record.supersedes not in (strong.id, weak.id)
        or set(record.evidence) != {strong.id, weak.id}
    ):
        raise ProposalError(
            "a near-duplicate merge must supersede one side and cite both as evidence",
            record_id=record.id if record is not None else None,
        )


def contradiction_reason(a: MemoryRecord, b: MemoryRecord, ta: Terms, tb: Terms) -> str | None:
    """Return why two records contradict, or ``None`` (origin-notes §1.12 ``HeuristicContradictionOperator``).

    Never rules or episodes; only records of one type and namespace. First the sorted shared
    slot keys: a differing value gives ``slot '<k>' disagrees: '<a>' vs '<b>'``. Else
    polarity: exactly one side negative, both term sets non-empty, term Jaccard ≥ 0.5 gives
    ``one side negates the other``.
    """
    excluded = (RecordType.RULE, RecordType.EPISODE)
    if a.type in excluded or b.type in excluded or a.type is not b.type:
        return None
    if a.effective_namespace != b.effective_namespace:
        return None
    slot = _slot_conflict(ta, tb)
    if slot is not None:
        return slot
    if ta.terms and tb.terms and _negates(ta, tb):
        return "one side negates the other"
    return None


def signature(record: MemoryRecord) -> tuple[str, ...]:
    """Return an episode's promotion signature: its sorted tags, else its sorted slot keys."""
    return tuple(sorted(record.tags)) or tuple(sorted(record.slots))


def promote(episodes: Sequence[MemoryRecord], sig: tuple[str, ...], *, now: datetime) -> Proposal:
    """Return the create proposal of a rule generalising ≥ 3 episodes of one signature (origin-notes §1.12).

    Body ``Recurring pattern across N episodes (a, b); latest: <latest body>`` (latest by
    ``(created_at, id)``); provenance ``{consolidation, "promotion:a+b"}``; confidence = the
    lowest of the episodes; evidence = their ids sorted; tags = the signature; taint = union.
    """
    latest = max(episodes, key=lambda r: (r.created_at, r.id))
    taint = sorted({label for r in episodes for label in (r.taint or ())})
    rule = MemoryRecord.create(
        type=RecordType.RULE,
        body=f"Recurring pattern across {len(episodes)} episodes ({', '.join(sig)}); latest: {latest.body}",
        provenance=Provenance(kind="consolidation", ref="promotion:" + "+".join(sig)),
        created_at=now,
        confidence=min(r.confidence for r in episodes),
        evidence=tuple(sorted(r.id for r in episodes)),
        tags=sig,
        namespace=latest.namespace,
        taint=tuple(taint) or None,
    )
    return Proposal(
        ProposalKind.CREATE, record=rule, reason=f"{len(episodes)} episodes share {'+'.join(sig)}"
    )


def rule_flag(
    rule: MemoryRecord, records: Mapping[str, MemoryRecord], *, now: datetime
) -> MemoryRecord | None:
    """Return the rule's next version when its flag is wrong, else ``None`` (origin-notes §1.12 rule-flags).

    Flagged exactly when none of its evidence is live (active or transitional); evidence
    the Home does not hold (or hides) counts as not live.
    """
    live = any(
        (found := records.get(evidence_id)) is not None and found.state in _LIVE
        for evidence_id in rule.evidence
    )
    flagged = not live
    reason = RULE_FLAG_REASON if flagged else None
    if rule.flagged == flagged and rule.flag_reason == reason:
        return None
    return rule.evolve(flagged=flagged, flag_reason=reason, updated_at=now)


def decay_salience(record: MemoryRecord, touch: Touch | None, *, now: datetime) -> float:
    """Return ``confidence × 0.5^(age/30 days) × (1 + 0.25 × touches)`` (origin-notes §1.14).

    Age in days from the later of ``updated_at`` and the last touch to ``now`` (never
    negative). A result below 0.05 makes the record an archive candidate.
    """
    last = record.updated_at or record.created_at
    touches = 0
    if touch is not None:
        touches = touch.touches
        last = max(last, touch.last_touched)
    age_days = max(0.0, (now - last).total_seconds() / 86400.0)
    decay: float = 0.5 ** (age_days / HALF_LIFE_DAYS)
    return record.confidence * decay * (1 + REINFORCEMENT_BONUS * touches)

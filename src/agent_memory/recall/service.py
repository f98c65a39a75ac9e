"""`Recall`: the read path behind ``Memory.recall``, over the catalog, the store and the gate.

Recall asks every index of the catalog, fuses their scores, and hands the candidates to
:func:`agent_memory.recall.select.select` with the Home's ``[recall]`` settings (recency, DESIGN.md
§5; :class:`~agent_memory.settings.RecallSettings`). Invariant: withdrawal controls are
applied before scoring, so a withdrawn record reads as absent (seed 000 §15.2 rule 1), and
nothing is written but the salience touches of the records returned.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import KW_ONLY, dataclass
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from agent_memory.log.fold import one_pass
from agent_memory.recall.select import (
    CANDIDATES_PER_INDEX,
    RecallQuery,
    RecallResult,
    lookup_versions,
    select,
)
from agent_memory.search.hybrid import fuse
from agent_memory.stores.verified import verified_lookup

if TYPE_CHECKING:
    from agent_memory.governance.gate import Gate
    from agent_memory.governance.review_book import ReviewBook
    from agent_memory.recall.salience import Salience
    from agent_memory.settings import RecallSettings
    from agent_memory.write.writer import Writer

__all__ = ["Recall"]


@dataclass(eq=False)
class Recall:
    """The recall verb over one Memory's parts (``Memory.recall`` delegates to :meth:`recall`).

    Args:
        writer: The Memory's Writer: its lock, clock, store and catalog (recall writes no record).
        gate: Withdrawal controls, applied before scoring.
        reviews: Review states (quarantined records are down-weighted or left out).
        salience: Touch counts: a boost in scoring, and touched for the records returned.
        settings: How recall weighs age (``memory.toml`` ``[recall]``).
        zone: The Home's time zone, the local days a question's dates are read on.
    """

    writer: Writer
    _: KW_ONLY
    gate: Gate
    reviews: ReviewBook
    salience: Salience
    settings: RecallSettings
    zone: tzinfo

    def recall(
        self,
        query: str,
        *,
        budget_tokens: int = 2000,
        include_history: bool = False,
        include_archived: bool = False,
        as_of: datetime | None = None,
        valid_at: datetime | None = None,
        namespace: str | None = None,
        k: int | None = None,
        now: datetime | None = None,
        touch: bool = True,
    ) -> RecallResult:
        """Return the records that best answer ``query`` within ``budget_tokens`` (rules: :mod:`.recall`).

        Recency follows :attr:`settings` (``memory.toml`` ``[recall]``; by default a
        decay of half-life 30 days from each record's valid time that takes at most 0.1 of a
        score, so a Home of remembered notes ranks like one of imported notes with the same
        texts and dates).

        Args:
            query: Any text; searched literally (never an error for odd characters).
            budget_tokens: Token budget for the record bodies (4 characters per token), ≥ 1.
            include_history: Also bring each hit's superseded predecessors.
            include_archived: Also consider archived records.
            as_of: Answer from what the Home believed at this record time.
            valid_at: Answer from what held at this valid time.
            namespace: Only records of this namespace.
            k: At most this many records.
            now: The clock recency is measured from; the dates the question names
                ("yesterday", "last month") are read against it in the Home's time zone
                (``memory.toml`` ``timezone``; UTC without a Home).
            touch: Count this recall as a use of the records returned (salience); golden
                recall tests pass ``False`` so that testing does not change rankings.

        Raises:
            RecordError: A budget below 1, ``k`` below 1, or a naive datetime.
        """
        request = RecallQuery(
            query, budget_tokens, include_history, include_archived, as_of, valid_at, namespace, k
        )
        stamp = self.writer.clock(now)
        store, catalog, settings = self.writer.store, self.writer.catalog, self.settings
        with self.writer.lock:
            catalog.refresh()
            # The question's dates ("yesterday") are read on the Home's local days.
            asked = stamp.astimezone(self.zone)
            wanted = max(CANDIDATES_PER_INDEX, (k or 0) * 4)
            rankings = catalog.query(query, k=wanted, now=asked)
            # Each index's scores over its best; an id's relevance is its best over the indexes.
            fused = fuse(rankings, [1.0] * len(rankings), method="weighted", normalise="max", combine="max")
            relevance = {hit.record_id: hit.score for hit in fused}
            # The one verified read path: a version that does not verify reads as absent, even
            # when an index still holds it from before (check_version, as the indexes apply it).
            # A record may be asked for more than once (a unit's member, a successor): verified
            # and judged once per recall.
            plain = functools.cache(
                verified_lookup(lookup_versions(store.get, store.history, as_of), catalog.signers)
            )
            with one_pass():  # the gate and the review book read the log's head once
                # Ranked on the index's cards and only the records returned are read, unless a
                # past version is asked for or a withdrawal is in force (a card cannot tell).
                ranked_on_cards = request.as_of is None and not self.gate.view().in_force
                result = select(
                    request,
                    relevance,
                    # Withdrawal controls first (seed 000 §15.2 rule 1): a withdrawn record reads as absent.
                    functools.cache(self.gate.guard(plain)),
                    now=stamp,
                    boost=self.salience.boost,
                    review_of=self.reviews.state_of,
                    withheld=lambda record_id: plain(record_id) is not None,
                    recency_half_life_days=settings.half_life_days,
                    recency_weight=settings.weight,
                    recency_from=settings.recency,
                    cards=catalog.cards if ranked_on_cards else None,
                )
            unread = catalog.unreadable()
            if unread:
                # A note that cannot be read is named, never silently missing (issue 24 item 4).
                note = (
                    f"{len(unread)} note{'' if len(unread) == 1 else 's'} could not be read and "
                    f"{'was' if len(unread) == 1 else 'were'} not searched: agent-memory doctor names "
                    f"{'it' if len(unread) == 1 else 'them'}"
                )
                result = dataclasses.replace(result, notes=(*result.notes, note))
            if result.records and touch:
                self.salience.touch([r.record.id for r in result.records], now=stamp)
            return result

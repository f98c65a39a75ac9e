"""`HybridIndex`: several indexes behind one `SearchIndex`, their rankings fused (issue 4 item 5).

Writes go to every part; a query asks every part for ``max(k, CANDIDATES)`` (100) candidates,
so the fused order of the first ``k`` hits does not depend on ``k``, and fuses them by the
method the recipe names:

- ``rrf`` (reciprocal rank fusion, Cormack et al. 2009): ``score(d) = Σᵢ wᵢ / (k_rrf + rankᵢ(d))``
  over the parts that returned ``d``, ranks from 1; equal scores share the best rank
  ("1224"), so an order a part made up by record id does not become a score difference.
  Only ranks count, so parts whose scores live on different scales (BM25, cosine) mix
  without calibration. Scores lie in ``(0, Σᵢ wᵢ / (k_rrf + 1)]``.
- ``weighted``: each part's scores are normalised, ``max`` (``s / max s``, the origin's
  relevance rule, origin-notes §1.13) or ``minmax`` (``f + (1 − f) · (s − min) / (max − min)``
  with the floor ``f`` = :data:`MINMAX_FLOOR`, a single candidate counting 1), then
  ``score(d) = Σᵢ wᵢ · normᵢ(d)``. Under ``minmax`` a part's weakest candidate still adds
  ``f · wᵢ``: every candidate a part found is a match, so none is pinned to 0 (issue 21; in
  a Home of two matching notes the weaker one keeps a relevance a reader can act on).

Before fusing, the **coverage look** (:mod:`.fts_coverage`, exponent :data:`COVERAGE`): a part
that can say how much of the question each of its candidates holds (:class:`CoverageLookup`,
e.g. :class:`~.fts.FtsIndex`) has each normalised score multiplied by ``coverage ** COVERAGE``
(coverage in [0, 1], idf-weighted), so a note that shares one rare word of the question no
longer outranks one that holds most of it; ``coverage`` 0 turns it off. The look runs in the
same call as its part's query, so it overlaps the other parts' queries (issue 23).

Then the **thread boost** (:func:`boost_threads`, weight :data:`THREAD_WEIGHT`): every fused
candidate gains ``THREAD_WEIGHT ×`` the best fused score among the candidates of its
conversation thread (:mod:`.threads`: the turns of one session), itself included, so a turn
whose session holds the best match rises above an equally scored turn of an unrelated
session; a note in no thread counts as a thread of its own. The threads come from a part
that can name them (:class:`ThreadLookup`, e.g. :class:`~.fts.FtsIndex`); with no such part
the boost is off and the recipe says so (``thread_weight`` ``"0.0"``).

Last the **date boost** (:mod:`.dates`, weight :data:`~.dates.DATE_WEIGHT`): when the
question names a time relative to when it is asked ("four weeks ago", "last Saturday", "in
March"), every candidate whose thread's event date (:func:`~.threads.thread_time`) falls in
that span gains ``DATE_WEIGHT ×`` the best candidate's score. "When it is asked" is the
``now`` given to :meth:`HybridIndex.query` (recall's ``now``), else the index's clock. Notes in
no thread carry no date here and are not boosted.

Invariants: every part holds the same records (all writes go to all parts, in order);
results are sorted by (−score, record id) and hold only scores > 0; :meth:`HybridIndex.inputs`
reports a part disagreement as a digest no store can match, so the index reads as dirty.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Literal, Protocol, runtime_checkable

from agent_memory.records.record import MemoryRecord
from agent_memory.records.wire import utc_now
from agent_memory.search.base import Hit, IndexInputs, Recipe, SearchIndex
from agent_memory.search.dates import DATE_WEIGHT, boost_dates, date_window
from agent_memory.search.overlap import each
from agent_memory.search.threads import thread_time

__all__ = [
    "COVERAGE",
    "FUSION_METHODS",
    "MINMAX_FLOOR",
    "NORMALISATIONS",
    "THREAD_WEIGHT",
    "CoverageLookup",
    "FusionMethod",
    "HybridIndex",
    "ThreadLookup",
    "boost_threads",
    "fuse",
]

FusionMethod = Literal["rrf", "weighted"]
FUSION_METHODS: tuple[FusionMethod, ...] = ("rrf", "weighted")
Normalisation = Literal["max", "minmax"]
NORMALISATIONS: tuple[Normalisation, ...] = ("max", "minmax")
Combination = Literal["sum", "max"]
CANDIDATES = 100
"""Candidates asked of each part, whatever ``k`` (up to this many): the fused order of the first
``k`` hits is then the same for every ``k`` ≤ 100. The origin asked 32 (origin-notes §1.13); the
fused top 10 changed with the depth asked (docs/benchmarks.md, Retrieval quality)."""
MINMAX_FLOOR = 0.1
"""What a part's weakest candidate counts under ``minmax`` (its best counts 1): a share of the part's
weight, so a note only weak candidates gave still ranks by how many parts found it and never scores 0
(issue 21: min-max scores of 0 read as "matched query (relevance 0.0000)")."""
THREAD_WEIGHT = 0.3
"""Share of the best fused score of a candidate's thread added to its own (:func:`boost_threads`).
docs/benchmarks.md, Retrieval quality: 0.15-0.4 were measured; 0.3 gave the best LoCoMo recall@10
and @25 and left LongMemEval_S's session metrics unchanged."""

COVERAGE = 0.3
"""Exponent of the coverage look: a BM25 candidate's normalised score × coverage ** 0.3.
docs/benchmarks.md, Retrieval quality: exponents 0.3, 0.5 and 1 were measured on the tuning part
(issue 21 item 3); 0.5 and 1 cost LoCoMo recall@25 what they gain on LongMemEval."""


@runtime_checkable
class CoverageLookup(Protocol):
    """A part that can say which share of a question each candidate holds (:mod:`.fts_coverage`)."""

    def coverage(self, text: str, record_ids: Sequence[str]) -> dict[str, float]:
        """Return ``{record id: coverage in [0, 1]}`` for every id given."""
        ...


@runtime_checkable
class ThreadLookup(Protocol):
    """A part that can say which conversation thread each note it holds is in (:mod:`.threads`)."""

    def threads(self, record_ids: Sequence[str]) -> dict[str, str]:
        """Return ``{record id: thread key}`` for the held ids that are in a thread (others absent)."""
        ...


def fuse(
    rankings: Sequence[Sequence[Hit]],
    weights: Sequence[float],
    *,
    method: FusionMethod = "rrf",
    k_rrf: int = 60,
    normalise: Normalisation = "max",
    combine: Combination = "sum",
    scales: Sequence[Mapping[str, float] | None] | None = None,
) -> list[Hit]:
    """Fuse per-part rankings (each best first) into one list sorted by (−score, id).

    The one fusion of rankings: a hybrid index fuses its parts with it, and recall fuses the
    rankings of the catalog's active indexes (``weighted``, ``max``, combined by ``max``: each
    id's relevance in (0, 1] is its best ``s / max s`` over the indexes, the origin's rule).

    Args:
        rankings: One ranking per part; a part's ranking need not be complete.
        weights: One non-negative weight per part.
        method: ``rrf`` or ``weighted`` (see the module docstring).
        k_rrf: The RRF damping constant (60 in the RRF paper); larger flattens the ranks.
        normalise: How ``weighted`` scales each part's scores into [0, 1].
        combine: How an id's contributions from several parts add up: ``sum`` (the
            module docstring's formulas) or ``max`` (its best contribution).
        scales: Per part, ``None`` or a factor in [0, 1] per record id (absent: 1) that
            multiplies that part's contribution for the id: the coverage look.

    Returns:
        Every id with a fused score > 0 (under ``minmax`` every id a part of non-zero weight
        found), best first; no cut to ``k``.
    """
    fused: dict[str, float] = {}
    factors = list(scales) if scales is not None else [None] * len(rankings)
    for hits, weight, factor in zip(rankings, weights, factors, strict=True):
        if not hits or weight == 0:
            continue
        if method == "rrf":
            contributions = [weight / (k_rrf + rank) for rank in _ranks([h.score for h in hits])]
        else:
            contributions = [weight * value for value in _normalised([h.score for h in hits], normalise)]
        for hit, contribution in zip(hits, contributions, strict=True):
            scaled = contribution if factor is None else contribution * factor.get(hit.record_id, 1.0)
            before = fused.get(hit.record_id, 0.0)
            fused[hit.record_id] = before + scaled if combine == "sum" else max(before, scaled)
    ranked = sorted((-score, record_id) for record_id, score in fused.items() if score > 0)
    return [Hit(record_id, -negative) for negative, record_id in ranked]


def boost_threads(hits: Sequence[Hit], threads: dict[str, str], weight: float) -> list[Hit]:
    """Add to each hit ``weight ×`` the best score among the hits of its thread (itself included).

    Args:
        hits: Fused hits with scores > 0 (any order).
        threads: ``{record id: thread key}``; an id absent is a thread of its own, so its
            score becomes ``score × (1 + weight)``.
        weight: The share added, ≥ 0 (0 leaves the scores as they are).

    Returns:
        The same ids, re-scored, sorted by (−score, record id).
    """
    best: dict[str, float] = {}
    for hit in hits:
        key = threads.get(hit.record_id)
        if key is not None:
            best[key] = max(best.get(key, 0.0), hit.score)
    boosted = []
    for hit in hits:
        key = threads.get(hit.record_id)
        top = best[key] if key is not None else hit.score
        boosted.append((-(hit.score + weight * top), hit.record_id))
    return [Hit(record_id, -negative) for negative, record_id in sorted(boosted)]


def _ranks(scores: list[float]) -> list[int]:
    """Return competition ranks ("1224") of best-first scores: equal scores share the best rank."""
    ranks: list[int] = []
    for position, score in enumerate(scores):
        ranks.append(ranks[-1] if position and score == scores[position - 1] else position + 1)
    return ranks


def _normalised(scores: list[float], how: Normalisation) -> list[float]:
    top = max(scores)
    if how == "max":
        return [max(s, 0.0) / top if top > 0 else 0.0 for s in scores]
    low = min(scores)
    if top == low:
        return [1.0] * len(scores)
    return [MINMAX_FLOOR + (1.0 - MINMAX_FLOOR) * (s - low) / (top - low) for s in scores]


class HybridIndex:
    """Several indexes queried as one, by rank fusion (a :class:`~agent_memory.search.base.SearchIndex`).

    Args:
        parts: The indexes to fuse, e.g. an ``FtsIndex`` and a ``VectorIndex``; the hybrid
            writes to them but does not close them.
        method: ``rrf`` (default) or ``weighted``.
        k_rrf: The RRF constant (> 0).
        weights: One finite, non-negative weight per part, not all zero (default 1 each).
        normalise: Score normalisation for ``weighted``: ``max`` (default) or ``minmax``.
        name: The index's name in its recipe.
        thread_weight: The thread boost (module docstring), finite and ≥ 0; applied only
            when a part is a :class:`ThreadLookup` (the first one is asked).
        date_weight: The date boost (module docstring), finite and ≥ 0; like the thread
            boost it needs a :class:`ThreadLookup` part, whose thread keys carry the dates.
        coverage: The coverage look's exponent (module docstring), finite and ≥ 0 (0: off);
            applied to the parts that are a :class:`CoverageLookup`.
        clock: Returns the current aware time: the question's time when ``query`` is
            given no ``now``. Defaults to the wall clock.

    Raises:
        ValueError: No parts, an unknown method or normalisation, ``k_rrf`` ≤ 0, weights
            of the wrong number, negative, infinite, NaN, or all zero, or a negative,
            infinite or NaN ``thread_weight``, ``date_weight`` or ``coverage``.
    """

    def __init__(
        self,
        parts: Sequence[SearchIndex],
        *,
        method: FusionMethod = "rrf",
        k_rrf: int = 60,
        weights: Sequence[float] | None = None,
        normalise: Normalisation = "max",
        name: str = "hybrid",
        thread_weight: float = THREAD_WEIGHT,
        date_weight: float = DATE_WEIGHT,
        coverage: float = COVERAGE,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if not parts:
            raise ValueError("a hybrid index needs at least one part")
        if method not in FUSION_METHODS:
            raise ValueError(f"unknown fusion method {method!r} (one of: {', '.join(FUSION_METHODS)})")
        if normalise not in NORMALISATIONS:
            raise ValueError(f"unknown normalisation {normalise!r} (one of: {', '.join(NORMALISATIONS)})")
        if k_rrf <= 0:
            raise ValueError("k_rrf must be positive")
        chosen = [1.0] * len(parts) if weights is None else [float(w) for w in weights]
        if len(chosen) != len(parts) or not all(0 <= w < math.inf for w in chosen) or not any(chosen):
            raise ValueError("weights need one finite, non-negative value per part, not all zero")
        if not 0 <= thread_weight < math.inf:
            raise ValueError(f"thread_weight must be finite and non-negative, got {thread_weight!r}")
        if not 0 <= date_weight < math.inf:
            raise ValueError(f"date_weight must be finite and non-negative, got {date_weight!r}")
        if not 0 <= coverage < math.inf:
            raise ValueError(f"coverage must be finite and non-negative, got {coverage!r}")
        self.parts = tuple(parts)
        self._method: FusionMethod = method
        self._k_rrf = k_rrf
        self._weights = tuple(chosen)
        self._normalise: Normalisation = normalise
        self._name = name
        self._threads = next((p for p in self.parts if isinstance(p, ThreadLookup)), None)
        self._thread_weight = float(thread_weight) if self._threads is not None else 0.0
        self._date_weight = float(date_weight) if self._threads is not None else 0.0
        covering = any(isinstance(p, CoverageLookup) for p in self.parts)
        self._coverage = float(coverage) if covering else 0.0
        self._clock = clock or utc_now

    def __repr__(self) -> str:
        names = ", ".join(part.recipe.name for part in self.parts)
        return f"HybridIndex([{names}], method={self._method!r}, name={self._name!r})"

    @property
    def recipe(self) -> Recipe:
        """How this index is built: the fusion constants and every part's recipe (seed 003)."""
        params: dict[str, object] = {
            "method": self._method,
            "candidates": CANDIDATES,
            # Weights as strings: recipe.json holds no floats but these (base.Recipe).
            "weights": [repr(w) for w in self._weights],
            "thread_weight": repr(self._thread_weight),
            "date_weight": repr(self._date_weight),
            "coverage": repr(self._coverage),
            "parts": [part.recipe.to_json() for part in self.parts],
        }
        if self._method == "rrf":
            params["k_rrf"] = self._k_rrf
        else:
            params["normalise"] = self._normalise
        return Recipe(kind="hybrid", name=self._name, params=params)

    def index(self, records: Iterable[MemoryRecord]) -> None:
        """Add records to every part, replacing any version of the same id."""
        batch = list(records)
        for part in self.parts:
            part.index(batch)

    def remove(self, record_ids: Iterable[str]) -> None:
        """Forget these ids in every part (unknown ids are ignored)."""
        ids = list(record_ids)
        for part in self.parts:
            part.remove(ids)

    def query(self, text: str, *, k: int = 32, now: datetime | None = None) -> list[Hit]:
        """Return up to ``k`` fused hits, best first, ties by record id.

        Each part is asked for ``max(k, CANDIDATES)`` candidates; all of them are fused and
        boosted by their threads and the question's dates before the cut. Scores are fused
        scores (see the module docstring), comparable only within this index and recipe.

        Args:
            text: The question.
            k: How many hits at most.
            now: When the question is asked, for the dates it names ("four weeks ago");
                ``None``: the index's clock. A naive time is read as UTC.
        """
        if k <= 0:
            return []
        wanted = max(k, CANDIDATES)
        # Asked side by side: BM25 and the vectors each wait mostly outside the GIL. A part that
        # can say what its candidates cover does so in the same call, while the others still run.
        answers = each([functools.partial(self._ask, part, text, wanted) for part in self.parts])
        rankings = [hits for hits, _ in answers]
        fused = fuse(
            rankings,
            self._weights,
            method=self._method,
            k_rrf=self._k_rrf,
            normalise=self._normalise,
            scales=[scales for _, scales in answers],
        )
        if self._threads is None or not fused or not (self._thread_weight or self._date_weight):
            return fused[:k]
        window = None
        if self._date_weight:
            asked = now or self._clock()
            window = date_window(text, asked if asked.tzinfo else asked.replace(tzinfo=UTC))
        if not self._thread_weight and window is None:
            return fused[:k]
        threads = self._threads.threads([hit.record_id for hit in fused])
        if self._thread_weight:
            fused = boost_threads(fused, threads, self._thread_weight)
        if window is not None:
            dates = {record_id: when for record_id, key in threads.items() if (when := thread_time(key))}
            fused = boost_dates(fused, dates, window, self._date_weight)
        return fused[:k]

    def _ask(self, part: SearchIndex, text: str, wanted: int) -> tuple[list[Hit], Mapping[str, float] | None]:
        """Return one part's hits and, for a part that can say it, their factors ``coverage ** exponent``."""
        hits = part.query(text, k=wanted)
        if not self._coverage or not hits or not isinstance(part, CoverageLookup):
            return hits, None
        shares = part.coverage(text, [hit.record_id for hit in hits])
        return hits, {record_id: share**self._coverage for record_id, share in shares.items()}

    def inputs(self) -> IndexInputs:
        """Return what every part holds; when the parts disagree, a digest that matches nothing.

        When all parts hold the same (id, version) pairs their common count and digest are
        the hybrid's (so it compares with a store like any index), and ``built_at`` is the
        oldest part's. Otherwise ``count`` is the smallest part's and ``digest`` is
        ``parts:`` + the sha256 over the parts' digests, which no store digest equals.
        """
        held = [part.inputs() for part in self.parts]
        stamps = [inputs.built_at for inputs in held]
        built_at = None if any(s is None for s in stamps) else min(s for s in stamps if s is not None)
        digests = [inputs.digest for inputs in held]
        if len(set(digests)) == 1 and len({inputs.count for inputs in held}) == 1:
            return IndexInputs(count=held[0].count, digest=digests[0], built_at=built_at)
        combined = hashlib.sha256("\n".join(digests).encode()).hexdigest()
        return IndexInputs(count=min(i.count for i in held), digest=f"parts:{combined}", built_at=built_at)

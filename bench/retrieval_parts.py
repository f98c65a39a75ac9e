"""Bench-only indexes of the retrieval variants (``bench/retrieval_variants.py``).

Each is an in-memory stand-in with the port's ``index``/``query`` shape, built for one
measurement: vectors mixed with their session's (:class:`SmoothedVectors`,
:class:`MixedVectors`), BM25 over whole sessions (:class:`SessionDocs`),
pseudo-relevance feedback (:class:`PrfFts`) and a re-weighted context column
(:class:`WeightedContext`). None of them is product code.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agent_memory.search import fts
from agent_memory.search.base import Embedder, Hit
from agent_memory.search.dates import boost_dates, date_window
from agent_memory.search.fts import FtsIndex
from agent_memory.search.hybrid import fuse
from agent_memory.search.recipes import BUILTIN_RECIPES

__all__ = [
    "FTS_CLASS",
    "THREADS_FROM",
    "MixedVectors",
    "PrfFts",
    "SessionDocs",
    "SmoothedVectors",
    "WeightedContext",
    "boost_threads_top2",
    "dated",
]


FTS_CLASS: type[FtsIndex] = FtsIndex
THREADS_FROM = "FtsIndex.threads"
"""Which thread lookup the default hybrid read in this run (the section says it)."""


class SmoothedVectors:
    """Bench-only: cosine against each turn's vector plus ``weight`` × its session neighbours' vectors.

    A window built in vector space from the turns' own vectors (no text is embedded twice);
    neighbours are read from the record's source anchor ``<history>#<session>/<turn>``.
    """

    def __init__(self, embedder: Embedder, reach: int, weight: float) -> None:
        self.embedder, self.reach, self.weight = embedder, reach, weight
        self.ids: list[str] = []
        self.matrix: Any = None

    def index(self, records: list[Any]) -> None:
        """Embed the records' bodies and mix each vector with its session neighbours'."""
        import numpy as np

        own = np.asarray(self.embedder.embed([r.body for r in records]), dtype=np.float32)
        where = [tuple(int(x) for x in r.provenance.ref.split("#")[1].split("/")) for r in records]
        mixed = own.copy()
        for i, (session, _) in enumerate(where):
            for j in range(max(0, i - self.reach), min(len(records), i + self.reach + 1)):
                if j != i and where[j][0] == session:
                    mixed[i] += self.weight * own[j]
        mixed /= np.clip(np.linalg.norm(mixed, axis=1, keepdims=True), 1e-9, None)
        self.ids, self.matrix = [r.id for r in records], mixed

    def query(self, text: str, *, k: int = 32) -> list[Hit]:
        """Return the ``k`` best cosines to the mixed vectors (positive ones only)."""
        import numpy as np

        q = np.asarray(self.embedder.embed([text]), dtype=np.float32)[0]
        scores = self.matrix @ q
        top = np.argsort(-scores)[:k]
        return [Hit(self.ids[i], float(scores[i])) for i in top if scores[i] > 0]


class SessionDocs:
    """Bench-only: BM25 over whole sessions (each session's notes joined), scored back onto its turns.

    Every turn of a matching session gets its session's score, so as a part of a fusion it
    lifts the turns of the sessions whose words as a whole fit the question.
    """

    def __init__(self) -> None:
        self.fts = FtsIndex(":memory:", context=0)
        self.turns: dict[str, list[str]] = {}

    def index(self, records: list[Any]) -> None:
        """Index one document per session (the session key read from the source anchor)."""
        from agent_memory.records.record import MemoryRecord, Provenance

        joined: dict[str, list[Any]] = {}
        for record in records:
            joined.setdefault(record.provenance.ref.split("/")[0], []).append(record)
        documents = []
        for key, members in joined.items():
            document = MemoryRecord.create(
                type="fact",
                body="\n".join(r.body for r in members),
                provenance=Provenance(kind="import", ref=key),
                created_at=members[0].created_at,
            )
            documents.append(document)
            self.turns[document.id] = [r.id for r in members]
        self.fts.index(documents)

    def query(self, text: str, *, k: int = 32) -> list[Hit]:
        """Return the turns of the best sessions, each with its session's score, up to ``k``."""
        out = [
            Hit(turn, hit.score) for hit in self.fts.query(text, k=k) for turn in self.turns[hit.record_id]
        ]
        return out[:k]


class PrfFts:
    """Bench-only: BM25 with pseudo-relevance feedback (RM3-like), fused with the first pass.

    The first pass is the default FtsIndex; the ``terms`` words with the best tf·idf in its
    first ``docs`` hits (not in the question, not stopwords, in at least two notes) are asked
    as a second query; both rankings are min-max normalised and summed, the second × ``beta``.
    """

    def __init__(self, docs: int, terms: int, beta: float) -> None:
        self.fts = FTS_CLASS(":memory:", context=BUILTIN_RECIPES["bm25"].options["context"])
        self.docs, self.terms, self.beta = docs, terms, beta
        self.words: dict[str, list[str]] = {}
        self.df: dict[str, int] = {}

    @staticmethod
    def _words(text: str) -> list[str]:
        import re

        from agent_memory.search.fts_query import STOPWORDS

        return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS and len(w) > 2]

    def index(self, records: list[Any]) -> None:
        """Index the records and count each word's notes."""
        self.fts.index(records)
        for record in records:
            self.words[record.id] = self._words(record.body)
            for word in set(self.words[record.id]):
                self.df[word] = self.df.get(word, 0) + 1

    def query(self, text: str, *, k: int = 32) -> list[Hit]:
        """Return the fused first and feedback rankings, up to ``k``."""
        import math
        from collections import Counter

        first = self.fts.query(text, k=k)
        asked, total = set(self._words(text)), len(self.words)
        weights: dict[str, float] = {}
        for hit in first[: self.docs]:
            counts = Counter(self.words[hit.record_id])
            for word, n in counts.items():
                if word not in asked and self.df[word] > 1:
                    gain = n / (1 + sum(counts.values())) * math.log(total / self.df[word])
                    weights[word] = weights.get(word, 0.0) + gain
        expansion = sorted(weights, key=lambda w: (-weights[w], w))[: self.terms]
        second = self.fts.query(" ".join(expansion), k=k) if expansion else []
        return fuse([first, second], [1.0, self.beta], method="weighted", normalise="minmax")[:k]


class WeightedContext(FtsIndex):
    """Bench-only: the default FtsIndex with its neighbours' column weighted ``weight`` in bm25()."""

    def __init__(self, weight: float, context: int) -> None:
        super().__init__(":memory:", context=context)
        self.weight = weight

    def _match(self, expression: str, k: int) -> list[Hit]:
        held = f"bm25(fts, 1.0, {fts._CONTEXT_WEIGHT!r})"
        sql = fts._MATCH.replace(held, f"bm25(fts, 1.0, {self.weight!r})")
        saved, fts._MATCH = fts._MATCH, sql
        try:
            return super()._match(expression, k)
        finally:
            fts._MATCH = saved


class MixedVectors:
    """Bench-only: the vector part with each session option of the retrieval variants at once.

    Score of a turn: the cosine to its own vector (mixed with ``smooth`` × its ±1 session
    neighbours' vectors, renormalised, when ``smooth`` > 0) plus ``centroid`` × the cosine
    to its session's mean vector. The floor: ``gate`` False drops mixed scores below
    ``floor`` (the VectorIndex rule); ``gate`` True drops every score when the best plain
    cosine of the question is below ``floor`` (an off-topic question finds nothing) and
    otherwise keeps every positive score.
    """

    def __init__(
        self,
        embedder: Embedder,
        *,
        centroid: float = 0.0,
        smooth: float = 0.0,
        floor: float = 0.3,
        gate: bool = False,
    ) -> None:
        self.embedder, self.centroid, self.smooth, self.floor, self.gate = (
            embedder,
            centroid,
            smooth,
            floor,
            gate,
        )
        self.ids: list[str] = []
        self.own: Any = None
        self.mixed: Any = None
        self.centroids: Any = None

    def index(self, records: list[Any]) -> None:
        """Embed the records' bodies; mix neighbours and compute session means."""
        import numpy as np

        own = np.asarray(self.embedder.embed([r.body for r in records]), dtype=np.float32)
        where = [tuple(int(x) for x in r.provenance.ref.split("#")[1].split("/")) for r in records]
        mixed = own.copy()
        if self.smooth:
            for i, (session, _) in enumerate(where):
                for j in (i - 1, i + 1):
                    if 0 <= j < len(records) and where[j][0] == session:
                        mixed[i] += self.smooth * own[j]
            mixed /= np.clip(np.linalg.norm(mixed, axis=1, keepdims=True), 1e-9, None)
        means: dict[int, Any] = {}
        for key in {s for s, _ in where}:
            rows = own[[i for i, (s, _) in enumerate(where) if s == key]].mean(axis=0)
            means[key] = rows / max(float(np.linalg.norm(rows)), 1e-9)
        self.ids, self.own, self.mixed = [r.id for r in records], own, mixed
        self.centroids = np.stack([means[s] for s, _ in where])

    def query(self, text: str, *, k: int = 32) -> list[Hit]:
        """Return the ``k`` best scores that pass the floor rule."""
        import numpy as np

        q = np.asarray(self.embedder.embed([text]), dtype=np.float32)[0]
        plain = self.own @ q
        scores = self.mixed @ q if self.smooth else plain
        if self.centroid:
            scores = scores + self.centroid * (self.centroids @ q)
        if self.gate:
            if float(plain.max(initial=0.0)) < self.floor:
                return []
            keep = scores > 0
        else:
            keep = scores >= self.floor
        top = [i for i in np.argsort(-scores)[:k] if keep[i]]
        return [Hit(self.ids[i], float(scores[i])) for i in top]


def boost_threads_top2(hits: list[Hit], threads: dict[str, str], weight: float, second: float) -> list[Hit]:
    """Bench-only: the thread boost with ``weight × (best + second × second best)`` of the thread."""
    tops: dict[str, list[float]] = {}
    for hit in hits:
        key = threads.get(hit.record_id, hit.record_id)
        tops.setdefault(key, []).append(hit.score)
    gain = {}
    for key, scores in tops.items():
        best = [*sorted(scores, reverse=True)[:2], 0.0]
        gain[key] = weight * (best[0] + second * best[1])
    boosted = sorted((-(h.score + gain[threads.get(h.record_id, h.record_id)]), h.record_id) for h in hits)
    return [Hit(record_id, -negative) for negative, record_id in boosted]


def dated(hits: list[Hit], history: Any, q: int, weight: float) -> list[Hit]:
    """The date boost of a question: its window read against its date (LoCoMo: after the last session)."""
    question = history.questions[q]
    now = question.when or max(t.when for t in history.turns) + timedelta(days=1)
    window = date_window(question.text, now)
    if window is None:
        return hits
    return boost_dates(
        hits, {h.record_id: history.turns[int(h.record_id)].when for h in hits}, window, weight
    )

"""What the retrieval defaults cost at 10,000 notes, each against what it replaced (``bench/retrieval.py``).

The Cost table of ``docs/benchmarks.md``, Retrieval quality: BM25 build size and query time
with and without context, and query time of each hybrid default beside the setting it
replaced, the two taking turns on every question.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

import retrieval_parts
from retrieval_data import History

from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.base import Embedder

PREVIOUS_COST = "hybrid, session 3 default (plain cosines, no date boost): query p50 ms"
CURRENT_COST = "hybrid, thread means and date boost (default): query p50 ms"
UNCOVERED_COST = "hybrid without the coverage look (session 4 default): query p50 ms"


def _notes(histories: list[History], size: int) -> list[MemoryRecord]:
    """Return up to ``size`` records of distinct turn texts, anchored as the importers anchor them."""
    records: list[MemoryRecord] = []
    seen: set[str] = set()
    for history in histories:
        for i, turn in enumerate(history.turns):
            if len(records) < size and turn.body not in seen:
                seen.add(turn.body)
                records.append(
                    MemoryRecord.create(
                        type="episode",
                        body=turn.body,
                        provenance=Provenance(kind="import", ref=f"{history.name}.json#/{turn.session}/{i}"),
                        created_at=turn.when,
                        occurred_at=turn.when,
                    )
                )
    return records


def cost(histories: list[History], embedder: Embedder, size: int) -> list[list[str]]:
    """Time what the defaults cost at ``size`` notes, each against what it replaced.

    The pairs: BM25 context 0 vs 2, hybrid candidates 32 vs 100, hybrid without and with
    the thread boost, session 3's default hybrid (plain cosines, floor 0.3, no date
    boost) against this one (thread means and the date boost), and session 4's default
    (no coverage look) against this one.

    Queries are the datasets' questions at k = 32 (what recall asks). The settings take turns
    on every question, two rounds, and the better median is kept, so load slows them alike.
    """
    import tempfile

    from agent_memory.search import hybrid
    from agent_memory.search.fts import FtsIndex
    from agent_memory.search.recipes import BUILTIN_RECIPES
    from agent_memory.search.vectors import VectorIndex, scoring_options

    records = _notes(histories, size)
    questions = [q.text for h in histories for q in h.questions][:500]
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory() as folder:
        fts: dict[int, FtsIndex] = {}
        for reach in (0, 2):
            started = time.perf_counter()
            fts[reach] = retrieval_parts.FTS_CLASS(Path(folder) / f"fts{reach}.sqlite", context=reach)
            fts[reach].index(records)
            size_mb = sum(f.stat().st_size for f in Path(folder).glob(f"fts{reach}.sqlite*")) / 1e6
            rows.append(
                [
                    f"bm25, context {reach}: build s / file MB",
                    f"{time.perf_counter() - started:.1f} / {size_mb:.1f}",
                ]
            )
        minilm = BUILTIN_RECIPES["vectors-minilm"].options
        vectors = VectorIndex(":memory:", embedder, **scoring_options(minilm))
        vectors.index(records)
        plain = VectorIndex(":memory:", embedder, min_similarity=0.3)  # session 3's vector part
        plain.index(records)
        fused = hybrid.HybridIndex([fts[2], vectors], method="weighted", weights=[2, 1], normalise="minmax")
        unthreaded = hybrid.HybridIndex(
            [fts[2], vectors], method="weighted", weights=[2, 1], normalise="minmax", thread_weight=0.0
        )
        before = hybrid.HybridIndex(
            [fts[2], plain],
            method="weighted",
            weights=[2, 1],
            normalise="minmax",
            date_weight=0.0,
            coverage=0.0,
        )
        uncovered = hybrid.HybridIndex(
            [fts[2], vectors], method="weighted", weights=[2, 1], normalise="minmax", coverage=0.0
        )

        def with_candidates(count: int) -> Callable[[str], object]:
            def run(question: str) -> object:
                saved, hybrid.CANDIDATES = hybrid.CANDIDATES, count
                try:
                    return fused.query(question, k=32)
                finally:
                    hybrid.CANDIDATES = saved

            return run

        # Each pair takes turns on every question; the pairs run apart, so the hybrid's model
        # and matrix do not push the BM25 files out of the caches between two BM25 queries.
        pairs: list[dict[str, Callable[[str], object]]] = [
            {
                "bm25, context 0: query p50 ms": lambda q: fts[0].query(q, k=32),
                "bm25, context 2 (default): query p50 ms": lambda q: fts[2].query(q, k=32),
            },
            {
                "hybrid, 32 candidates per part: query p50 ms": with_candidates(32),
                "hybrid, 100 candidates per part (default): query p50 ms": with_candidates(100),
            },
            {
                "hybrid, no thread boost: query p50 ms": lambda q: unthreaded.query(q, k=32),
                f"hybrid, thread boost {hybrid.THREAD_WEIGHT} (default): query p50 ms": lambda q: fused.query(
                    q, k=32
                ),
            },
            {
                PREVIOUS_COST: lambda q: before.query(q, k=32),
                CURRENT_COST: lambda q: fused.query(q, k=32),
            },
            {
                UNCOVERED_COST: lambda q: uncovered.query(q, k=32),
                f"hybrid, coverage look ** {hybrid.COVERAGE} (default): query p50 ms": lambda q: fused.query(
                    q, k=32
                ),
            },
        ]
        for timed in pairs:
            rounds: dict[str, list[list[float]]] = {name: [[], []] for name in timed}
            for round_ in (0, 1):
                for question in questions:
                    for name, run in timed.items():
                        started = time.perf_counter()
                        run(question)
                        rounds[name][round_].append((time.perf_counter() - started) * 1000)
            rows += [[name, f"{min(statistics.median(r) for r in got):.2f}"] for name, got in rounds.items()]
        for index in fts.values():
            index.close()
    return rows

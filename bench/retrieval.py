"""Retrieval quality on LoCoMo and LongMemEval_S, against bm25s on the same text (issues 4 and 10).

Run: ``.venv/bin/python bench/retrieval.py [--quick] [--no-write] [--cache DIR]``.

What the systems see is what a user would give a memory: each turn as a note
``"<speaker>: <text>"`` dated by its session, and the question. No session id, label,
evidence id or ``has_answer`` flag reaches an index; those only score the rankings
(``bench/retrieval_data.py``). Each LoCoMo conversation and each LongMemEval question's
haystack is its own memory, built fresh.

Systems (every one on the same notes, in the same run):

- the built-in recipes: ``bm25`` (:class:`~agent_memory.search.fts.FtsIndex`),
  ``vectors-minilm`` (all-MiniLM-L6-v2 int8, :class:`~agent_memory.search.vectors.VectorIndex`)
  and ``hybrid`` (the default; :class:`~agent_memory.search.hybrid.HybridIndex`);
- the porcelain: every turn written with :meth:`Memory.remember` (dated by its session) and
  asked with :meth:`Memory.recall` on the default recipe (LongMemEval: at the question's
  date; LoCoMo has none, so a day after the last session), budget unlimited, ``k`` = 100;
- the baseline: ``bm25s`` (numpy, English stopwords, no stemmer) on the same note text,
  and for LongMemEval also on whole sessions (user turns joined, the official session items);
- the variants of :mod:`retrieval_variants`, each one change against the default.

Session-level LongMemEval scores of a turn ranking take its distinct sessions in order
(the README's rule). Embeddings are cached by text hash (``--cache``, default
``~/.cache/agent-memory-bench``): the first run embeds ~75k distinct texts once (20 minutes
on 2 idle cores, far longer on a busy machine), later runs only read them. ``--quick`` keeps
3 LoCoMo conversations and 40 LongMemEval questions (stratified by type) and writes nothing;
``--all-variants`` adds the variants tried while tuning that the tables leave out.

Writes the ``## Retrieval quality`` section of ``docs/benchmarks.md`` (``--no-write`` to skip).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import retrieval_parts
import retrieval_product
import retrieval_variants
from report import machine, replace_section
from retrieval_cost import cost
from retrieval_data import (
    CATEGORIES,
    LOCOMO,
    LONGMEMEVAL,
    PARTS,
    CachedEmbedder,
    EmbeddingCache,
    History,
    Question,
    evidence_recall,
    load_locomo,
    load_longmemeval,
    ndcg_any,
    part_of,
    recall_all,
    recall_any,
    reciprocal_rank,
    sessions_of,
    stratified,
)
from retrieval_docs import section
from retrieval_ideas import dated_added
from retrieval_variants import Part, System

from agent_memory.log.inmemory import MemoryLog
from agent_memory.memory import Memory
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.base import Embedder, Hit, SearchIndex
from agent_memory.search.catalog import IndexCatalog
from agent_memory.search.hybrid import CoverageLookup, boost_threads
from agent_memory.settings import RecallSettings
from agent_memory.stores.inmemory import InMemoryStore

HEADING = "## Retrieval quality"
DEPTH = 100  # turns asked of every system per question
LOCOMO_KS = (5, 10, 25, 50)

Ranking = list[int]
"""Items best first: turn indexes of the history (or session indexes for session-level systems)."""


def records_for(
    history: History, document: Callable[[History, int], str]
) -> tuple[list[MemoryRecord], dict[str, int]]:
    """Return one record per turn holding ``document``'s text, and the map record id → turn index."""
    records, where = [], {}
    for i, turn in enumerate(history.turns):
        record = MemoryRecord.create(
            type="episode",
            body=document(history, i),
            provenance=Provenance(kind="import", ref=f"{history.name}#{turn.session}/{i}"),
            created_at=turn.when,
            occurred_at=turn.when,
        )
        records.append(record)
        where[record.id] = i
    return records, where


def part_rankings(part: Part, history: History) -> tuple[list[list[Hit]], list[dict[str, float]] | None]:
    """Build ``part`` over the history and return its hits per question (record id = turn index).

    For a part that can say how much of a question each hit holds (``CoverageLookup``, the
    BM25 index) also each question's coverage of its hits, the hybrid's coverage look; else ``None``.
    """
    records, where = records_for(history, part.document)
    index = part.make()
    index.index(records)
    out, shares = [], []
    covering = isinstance(index, CoverageLookup)
    for question in history.questions:
        hits = index.query(question.text, k=DEPTH)
        out.append([Hit(str(where[h.record_id]), h.score) for h in hits])
        if covering:
            held = index.coverage(question.text, [h.record_id for h in hits])
            shares.append({str(where[i]): share for i, share in held.items()})
    close = getattr(index, "close", None)
    if callable(close):
        close()
    return out, shares if covering else None


# ---------------------------------------------------------------------- systems of their own


class Bm25s:
    """``bm25s`` 0.3 (numpy backend, English stopwords, no stemmer) over the given texts."""

    def __init__(self, texts: list[str]) -> None:
        import bm25s  # type: ignore[import-untyped]

        self._bm25s = bm25s
        self._size = len(texts)
        self._model = bm25s.BM25()
        self._model.index(bm25s.tokenize(texts, show_progress=False), show_progress=False)

    def query(self, text: str, k: int) -> Ranking:
        """Return the indexes of the top ``k`` texts with a positive score."""
        tokens = self._bm25s.tokenize([text], show_progress=False)
        if not tokens.ids[0]:
            return []
        docs, scores = self._model.retrieve(tokens, k=min(k, self._size), show_progress=False, n_threads=1)
        return [int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


def bm25s_turns(history: History) -> list[Ranking]:
    """bm25s over the note texts, one document per turn."""
    model = Bm25s([t.body for t in history.turns])
    return [model.query(q.text, DEPTH) for q in history.questions]


def bm25s_sessions(history: History) -> list[Ranking]:
    """bm25s over whole sessions (user turns joined by spaces), LongMemEval's official session items."""
    joined: dict[int, list[str]] = defaultdict(list)
    for turn in history.turns:
        joined[turn.session].append(turn.text)
    order = sorted(joined)
    model = Bm25s([" ".join(joined[s]) for s in order])
    return [[order[i] for i in model.query(q.text, DEPTH)] for q in history.questions]


def porcelain(
    make_index: Callable[[], SearchIndex], *, same_time: bool = False, recency_off: bool = False
) -> Callable[[History], list[Ranking]]:
    """Return a system that writes every turn with ``remember`` and asks ``recall`` (module docstring).

    Each turn is written at its session's date (``now``), so recall's recency sees the
    history's real ages; ``same_time`` writes every turn at the last session's date instead
    (event times unchanged), which makes recency equal for all turns: the diagnostic row.
    ``recency_off`` sets ``memory.toml``'s ``[recall] recency = "off"`` (the setting for a
    Home of imported history) instead.
    The catalog is given a constant change signal: every write goes through this Memory,
    which updates the indexes itself, so recall need not compare every record's version
    on each question (``InMemoryStore`` has no cheap version tokens; without the signal a
    question costs about a second at 400 notes, the same ranking).
    """

    def run(history: History) -> list[Ranking]:
        store = InMemoryStore()
        catalog = IndexCatalog(store, {"default": make_index()}, signal=lambda: 0)
        settings = RecallSettings(recency="off") if recency_off else RecallSettings()
        memory = Memory(store, MemoryLog(), catalog, recall_settings=settings)
        turns_of: dict[str, list[int]] = defaultdict(list)
        last = max(t.when for t in history.turns)
        for i, turn in enumerate(history.turns):
            done = memory.remember(
                turn.body,
                source=f"{history.name}#{turn.session}/{i}",
                type="episode",
                occurred_at=turn.when,
                now=last if same_time else turn.when,
            )
            turns_of[done.record_id].append(i)  # an exact repeat is one record (dedup)
        out = []
        for question in history.questions:
            now = question.when or last + timedelta(days=1)
            result = memory.recall(question.text, budget_tokens=10**9, k=DEPTH, now=now, touch=False)
            out.append([i for record_id in result.ids for i in turns_of[record_id]])
        return out

    return run


# ---------------------------------------------------------------------- scoring


def score_locomo(history: History, ranking: Ranking, question: Question) -> dict[str, float]:
    """LoCoMo turn-level evidence recall@5/10/25/50 of one question."""
    return {f"R@{k}": evidence_recall(ranking, question, k) for k in LOCOMO_KS}


def score_longmemeval(
    history: History, ranking: Ranking, question: Question, *, sessions: bool
) -> dict[str, float]:
    """LongMemEval session-level (and, for a turn ranking, turn-level) metrics of one question."""
    ranked = ranking if sessions else sessions_of(ranking, history.turns)
    gold = question.gold_sessions
    out = {
        "recall_all@5": recall_all(ranked, gold, 5),
        "recall_all@10": recall_all(ranked, gold, 10),
        "ndcg@10": ndcg_any(ranked, gold, 10),
        "recall_any@1": recall_any(ranked, gold, 1),
        "recall_any@5": recall_any(ranked, gold, 5),
        "mrr": reciprocal_rank(ranked, gold),
    }
    if not sessions:
        out["turn recall_all@10"] = recall_all(ranking, question.gold_turns, 10)
        out["turn recall_all@50"] = recall_all(ranking, question.gold_turns, 50)
    return out


def coverage_factors(
    shares: list[dict[str, float]] | None, q: int, exponent: float
) -> dict[str, float] | None:
    """Return question ``q``'s factors ``coverage ** exponent`` of a part (``None``: it has no coverage)."""
    if shares is None:
        return None
    return {turn: share**exponent for turn, share in shares[q].items()}


@dataclass
class Result:
    """Per-question scores of one system on one dataset, and its seconds."""

    scores: list[tuple[str, dict[str, float]]]  # (question label, metrics)
    seconds: float
    variant: bool = False
    parts: list[str] | None = None  # per question: "tune" or "held-out" (retrieval_data.part_of)

    def mean(self, metric: str, label: str | None = None, part: str | None = None) -> float | None:
        """Mean of ``metric`` over all questions (or those of ``label``, of ``part``); None when absent."""
        tags = self.parts or ["all"] * len(self.scores)
        values = [
            m[metric]
            for (lab, m), tag in zip(self.scores, tags, strict=True)
            if metric in m and (label is None or lab == label) and (part is None or tag == part)
        ]
        return statistics.fmean(values) if values else None


def evaluate(
    histories: list[History],
    parts: dict[str, Part],
    systems: list[System],
    dataset: str,
    tune: frozenset[str] = frozenset(),
) -> dict[str, Result]:
    """Run every system over every history; parts are built once per history and shared.

    ``tune`` names the histories of the tuning part; each question's scores are tagged
    ``tune`` or ``held-out`` by it (:meth:`Result.mean` ``part``).
    """
    needed = list(dict.fromkeys(p for s in systems for p in s.parts))
    part_seconds: dict[str, float] = defaultdict(float)
    scores: dict[str, list[tuple[str, dict[str, float]]]] = defaultdict(list)
    seconds: dict[str, float] = defaultdict(float)
    tags: list[str] = []
    for history in histories:
        tags += ["tune" if history.name in tune else "held-out"] * len(history.questions)
        built: dict[str, list[list[Hit]]] = {}
        shares: dict[str, list[dict[str, float]] | None] = {}
        for name in needed:
            started = time.perf_counter()
            built[name], shares[name] = part_rankings(parts[name], history)
            part_seconds[name] += time.perf_counter() - started
        for system in systems:
            started = time.perf_counter()
            if system.own is not None:
                rankings = system.own(history)
            else:
                combine = system.combine or (lambda r: r[0])
                threads = retrieval_variants.thread_keys(history) if system.thread_weight else {}
                rankings = []
                for q in range(len(history.questions)):
                    rankings_q = [built[p][q] for p in system.parts]
                    if system.coverage and system.combine is not None:
                        scales = [coverage_factors(shares[p], q, system.coverage) for p in system.parts]
                        combined = system.combine(rankings_q, scales)
                    else:
                        combined = combine(rankings_q)
                    if system.thread_second:
                        combined = retrieval_parts.boost_threads_top2(
                            combined, threads, system.thread_weight, system.thread_second
                        )
                    elif system.thread_weight:
                        combined = boost_threads(combined, threads, system.thread_weight)
                    if system.date_add:
                        combined = dated_added(combined, history, q, system.date_weight, system.date_add)
                    elif system.date_weight:
                        combined = retrieval_parts.dated(combined, history, q, system.date_weight)
                    rankings.append([int(h.record_id) for h in combined[:DEPTH]])
            seconds[system.name] += time.perf_counter() - started
            for question, ranking in zip(history.questions, rankings, strict=True):
                if dataset == "locomo":
                    metrics = score_locomo(history, ranking, question)
                else:
                    metrics = score_longmemeval(history, ranking, question, sessions=system.sessions)
                scores[system.name].append((question.label, metrics))
    for system in systems:
        seconds[system.name] += sum(part_seconds[p] for p in system.parts)
    return {s.name: Result(scores[s.name], seconds[s.name], bool(s.note), tags) for s in systems}


# ---------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark, print the section and write it into docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="3 conversations, 40 questions; writes nothing")
    parser.add_argument("--no-write", action="store_true", help="leave docs/benchmarks.md alone")
    parser.add_argument(
        "--questions", type=int, default=0, help="LongMemEval main questions (0: all eligible)"
    )
    parser.add_argument(
        "--sample",
        type=int,
        default=0,
        help="LongMemEval questions the variants run on, stratified (0: all eligible)",
    )
    parser.add_argument("--all-variants", action="store_true", help="also the variants tried while tuning")
    parser.add_argument("--only", default="", help="system names to run, separated by ; (default: all)")
    parser.add_argument("--datasets", default="locomo,longmemeval", help="which datasets (default: both)")
    parser.add_argument(
        "--locomo-conversations", type=int, default=0, help="only the first N LoCoMo conversations (0: all)"
    )
    parser.add_argument(
        "--lme-first",
        type=int,
        default=0,
        help="LongMemEval: only the first N eligible questions in file order (0: all), for a run whose"
        " embedding cache holds only those haystacks",
    )
    parser.add_argument(
        "--part",
        choices=PARTS,
        default="all",
        help="the data to run on: all, the tuning part or the held-out part (retrieval_data.part_of)",
    )
    parser.add_argument(
        "--split-sample",
        default="",
        help="T,H: LongMemEval = T questions of the tuning part and H held out, each stratified"
        " (retrieval_data.part_of), for a run whose embedding cache holds only those",
    )
    parser.add_argument(
        "--product-datasets",
        default="locomo,longmemeval",
        help="datasets that get the product rows (CLI import, then MCP recall); '' for none",
    )
    cache_home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    parser.add_argument("--cache", type=Path, default=cache_home / "agent-memory-bench")
    args = parser.parse_args(argv)
    if not (LOCOMO.exists() and LONGMEMEVAL.exists()):
        print(f"skipped: the LoCoMo and LongMemEval files are not under {LOCOMO.parents[1]}")
        return
    started = time.perf_counter()
    cache = EmbeddingCache(args.cache / "embeddings.sqlite")
    embedder = _embedder(cache)
    locomo = load_locomo()
    longmemeval, skipped = load_longmemeval()
    eligible = len(longmemeval)
    tune_locomo, tune_lme = part_of(locomo, longmemeval, "tune")
    tune = frozenset(h.name for h in [*tune_locomo, *tune_lme])
    if args.split_sample:
        held_lme = part_of(locomo, longmemeval, "held-out")[1]
        tuned, held = (int(n) for n in args.split_sample.split(","))
        longmemeval = sorted(
            [*stratified(tune_lme, tuned), *stratified(held_lme, held)], key=lambda h: h.name
        )
    locomo, longmemeval = part_of(locomo, longmemeval, args.part)
    sample = stratified(longmemeval, 40 if args.quick else args.sample or len(longmemeval))
    if args.quick or args.questions:
        longmemeval = stratified(longmemeval, 40 if args.quick else args.questions)
    if args.quick:
        locomo = locomo[:3]
    if args.locomo_conversations:
        locomo = locomo[: args.locomo_conversations]
    if args.lme_first:
        longmemeval = longmemeval[: args.lme_first]
        sample = longmemeval
    parts = retrieval_variants.parts(embedder)
    results: dict[str, dict[str, Result]] = {}
    runs = (
        ("locomo", locomo, "all"),
        ("longmemeval", longmemeval, "main"),
        ("longmemeval-sample", sample, "variants"),
    )
    for dataset, histories, which in runs:
        if dataset.split("-")[0] not in args.datasets.split(","):
            continue
        systems = retrieval_variants.systems(dataset, embedder, porcelain, bm25s_turns, bm25s_sessions)
        if not args.all_variants:
            systems = [s for s in systems if s.note != "variant-extended"]
        if which != "variants" and dataset.split("-")[0] in args.product_datasets.split(","):
            systems.insert(
                3, System(retrieval_product.PRODUCT, own=retrieval_product.product(dataset.split("-")[0]))
            )
        # Session 5's rows run with the main ones (every question of both parts), not on the sample.
        split = retrieval_variants.SPLIT
        if which == "main":
            systems = [s for s in systems if not s.note or s.note == split]
        elif which == "variants":
            systems = [
                s for s in systems if (s.note and s.note != split) or s.name in retrieval_variants.REFERENCE
            ]
        if args.only:
            wanted = set(args.only.split(";"))
            systems = [s for s in systems if s.name in wanted]
        # When the variants' sample is every main question, their reference rows are the main rows.
        reused: dict[str, Result] = {}
        if which == "variants" and len(sample) == len(longmemeval) and "longmemeval" in results:
            reused = {n: r for n, r in results["longmemeval"].items() if n in retrieval_variants.REFERENCE}
            systems = [s for s in systems if s.name not in reused]
        results[dataset] = reused | evaluate(histories, parts, systems, dataset.split("-")[0], tune)
        for name, result in results[dataset].items():
            key = "R@10" if dataset == "locomo" else "recall_all@5"
            print(
                f"{dataset:12s} {name:60s} {key} {result.mean(key) or 0:.3f}  {result.seconds:6.1f}s",
                flush=True,
            )
    costs = [] if args.quick or args.only else cost([*locomo, *longmemeval], embedder, 10_000)
    total = time.perf_counter() - started
    context = {
        "machine": machine(),
        "locomo_questions": sum(len(h.questions) for h in locomo),
        "locomo_conversations": len(locomo),
        "lme_questions": len(longmemeval),
        "lme_sample": len(sample),
        "lme_eligible": eligible,
        "lme_skipped": skipped,
        "embedded": cache.embedded,
        "seconds": total,
        "categories": CATEGORIES,
        "cost": costs,
        "threads_from": retrieval_parts.THREADS_FROM,
        "part": args.part,
        "split_sample": args.split_sample,
        "split": {
            dataset: tuple(sum(len(h.questions) for h in hs if (h.name in tune) == t) for t in (True, False))
            for dataset, hs in (("locomo", locomo), ("longmemeval", longmemeval))
        },
    }
    text = section(HEADING, results, context)
    print(text)
    partial = args.only or args.datasets != parser.get_default("datasets") or args.part != "all"
    if not (args.quick or args.no_write or partial):
        replace_section(HEADING, text)


def _embedder(cache: EmbeddingCache) -> Embedder:
    from agent_memory.search.holdings import make_embedder
    from agent_memory.search.recipes import BUILTIN_RECIPES

    return CachedEmbedder(make_embedder(BUILTIN_RECIPES["vectors-minilm"]), cache)


if __name__ == "__main__":
    main()

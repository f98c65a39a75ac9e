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
``~/.cache/agent-memory-bench``): the first run embeds ~75k distinct texts once (about 15
minutes on 2 cores), later runs only read them. ``--quick`` keeps 3 LoCoMo conversations and
40 LongMemEval questions (stratified by type) and writes nothing.

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

import retrieval_variants
from report import machine, replace_section
from retrieval_data import (
    CATEGORIES,
    LOCOMO,
    LONGMEMEVAL,
    CachedEmbedder,
    EmbeddingCache,
    History,
    Question,
    evidence_recall,
    load_locomo,
    load_longmemeval,
    ndcg_any,
    recall_all,
    recall_any,
    reciprocal_rank,
    sessions_of,
    stratified,
)
from retrieval_docs import section
from retrieval_variants import Part, System

from agent_memory.log.inmemory import MemoryLog
from agent_memory.memory import Memory
from agent_memory.records import MemoryRecord, Provenance
from agent_memory.search.base import Embedder, Hit, SearchIndex
from agent_memory.search.catalog import IndexCatalog
from agent_memory.stores.inmemory import InMemoryStore

HEADING = "## Retrieval quality"
DEPTH = 100  # turns asked of every system per question
LOCOMO_KS = (5, 10, 25, 50)

Ranking = list[int]
"""Items best first: turn indexes of the history (or session indexes for session-level systems)."""


def records_for(history: History, document: Callable[[History, int], str]) -> tuple[list[MemoryRecord], dict]:
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


def part_rankings(part: Part, history: History) -> list[list[Hit]]:
    """Build ``part`` over the history and return its hits per question (record id = turn index)."""
    records, where = records_for(history, part.document)
    index = part.make()
    index.index(records)
    out = []
    for question in history.questions:
        hits = index.query(question.text, k=DEPTH)
        out.append([Hit(str(where[h.record_id]), h.score) for h in hits])
    close = getattr(index, "close", None)
    if callable(close):
        close()
    return out


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


def porcelain(make_index: Callable[[], SearchIndex]) -> Callable[[History], list[Ranking]]:
    """Return a system that writes every turn with ``remember`` and asks ``recall`` (module docstring)."""

    def run(history: History) -> list[Ranking]:
        store = InMemoryStore()
        memory = Memory(store, MemoryLog(), IndexCatalog(store, {"default": make_index()}))
        turns_of: dict[str, list[int]] = defaultdict(list)
        for i, turn in enumerate(history.turns):
            done = memory.remember(
                turn.body, source=f"{history.name}#{i}", type="episode", occurred_at=turn.when, now=turn.when
            )
            turns_of[done.record_id].append(i)  # an exact repeat is one record (dedup)
        last = max(t.when for t in history.turns)
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


@dataclass
class Result:
    """Per-question scores of one system on one dataset, and its seconds."""

    scores: list[tuple[str, dict[str, float]]]  # (question label, metrics)
    seconds: float
    variant: bool = False

    def mean(self, metric: str, label: str | None = None) -> float | None:
        """Mean of ``metric`` over all questions (or those of ``label``); None when absent."""
        values = [m[metric] for lab, m in self.scores if metric in m and (label is None or lab == label)]
        return statistics.fmean(values) if values else None


def evaluate(
    histories: list[History], parts: dict[str, Part], systems: list[System], dataset: str
) -> dict[str, Result]:
    """Run every system over every history; parts are built once per history and shared."""
    needed = list(dict.fromkeys(p for s in systems for p in s.parts))
    part_seconds: dict[str, float] = defaultdict(float)
    scores: dict[str, list[tuple[str, dict[str, float]]]] = defaultdict(list)
    seconds: dict[str, float] = defaultdict(float)
    for history in histories:
        built: dict[str, list[list[Hit]]] = {}
        for name in needed:
            started = time.perf_counter()
            built[name] = part_rankings(parts[name], history)
            part_seconds[name] += time.perf_counter() - started
        for system in systems:
            started = time.perf_counter()
            if system.own is not None:
                rankings = system.own(history)
            else:
                combine = system.combine or (lambda r: r[0])
                rankings = [
                    [int(h.record_id) for h in combine([built[p][q] for p in system.parts])[:DEPTH]]
                    for q in range(len(history.questions))
                ]
            seconds[system.name] += time.perf_counter() - started
            for question, ranking in zip(history.questions, rankings, strict=True):
                if dataset == "locomo":
                    metrics = score_locomo(history, ranking, question)
                else:
                    metrics = score_longmemeval(history, ranking, question, sessions=system.sessions)
                scores[system.name].append((question.label, metrics))
    for system in systems:
        seconds[system.name] += sum(part_seconds[p] for p in system.parts)
    return {s.name: Result(scores[s.name], seconds[s.name], s.note == "variant") for s in systems}


# ---------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark, print the section and write it into docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="3 conversations, 40 questions; writes nothing")
    parser.add_argument("--no-write", action="store_true", help="leave docs/benchmarks.md alone")
    parser.add_argument("--questions", type=int, default=0, help="LongMemEval questions (0: all eligible)")
    parser.add_argument("--only", default="", help="system names to run, separated by ; (default: all)")
    parser.add_argument("--datasets", default="locomo,longmemeval", help="which datasets (default: both)")
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
    count = 40 if args.quick else args.questions
    if count:
        longmemeval = stratified(longmemeval, count)
    if args.quick:
        locomo = locomo[:3]
    parts = retrieval_variants.parts(embedder)
    results: dict[str, dict[str, Result]] = {}
    for dataset, histories in (("locomo", locomo), ("longmemeval", longmemeval)):
        if dataset not in args.datasets.split(","):
            continue
        systems = retrieval_variants.systems(dataset, embedder, porcelain, bm25s_turns, bm25s_sessions)
        if args.only:
            wanted = set(args.only.split(";"))
            systems = [s for s in systems if s.name in wanted]
        results[dataset] = evaluate(histories, parts, systems, dataset)
        for name, result in results[dataset].items():
            key = "R@10" if dataset == "locomo" else "recall_all@5"
            print(
                f"{dataset:12s} {name:60s} {key} {result.mean(key) or 0:.3f}  {result.seconds:6.1f}s",
                flush=True,
            )
    total = time.perf_counter() - started
    context = {
        "machine": machine(),
        "locomo_questions": sum(len(h.questions) for h in locomo),
        "locomo_conversations": len(locomo),
        "lme_questions": len(longmemeval),
        "lme_eligible": eligible,
        "lme_skipped": skipped,
        "embedded": cache.embedded,
        "seconds": total,
        "categories": CATEGORIES,
    }
    text = section(HEADING, results, context)
    print(text)
    if not (args.quick or args.no_write or args.only or args.datasets != parser.get_default("datasets")):
        replace_section(HEADING, text)


def _embedder(cache: EmbeddingCache) -> Embedder:
    from agent_memory.search.holdings import make_embedder
    from agent_memory.search.recipes import BUILTIN_RECIPES

    return CachedEmbedder(make_embedder(BUILTIN_RECIPES["vectors-minilm"]), cache)


if __name__ == "__main__":
    main()

"""Hybrid query benchmark: one question asked of BM25 and 384-d vectors side by side (issue 23).

The Home is the server memory benchmark's (``bench/serve_memory.py``: N signed notes of
``corpus.scale_texts``, BM25 beside a 384-dimension vector index fused by the ``hybrid384``
recipe, built by ``agent-memory reindex``); its vectors come from the hash embedder, since
embedding 100k notes with MiniLM takes about 44 minutes on two cores. Each question is
embedded by MiniLM (the default recipe's model), so the vector part does what the default
recipe does at query time: one MiniLM run and a dense product over N rows of 384 floats. What
is timed is the cost of a question, not its ranking (the notes' vectors and the question's
come from different embedders).

Two variants in the same process, each asked every question: the first half of the questions
under one variant then the other, the second half in the other order. Not question by question:
OpenBLAS's threads spin for a while after a product on several threads, so a ``before`` question
slowed the ``after`` one that came next.

The variants:

- **before** (the code before session 12, restored by patches): the question embedded with one
  onnxruntime intra-op thread per core, the coverage look walking each question word's
  doclist over the whole index, then keeping the candidates' rows, once both parts have
  answered, and the dense product on as many OpenBLAS threads as cores (``search/blas.py``
  came in session 14);
- **after**: the library as it is (one intra-op thread; the candidates copied into a scratch
  FTS5 table and each word looked up among them, in the BM25 part's own call, beside the
  vector part).

Figures, p50 per question: the hybrid query (``HybridIndex.query``, k = 32, 100 candidates per
part), each part asked alone (BM25, vectors, k = 100), the coverage look over the BM25 part's
100 candidates, and ``Memory.recall`` (budget 2,000 tokens); the two variants' results are
compared for the first questions (they must be the same hits).

Usage: ``python bench/hybrid_query.py [--sizes 10000 100000] [--questions N] [--work DIR]
[--quick] [--no-write]``; ``--work`` keeps the generated Homes for the next run; ``--quick``
measures 1,000 records and 20 questions. Prints the ``## Hybrid query`` section and writes it
into ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import corpus
from report import machine, replace_section
from scale import NOW

HEADING = "## Hybrid query"
AIM_MS = 20.0
"""Aim (issue 23): hybrid recall p50 at 100k records, MiniLM vectors, budget 2,000 tokens."""
BUDGET = 2_000
COMPARED = 20
PARTS = ("hybrid", "recall", "bm25", "vectors", "coverage")


class QuestionEmbedder:
    """The index's embedder for everything but the question, which MiniLM embeds.

    Keeps the name, version and dimensions of the embedder the vectors were built with, so
    the index is not rebuilt; only :meth:`embed` (a query's one text) goes to ``model``.
    """

    def __init__(self, held: Any, model: Any) -> None:
        self.name, self.version, self.dimensions = held.name, held.version, held.dimensions
        self.model = model

    def embed(self, texts: Sequence[str]) -> Any:
        """Return MiniLM's vectors of ``texts``."""
        return self.model.embed(texts)


_HOLDING_BEFORE = (
    "SELECT d.record_id FROM fts f JOIN docs d ON d.rowid = f.rowid"
    " WHERE fts MATCH ? AND d.record_id IN (SELECT value FROM json_each(?))"
)


def coverage_before(conn: Any, terms: Any, df: dict[str, int], total: int, record_ids: Sequence[str]) -> Any:
    """The coverage look before session 12: each word's doclist walked over the whole index."""
    from agent_memory.search.fts_coverage import CONTEXT_SHARE, idf
    from agent_memory.search.fts_query import quote

    ids = list(dict.fromkeys(record_ids))
    got = dict.fromkeys(ids, 0.0)
    weights = {t.stem: idf(df.get(t.stem, 0), total) for t in terms}
    mass = sum(weights.values())
    if not ids or mass <= 0:
        return got
    asked = json.dumps(ids)
    for term in {t.stem: t for t in terms}.values():
        if not df.get(term.stem):
            continue
        own = {r for (r,) in conn.execute(_HOLDING_BEFORE, (f"text : {quote(term.token)}", asked))}
        near = {r for (r,) in conn.execute(_HOLDING_BEFORE, (f"context : {quote(term.token)}", asked))} - own
        weight = weights[term.stem] / mass
        for record_id in own:
            got[record_id] += weight
        for record_id in near:
            got[record_id] += CONTEXT_SHARE * weight
    return {record_id: min(1.0, value) for record_id, value in got.items()}


class LaterCoverage(Mapping[str, float]):
    """Coverage factors computed when first read, as fusing read them before session 12: after every part."""

    def __init__(self, compute: Callable[[], Mapping[str, float]]) -> None:
        self._compute = compute
        self._got: Mapping[str, float] | None = None

    def _data(self) -> Mapping[str, float]:
        if self._got is None:
            self._got = self._compute()
        return self._got

    def __getitem__(self, key: str) -> float:
        return self._data()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data())

    def __len__(self) -> int:
        return len(self._data())


def ask_before(self: Any, part: Any, text: str, wanted: int) -> tuple[Any, Mapping[str, float] | None]:
    """``HybridIndex._ask`` before session 12: the part's query alone; its coverage read later, in turn."""
    from agent_memory.search.hybrid import CoverageLookup

    hits = part.query(text, k=wanted)
    if not self._coverage or not hits or not isinstance(part, CoverageLookup):
        return hits, None

    def compute() -> Mapping[str, float]:
        shares = part.coverage(text, [hit.record_id for hit in hits])
        return {record_id: share**self._coverage for record_id, share in shares.items()}

    return hits, LaterCoverage(compute)


@contextmanager
def variant(name: str, vectors: Any, embedders: dict[str, QuestionEmbedder]) -> Iterator[None]:
    """Run the block with the ``before`` or ``after`` code (module docstring)."""
    from agent_memory.search import blas, fts_coverage
    from agent_memory.search.hybrid import HybridIndex

    vectors.embedder = embedders[name]
    original, asked, limited = fts_coverage.coverage, HybridIndex._ask, blas.one_blas_thread
    if name == "before":
        fts_coverage.coverage = coverage_before
        HybridIndex._ask = ask_before  # type: ignore[method-assign]
        blas.one_blas_thread = nullcontext
    try:
        yield
    finally:
        fts_coverage.coverage, HybridIndex._ask = original, asked  # type: ignore[method-assign]
        blas.one_blas_thread = limited


def timed(action: Callable[[], object]) -> tuple[float, object]:
    """Return (milliseconds, result) of one call."""
    started = time.perf_counter()
    result = action()
    return (time.perf_counter() - started) * 1000, result


def measure(home: Path, questions: list[str]) -> dict[str, Any]:
    """Ask ``questions`` of ``home`` under both variants; return the p50 of each part and the agreement."""
    from agent_memory.memory import Memory
    from agent_memory.search.embedders import MiniLMEmbedder
    from agent_memory.search.hybrid import HybridIndex
    from agent_memory.search.vectors import VectorIndex

    memory = Memory.open(home)
    try:
        memory.recall(questions[0], budget_tokens=BUDGET, now=NOW)  # loads every index
        catalog = memory.catalog
        [hybrid] = [v for v in (catalog._view(n) for n in catalog.active) if isinstance(v, HybridIndex)]
        [vectors] = [p for p in hybrid.parts if isinstance(p, VectorIndex)]
        [bm25] = [p for p in hybrid.parts if not isinstance(p, VectorIndex)]
        held = vectors.embedder
        embedders = {
            "before": QuestionEmbedder(held, MiniLMEmbedder(threads=os.cpu_count() or 1, workers=1)),
            "after": QuestionEmbedder(held, MiniLMEmbedder()),
        }
        for embedder in embedders.values():
            embedder.embed(["warm up"])
        times: dict[str, dict[str, list[float]]] = {v: {p: [] for p in PARTS} for v in embedders}

        def ask(question: str, spent: dict[str, list[float]]) -> object:
            ms, found = timed(lambda: hybrid.query(question, k=32, now=NOW))
            spent["hybrid"].append(ms)
            spent["recall"].append(timed(lambda: memory.recall(question, budget_tokens=BUDGET, now=NOW))[0])
            ms, hits = timed(lambda: bm25.query(question, k=100))
            spent["bm25"].append(ms)
            spent["vectors"].append(timed(lambda: vectors.query(question, k=100))[0])
            ids = [hit.record_id for hit in hits]  # type: ignore[attr-defined]
            spent["coverage"].append(timed(lambda: bm25.coverage(question, ids))[0])
            return found

        answers: dict[str, list[object]] = {name: [] for name in embedders}
        half = len(questions) // 2
        for part, order in ((questions[:half], ("before", "after")), (questions[half:], ("after", "before"))):
            for name in order:
                with variant(name, vectors, embedders):
                    answers[name] += [ask(question, times[name]) for question in part]
        pairs = zip(answers["before"][:COMPARED], answers["after"][:COMPARED], strict=True)
        same = sum(before == after for before, after in pairs)
        p50 = {v: {p: statistics.median(t) for p, t in parts.items()} for v, parts in times.items()}
        compared = min(COMPARED, len(questions))
        return {"p50": p50, "same": same, "compared": compared, "questions": len(questions)}
    finally:
        memory.close()


def section(rows: list[tuple[int, dict[str, Any]]]) -> str:
    """Render the ``## Hybrid query`` section."""
    lines = [
        HEADING,
        "",
        "Written by `bench/hybrid_query.py` (the module docstring says what is run): the server memory",
        "benchmark's Home (BM25 beside 384-d vectors, `hybrid384`), each question embedded by MiniLM;",
        "**before** is the code before session 12 (two onnxruntime threads per question on this",
        "machine, the coverage look walking each word's doclist after both parts answered, the dense",
        "product on two OpenBLAS threads), **after** the library as it is (one onnxruntime thread; the",
        "look among the candidates, in the BM25 part's call; one BLAS thread, `search/blas.py`), question",
        "by question, half the questions under one variant then the other, the rest in the other order",
        "(module docstring). p50 in ms; *same hits*: of the first questions, those whose",
        "hybrid hits are identical under both.",
        "",
        f"Machine: {machine()}.",
        "",
        "| records | questions | hybrid query before → after | recall before → after | BM25 alone"
        " | vectors alone | coverage look before → after | same hits |",
        "|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for size, row in rows:
        before, after = row["p50"]["before"], row["p50"]["after"]
        lines.append(
            f"| {size:,} | {row['questions']} | {before['hybrid']:.1f} → {after['hybrid']:.1f}"
            f" ({before['hybrid'] / after['hybrid']:.2f}×) | {before['recall']:.1f} → {after['recall']:.1f}"
            f" | {after['bm25']:.1f} | {before['vectors']:.1f} → {after['vectors']:.1f}"
            f" | {before['coverage']:.1f} → {after['coverage']:.1f}"
            f" ({before['coverage'] / after['coverage']:.1f}×) | {row['same']} of {row['compared']} |"
        )
    largest, row = rows[-1]
    recall = row["p50"]["after"]["recall"]
    verdict = "met" if recall <= AIM_MS else f"not met: at most {AIM_MS:.0f} ms"
    lines += [
        "",
        f"- **Aim (issue 23):** hybrid recall p50 at {largest:,} records {recall:.1f} ms ({verdict}).",
        "- *vectors alone*: the question's MiniLM run, the product over every row and the cut to 100;",
        "  *BM25 alone* is the same code under both variants. In a hybrid query the two parts run side",
        "  by side, so a question embedded on one thread leaves the other core to BM25.",
        "- *recall* reads and verifies the records it returns (about 65 here); a record one variant read",
        "  is in the process's parse cache when the other asks, which the swapped order shares out.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the section and write it unless ``--no-write``."""
    import serve_memory

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    corpus.add_tier_options(parser, asked="questions")
    parser.add_argument("--work", help="keep the generated Homes here and reuse them on the next run")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    if not corpus.available():
        print(corpus.missing())
        return 0
    sizes, questions = corpus.tiers(args)
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="am-hybrid-query-"))
    os.environ.setdefault("XDG_CONFIG_HOME", str(work / "config"))
    rows = []
    for size in sizes:
        folder = work / f"n{size}"
        home = folder / "home"
        if not home.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            serve_memory.build_home(folder, size)
        row = measure(home, questions)
        rows.append((size, row))
        print(json.dumps({"records": size, **row}), flush=True)
    text = section(rows)
    print(text)
    if not args.no_write and not args.quick:
        replace_section(HEADING, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

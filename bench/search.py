"""Search benchmark: build time and query latency of every index, plus a small quality check.

Issue 4, benchmark ``bench/search.py``. Records are real conversation turns from
``../shared/datasets`` (LoCoMo turns, LongMemEval_S user turns, both CC BY-NC / MIT, used for
evaluation only; see their READMEs); queries are the datasets' own questions. Each index in
:data:`INDEX_FACTORIES` is built once at the chosen size and timed on every query; ``bm25s``
runs on the same text as the baseline when it is installed (``pip install -e .[bench]``).

The quality part builds one index per LoCoMo conversation (the paper's protocol) and reports
turn-level evidence recall@10 for each FTS query mode, which is how the mode of
:class:`~agent_memory.search.fts.FtsIndex` was chosen.

Usage::

    python bench/search.py            # 10k records
    python bench/search.py --large    # 10k and 100k records

Prints the ``## Search`` section and writes it into ``docs/benchmarks.md`` (``--no-write``
to skip), leaving the other sections alone.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import corpus
from report import machine, replace_section
from search_cjk import cjk_rows

from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search import fts, fts_query
from agent_memory.search.base import Hit, SearchIndex, document_text
from agent_memory.search.fts import QUERY_MODES, FtsIndex

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
HEADING = "## Search"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
K = 10


class Timed(Protocol):
    """What the timing loop needs: the port's ``index`` and ``query``."""

    def index(self, records: Iterable[MemoryRecord]) -> None: ...  # noqa: D102

    def query(self, text: str, *, k: int = 32) -> list[Hit]: ...  # noqa: D102


class Bm25sBaseline:
    """``bm25s`` (numpy backend, English stopwords, no stemmer) over the same document text."""

    def __init__(self) -> None:
        import bm25s  # type: ignore[import-untyped]

        self._bm25s = bm25s
        self._ids: list[str] = []
        self._model: Any = None

    def index(self, records: Iterable[MemoryRecord]) -> None:
        """Build the whole model from ``records`` (bm25s has no incremental update)."""
        records = list(records)
        self._ids = [r.id for r in records]
        corpus = self._bm25s.tokenize([document_text(r) for r in records], show_progress=False)
        self._model = self._bm25s.BM25()
        self._model.index(corpus, show_progress=False)

    def query(self, text: str, *, k: int = 32) -> list[Hit]:
        """Return the top ``k`` by bm25s score (zero-score rows dropped)."""
        tokens = self._bm25s.tokenize([text], show_progress=False)
        if not tokens.ids[0]:
            return []
        k = min(k, len(self._ids))
        docs, scores = self._model.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        return [Hit(self._ids[int(d)], float(s)) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


@dataclass(frozen=True)
class Factory:
    """One index under test: a name and a maker that gets a fresh folder."""

    name: str
    make: Callable[[Path], Timed]


def _bm25s_available() -> bool:
    try:
        import bm25s  # noqa: F401
    except ImportError:
        return False
    return True


INDEX_FACTORIES: list[Factory] = [
    Factory("FtsIndex (SQLite FTS5)", lambda folder: FtsIndex(folder / "fts.sqlite")),
]
if _bm25s_available():
    INDEX_FACTORIES.append(Factory("bm25s 0.3 (baseline)", lambda folder: Bm25sBaseline()))


# ---------------------------------------------------------------------- data


def _record(body: str, ref: str) -> MemoryRecord:
    return MemoryRecord.create(
        type="episode", body=body, provenance=Provenance(kind="import", ref=ref), created_at=T0
    )


def load_corpus(size: int) -> tuple[list[MemoryRecord], list[str]]:
    """Return ``size`` records (LoCoMo turns, then LongMemEval_S user turns) and the questions."""
    texts = corpus.distinct_texts(captions=True, strip=False)
    # Long turns are cut into their lines only when whole turns do not reach the size.
    if len(texts) < size:
        corpus.add_lines(texts)
    if len(texts) < size:
        sys.exit(f"only {len(texts)} distinct texts in the datasets; cannot make {size} records")
    records = [_record(body, ref) for body, ref in list(texts.items())[:size]]
    return records, corpus.questions()


# ---------------------------------------------------------------------- speed


def _percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def time_index(factory: Factory, records: list[MemoryRecord], questions: list[str]) -> dict[str, float]:
    """Return build seconds and query p50/p99/mean in milliseconds (k = 10)."""
    with tempfile.TemporaryDirectory() as folder:
        index = factory.make(Path(folder))
        start = time.perf_counter()
        index.index(records)
        build = time.perf_counter() - start
        for question in questions[:20]:  # warm caches
            index.query(question, k=K)
        latencies = []
        for question in questions:
            start = time.perf_counter()
            index.query(question, k=K)
            latencies.append((time.perf_counter() - start) * 1000)
        close = getattr(index, "close", None)
        if close is not None:
            close()
        size = sum(f.stat().st_size for f in Path(folder).iterdir())
    return {
        "size_mb": size / 1e6,
        "build_s": build,
        "p50_ms": statistics.median(latencies),
        "p99_ms": _percentile(latencies, 0.99),
        "mean_ms": statistics.fmean(latencies),
    }


SHARES = (0.1, 0.25, 0.5)


def planner_speed(records: list[MemoryRecord], questions: list[str]) -> dict[float, float]:
    """Return query p50 (ms) of one FtsIndex for each OR ``max_share`` in :data:`SHARES`.

    The settings take turns on every question, so a busy machine slows them alike.
    """
    latencies: dict[float, list[float]] = {share: [] for share in SHARES}
    saved = fts._OR_MAX_SHARE
    with tempfile.TemporaryDirectory() as folder, FtsIndex(Path(folder) / "fts.sqlite") as index:
        index.index(records)
        try:
            for question in questions:
                for share in SHARES:
                    fts._OR_MAX_SHARE = share
                    start = time.perf_counter()
                    index.query(question, k=K)
                    latencies[share].append((time.perf_counter() - start) * 1000)
        finally:
            fts._OR_MAX_SHARE = saved
    return {share: statistics.median(values) for share, values in latencies.items()}


# ---------------------------------------------------------------------- quality


def _evidence(qa: dict[str, Any]) -> set[str]:
    """Return the evidence dia_ids, split where several are packed into one string."""
    found: set[str] = set()
    for item in qa.get("evidence", []):
        found.update(part.strip() for part in str(item).split(";") if part.strip())
    return found


def locomo_recall(make: Callable[[], SearchIndex | Bm25sBaseline]) -> dict[str, float]:
    """Return LoCoMo turn-level evidence recall@10, overall and for categories 1-4 (one index per chat)."""
    per_question: list[tuple[int, float]] = []
    for conversation in corpus.locomo():
        turns = corpus.locomo_turns(conversation)
        records = {dia_id: _record(text, dia_id) for dia_id, text in turns}
        by_id = {record.id: dia_id for dia_id, record in records.items()}
        index = make()
        index.index(records.values())
        for qa in conversation["qa"]:
            gold = _evidence(qa)
            hits = index.query(str(qa["question"]), k=K)
            top = {by_id[hit.record_id] for hit in hits[:K]}
            per_question.append((int(qa["category"]), len(gold & top) / len(gold) if gold else 1.0))
    answerable = [r for category, r in per_question if category != 5]
    return {
        "all": statistics.fmean(r for _, r in per_question),
        "cat1-4": statistics.fmean(answerable),
        "questions": len(per_question),
    }


def quality_rows() -> list[tuple[str, dict[str, float]]]:
    """Recall@10 of each FTS query mode, of two ablations of the defaults, and of the baseline."""
    rows: list[tuple[str, dict[str, float]]] = [
        (f"FtsIndex, query mode {mode}", locomo_recall(functools.partial(FtsIndex, ":memory:", mode=mode)))
        for mode in QUERY_MODES
    ]
    ablations: list[tuple[str, Any, str, Any]] = [
        ("stopwords: the origin's 62 only", fts_query, "STOPWORDS", frozenset(fts_query._ORIGIN_STOPWORDS)),
    ]
    ablations += [
        (f"OR max share {share}", fts, "_OR_MAX_SHARE", share)
        for share in SHARES
        if share != fts._OR_MAX_SHARE
    ]
    for label, module, name, value in ablations:
        saved = getattr(module, name)
        setattr(module, name, value)
        try:
            rows.append((f"FtsIndex, and-then-or, {label}", locomo_recall(lambda: FtsIndex(":memory:"))))
        finally:
            setattr(module, name, saved)
    if _bm25s_available():
        rows.append(("bm25s 0.3 (baseline)", locomo_recall(Bm25sBaseline)))
    return rows


# ---------------------------------------------------------------------- main


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join([*lines, *("| " + " | ".join(row) + " |" for row in rows)])


def section(
    speed: list[tuple[str, int, dict[str, float]]],
    planner: list[tuple[int, dict[float, float]]],
    quality: list[tuple[str, dict[str, float]]],
    cjk: list[tuple[str, dict[str, float]]],
) -> str:
    """Return the ``## Search`` section of docs/benchmarks.md: tables, then the decisions they support."""
    speed_rows = [
        [
            name,
            f"{size:,}",
            f"{got['build_s']:.1f}",
            f"{got['size_mb']:.1f}" if got["size_mb"] else "in memory",
            f"{got['p50_ms']:.2f}",
            f"{got['p99_ms']:.2f}",
            f"{got['mean_ms']:.2f}",
        ]
        for name, size, got in speed
    ]
    planner_rows = [[f"{size:,}", *(f"{got[share]:.2f}" for share in SHARES)] for size, got in planner]
    quality_rows_ = [[name, f"{got['all']:.3f}", f"{got['cat1-4']:.3f}"] for name, got in quality]
    cjk_keys = list(cjk[0][1])
    cjk_rows_ = [[name, *(f"{got[key]:.2f}" for key in cjk_keys)] for name, got in cjk]
    return "\n".join(
        [
            HEADING,
            "",
            "Written by `bench/search.py` (`--large` adds 100k records). Records are real turns from",
            "`../shared/datasets` (LoCoMo turns, then LongMemEval_S user turns, cut into lines past the",
            "whole turns); queries are the datasets' own questions, k = 10. bm25s (numpy backend,",
            "English stopwords, no stemmer) runs on the same document text as the baseline; its index",
            "lives in memory and is rebuilt whole on every change. Timings on a shared machine vary by",
            "up to 3× between runs when the load average is above the core count.",
            "",
            f"Machine: {machine()}.",
            "",
            "### Build and query time",
            "",
            _table(
                ["index", "records", "build (s)", "size (MB)", "query p50 (ms)", "p99 (ms)", "mean (ms)"],
                speed_rows,
            ),
            "",
            "Query p50 (ms) of `FtsIndex` when the OR query leaves out words found in more than this",
            f"share of the notes (the shipped setting is {fts._OR_MAX_SHARE}):",
            "",
            _table(["records", *(f"max share {share}" for share in SHARES)], planner_rows),
            "",
            f"### Quality: LoCoMo turn-level evidence recall@{K}",
            "",
            "One index per conversation (the paper's protocol), all 1,347 questions; categories 1-4",
            "leave out the adversarial questions. The rows choose the query mode and test the",
            "planner settings that were tuned on this data.",
            "",
            _table(["index", "all", "categories 1-4"], quality_rows_),
            "",
            "### Text without spaces",
            "",
            "The Chinese, Japanese and Thai notes of `CJK_CASES` (queries of 1, 2 and 3+ characters and",
            "a question each) among the 10k English records and 10k synthetic unspaced notes (Zipf-sampled",
            f"over 3,000 Han characters), added last. Found@{K}: the note is among the first {K} hits.",
            "",
            _table(["approach", *cjk_keys], cjk_rows_),
            "",
            "### Decisions",
            "",
            "- **Query mode `and-then-or`.** The three modes tie on LoCoMo, so the choice rests on",
            "  behaviour and speed: a note with every query word is never ranked below a note with",
            "  some, and a short query whose words all occur in at least k notes is answered by the",
            "  AND query alone, without paying for the OR query over common words.",
            "- **Stopwords `origin-62+questions`.** The origin's 62 words leave `what`, `who`, `my`,",
            "  `her` in every question; adding 26 question words and pronouns is worth 0.03-0.04",
            '  recall@10 (row "the origin\'s 62 only"). Stopwords are kept when a query has nothing',
            "  else, so `to be or not to be` or `the` still find their notes.",
            "- **OR planner: the 8 rarest words, none found in more than 25% of the notes.** FTS5",
            "  scores every row an OR query matches (about 1-2 µs per row here), so common words set",
            "  the latency. Of the limits tried, 0.25 had the best recall on LoCoMo; the planner",
            "  table shows its latency against the others. Words above it get an IDF under log 3",
            "  and rarely move the top 10. bm25() needs `detail=full`: with `detail=column` or `none` FTS5",
            "  re-reads each matching row's text to count words and queries were ~5× slower (measured",
            "  once at 10k; files 15-25% smaller).",
            "- **Text without spaces: bigrams and unigrams in the main table**, not a second",
            "  `trigram` table. One table and one BM25 ranking serve mixed queries; queries of one",
            "  or two characters use the index instead of a `LIKE` scan, which is slower and has no",
            "  ranking (it returns the first notes that contain the character, hence its 0.00); and",
            "  a question in Chinese or Japanese still matches on its bigrams, where its trigrams",
            "  rarely occur. In SQLite 3.40 a trigram table also answers `text LIKE '%咖啡%'` (two",
            "  characters, six bytes) with no row at all unless the column is written `+text`. The",
            "  cost: each unspaced character is indexed twice (alone and in bigrams), and runs of 3+",
            "  characters are slower than a trigram lookup.",
            "- **Scale.** At 10k notes a question takes a few ms, on par with bm25s; at 100k about",
            "  ten times that, still faster than bm25s's numpy backend on these questions. FTS5's per-row",
            "  scoring is the limit: past ~100k notes tantivy is the upgrade path (dependencies.md).",
            "",
        ]
    )


def write_docs(text: str, path: Path = DOCS) -> None:
    """Replace the ``## Search`` section of ``path`` (or add it), keeping every other section."""
    replace_section(HEADING, text, path)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark, print the section and write it to docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--large", action="store_true", help="also run at 100k records")
    parser.add_argument("--queries", type=int, default=1000, help="questions timed per index")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args(argv)
    if not corpus.available():
        print(corpus.missing())
        return
    speed = []
    planner = []
    filler: list[MemoryRecord] = []
    for size in [10_000, 100_000] if args.large else [10_000]:
        records, questions = load_corpus(size)
        questions = questions[: args.queries]
        filler = filler or records
        for factory in INDEX_FACTORIES:
            got = time_index(factory, records, questions)
            speed.append((factory.name, size, got))
            print(factory.name, size, {k: round(v, 2) for k, v in got.items()}, flush=True)
        planner.append((size, planner_speed(records, questions)))
        print("planner", size, planner[-1][1], flush=True)
    quality = quality_rows()
    cjk = cjk_rows(filler, K)
    text = section(speed, planner, quality, cjk)
    print(text)
    if not args.no_write:
        write_docs(text)


if __name__ == "__main__":
    main()

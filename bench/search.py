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
import json
import os
import platform
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from agent_memory.records import MemoryRecord, Provenance
from agent_memory.search import fts, fts_query
from agent_memory.search.base import Hit, SearchIndex, document_text
from agent_memory.search.fts import QUERY_MODES, FtsIndex

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
HEADING = "## Search"
DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
LOCOMO = DATASETS / "locomo" / "locomo.json"
LONGMEMEVAL = DATASETS / "longmemeval" / "longmemeval_s_cleaned_useronly.json"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
K = 10


class Timed(Protocol):
    """What the timing loop needs: the port's ``index`` and ``query``."""

    def index(self, records: Iterable[MemoryRecord]) -> None: ...  # noqa: D102

    def query(self, text: str, *, k: int = 32) -> list[Hit]: ...  # noqa: D102


class Bm25sBaseline:
    """``bm25s`` (numpy backend, English stopwords, no stemmer) over the same document text."""

    def __init__(self) -> None:
        import bm25s

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


def _locomo_turns(conversation: dict[str, Any]) -> list[tuple[str, str]]:
    """Return (dia_id, text) of every turn; image turns get ``[shares <caption>]`` like the paper."""
    turns: list[tuple[str, str]] = []
    chat = conversation["conversation"]
    number = 1
    while f"session_{number}" in chat:
        for turn in chat[f"session_{number}"]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            turns.append((turn["dia_id"], text))
        number += 1
    return turns


def load_corpus(size: int) -> tuple[list[MemoryRecord], list[str]]:
    """Return ``size`` records (LoCoMo turns, then LongMemEval_S user turns) and the questions."""
    locomo = json.loads(LOCOMO.read_text(encoding="utf-8"))
    longmemeval = json.loads(LONGMEMEVAL.read_text(encoding="utf-8"))
    texts: dict[str, str] = {}
    for conversation in locomo:
        for dia_id, text in _locomo_turns(conversation):
            texts.setdefault(text, f"locomo/{conversation['sample_id']}#{dia_id}")
    for item in longmemeval:
        for session_id, session in zip(item["haystack_session_ids"], item["haystack_sessions"], strict=True):
            for number, turn in enumerate(session, 1):
                if turn["role"] == "user" and turn["content"].strip():
                    texts.setdefault(turn["content"], f"longmemeval/{session_id}_{number}")
    # Long turns are cut into their lines only when whole turns do not reach the size.
    if len(texts) < size:
        for text, ref in list(texts.items()):
            for number, line in enumerate(text.splitlines()[1:], 2):
                if len(line.strip()) >= 20:
                    texts.setdefault(line, f"{ref}/line{number}")
    if len(texts) < size:
        sys.exit(f"only {len(texts)} distinct texts in the datasets; cannot make {size} records")
    records = [_record(body, ref) for body, ref in list(texts.items())[:size]]
    questions = [str(qa["question"]) for conversation in locomo for qa in conversation["qa"]]
    questions += [str(item["question"]) for item in longmemeval]
    return records, questions


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
    locomo = json.loads(LOCOMO.read_text(encoding="utf-8"))
    for conversation in locomo:
        turns = _locomo_turns(conversation)
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
        (f"FtsIndex, query mode {mode}", locomo_recall(lambda mode=mode: FtsIndex(":memory:", mode=mode)))
        for mode in QUERY_MODES
    ]
    ablations: list[tuple[str, Any, str, Any]] = [
        ("stopwords: the origin's 62 only", fts_query, "STOPWORDS", frozenset(fts_query._ORIGIN_STOPWORDS)),
        ("OR drops terms only above 50% of notes", fts, "_OR_MAX_SHARE", 0.5),
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


# ---------------------------------------------------------------------- text without spaces

# (note, queries that should find it first): one, two and 3+ characters, and a question.
CJK_CASES: list[tuple[str, list[str]]] = [
    ("我很喜欢喝咖啡，特别是早上。", ["咖", "咖啡", "喜欢喝咖啡", "我早上喝什么？"]),
    ("明天下午三点在北京开会。", ["京", "北京", "北京开会", "会议在哪里开？"]),
    ("她的猫叫小白，今年五岁。", ["猫", "小白", "小白五岁", "小白几岁了"]),
    ("东京的樱花四月开得最好看。", ["樱", "樱花", "樱花四月", "什么时候去看樱花"]),
    ("東京に行きました。とても楽しかったです。", ["東", "東京", "楽しかった", "東京はどうでしたか"]),
    ("私はコーヒーが好きです。", ["好", "好き", "コーヒー", "コーヒーは好きですか"]),
    ("来週の月曜日に歯医者の予約があります。", ["歯", "予約", "歯医者", "歯医者の予約はいつ"]),
    ("ประชุมวันพรุ่งนี้ที่กรุงเทพ", ["กรุงเทพ", "ประชุม"]),
]


class TrigramIndex:
    """The alternative not taken: a second FTS5 table with the ``trigram`` tokenizer.

    Holds only documents with unspaced text; runs of 3+ characters are searched as their
    trigrams (all, then any, ranked by BM25), shorter ones with ``LIKE`` (a scan). In SQLite
    3.40 ``text LIKE '%咖啡%'`` on a trigram table silently returns no row (the pattern is
    3+ bytes but under 3 characters); ``+text`` forces the scan that finds it.
    """

    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:")
        self._conn.execute(
            "CREATE VIRTUAL TABLE tri USING fts5(record_id UNINDEXED, text, tokenize='trigram')"
        )

    def index(self, records: Iterable[MemoryRecord]) -> None:  # noqa: D102
        rows = [(r.id, document_text(r)) for r in records if fts_query._UNSEGMENTED_ANY.search(r.body)]
        self._conn.executemany("INSERT INTO tri (record_id, text) VALUES (?, ?)", rows)

    def query(self, text: str, *, k: int = 32) -> list[Hit]:  # noqa: D102
        runs = [m.group() for m in re.finditer(f"{fts_query._UNSEGMENTED_ANY.pattern}+", text)]
        grams = sorted({run[i : i + 3] for run in runs for i in range(len(run) - 2)})
        if grams:
            for joiner in (" ", " OR "):
                rows = self._conn.execute(
                    "SELECT record_id, -bm25(tri) s FROM tri WHERE tri MATCH ? ORDER BY s DESC LIMIT ?",
                    (joiner.join(fts_query.quote(g) for g in grams), k),
                ).fetchall()
                if rows:
                    return [Hit(r, float(score)) for r, score in rows]
            return []
        rows = []
        for run in runs:
            rows += self._conn.execute(
                "SELECT record_id FROM tri WHERE +text LIKE ? LIMIT ?", (f"%{run}%", k)
            ).fetchall()
        return [Hit(r, 1.0) for (r,) in rows[:k]]


def _cjk_filler(count: int, seed: int = 7) -> list[MemoryRecord]:
    """Return ``count`` synthetic unspaced notes for latency: Zipf-sampled over 3,000 Han characters.

    The characters of :data:`CJK_CASES` are among them at random ranks, so some are common.
    """
    rng = random.Random(seed)  # noqa: S311 - reproducible data, not secrecy
    cases = {c for note, _ in CJK_CASES for c in note if fts_query._UNSEGMENTED_ANY.match(c)}
    pool = sorted(cases | {chr(0x4E00 + rng.randrange(0x5000)) for _ in range(3000 - len(cases))})
    rng.shuffle(pool)
    weights = [1 / (rank + 1) for rank in range(len(pool))]
    return [
        _record("".join(rng.choices(pool, weights, k=rng.randint(15, 60))), f"synthetic/{n}")
        for n in range(count)
    ]


def _cjk_group(query: str, queries: list[str]) -> str:
    if query == queries[-1] and len(queries) > 2:
        return "questions"
    return "1 char" if len(query) == 1 else "2 chars" if len(query) == 2 else "3+ chars"


def cjk_rows(filler: list[MemoryRecord]) -> list[tuple[str, dict[str, float]]]:
    """Found@10 and median latency of unspaced-text queries: bigrams in one table vs a trigram table."""
    notes = [_record(note, f"cjk/{n}") for n, (note, _) in enumerate(CJK_CASES)]
    corpus = [*filler, *_cjk_filler(len(filler)), *notes]  # notes last: LIKE returns by rowid
    makers: list[tuple[str, Callable[[], Timed]]] = [
        ("bigrams + unigrams in the main table (chosen)", lambda: FtsIndex(":memory:")),
        ("second table, trigram tokenizer + LIKE", TrigramIndex),
    ]
    rows = []
    for name, make in makers:
        index = make()
        index.index(corpus)
        found: dict[str, list[float]] = {"1 char": [], "2 chars": [], "3+ chars": [], "questions": []}
        took: dict[str, list[float]] = {key: [] for key in found}
        for note, (_, queries) in zip(notes, CJK_CASES, strict=True):
            for query in queries:
                key = _cjk_group(query, queries)
                start = time.perf_counter()
                hits = index.query(query, k=K)
                took[key].append((time.perf_counter() - start) * 1000)
                found[key].append(float(note.id in {hit.record_id for hit in hits}))
        result = {f"found@{K}, {key}": statistics.fmean(v) for key, v in found.items()}
        result["p50 ms, 1-2 chars"] = statistics.median(took["1 char"] + took["2 chars"])
        result["p50 ms, 3+ chars"] = statistics.median(took["3+ chars"] + took["questions"])
        rows.append((name, result))
    return rows


# ---------------------------------------------------------------------- main


def machine() -> str:
    """Describe the machine the way the other benchmarks do."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} cores, {platform.system()} {platform.machine()},"
        f" Python {platform.python_version()}, SQLite {sqlite3.sqlite_version};"
        f" load average at the end {load}"
    )


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join([*lines, *("| " + " | ".join(row) + " |" for row in rows)])


def section(speed: list[tuple[str, int, dict[str, float]]], quality: Any, cjk: Any) -> str:
    """Return the ``## Search`` section of docs/benchmarks.md."""
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
            "lives in memory and is rebuilt whole on every change.",
            "",
            f"Machine: {machine()}; measured {datetime.now(UTC):%Y-%m-%d}.",
            "",
            "### Build and query time",
            "",
            _table(
                ["index", "records", "build (s)", "size (MB)", "query p50 (ms)", "p99 (ms)", "mean (ms)"],
                speed_rows,
            ),
            "",
            f"### Quality: LoCoMo turn-level evidence recall@{K}",
            "",
            "One index per conversation (the paper's protocol), all 1,347 questions; categories 1-4",
            "leave out the adversarial questions. The rows choose the query mode and test the two",
            "planner settings that were tuned on this data.",
            "",
            _table(["index", "all", "categories 1-4"], quality_rows_),
            "",
            "### Text without spaces",
            "",
            "The Chinese, Japanese and Thai notes of `CJK_CASES` (queries of 1, 2 and 3+ characters and",
            "a question each) among the 10k English records and 10k synthetic unspaced notes (Zipf-sampled",
            f"over 3,000 Han characters). Found@{K}: the note is among the first {K} hits.",
            "",
            _table(["approach", *cjk_keys], cjk_rows_),
            "",
        ]
    )


def write_docs(text: str, path: Path = DOCS) -> None:
    """Replace the ``## Search`` section of ``path`` (or add it), keeping every other section."""
    existing = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    lines = existing.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == HEADING), None)
    if start is None:
        updated = existing.rstrip("\n") + "\n\n" + text
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        tail = "".join(lines[end:])
        updated = "".join(lines[:start]) + text + ("\n" + tail if tail else "")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(updated, encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark, print the section and write it to docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--large", action="store_true", help="also run at 100k records")
    parser.add_argument("--queries", type=int, default=1000, help="questions timed per index")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args(argv)
    if not (LOCOMO.exists() and LONGMEMEVAL.exists()):
        print(f"skipped: the LoCoMo and LongMemEval files are not under {DATASETS}")
        return
    speed = []
    filler: list[MemoryRecord] = []
    for size in [10_000, 100_000] if args.large else [10_000]:
        records, questions = load_corpus(size)
        filler = filler or records
        for factory in INDEX_FACTORIES:
            got = time_index(factory, records, questions[: args.queries])
            speed.append((factory.name, size, got))
            print(factory.name, size, {k: round(v, 2) for k, v in got.items()}, flush=True)
    quality = quality_rows()
    cjk = cjk_rows(filler)
    text = section(speed, quality, cjk)
    print(text)
    if not args.no_write:
        write_docs(text)


if __name__ == "__main__":
    main()

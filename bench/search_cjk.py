"""Text without spaces: bigrams in the main FTS5 table against a second ``trigram`` table.

Part of ``bench/search.py`` (issue 4 item 2: "pick, measure, and document"). The notes of
:data:`CJK_CASES` are hidden among English records and synthetic unspaced notes; each
approach reports whether each query finds its note in the first ``k`` hits and how long
queries take. :class:`~agent_memory.search.fts.FtsIndex` uses the bigram approach.
"""

from __future__ import annotations

import random
import re
import sqlite3
import statistics
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search import fts_query
from agent_memory.search.base import Hit, document_text
from agent_memory.search.fts import FtsIndex

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _record(body: str, ref: str) -> MemoryRecord:
    return MemoryRecord.create(
        type="episode", body=body, provenance=Provenance(kind="import", ref=ref), created_at=T0
    )


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


def cjk_rows(filler: list[MemoryRecord], k: int = 10) -> list[tuple[str, dict[str, float]]]:
    """Found@10 and median latency of unspaced-text queries: bigrams in one table vs a trigram table."""
    notes = [_record(note, f"cjk/{n}") for n, (note, _) in enumerate(CJK_CASES)]
    corpus = [*filler, *_cjk_filler(len(filler)), *notes]  # notes last: LIKE returns by rowid
    makers: list[tuple[str, Callable[[], Any]]] = [
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
                hits = index.query(query, k=k)
                took[key].append((time.perf_counter() - start) * 1000)
                found[key].append(float(note.id in {hit.record_id for hit in hits}))
        result = {f"found@{k}, {key}": statistics.fmean(v) for key, v in found.items()}
        result["p50 ms, 1-2 chars"] = statistics.median(took["1 char"] + took["2 chars"])
        result["p50 ms, 3+ chars"] = statistics.median(took["3+ chars"] + took["questions"])
        rows.append((name, result))
    return rows

"""Benchmark the PostgreSQL search indexes against the SQLite ones in the same run (issue 4 item 8).

For each size: build time (``index`` of every record, 500 per transaction) and query latency
(p50, p99 over the same queries, k = 10) of PgTextIndex beside FtsIndex (the baseline), and of
PgVectorIndex (HNSW) beside VectorIndex (exact numpy cosine, the baseline), both over the
HashEmbedder (256 dimensions, so that embedding cost is small and equal on both sides). The
HNSW column also gives recall@10 against the exact top 10. Records are synthetic notes of
12–40 words drawn from a Zipf-like vocabulary of 5,000 words; queries are 2–6 such words
with question words around them.

The server is a private cluster started as the tests start it (tests/pg.py: 127.0.0.1, a free
port, ``fsync=off``), or the one ``--dsn`` names (a fresh schema is used and dropped).

Run: ``python bench/pg_search.py`` (10k records) or ``--large`` (adds 100k); the table is
printed and written to ``docs/benchmarks.md`` under ``## PostgreSQL search`` (``--no-write``
to skip).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from report import replace_section

from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.base import Hit, SearchIndex
from agent_memory.search.embedders import HashEmbedder
from agent_memory.search.fts import FtsIndex
from agent_memory.search.postgres import PgTextIndex, PgVectorIndex
from agent_memory.search.vectors import VectorIndex

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "benchmarks.md"
HEADING = "## PostgreSQL search"
QUERIES = 300
K = 10
T0 = datetime(2026, 1, 1, tzinfo=UTC)
QUESTION = ["what", "did", "the", "when", "was", "is", "about", "how", "my", "for"]


def vocabulary(size: int = 5000) -> tuple[list[str], list[float]]:
    """Return pronounceable words and Zipf weights (1/rank) for them."""
    rng = random.Random(3)  # noqa: S311 - reproducible data
    syllables = ["ka", "lo", "mi", "ten", "ra", "su", "vin", "do", "pe", "gar", "nu", "shi", "bel", "to"]
    words = sorted(
        {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(size * 2)}
    )
    rng.shuffle(words)
    words = words[:size]
    return words, [1 / (rank + 1) for rank in range(len(words))]


def make_records(count: int) -> list[MemoryRecord]:
    """Return ``count`` distinct notes of 12–40 Zipf-drawn words."""
    words, weights = vocabulary()
    rng = random.Random(7)  # noqa: S311 - reproducible data
    provenance = Provenance(kind="observation", ref="archive/2026-01-01.md#mem-2026-01-01-001")
    return [
        MemoryRecord.create(
            type="fact",
            body=f"note {i}: " + " ".join(rng.choices(words, weights, k=rng.randint(12, 40))),
            provenance=provenance,
            created_at=T0,
        )
        for i in range(count)
    ]


def make_queries(count: int) -> list[str]:
    """Return questions of 2–6 content words from the notes' vocabulary."""
    words, weights = vocabulary()
    rng = random.Random(11)  # noqa: S311 - reproducible data
    return [
        " ".join([*rng.sample(QUESTION, 2), *rng.choices(words, weights, k=rng.randint(2, 6))]) + "?"
        for _ in range(count)
    ]


@dataclass
class Figures:
    """What one index measured: build seconds, query latency percentiles (ms) and its hits."""

    build_s: float
    p50_ms: float
    p99_ms: float
    hits: list[list[Hit]]


def timed(index: SearchIndex, records: Sequence[MemoryRecord], queries: Sequence[str]) -> Figures:
    """Build ``index`` from ``records`` and time every query."""
    started = time.perf_counter()
    index.index(records)
    build_s = time.perf_counter() - started
    index.query(queries[0], k=K)  # warm caches and connections
    latencies, hits = [], []
    for query in queries:
        started = time.perf_counter()
        hits.append(index.query(query, k=K))
        latencies.append((time.perf_counter() - started) * 1000)
    cuts = statistics.quantiles(latencies, n=100)
    return Figures(build_s, cuts[49], cuts[98], hits)


def recall(found: list[list[Hit]], exact: list[list[Hit]]) -> float:
    """Return the mean share of the exact top-k ids that ``found`` also returned."""
    shares = [
        len({h.record_id for h in got} & {h.record_id for h in want}) / len(want)
        for got, want in zip(found, exact, strict=True)
        if want
    ]
    return sum(shares) / len(shares)


def run_size(size: int, dsn: str, workdir: Path) -> list[list[str]]:
    """Return the table rows for one size."""
    records, queries = make_records(size), make_queries(QUERIES)
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    rows: list[list[str]] = []
    try:
        pairs: list[tuple[str, Callable[[], SearchIndex], str, Callable[[], SearchIndex]]] = [
            (
                "FtsIndex (SQLite FTS5)",
                lambda: FtsIndex(workdir / f"fts-{size}.sqlite"),
                "PgTextIndex (tsvector + GIN)",
                lambda: PgTextIndex(dsn, schema=schema),
            ),
            (
                "VectorIndex (exact, numpy)",
                lambda: VectorIndex(workdir / f"vec-{size}.sqlite", HashEmbedder()),
                "PgVectorIndex (HNSW)",
                lambda: PgVectorIndex(dsn, HashEmbedder(), schema=schema),
            ),
        ]
        for base_name, make_base, pg_name, make_pg in pairs:
            base = timed(make_base(), records, queries)
            got = timed(make_pg(), records, queries)
            vector = "HNSW" in pg_name
            for name, figures, baseline in ((base_name, base, None), (pg_name, got, base)):
                rows.append(
                    [
                        name,
                        f"{size:,}",
                        f"{figures.build_s:.1f}",
                        f"{figures.p50_ms:.2f}",
                        f"{figures.p99_ms:.2f}",
                        "—" if baseline is None else f"{figures.p50_ms / baseline.p50_ms:.1f}×",
                        f"{recall(got.hits, base.hits):.3f}" if vector and baseline is not None else "—",
                    ]
                )
                print(" | ".join(rows[-1]), flush=True)
    finally:
        import psycopg
        from psycopg import sql

        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
    return rows


def section(rows: list[list[str]]) -> str:
    """Return the ``## PostgreSQL search`` section: how it was measured, then the table."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    header = (
        "| index | records | build s | query p50 ms | query p99 ms | p50 vs baseline | recall@10 vs exact |"
    )
    return "\n".join(
        [
            HEADING,
            "",
            "Written by `bench/pg_search.py` (`--large` adds 100k records). Synthetic notes of 12–40",
            "words from a Zipf-like 5,000-word vocabulary; 300 questions of 2–6 such words, k = 10.",
            "Each PostgreSQL index runs beside its SQLite counterpart in the same run (the baseline,",
            "the row above it); both vector indexes use the HashEmbedder (256 dimensions). The server",
            "is a private PostgreSQL cluster on 127.0.0.1 with `fsync=off`, so queries pay a TCP",
            "round trip (PgTextIndex makes two to four per query: stems, AND, then document",
            "frequencies and OR when AND finds fewer than k). HNSW recall is against the exact top 10,",
            "with pgvector's defaults (m 16, ef_construction 64, ef_search 40, raised to k + 1 when",
            "larger); the hash embedder's sparse vectors are a hard case for HNSW, and recall with a",
            "real model is not measured here. PgVectorIndex loads an empty index without its HNSW",
            "index and builds that at the end (2,000 records or more).",
            "",
            f"Machine: {os.cpu_count()} cores, {platform.system()} {platform.machine()}, Python"
            f" {platform.python_version()}; load average at the end {load}; measured"
            f" {datetime.now(UTC):%Y-%m-%d}.",
            "",
            header,
            "|---|--:|--:|--:|--:|--:|--:|",
            *("| " + " | ".join(row) + " |" for row in rows),
            "",
        ]
    )


def write_section(text: str) -> None:
    """Replace (or append) the ``## PostgreSQL search`` section of docs/benchmarks.md."""
    replace_section(HEADING, text, DOCS)


def main() -> None:
    """Parse the options, start or use a server, run the sizes, print and write the section."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="use this server instead of a private cluster")
    parser.add_argument("--large", action="store_true", help="also 100k records")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args()
    dsn = args.dsn
    if dsn is None:
        sys.path.insert(0, str(ROOT / "tests"))
        import pg

        try:
            dsn = pg.shared_cluster().dsn
        except BaseException as exc:  # pytest's skip/fail outcomes are BaseExceptions
            sys.exit(f"cannot start a private PostgreSQL cluster: {exc}")
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory() as folder:
        for size in (10_000, 100_000) if args.large else (10_000,):
            rows.extend(run_size(size, dsn, Path(folder)))
    text = section(rows)
    print(text)
    if not args.no_write:
        write_section(text)


if __name__ == "__main__":
    main()

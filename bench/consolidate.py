"""Consolidation benchmark: time of every pass at 1k and 10k records (100k with ``--large``) (issue 7 item 4).

Records are real conversation turns from ``../shared/datasets`` (LoCoMo turns, then
LongMemEval user turns; the first sentence or 300 characters of each), in an in-memory
store: 1 in 10 an episode tagged with its conversation (so promotion has groups), the rest
facts; creation times spread over a year (so decay has work). Repeated turns stay repeated
(exact dedup has work); once the turns run out they are reused with a numbered suffix.

Timed, each the median of ``--repeat`` runs: the **baseline**, reading every record and its
content terms once (what any pass over the Home costs at least), and a whole consolidation
dry run (every pass; nothing written, so each run sees the same Home). The growth exponent
is the least-squares slope of log(time) on log(records).

Usage: ``python bench/consolidate.py [--large] [--repeat R] [--no-write]``. Prints the
``## Consolidation`` section and writes it into ``docs/benchmarks.md``, leaving the others alone.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import corpus
from report import machine, replace_section

from agent_memory.jobs.consolidate import ConsolidationReport, consolidate
from agent_memory.jobs.text import content_terms
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.stores.inmemory import InMemoryStore

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
HEADING = "## Consolidation"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
_SENTENCE = re.compile(r"(?<=[.!?])\s")


def turns() -> Iterator[tuple[str, str]]:
    """Yield ``(conversation id, text)`` of every LoCoMo turn, then every LongMemEval user turn."""
    for n, sample in enumerate(corpus.locomo()):
        for key, session in sample["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                for turn in session:
                    yield f"locomo-{n}", turn["text"]
    for item in corpus.longmemeval():
        for sid, session in zip(item["haystack_session_ids"], item["haystack_sessions"], strict=False):
            for turn in session:
                if turn["role"] == "user":
                    yield f"lme-{sid}"[:40], turn["content"]


def build(count: int) -> InMemoryStore:
    """Return a store of ``count`` records made from the dataset turns."""
    store = InMemoryStore()
    made, cycle = 0, 0
    while made < count:
        for conversation, text in turns():
            body = _SENTENCE.split(text.strip(), maxsplit=1)[0][:300].strip()
            if not body:
                continue
            if cycle:
                body = f"{body} ({cycle})"
            episode = made % 10 == 0
            record = MemoryRecord.create(
                type="episode" if episode else "fact",
                body=body,
                provenance=Provenance(kind="bench", ref=f"bench:{made}"),
                created_at=T0 + timedelta(minutes=made * 5),
                confidence=0.5 + (made % 5) / 10,
                tags=(conversation,) if episode else (),
            )
            if not store.contains(record.id):
                store.put(record)
            made += 1
            if made == count:
                break
        cycle += 1
    return store


def timed(func: Callable[[], object], repeat: int) -> float:
    """Return the median seconds of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def exponent(points: list[tuple[int, float]]) -> float:
    """Return the least-squares slope of log(seconds) against log(records)."""
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def measure(count: int, repeat: int) -> tuple[int, float, float, ConsolidationReport]:
    """Build a store of ``count`` records; return (records, baseline s, consolidation s, a report)."""
    store = build(count)
    now = T0 + timedelta(days=400)
    baseline = timed(lambda: [content_terms(r.body) for r in store.list()], repeat)
    report = consolidate(store, now=now)
    seconds = timed(lambda: consolidate(store, now=now), repeat)
    return len(store.list()), baseline, seconds, report


def section(rows: list[tuple[int, float, float, ConsolidationReport]]) -> str:
    """Return the ``## Consolidation`` section."""
    table = [
        "| records | baseline ms | consolidate ms | vs. baseline | pairs compared | applied | proposals "
        "| rejections |",
        "|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for records, baseline, seconds, report in rows:
        applied = sum(1 for a in report.actions if a.action != "protect")
        table.append(
            f"| {records:,} | {baseline * 1e3:,.1f} | {seconds * 1e3:,.1f} | {seconds / baseline:.1f}× "
            f"| {report.stats['pairs']:,} | {applied:,} | {len(report.proposals):,} "
            f"| {len(report.rejections):,} |"
        )
    slope = exponent([(r[0], r[2]) for r in rows])
    base_slope = exponent([(r[0], r[1]) for r in rows])
    verdict = "meets" if slope <= 1.15 else "misses"
    return "\n".join(
        [
            HEADING,
            "",
            "Written by `bench/consolidate.py`: a whole consolidation dry run (every pass, nothing written)",
            "over records made from LoCoMo and LongMemEval turns (1 in 10 a tagged episode, a year of",
            "creation times); medians. The baseline reads every record and its content terms once.",
            "Candidates are blocked on slot keys and each record's rarest content terms (its prefix),",
            "so pairs compared grow with the Home, not with its square.",
            "",
            f"Machine: {machine()}.",
            "",
            *table,
            "",
            f"Growth exponent (least-squares slope of log time on log records): **{slope:.2f}** "
            f"({verdict} the aim of ≤ 1.15); the baseline's is {base_slope:.2f}.",
            "",
        ]
    )


def write_docs(text: str, path: Path = DOCS) -> None:
    """Replace (or append) this benchmark's section of ``docs/benchmarks.md``."""
    replace_section(HEADING, text, path)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the section and write it to docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--large", action="store_true", help="also run 100,000 records")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size (the median is shown)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args(argv)
    if not corpus.available():
        print(corpus.missing(), file=sys.stderr)
        return 0
    sizes = [1_000, 10_000, *([100_000] if args.large else [])]
    rows = []
    for count in sizes:
        rows.append(measure(count, args.repeat))
        print(f"{count:,} records: {rows[-1][2]:.3f} s", file=sys.stderr)
    text = section(rows)
    print(text)
    if not args.no_write:
        write_docs(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

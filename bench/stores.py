"""Benchmark the store adapters against the raw cost of writing the same bytes (issue 3).

For every adapter: puts per second (each record a new id, one put at a time, and SQLite in
batches with ``put_many``) and the latency of ``get`` (p50, p99 over random ids). The
baselines are measured in the same run on the same canonical bytes: plain ``sqlite3``
inserts (same pragmas: WAL, ``synchronous=FULL``) and plain file writes with ``fsync``.
The cost column is the time per put divided by the baseline's, so ``2.0×`` means twice as
slow as writing the bytes raw. Aims: SQLite batches ≥ 5,000 puts/s; the file store within
3× of raw file writes with fsync.

Run: ``python bench/stores.py`` (10k records) or ``--large`` (100k); the table is printed
and written to ``docs/benchmarks.md`` under ``## Stores`` (``--no-write`` to skip).
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from report import machine, replace_section

from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.stores.files import FileStore
from agent_memory.stores.inmemory import InMemoryStore
from agent_memory.stores.sqlite import SQLiteStore

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
HEADING = "## Stores"
BATCH = 1000
GET_SAMPLES = 2000
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class Row:
    """One line of the table: an adapter or a baseline."""

    name: str
    puts_per_s: float
    get_p50_us: float | None = None
    get_p99_us: float | None = None
    baseline: Row | None = None

    def cost(self) -> str:
        """Time per put relative to the baseline's, e.g. ``1.8× raw files``; a dash without one."""
        if self.baseline is None:
            return "—"
        return f"{self.baseline.puts_per_s / self.puts_per_s:.2f}× {self.baseline.name}"


def make_records(count: int, seed: int = 7) -> list[MemoryRecord]:
    """Return ``count`` distinct fact records of ~200-character bodies with a few tags."""
    rng = random.Random(seed)  # noqa: S311 - reproducible data, not secrecy
    words = ["agent", "memory", "note", "host", "staging", "deploy", "review", "index", "store", "query"]
    return [
        MemoryRecord.create(
            type="fact",
            body=f"Note {i}: " + " ".join(rng.choice(words) for _ in range(28)),
            provenance=Provenance(kind="observation", ref=f"archive/2026-01-01.md#mem-2026-01-01-{i:06d}"),
            created_at=T0 + timedelta(milliseconds=i),
            tags=tuple(rng.sample(words, 2)),
        )
        for i in range(count)
    ]


def get_latencies(get: Callable[[str], object], ids: Sequence[str]) -> tuple[float, float]:
    """Return the p50 and p99 latency of ``get`` in microseconds over a random sample of ``ids``."""
    sample = random.Random(11).choices(ids, k=GET_SAMPLES)  # noqa: S311 - reproducible sample
    times = []
    for record_id in sample:
        start = time.perf_counter()
        get(record_id)
        times.append((time.perf_counter() - start) * 1e6)
    cuts = statistics.quantiles(times, n=100)
    return cuts[49], cuts[98]


class RawFiles:
    """Baseline: each payload written to its own new file with ``fsync``; reads are plain reads."""

    name = "raw files + fsync"

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir()

    def put_chunk(self, chunk: Sequence[MemoryRecord]) -> None:
        """Write one file per record: create, write, fsync, close."""
        for record in chunk:
            fd = os.open(self.directory / record.id[4:], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, PAYLOADS[record.id])
            os.fsync(fd)
            os.close(fd)

    def get(self, record_id: str) -> bytes:
        """Read the file's bytes."""
        return (self.directory / record_id[4:]).read_bytes()


class RawSQLite:
    """Baseline: payloads inserted into a plain table, ``per_txn`` rows per transaction."""

    def __init__(self, path: Path, per_txn: int) -> None:
        self.name = f"raw sqlite3, {per_txn}/txn"
        self.per_txn = per_txn
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = FULL")
        self.conn.execute("CREATE TABLE records (record_id TEXT PRIMARY KEY, payload BLOB NOT NULL)")

    def put_chunk(self, chunk: Sequence[MemoryRecord]) -> None:
        """Insert the chunk's payloads, ``per_txn`` rows per ``BEGIN IMMEDIATE`` transaction."""
        for start in range(0, len(chunk), self.per_txn):
            rows = [(r.id, PAYLOADS[r.id]) for r in chunk[start : start + self.per_txn]]
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.executemany("INSERT INTO records VALUES (?, ?)", rows)
            self.conn.execute("COMMIT")

    def get(self, record_id: str) -> object:
        """Select the payload by primary key."""
        return self.conn.execute("SELECT payload FROM records WHERE record_id = ?", (record_id,)).fetchone()


class Adapter:
    """A store under test; ``batched`` uses ``put_many`` for a whole chunk."""

    def __init__(self, name: str, store: InMemoryStore | FileStore | SQLiteStore, batched: bool = False):
        self.name, self.store, self.batched = name, store, batched

    def put_chunk(self, chunk: Sequence[MemoryRecord]) -> None:
        """Put every record of the chunk (one ``put_many`` when batched)."""
        if self.batched and isinstance(self.store, SQLiteStore):
            self.store.put_many(chunk)
        else:
            for record in chunk:
                self.store.put(record)

    def get(self, record_id: str) -> object:
        """Get the latest version."""
        return self.store.get(record_id)


Contestant = RawFiles | RawSQLite | Adapter
PAYLOADS: dict[str, bytes] = {}


def race(records: Sequence[MemoryRecord], chunk: int, contestants: Sequence[Contestant]) -> list[float]:
    """Put ``records`` into every contestant, interleaved chunk by chunk; return puts/s of each.

    Interleaving makes a store and its baseline share the same disk and CPU conditions, so
    their ratio holds on a busy machine even when the absolute figures move.
    """
    seconds = [0.0] * len(contestants)
    for number, start in enumerate(range(0, len(records), chunk)):
        part = records[start : start + chunk]
        for k in range(len(contestants)):
            i = (number + k) % len(contestants)  # rotate who goes first
            start_time = time.perf_counter()
            contestants[i].put_chunk(part)
            seconds[i] += time.perf_counter() - start_time
    return [len(records) / s for s in seconds]


def run(count: int, work: Path) -> list[Row]:
    """Measure every adapter and baseline on ``count`` records in ``work``; return the rows in order."""
    records = make_records(count)
    PAYLOADS.clear()
    PAYLOADS.update((r.id, r.canonical_bytes()) for r in records)
    raw_files = RawFiles(work / "raw-files")
    raw_one, raw_batch = RawSQLite(work / "raw-one.sqlite", 1), RawSQLite(work / "raw-batch.sqlite", BATCH)
    sqlite_one, sqlite_batch = SQLiteStore(work / "one.sqlite"), SQLiteStore(work / "batch.sqlite")
    batched = Adapter(f"SQLiteStore.put_many ({BATCH}/batch)", sqlite_batch, batched=True)
    markdown = Adapter("FileStore (markdown)", FileStore(work / "notes"))
    json = Adapter("FileStore (json)", FileStore(work / "records", codec="json"))
    # (chunk, [(contestant, its baseline or None)]): contestants of one heat run interleaved.
    heats: list[tuple[int, list[tuple[Contestant, Contestant | None]]]] = [
        (count, [(Adapter("InMemoryStore", InMemoryStore()), None)]),
        (50, [(raw_files, None), (markdown, raw_files), (json, raw_files)]),
        (50, [(raw_one, None), (Adapter("SQLiteStore.put", sqlite_one), raw_one)]),
        (BATCH, [(raw_batch, None), (batched, raw_batch)]),
    ]
    ids = [r.id for r in records]
    rows: dict[str, Row] = {}
    for chunk, entries in heats:
        rates = race(records, chunk, [contestant for contestant, _ in entries])
        for (contestant, base), rate in zip(entries, rates, strict=True):
            p50, p99 = get_latencies(contestant.get, ids)
            rows[contestant.name] = Row(contestant.name, rate, p50, p99, rows[base.name] if base else None)
    for connection in (raw_one.conn, raw_batch.conn, sqlite_one, sqlite_batch):
        connection.close()
    return list(rows.values())


def table(rows: Sequence[Row]) -> str:
    """Render the rows as a Markdown table."""

    def micro(value: float | None) -> str:
        return "" if value is None else f"{value:,.0f}"

    lines = ["| store | puts/s | cost per put | get p50 µs | get p99 µs |", "|---|--:|---|--:|--:|"]
    for row in rows:
        lines.append(
            f"| {row.name} | {row.puts_per_s:,.0f} | {row.cost()} | "
            f"{micro(row.get_p50_us)} | {micro(row.get_p99_us)} |"
        )
    return "\n".join(lines)


def section(results: Sequence[tuple[int, list[Row]]]) -> str:
    """Return the whole ``## Stores`` section for ``docs/benchmarks.md``."""
    parts = [
        HEADING,
        "",
        "Written by `bench/stores.py` (`--large` adds 100k records). Each put is a new record;",
        "the cost column is the time per put divided by the baseline's, measured in the same run",
        "on the same canonical bytes (plain files written with fsync; a plain sqlite3 table with the",
        "same WAL and `synchronous=FULL` settings). Gets are of random ids from the filled store.",
        "",
        f"Machine: {machine()}.",
    ]
    for count, rows in results:
        parts += ["", f"### {count:,} records", "", table(rows)]
    return "\n".join(parts) + "\n"


def write_docs(text: str, path: Path = DOCS) -> None:
    """Replace the ``## Stores`` section of ``path`` (or add it), keeping every other section."""
    replace_section(HEADING, text, path)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the table and update ``docs/benchmarks.md``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--large", action="store_true", help="also run 100k records")
    parser.add_argument("--count", type=int, default=10_000, help="records in the base run (10000)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args(argv)
    counts = [args.count] + ([100_000] if args.large else [])
    results = []
    for count in counts:
        # BENCH_DIR picks the file system to measure (the default temp dir may be a RAM disk).
        scratch = os.environ.get("BENCH_DIR")
        with tempfile.TemporaryDirectory(prefix="agent-memory-bench-", dir=scratch) as work:
            results.append((count, run(count, Path(work))))
    text = section(results)
    print(text)
    if not args.no_write:
        write_docs(text)
        print(f"written to {DOCS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Scale benchmark: what a Home costs at 10k, 100k (and 1M) records, for each store (issue 10 item 4).

Homes are generated from realistic text (:func:`corpus.scale_texts`: the datasets' turns,
then notes of two or three of their sentences) with the mix a living Home has: 1 in 10 an
episode tagged with a topic, creation times over two years, confidence 0.5-1. Three
deployments, each measured at every size in a fresh Python process (so its peak memory is
its own):

- ``files``: the Home of DESIGN.md §3, Markdown notes + JSONL log + SQLite caches;
- ``sqlite``: :class:`SQLiteStore` + :class:`SQLiteLog` + the same SQLite indexes;
- ``postgres``: :class:`PostgresStore` + :class:`PostgresLog` + :class:`PgTextIndex` and
  :class:`PgVectorIndex` (HNSW) on a private cluster started as ``tests/pg.py`` does.

Search is BM25 beside vectors of the :class:`HashEmbedder` (384 dimensions, MiniLM's width) at every
size: search speed and memory depend on the vectors' width, not on the model, and the real model's
embedding throughput is measured separately (its time to embed each tier is given). Each
cost is paired with its baseline from the same process: remember (``Memory.remember``,
signed, deduped, logged, indexed) against the store's own ``put``; recall against the bare
index query it makes; reindex and consolidation (a dry run of every pass) against reading
every record once. Peak memory is the process's maximum resident set
(``resource.getrusage``), beside its size once the corpus is generated. Disk is the
Home's folder (and the PostgreSQL relations) divided by the records.

Usage: ``python bench/scale.py [--quick] [--with-1m] [--backends files sqlite postgres]
[--no-write]``. Prints the ``## Scale`` section, writes it into ``docs/benchmarks.md`` and the
log-log plots (cost against records, fitted exponent) into ``docs/benchmarks/``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import corpus
from report import PLOTS, ROOT, loglog_plot, replace_section
from scale_report import BACKENDS, BASELINES, HEADING, PLOTTED, aims, exponents, section

NOW = datetime(2026, 11, 1, tzinfo=UTC)
# Each timed loop stops after this many seconds once it has MINIMUM samples: a store whose
# recall reads every record must not hold the run for an hour (the table gives the count).
BUDGET_S = 30.0
MINIMUM = 3
BATCH = 500  # texts per remember_many call (its own default batch)
TOPICS = ("work", "family", "travel", "health", "hobby", "food", "money", "friends")
WIDTH = 384
"""Vector dimensions: MiniLM's, so the index and its memory are laid out as the default recipe's."""


def rss_mb() -> float:
    """Return this process's peak resident set so far, in MB.

    Linux's ``VmHWM`` first: ``ru_maxrss`` keeps the parent's size across ``fork`` + ``exec``,
    so a worker started by a parent holding the corpus would report the parent's memory.
    """
    try:
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def make_records(texts: list[tuple[str, str]], offset: int = 0) -> list[Any]:
    """Return one record per ``(text, ref)``: facts, 1 in 10 a tagged episode, two years of times."""
    from agent_memory.records.record import MemoryRecord, Provenance

    rng = random.Random(offset + 1)  # noqa: S311 - a reproducible Home, not a secret
    records = []
    for number, (text, ref) in enumerate(texts, offset):
        episode = number % 10 == 0
        records.append(
            MemoryRecord.create(
                type="episode" if episode else "fact",
                body=text,
                provenance=Provenance(kind="import", ref=ref),
                created_at=NOW - timedelta(days=730 * (1 - number / (offset + len(texts) + 1))),
                confidence=round(rng.uniform(0.5, 1.0), 4),
                tags=(TOPICS[number % len(TOPICS)],) if episode else (),
            )
        )
    return records


def timed(action: Callable[[], object]) -> float:
    """Return the seconds ``action`` takes."""
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def timed_cpu(action: Callable[[], object]) -> tuple[float, float]:
    """Return the seconds ``action`` takes and the CPU seconds this process spent on it."""
    started, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - started, time.process_time() - cpu


def bounded(items: list[Any], action: Callable[[Any], object]) -> float:
    """Call ``action`` per item until :data:`BUDGET_S` is spent (at least :data:`MINIMUM`); return calls/s."""
    return bounded_cpu(items, action)[0]


def bounded_cpu(items: list[Any], action: Callable[[Any], object], *, weight: int = 1) -> tuple[float, float]:
    """As :func:`bounded`; return (items/s, CPU ms per item), each call worth ``weight`` items.

    The CPU time (this process's, user + system) is what a write costs whatever else the
    machine runs; the rate also holds the waits (fsync, other processes on the cores).
    """
    started, cpu = time.perf_counter(), time.process_time()
    done = 0
    for item in items:
        action(item)
        done += weight
        if done >= MINIMUM * weight and time.perf_counter() - started > BUDGET_S:
            break
    return done / (time.perf_counter() - started), (time.process_time() - cpu) * 1000 / max(done, 1)


def percentile(values: list[float], fraction: float) -> float:
    """Return the nearest-rank ``fraction`` (0-1) percentile of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def folder_bytes(path: Path) -> int:
    """Return the bytes of every file under ``path``."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


# ---------------------------------------------------------------------- one tier, in its own process


def open_backend(
    backend: str, work: Path, dsn: str | None, records: list[Any]
) -> tuple[Any, Callable[[], int]]:
    """Fill ``backend`` with ``records`` the fast way and return a Memory over it and a disk meter."""
    from agent_memory.home import Home
    from agent_memory.memory import Memory
    from agent_memory.recall.salience import Salience
    from agent_memory.search.catalog import IndexCatalog
    from agent_memory.search.embedders import HashEmbedder
    from agent_memory.write.dedup import WriteKeys

    home = Home.init(work / "home", timezone="UTC", key_file=work / "bench.key", git=False, now=NOW)
    identity = home.identity()
    corpus.signed(records, identity)
    salience = Salience(home.cache_dir / "salience.json")
    if backend == "files":
        corpus.write_notes(home.root / "notes", records)
        store = home.store()
        catalog = IndexCatalog.for_home(home.cache_dir, store, embedder=HashEmbedder(WIDTH))
        keys = WriteKeys.for_home(home.cache_dir, store, read_all=catalog.readable_records)
        memory = Memory(  # as Memory.open builds it, with the hash vectors
            store,
            home.log(),
            catalog,
            identity=identity,
            salience=salience,
            writer_lock=home.writer_lock,
            write_keys=keys,
            home=home,
        )
        return memory, lambda: folder_bytes(home.root)
    if backend == "sqlite":
        from agent_memory.log.sqlite import SQLiteLog
        from agent_memory.stores.sqlite import SQLiteStore

        store = SQLiteStore(work / "store.sqlite")
        for start in range(0, len(records), 1000):
            store.put_many(records[start : start + 1000])
        catalog = IndexCatalog.for_home(home.cache_dir, store, embedder=HashEmbedder(WIDTH))
        memory = Memory(store, SQLiteLog(work / "log.sqlite"), catalog, identity=identity, salience=salience)
        return memory, lambda: folder_bytes(work) - folder_bytes(home.root / "notes")
    assert dsn is not None
    from agent_memory.log.postgres import PostgresLog
    from agent_memory.search.pg_vectors import PgVectorIndex
    from agent_memory.search.postgres import PgTextIndex
    from agent_memory.stores.postgres import PostgresStore

    base = f"scale_{uuid.uuid4().hex[:10]}"
    schemas = [f"{base}_store", f"{base}_log", f"{base}_idx"]
    store = PostgresStore(dsn, schema=schemas[0])
    for start in range(0, len(records), 1000):  # one transaction per thousand (put_many)
        store.put_many(records[start : start + 1000])
    indexes = {
        "bm25": PgTextIndex(dsn, schema=schemas[2], name="fulltext"),
        "vectors": PgVectorIndex(dsn, HashEmbedder(WIDTH), schema=schemas[2], name="vectors"),
    }
    catalog = IndexCatalog(store, indexes, folder=home.cache_dir / "indexes")
    memory = Memory(store, PostgresLog(dsn, schema=schemas[1]), catalog, identity=identity, salience=salience)
    return memory, lambda: pg_bytes(dsn, schemas) + folder_bytes(home.cache_dir)


def pg_bytes(dsn: str, schemas: list[str]) -> int:
    """Return the bytes of every relation (tables, indexes, TOAST) in ``schemas``."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ANY(%s) AND c.relkind = 'r'",
            (schemas,),
        ).fetchone()
    return int(row[0]) if row else 0


def measure_tier(
    backend: str, size: int, dsn: str | None, data: Path, writes: int, batched: int = 0
) -> dict[str, Any]:
    """Build one Home of ``size`` records on ``backend`` and measure it (see the module docstring).

    ``data`` holds ``texts.jsonl`` (``[text, ref]`` per line, at least ``size + 2 * writes +
    batched``) and ``questions.json``, written by the parent so this process never loads the
    datasets. ``batched`` texts go through ``remember_many`` after the single remembers.
    """
    from agent_memory.jobs.consolidate import consolidate
    from agent_memory.jobs.text import content_terms

    wanted = size + 2 * writes + batched
    with (data / "texts.jsonl").open(encoding="utf-8") as lines:
        texts = [tuple(json.loads(line)) for _, line in zip(range(wanted), lines, strict=False)]
    extra = texts[size + 2 * writes :]
    texts = texts[: size + 2 * writes]
    records, spare = make_records(texts[:size]), make_records(texts[size:], offset=size)
    asked = json.loads((data / "questions.json").read_text(encoding="utf-8"))
    corpus_mb = rss_mb()
    out: dict[str, Any] = {"backend": backend, "size": size, "corpus_rss_mb": corpus_mb}
    out["measured"] = datetime.now(UTC).date().isoformat()  # a row kept by --merge says when
    with tempfile.TemporaryDirectory(prefix="am-scale-", dir=os.environ.get("BENCH_DIR")) as folder:
        work = Path(folder)
        os.environ["XDG_CONFIG_HOME"] = str(work / "config")
        started = time.perf_counter()
        memory, disk = open_backend(backend, work, dsn, records)
        out["fill_per_s"] = size / (time.perf_counter() - started)
        # The generated corpus is the benchmark's, not the Home's: a process over this Home
        # holds none of it, and every full collection of the garbage collector would walk it
        # (one of them during a timed loop added 0.13 ms per remember at 100k).
        del records, texts
        gc.collect()
        store = memory.store
        out["list_s"], out["list_cpu_s"] = timed_cpu(store.list)
        out["reindex_s"], out["reindex_cpu_s"] = timed_cpu(memory.catalog.rebuild)
        for question in asked[:10]:  # warm caches and connections
            memory.recall(question, now=NOW)
        bare, recall = [], []
        deadline = time.perf_counter() + BUDGET_S
        for question in asked:
            bare.append(timed(lambda q=question: memory.catalog.query(q, k=32)) * 1000)
            recall.append(timed(lambda q=question: memory.recall(q, now=NOW)) * 1000)
            if len(recall) >= MINIMUM and time.perf_counter() > deadline:
                break
        out |= {
            "queries": len(recall),
            "bare_p50_ms": statistics.median(bare),
            "bare_p99_ms": percentile(bare, 0.99),
            "recall_p50_ms": statistics.median(recall),
            "recall_p99_ms": percentile(recall, 0.99),
        }
        stamp = NOW + timedelta(days=1)
        out["put_per_s"] = bounded(spare[:writes], store.put)
        first = spare[writes]  # the first write of a process builds the dedup maps: timed apart
        out["first_remember_s"] = timed(
            lambda: memory.remember(first.body, source=first.provenance.ref, now=stamp)
        )
        out["remember_per_s"], out["remember_cpu_ms"] = bounded_cpu(
            spare[writes + 1 :], lambda r: memory.remember(r.body, source=r.provenance.ref, now=stamp)
        )
        if extra:  # remember_many in its batches, as an import writes (issue 23)
            chunks = [
                [{"text": text, "source": ref} for text, ref in extra[i : i + BATCH]]
                for i in range(0, len(extra), BATCH)
            ]
            refused: list[int] = []

            def many(chunk: list[dict[str, str]]) -> None:
                results = memory.remember_many(chunk, clean=True, now=stamp, batch=BATCH)
                refused.append(sum(isinstance(r, Exception) for r in results))

            out["many_per_s"], out["many_cpu_ms"] = bounded_cpu(chunks, many, weight=BATCH)
            out["many_refused"] = sum(refused)
        out["terms_s"], out["terms_cpu_s"] = timed_cpu(lambda: [content_terms(r.body) for r in store.list()])
        report = None

        def dry_run() -> None:
            nonlocal report
            report = consolidate(store, now=NOW + timedelta(days=30))

        out["consolidate_s"], out["consolidate_cpu_s"] = timed_cpu(dry_run)
        out["pairs"] = report.stats.get("pairs", 0) if report is not None else 0
        memory.close()
        out["disk_per_record"] = disk() / (size + 2 * writes)
    out["peak_rss_mb"] = rss_mb()
    return out


# ---------------------------------------------------------------------- the run


def embedding_rates(texts: list[str]) -> dict[str, float]:
    """Return texts per second of the hash embedder and of MiniLM (when installed) on ``texts``."""
    from agent_memory.search.embedders import HashEmbedder, MiniLMEmbedder

    rates: dict[str, float] = {}
    embedders: dict[str, Any] = {"HashEmbedder (256)": HashEmbedder()}
    try:
        embedders["MiniLM int8 (384)"] = MiniLMEmbedder()
    except ImportError as exc:
        print(f"MiniLM throughput not measured: {exc}", file=sys.stderr)
    for name, embedder in embedders.items():
        embedder.embed(texts[:32])
        seconds = min(timed(lambda e=embedder: e.embed(texts)) for _ in range(2))
        rates[name] = len(texts) / seconds
    return rates


def start_postgres() -> tuple[str | None, str]:
    """Return a private cluster's DSN and a note, or ``None`` and why there is none."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        import pg

        return pg.shared_cluster().dsn, ""
    except BaseException as exc:  # pytest's skip/fail outcomes are BaseExceptions
        return None, f"PostgreSQL not measured: {exc}"


def run_tier(
    backend: str, size: int, dsn: str | None, data: Path, writes: int, batched: int = 0
) -> dict[str, Any]:
    """Run :func:`measure_tier` in a fresh interpreter; return its figures or ``{"error": …}``."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [sys.executable, __file__, "--worker", backend, str(size), "--out", out.name]
        command += ["--data", str(data), "--writes", str(writes), "--batched", str(batched)]
        command += ["--dsn", dsn] if dsn else []
        done = subprocess.run(command, check=False, capture_output=True, text=True)
        if done.returncode != 0:
            return {"backend": backend, "size": size, "error": done.stderr.strip().splitlines()[-1:]}
        result: dict[str, Any] = json.loads(Path(out.name).read_text(encoding="utf-8"))
        return result


def publish(run: dict[str, Any], *, write: bool) -> None:
    """Print the section of a run (``{rows, rates, setup}``); if ``write``, also write it, plots and JSON."""
    rows, rates = run["rows"], run["rates"]
    for row in rows:
        if "error" not in row:
            row["remember_ms"] = 1000 / row["remember_per_s"]
            row["put_ms"] = 1000 / row["put_per_s"]
    notes = aims(rows) + exponents(rows) + run.get("setup", [])
    plots = []
    if write:
        PLOTS.mkdir(parents=True, exist_ok=True)
        for key, label in PLOTTED:
            series = {
                b: [(r["size"], r[key]) for r in rows if r["backend"] == b and "error" not in r]
                for b in BACKENDS
            }
            if key in BASELINES:
                base, what = BASELINES[key]
                for b in BACKENDS:
                    points = [(r["size"], r[base]) for r in rows if r["backend"] == b and "error" not in r]
                    series[f"{b}, baseline: {what}"] = points
            name = f"scale-{key.removesuffix('_s').removesuffix('_ms').replace('_', '-')}.png"
            loglog_plot(PLOTS / name, f"{label} against records", label, series)
            plots.append(name)
    text = section(rows, rates, notes, plots)
    print(text)
    if write:
        (PLOTS / "scale.json").write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")
        replace_section(HEADING, text)


def main(argv: list[str] | None = None) -> int:
    """Run every store at every size, print the section, write it and the plots unless ``--no-write``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k and 2k records, fewer questions")
    parser.add_argument("--with-1m", action="store_true", help="also 1,000,000 records")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument("--sizes", nargs="+", type=int, help="run these sizes instead (e.g. 1000000)")
    parser.add_argument(
        "--merge", action="store_true", help="keep the saved rows of sizes and stores this run leaves out"
    )
    parser.add_argument("--no-write", action="store_true", help="print only; leave the docs alone")
    parser.add_argument(
        "--replot", action="store_true", help="rewrite the section and plots from docs/benchmarks/scale.json"
    )
    parser.add_argument("--worker", nargs=2, metavar=("BACKEND", "SIZE"), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--dsn", help="a PostgreSQL server to use instead of a private cluster")
    parser.add_argument("--queries", type=int, default=300, help="questions asked per tier")
    parser.add_argument("--writes", type=int, default=300, help="remembers (and puts) per tier")
    parser.add_argument(
        "--batched", type=int, default=10_000, help="texts per tier written by remember_many (0: none)"
    )
    args = parser.parse_args(argv)
    if args.worker:
        result = measure_tier(
            args.worker[0], int(args.worker[1]), args.dsn, Path(args.data), args.writes, args.batched
        )
        Path(args.out).write_text(json.dumps(result), encoding="utf-8")
        return 0
    if args.replot:
        saved = json.loads((PLOTS / "scale.json").read_text(encoding="utf-8"))
        publish(saved, write=True)
        return 0
    if not corpus.available():
        print(corpus.missing())
        return 0
    sizes = [1_000, 2_000] if args.quick else [10_000, 100_000] + ([1_000_000] if args.with_1m else [])
    sizes = args.sizes or sizes
    queries, writes = (20, 20) if args.quick else (args.queries, args.writes)
    batched = min(args.batched, 1_000) if args.quick else args.batched
    data = Path(tempfile.mkdtemp(prefix="am-scale-data-"))
    with (data / "texts.jsonl").open("w", encoding="utf-8") as out:
        for pair in corpus.scale_texts(max(sizes) + 2 * writes + batched):
            out.write(json.dumps(pair) + "\n")
    (data / "questions.json").write_text(json.dumps(corpus.questions()[:queries]), encoding="utf-8")
    setup: list[str] = []
    dsn = args.dsn
    if "postgres" in args.backends and dsn is None:
        dsn, why = start_postgres()
        setup += [f"- {why}"] if why else []
    rows = []
    for size in sizes:
        for backend in args.backends:
            if backend == "postgres" and dsn is None:
                continue
            rows.append(run_tier(backend, size, dsn, data, writes, batched))
            print(json.dumps(rows[-1]), flush=True)
    rates = embedding_rates([text for text, _ in corpus.scale_texts(512)])
    saved = PLOTS / "scale.json"
    if args.merge and saved.is_file():
        ran = {(r["backend"], r["size"]) for r in rows}
        kept = [
            r
            for r in json.loads(saved.read_text(encoding="utf-8"))["rows"]
            if (r["backend"], r["size"]) not in ran
        ]
        rows = sorted(kept + rows, key=lambda r: (r["size"], BACKENDS.index(r["backend"])))
        if kept:
            sizes_kept = ", ".join(f"{n:,}" for n in sorted({r["size"] for r in kept}))
            stores_kept = ", ".join(b for b in BACKENDS if any(r["backend"] == b for r in kept))
            dates = ", ".join(sorted({r.get("measured", "an earlier day") for r in kept}))
            setup.append(
                f"- The {stores_kept} rows ({sizes_kept} records) come from an earlier run of this script"
                f" ({dates}; kept by `--merge`; a column a run did not measure yet shows —); each row's"
                " baselines come from its own process."
            )
    publish({"rows": rows, "rates": rates, "setup": setup}, write=not args.no_write)
    shutil.rmtree(data, ignore_errors=True)
    failed = [r for r in rows if "error" in r]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""PostgreSQL recall: ``Memory.recall`` over a PostgreSQL store beside SQLite, in the same run (issue 23).

One Home's records (the scale benchmark's: :func:`corpus.scale_texts`, 1 in 10 a tagged
episode, two years of creation times) are held twice: in a :class:`PostgresStore` +
:class:`PostgresLog` with :class:`PgTextIndex` and :class:`PgVectorIndex` (HNSW), and in a
:class:`SQLiteStore` + :class:`SQLiteLog` with :class:`FtsIndex` and :class:`VectorIndex`
(the baseline). Both vector indexes use the :class:`HashEmbedder` (256 dimensions). Two
recipes are asked of each: the full-text index alone (what ``agent_memory.connect`` opens
over a database) and full text beside vectors (what the scale benchmark's ``postgres`` row
measured). Each question is asked twice, interleaved: the bare index query recall makes
(``catalog.query``, k = 100) and the whole ``Memory.recall`` (budget 2,000 tokens). The
server round trips of each PostgreSQL recall are counted (every wait of psycopg's
connection: one per statement, ``BEGIN`` and ``COMMIT``).

The server is a private cluster started as the tests start it (``tests/pg.py``), or the one
``--dsn`` names. ``--keep DIR`` keeps what a run builds (the SQLite files, the Home, the
PostgreSQL schemas' names) in ``DIR`` and reuses it next time, so a 100k Home is built once
(about 10 minutes on 2 cores); without it everything is built in a temporary folder and
fresh schemas that are dropped at the end. ``--profile N`` prints the cProfile of N
PostgreSQL recalls per recipe (to stderr; not written to the docs).

Usage: ``python bench/pg_recall.py [--large] [--dsn DSN --keep DIR] [--profile N] [--no-write]``
(``--from-rows FILE`` rewrites the section from the JSON rows a run printed);
prints the ``## PostgreSQL recall`` section and writes it into ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import corpus
from report import ROOT, machine, replace_section
from scale import NOW, make_records, percentile

HEADING = "## PostgreSQL recall"
WARM = 10
RECIPES = {"text": ("fulltext",), "text + vectors": ("fulltext", "vectors")}


@contextmanager
def round_trips() -> Iterator[list[int]]:
    """Count psycopg's waits on the server (one per statement, ``BEGIN`` and ``COMMIT``) in the block."""
    import psycopg

    count = [0]
    original = psycopg.Connection.wait

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return original(self, *args, **kwargs)

    psycopg.Connection.wait = counted  # type: ignore[method-assign]
    try:
        yield count
    finally:
        psycopg.Connection.wait = original  # type: ignore[method-assign]


def open_postgres(dsn: str, base: str, home: Any, folder: Path) -> Any:
    """Return a Memory over the PostgreSQL schemas ``<base>_store``, ``_log``, ``_idx``."""
    from agent_memory.log.postgres import PostgresLog
    from agent_memory.memory import Memory
    from agent_memory.recall.salience import Salience
    from agent_memory.search.catalog import IndexCatalog
    from agent_memory.search.embedders import HashEmbedder
    from agent_memory.search.pg_vectors import PgVectorIndex
    from agent_memory.search.postgres import PgTextIndex
    from agent_memory.stores.postgres import PostgresStore

    store = PostgresStore(dsn, schema=f"{base}_store")
    indexes = {
        "fulltext": PgTextIndex(dsn, schema=f"{base}_idx", name="fulltext"),
        "vectors": PgVectorIndex(dsn, HashEmbedder(), schema=f"{base}_idx", name="vectors"),
    }
    catalog = IndexCatalog(store, indexes, folder=folder)
    log = PostgresLog(dsn, schema=f"{base}_log")
    salience = Salience(folder / "salience.json")
    return Memory(store, log, catalog, identity=home.identity(), salience=salience)


def open_sqlite(work: Path, home: Any) -> Any:
    """Return a Memory over ``work/store.sqlite`` and ``work/log.sqlite`` with SQLite indexes."""
    from agent_memory.log.sqlite import SQLiteLog
    from agent_memory.memory import Memory
    from agent_memory.recall.salience import Salience
    from agent_memory.search.catalog import IndexCatalog
    from agent_memory.search.embedders import HashEmbedder
    from agent_memory.search.fts import FtsIndex
    from agent_memory.search.vectors import VectorIndex
    from agent_memory.stores.sqlite import SQLiteStore

    store = SQLiteStore(work / "store.sqlite")
    folder = work / "indexes"
    for sub in ("fulltext", "vectors"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    indexes = {
        "fulltext": FtsIndex(folder / "fulltext" / "index.sqlite", name="fulltext"),
        "vectors": VectorIndex(folder / "vectors" / "index.sqlite", HashEmbedder(), name="vectors"),
    }
    catalog = IndexCatalog(store, indexes, folder=folder)
    salience = Salience(work / "salience.json")
    return Memory(store, SQLiteLog(work / "log.sqlite"), catalog, identity=home.identity(), salience=salience)


def build(size: int, work: Path, dsn: str) -> tuple[Any, Any, dict[str, float]]:
    """Return Memories over PostgreSQL and SQLite holding ``size`` records, built in ``work`` or reused."""
    from agent_memory.home import Home
    from agent_memory.stores.postgres import PostgresStore
    from agent_memory.stores.sqlite import SQLiteStore

    work.mkdir(parents=True, exist_ok=True)
    built: dict[str, float] = {}
    home_dir = work / "home"
    home = (
        Home.open(home_dir)
        if home_dir.is_dir()
        else Home.init(home_dir, timezone="UTC", key_file=work / "bench.key", git=False, now=NOW)
    )
    state = work / "pg.json"
    saved = json.loads(state.read_text(encoding="utf-8")) if state.is_file() else {}
    records = None
    if (
        saved.get("dsn") != dsn
        or saved.get("size") != size
        or not saved.get("signed")
        or not (work / "sqlite" / "store.sqlite").is_file()
    ):
        records = corpus.signed(make_records(list(corpus.scale_texts(size))), home.identity())
        shutil.rmtree(work / "sqlite", ignore_errors=True)
        shutil.rmtree(work / "pg", ignore_errors=True)
        (work / "sqlite").mkdir()
        (work / "pg").mkdir()
        started = time.perf_counter()
        sqlite_store = SQLiteStore(work / "sqlite" / "store.sqlite")
        for start in range(0, size, 1000):
            sqlite_store.put_many(records[start : start + 1000])
        sqlite_store.close()
        built["sqlite_fill_s"] = time.perf_counter() - started
        base = f"pgrecall_{uuid.uuid4().hex[:10]}"
        started = time.perf_counter()
        with PostgresStore(dsn, schema=f"{base}_store") as pg_store:
            for start in range(0, len(records), 1000):  # as the SQLite fill: put_many
                pg_store.put_many(records[start : start + 1000])
        built["postgres_fill_s"] = time.perf_counter() - started
        saved = {"dsn": dsn, "size": size, "base": base, "signed": True}
    for name in ("salience.json",):  # every run starts with no touches, so rankings repeat
        (work / "sqlite" / name).unlink(missing_ok=True)
        (work / "pg" / name).unlink(missing_ok=True)
    pg_memory = open_postgres(dsn, saved["base"], home, work / "pg")
    sqlite_memory = open_sqlite(work / "sqlite", home)
    for label, memory in (("postgres", pg_memory), ("sqlite", sqlite_memory)):
        started = time.perf_counter()
        with memory.catalog.using(("fulltext", "vectors")):
            changed = memory.catalog.refresh()
        if changed:
            built[f"{label}_index_s"] = time.perf_counter() - started
    state.write_text(json.dumps(saved), encoding="utf-8")
    return pg_memory, sqlite_memory, built


def timed_ms(action: Callable[[], object]) -> float:
    """Return the milliseconds ``action`` takes."""
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def measure(memory: Any, names: tuple[str, ...], questions: list[str], *, count: bool) -> dict[str, Any]:
    """Return p50/p99 of the bare query and of recall over ``questions``, and round trips per recall."""
    from agent_memory.recall.select import CANDIDATES_PER_INDEX

    bare, recall, trips, returned = [], [], [], []
    with memory.catalog.using(names):
        for question in questions[:WARM]:
            memory.recall(question, now=NOW)
        for question in questions:
            bare.append(timed_ms(lambda q=question: memory.catalog.query(q, k=CANDIDATES_PER_INDEX)))
            with round_trips() as counted:
                started = time.perf_counter()
                result = memory.recall(question, now=NOW)
                recall.append((time.perf_counter() - started) * 1000)
            trips.append(counted[0])
            returned.append(len(result.records))
    return {
        "questions": len(recall),
        "bare_p50": statistics.median(bare),
        "bare_p99": percentile(bare, 0.99),
        "recall_p50": statistics.median(recall),
        "recall_p99": percentile(recall, 0.99),
        "recall_mean": statistics.fmean(recall),
        "trips": statistics.fmean(trips) if count else None,
        "returned": statistics.fmean(returned),
    }


def profile(memory: Any, names: tuple[str, ...], questions: list[str]) -> None:
    """Print the cProfile of recalls of ``questions`` with ``names`` to stderr."""
    with memory.catalog.using(names):
        profiler = cProfile.Profile()
        profiler.enable()
        for question in questions:
            memory.recall(question, now=NOW)
        profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(40)
    print(f"--- profile of {len(questions)} PostgreSQL recalls, {' + '.join(names)}", file=sys.stderr)
    print(out.getvalue(), file=sys.stderr)


def section(rows: list[dict[str, Any]], built: dict[int, dict[str, float]]) -> str:
    """Return the ``## PostgreSQL recall`` section for the measured rows."""
    lines = [
        HEADING,
        "",
        "Written by `bench/pg_recall.py` (`--large` adds 100k records). The scale benchmark's records",
        "(the datasets' turns, then notes of two or three of their sentences) held in PostgreSQL",
        "(`PostgresStore`, `PostgresLog`, `PgTextIndex`, `PgVectorIndex` with HNSW; a private local",
        "cluster, `fsync=off`, over TCP) and, as the baseline in the same run, in SQLite (`SQLiteStore`,",
        "`SQLiteLog`, `FtsIndex`, exact `VectorIndex`); vectors from the HashEmbedder (256 dimensions).",
        "*text* is the full-text index alone (what `agent_memory.connect` opens over a database), *text +",
        "vectors* both, fused by recall (the scale benchmark's `postgres` row). Each question is asked",
        "twice, interleaved: the bare index query (`catalog.query`, k = 100) and `Memory.recall`",
        "(budget 2,000 tokens). *Round trips* counts each PostgreSQL recall's waits on the server",
        "(one per statement, `BEGIN` and `COMMIT`).",
        "",
        machine(),
        "",
        "| store | recipe | records | questions | bare p50 / p99 ms | recall p50 / p99 ms | recall mean ms"
        " | p50 vs SQLite | round trips per recall | records returned |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    baseline = {(r["recipe"], r["size"]): r for r in rows if r["store"] == "sqlite"}
    for r in rows:
        base = baseline.get((r["recipe"], r["size"]))
        ratio = (
            "—" if r["store"] == "sqlite" or base is None else f"{r['recall_p50'] / base['recall_p50']:.2f}×"
        )
        trips = "—" if r["trips"] is None else f"{r['trips']:.1f}"
        lines.append(
            f"| {r['store']} | {r['recipe']} | {r['size']:,} | {r['questions']} |"
            f" {r['bare_p50']:.1f} / {r['bare_p99']:.1f} | {r['recall_p50']:.1f} / {r['recall_p99']:.1f} |"
            f" {r['recall_mean']:.1f} | {ratio} | {trips} | {r['returned']:.1f} |"
        )
    lines.append("")
    for r in rows:
        if r["store"] == "postgres" and r["size"] >= 100_000:
            verdict = "met" if r["recall_p50"] <= 20 else "not met"
            lines.append(
                f"- Aim (issue 23): PostgreSQL recall p50 ≤ 20 ms at 100k, **{r['recipe']}**:"
                f" {r['recall_p50']:.1f} ms ({verdict})."
            )
    for size, figures in sorted(built.items()):
        if figures:
            done = ", ".join(
                f"{k.removesuffix('_s').replace('_', ' ')} {v:.0f} s" for k, v in figures.items()
            )
            lines.append(f"- Built for {size:,} records in this run: {done}.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Build or reuse the stores, time recall on both, print the section and write it unless told not to."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--large", action="store_true", help="also 100,000 records")
    parser.add_argument("--sizes", nargs="+", type=int, help="these sizes instead (e.g. 1000)")
    parser.add_argument("--queries", type=int, default=300, help="questions asked per recipe")
    parser.add_argument("--dsn", help="a PostgreSQL server to use instead of a private cluster")
    parser.add_argument("--keep", type=Path, help="build into this folder and reuse what it holds")
    parser.add_argument("--profile", type=int, default=0, help="print a profile of this many recalls")
    parser.add_argument("--no-write", action="store_true", help="print only; leave the docs alone")
    parser.add_argument("--from-rows", type=Path, help="rewrite the section from the JSON rows a run printed")
    args = parser.parse_args(argv)
    if args.from_rows:
        lines = args.from_rows.read_text(encoding="utf-8").splitlines()
        saved = [json.loads(line) for line in lines if line.startswith("{")]
        text = section(saved, {})
        print(text)
        if not args.no_write:
            replace_section(HEADING, text)
        return 0
    if not corpus.available():
        print(corpus.missing())
        return 0
    dsn = args.dsn
    if dsn is None:
        sys.path.insert(0, str(ROOT / "tests"))
        try:
            import pg

            dsn = pg.shared_cluster().dsn
        except BaseException as exc:  # pytest's skip/fail outcomes are BaseExceptions
            print(f"PostgreSQL not measured: {exc}")
            return 0
    sizes = args.sizes or ([10_000, 100_000] if args.large else [10_000])
    questions = corpus.questions()[: args.queries]
    rows: list[dict[str, Any]] = []
    built: dict[int, dict[str, float]] = {}
    scratch = None if args.keep else Path(tempfile.mkdtemp(prefix="am-pg-recall-"))
    root = args.keep or scratch
    assert root is not None
    try:
        for size in sizes:
            pg_memory, sqlite_memory, built[size] = build(size, root / f"{size}", dsn)
            try:
                for recipe, names in RECIPES.items():
                    for store, memory in (("sqlite", sqlite_memory), ("postgres", pg_memory)):
                        figures = measure(memory, names, questions, count=store == "postgres")
                        rows.append({"store": store, "recipe": recipe, "size": size} | figures)
                        print(json.dumps(rows[-1]), flush=True)
                    if args.profile:
                        profile(pg_memory, names, questions[: args.profile])
            finally:
                pg_memory.close()
                sqlite_memory.close()
            if scratch is not None:
                drop_schemas(dsn, root / f"{size}")
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    text = section(rows, built)
    print(text)
    if not args.no_write:
        replace_section(HEADING, text)
    return 0


def drop_schemas(dsn: str, work: Path) -> None:
    """Drop the PostgreSQL schemas a run without ``--keep`` made in ``work``."""
    import psycopg
    from psycopg import sql

    base = json.loads((work / "pg.json").read_text(encoding="utf-8"))["base"]
    with psycopg.connect(dsn, autocommit=True) as conn:
        for suffix in ("store", "log", "idx"):
            conn.execute(
                sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(f"{base}_{suffix}"))
            )


if __name__ == "__main__":
    sys.exit(main())

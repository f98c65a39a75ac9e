"""Recall path benchmark: what ``Memory.recall`` costs after its index query, before and after (issue 23).

Recall is the bare index query (``catalog.query``) plus its read path: the freshness check,
reading the versions it returns (about 70 per recall with BM25 beside vectors), the
withdrawal gate and review states (log reads), scoring, the budget and the salience sidecar.
This benchmark measures that read path on the Homes of ``bench/scale.py`` (the same generator,
HashEmbedder vectors) for each store, with two variants in the same process, question by
question, in alternating order:

- **before**: the read path as it was before session 10 (issue 23), restored by
  :func:`before_patches`: no index gives recall its cards, so recall reads and verifies
  every candidate (about 200 per recall) to rank it;
- **after**: the library as it is.

Both variants recall the same questions from the same Memory; the first questions are also
recalled without salience touches under both variants and the results compared (they must be
identical). Usage: ``python bench/recall_path.py [--sizes 10000 100000] [--backends files sqlite
postgres] [--work DIR] [--quick] [--no-write]``; ``--work`` keeps the generated Homes for the
next run; ``--quick`` measures 1,000 records and 40 questions.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import corpus
from report import machine, replace_section
from scale import NOW, make_records, percentile, start_postgres

from agent_memory.recall.select import CANDIDATES_PER_INDEX

HEADING = "## Recall path"
BUDGET_S = 40.0  # per store and size: questions stop after this once MINIMUM are asked
MINIMUM = 20
CHECKED = 20  # questions whose results are compared across the variants


# ---------------------------------------------------------------------- the "before" read path


def _no_cards(self: Any, record_ids: Any) -> None:
    """``IndexCatalog.cards`` of an index that keeps none: recall reads every candidate."""
    return None


def before_patches() -> list[tuple[Any, str, Any]]:
    """Return ``(class, attribute, value)`` that restore the read path before session 10."""
    from agent_memory.search.catalog import IndexCatalog

    return [(IndexCatalog, "cards", _no_cards)]


@contextmanager
def patched(patches: list[tuple[Any, str, Any]]) -> Iterator[None]:
    """Apply ``patches`` to their classes for the block, then put every original back."""
    saved = [(cls, name, cls.__dict__.get(name, _ABSENT)) for cls, name, _ in patches]
    for cls, name, value in patches:
        setattr(cls, name, value)
    try:
        yield
    finally:
        for cls, name, value in saved:
            if value is _ABSENT:
                delattr(cls, name)
            else:
                setattr(cls, name, value)


_ABSENT = object()


# ---------------------------------------------------------------------- where recall's time goes


class Meter:
    """Seconds spent in a few methods, measured by class-level wrappers (bound methods stay bound)."""

    PARTS = ("reads", "log", "salience")

    def __init__(self) -> None:
        self.spent = dict.fromkeys(self.PARTS, 0.0)

    def wrap(self, cls: Any, name: str, part: str) -> tuple[Any, str, Any]:
        """Return a patch that times ``cls.name`` (as found when applied) into ``part``."""
        original = getattr(cls, name)
        spent = self.spent

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent[part] += time.perf_counter() - started

        return (cls, name, timed)

    def reset(self) -> dict[str, float]:
        """Return the milliseconds spent per part since the last reset, and start again."""
        spent = {part: seconds * 1000 for part, seconds in self.spent.items()}
        self.spent.update(dict.fromkeys(self.PARTS, 0.0))
        return spent


def meter_patches(meter: Meter, memory: Any) -> list[tuple[Any, str, Any]]:
    """Time the store reads, the log head reads and the salience touches of ``memory``."""
    from agent_memory.recall.salience import Salience

    store = type(memory.store)
    patches = [meter.wrap(store, "get", "reads"), meter.wrap(type(memory.log), "last", "log")]
    if getattr(store, "get_many", None) is not None:
        patches.append(meter.wrap(store, "get_many", "reads"))
    return [*patches, meter.wrap(Salience, "touch", "salience")]


# ---------------------------------------------------------------------- the Homes


def open_memory(backend: str, size: int, work: Path, dsn: str | None) -> Any:
    """Return a Memory over a ``size``-record Home of ``backend`` under ``work`` (built once, reused)."""
    from agent_memory.home import Home
    from agent_memory.memory import Memory
    from agent_memory.recall.salience import Salience
    from agent_memory.search.catalog import IndexCatalog
    from agent_memory.search.embedders import HashEmbedder

    folder = work / f"{backend}-{size}"
    built = (folder / "built").exists() and backend != "postgres"
    if not built:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        Home.init(folder / "home", timezone="UTC", key_file=folder / "bench.key", git=False, now=NOW)
    os.environ["XDG_CONFIG_HOME"] = str(folder / "config")
    home = Home.open(folder / "home")
    records = [] if built else corpus.signed(make_records(list(corpus.scale_texts(size))), home.identity())
    salience = Salience(home.cache_dir / "salience.json")
    if backend == "files":
        corpus.write_notes(home.root / "notes", records)
        store: Any = home.store()
        catalog = IndexCatalog.for_home(home.cache_dir, store, embedder=HashEmbedder())
        memory = Memory(store, home.log(), catalog, identity=home.identity(), salience=salience)
    elif backend == "sqlite":
        from agent_memory.log.sqlite import SQLiteLog
        from agent_memory.stores.sqlite import SQLiteStore

        store = SQLiteStore(folder / "store.sqlite")
        for start in range(0, len(records), 1000):
            store.put_many(records[start : start + 1000])
        catalog = IndexCatalog.for_home(home.cache_dir, store, embedder=HashEmbedder())
        memory = Memory(store, SQLiteLog(folder / "log.sqlite"), catalog, salience=salience)
    else:
        assert dsn is not None
        from agent_memory.log.postgres import PostgresLog
        from agent_memory.search.pg_vectors import PgVectorIndex
        from agent_memory.search.postgres import PgTextIndex
        from agent_memory.stores.postgres import PostgresStore

        base = f"path_{uuid.uuid4().hex[:10]}"
        store = PostgresStore(dsn, schema=f"{base}_store")
        for start in range(0, len(records), 1000):
            store.put_many(records[start : start + 1000])
        indexes = {
            "bm25": PgTextIndex(dsn, schema=f"{base}_idx", name="fulltext"),
            "vectors": PgVectorIndex(dsn, HashEmbedder(), schema=f"{base}_idx", name="vectors"),
        }
        catalog = IndexCatalog(store, indexes, folder=home.cache_dir / "indexes")
        memory = Memory(store, PostgresLog(dsn, schema=f"{base}_log"), catalog, salience=salience)
    if not built:
        catalog.rebuild()
        (folder / "built").write_text("built\n", encoding="utf-8")
    return memory


# ---------------------------------------------------------------------- one store and size


def measure(backend: str, size: int, work: Path, dsn: str | None, questions: list[str]) -> dict[str, Any]:
    """Recall ``questions`` on one Home under both variants; return the figures (see the module)."""
    started = time.perf_counter()
    memory = open_memory(backend, size, work, dsn)
    built_s = time.perf_counter() - started
    before = before_patches()
    same = 0
    for question in questions[:CHECKED]:
        memory.recall(question, now=NOW, touch=False)  # warm connections and the catalog
        with patched(before):
            old = memory.recall(question, now=NOW, touch=False)
        same += old == memory.recall(question, now=NOW, touch=False)
    meter = Meter()
    timings: dict[str, dict[str, list[float]]] = {
        v: {"recall": [], "extra": [], **{p: [] for p in Meter.PARTS}} for v in ("before", "after")
    }
    bare_all: list[float] = []
    deadline = time.perf_counter() + BUDGET_S
    for number, question in enumerate(questions):
        bare_start = time.perf_counter()
        memory.catalog.query(question, k=CANDIDATES_PER_INDEX, now=NOW)
        bare = (time.perf_counter() - bare_start) * 1000
        bare_all.append(bare)
        for variant in ("before", "after") if number % 2 == 0 else ("after", "before"):
            with patched(before if variant == "before" else []), patched(meter_patches(meter, memory)):
                meter.reset()
                recall_start = time.perf_counter()
                memory.recall(question, now=NOW)
                took = (time.perf_counter() - recall_start) * 1000
                parts = meter.reset()
            timings[variant]["recall"].append(took)
            timings[variant]["extra"].append(took - bare)
            for part in Meter.PARTS:
                timings[variant][part].append(parts[part])
        if number + 1 >= MINIMUM and time.perf_counter() > deadline:
            break
    memory.close()
    row: dict[str, Any] = {
        "backend": backend,
        "size": size,
        "questions": len(bare_all),
        "checked": min(CHECKED, len(questions)),
        "identical": same,
        "built_s": built_s,
        "bare_p50": statistics.median(bare_all),
    }
    for variant, series in timings.items():
        row[f"{variant}_p50"] = statistics.median(series["recall"])
        row[f"{variant}_p99"] = percentile(series["recall"], 0.99)
        row[f"{variant}_extra_p50"] = statistics.median(series["extra"])
        for part in Meter.PARTS:
            row[f"{variant}_{part}"] = statistics.mean(series[part])
    return row


# ---------------------------------------------------------------------- the salience sidecar


def sidecar_saves(count: int, rounds: int = 5) -> dict[str, float]:
    """Return the best ms of one sidecar save of ``count`` touched ids, before (``json.dumps``) and after."""
    from agent_memory.recall.salience import Salience
    from agent_memory.records.wire import format_timestamp

    with tempfile.TemporaryDirectory(prefix="am-salience-") as folder:
        path = Path(folder) / "salience.json"
        salience = Salience(path, save_interval=3600)
        salience.touch([f"mem:{number:032x}" for number in range(count)], now=NOW)
        sidecar = salience._sidecar
        stamp = format_timestamp(NOW)
        scores = {record_id: {"touches": 1, "last_touched": stamp} for record_id in sidecar.scores}

        def before() -> None:  # the save as it was: the whole mapping dumped with sorted keys
            temp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
            temp.write_text(json.dumps({"scores": scores}, sort_keys=True), encoding="utf-8")
            os.replace(temp, path)

        def after() -> None:
            with sidecar.lock:
                sidecar.save(strict=True)

        best = {"before": float("inf"), "after": float("inf")}
        for _ in range(rounds):
            for name, save in (("before", before), ("after", after)):
                started = time.perf_counter()
                save()
                best[name] = min(best[name], (time.perf_counter() - started) * 1000)
        assert path.read_text(encoding="utf-8") == json.dumps({"scores": scores}, sort_keys=True)
    return best


# ---------------------------------------------------------------------- the section


def verdicts(rows: list[dict[str, Any]], saves: dict[int, dict[str, float]]) -> list[str]:
    """Return the notes computed from ``rows``: the aim at 100k, and the sidecar saves."""
    notes = []
    for r in rows:
        if "error" in r or r["size"] != 100_000:
            continue
        missed = r["after_p50"] - 20
        verdict = "met" if missed <= 0 else f"missed by {missed:.1f} ms"
        notes.append(
            f"- Aim recall p50 < 20 ms at 100k, **{r['backend']}**: {r['after_p50']:.1f} ms ({verdict});"
            f" the bare query alone takes {r['bare_p50']:.1f} ms and the read path after it"
            f" {r['after_extra_p50']:.1f} ms (before: {r['before_extra_p50']:.1f} ms)."
        )
    from agent_memory.stores.sqlite import SQLiteStore

    sqlite = "" if hasattr(SQLiteStore, "get_many") else " one query per candidate on SQLite (no `get_many`),"
    notes.append(
        "- What the read path still spends after the query (*after* columns): the records returned,"
        " each read and verified (file Home: a parse each for notes not yet parsed by this process;"
        f" 4,096 parsed records are cached per store),{sqlite} the cards of the candidates (one"
        " query), and two log head reads per recall (the withdrawal gate's and the review states';"
        " two round trips on PostgreSQL)."
    )
    for count, best in saves.items():
        notes.append(
            f"- One salience sidecar save with {count:,} touched ids: {best['before']:.1f} ms before"
            f" (`json.dumps` of every count, keys sorted) → {best['after']:.1f} ms after (each entry"
            f" rendered once, sorted and joined; the same bytes), best of 5."
            " Recall saves at most once a second."
        )
    return notes


def section(rows: list[dict[str, Any]], notes: list[str]) -> str:
    """Return the ``## Recall path`` section for ``rows``."""
    lines = [
        HEADING,
        "",
        "Written by `bench/recall_path.py`: what `Memory.recall` costs after its bare index query, on",
        "the Homes of `bench/scale.py` (same generator; BM25 beside HashEmbedder vectors, budget",
        "2,000 tokens), with the read path as it was before session 10 (**before**: every candidate",
        "read and verified to rank it, restored in the same process by a patch) and as it is",
        "(**after**: candidates ranked on the cards the text index keeps, only the records returned",
        "read), question by question in alternating",
        "order. *Recall − bare* is each question's recall minus its bare query; *reads* is the store",
        "reads (`get`, `get_many`), *log* the log head reads (gate and review states), *salience* the",
        "touch (one sidecar write per second at most); means per recall.",
        "",
        f"Machine: {machine()}.",
        "",
        "| store | records | questions | bare p50 ms | recall p50 ms before → after | recall − bare p50 ms"
        " before → after (×) | reads ms before → after | log ms | salience ms | identical results |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['backend']} | {r['size']:,} | failed: {r['error']} |||||||")
            continue
        ratio = r["before_extra_p50"] / r["after_extra_p50"] if r["after_extra_p50"] > 0 else float("inf")
        lines.append(
            f"| {r['backend']} | {r['size']:,} | {r['questions']} | {r['bare_p50']:.1f}"
            f" | {r['before_p50']:.1f} → {r['after_p50']:.1f}"
            f" | {r['before_extra_p50']:.1f} → {r['after_extra_p50']:.1f} ({ratio:.2f}×)"
            f" | {r['before_reads']:.1f} → {r['after_reads']:.1f}"
            f" | {r['after_log']:.2f} | {r['after_salience']:.2f} | {r['identical']} of {r['checked']} |"
        )
    return "\n".join([*lines, "", *notes]) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Measure each store and size, print the section, and write it unless ``--no-write``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000])
    parser.add_argument("--backends", nargs="+", default=["files", "sqlite", "postgres"])
    parser.add_argument("--work", help="keep the generated Homes here and reuse them on the next run")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="1,000 records and 40 questions")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.queries = [1_000], 40
    if not corpus.available():
        print(corpus.missing())
        return 0
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="am-recall-path-"))
    work.mkdir(parents=True, exist_ok=True)
    questions = corpus.questions()[: args.queries]
    notes: list[str] = []
    dsn = None
    if "postgres" in args.backends:
        dsn, why = start_postgres()
        notes += [f"- {why}"] if why else []
    rows: list[dict[str, Any]] = []
    for size in args.sizes:
        for backend in args.backends:
            if backend == "postgres" and dsn is None:
                continue
            try:
                rows.append(measure(backend, size, work, dsn, questions))
            except Exception as exc:  # one store failing must not hide the others
                rows.append({"backend": backend, "size": size, "error": f"{type(exc).__name__}: {exc}"})
            print(rows[-1], flush=True)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    saves = {count: sidecar_saves(count) for count in (1_000, 10_000, 100_000)}
    text = section(rows, verdicts(rows, saves) + notes)
    print(text)
    if not args.no_write:
        replace_section(HEADING, text)
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

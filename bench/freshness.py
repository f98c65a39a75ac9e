"""Freshness benchmark: what keeping a Home's indexes in step with ``notes/`` costs (issue 4 item 6).

A Home-like folder of N valid note files (default 10,000; written without fsync, as a
``git pull`` or a copy would leave them) and a BM25 index catalog over them. Timed, each
the median of several runs:

- the **baseline**: reading and verifying every note (``FileStore.list()``), which is what
  a freshness check without version tokens has to do, and ``git status --porcelain notes/``
  (when git is installed) as DESIGN.md §9 suggests;
- building the index from nothing, and opening the catalog (ledger loaded, each index's
  contents checked against it);
- ``refresh()`` when nothing changed and the signal is quiet (most recalls), when a full
  token comparison is due, after one note was edited in place, after one was added, and
  ``status()`` (a token comparison and a digest check per index).

Usage: ``python bench/freshness.py [--records N] [--repeat R] [--no-write]``. Prints the
``## Freshness`` section and writes it into ``docs/benchmarks.md``, leaving the others alone.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from report import machine, replace_section

from agent_memory.records.note import dump_note
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.catalog import FULL_CHECK_SECONDS, IndexCatalog
from agent_memory.search.recipes import SearchSettings
from agent_memory.stores.files import FileStore

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
HEADING = "## Freshness"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
WORDS = [
    *("staging", "host", "database", "backup", "deploy", "release", "branch", "team", "lunch", "meeting"),
    *("office", "printer", "vpn", "certificate", "payroll", "invoice", "budget", "ticket", "customer"),
    *("portal", "cluster", "upgrade", "quarter", "monday", "friday", "morning", "tea", "coffee", "ada"),
    *("grace", "linus", "margaret", "berlin", "hamburg", "frankfurt", "nightly", "weekly", "error", "cache"),
]


def make_notes(root: Path, count: int, seed: int = 7) -> list[MemoryRecord]:
    """Write ``count`` valid note files under ``root/notes`` and return their records."""
    rng = random.Random(seed)  # noqa: S311 - reproducible text, not secrets
    notes = root / "notes"
    records = []
    for i in range(count):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18))) + f" #{i}."
        record = MemoryRecord.create(
            type="fact",
            body=body,
            provenance=Provenance(kind="bench", ref=f"bench:{i}"),
            created_at=T0 + timedelta(seconds=i),
        )
        folder = notes / record.id[4:]
        folder.mkdir(parents=True)
        (folder / "000001.md").write_bytes(dump_note(record))
        records.append(record)
    return records


def timed(action: Callable[[], object], repeat: int, before: Callable[[], object] | None = None) -> float:
    """Return the median seconds of ``action`` over ``repeat`` runs (``before`` runs untimed first)."""
    runs = []
    for _ in range(repeat):
        if before is not None:
            before()
        started = time.perf_counter()
        action()
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


class Clock:
    """A monotonic clock the benchmark moves by hand, so 'a full check is due' is exact."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        """Return the time the benchmark has set."""
        return self.now


def run(count: int, repeat: int, work: Path) -> list[tuple[str, float, str]]:
    """Return ``(what, median seconds, note)`` rows, the baseline first."""
    records = make_notes(work, count)
    store = FileStore(work / "notes")
    cache = work / ".cache"
    search = SearchSettings(("bm25",))
    rows: list[tuple[str, float, str]] = []
    rows.append(("read and verify every note (baseline)", timed(store.list, repeat), "FileStore.list()"))
    git = shutil.which("git")
    if git:
        for args in (
            ["init", "-q"],
            ["add", "-A"],
            ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "x"],
        ):
            subprocess.run([git, *args], cwd=work, check=True, capture_output=True)
        status = [git, "status", "--porcelain", "notes"]
        rows.append(
            (
                "git status --porcelain notes/",
                timed(lambda: subprocess.run(status, cwd=work, check=True), repeat),
                "after git add + commit",
            )
        )

    def build() -> None:
        catalog = IndexCatalog.for_home(cache, store, search=search)
        catalog.refresh()
        catalog.close()

    rows.append(
        (
            "build the BM25 index from nothing",
            timed(build, max(1, repeat // 3), lambda: shutil.rmtree(cache, True)),
            f"{count:,} notes read",
        )
    )
    build()
    rows.append(
        (
            "open the catalog (ledger + contents check)",
            timed(lambda: IndexCatalog.for_home(cache, store, search=search).close(), repeat),
            "",
        )
    )
    clock = Clock()
    catalog = IndexCatalog.for_home(cache, store, search=search, clock=clock)
    catalog.refresh()
    rows.append(
        ("refresh, nothing changed, signal quiet", timed(catalog.refresh, repeat * 20), "most recalls")
    )

    def due() -> None:
        clock.now += FULL_CHECK_SECONDS

    rows.append(
        (
            "refresh, nothing changed, full check due",
            timed(catalog.refresh, repeat, due),
            f"a folder listing and a stat per note; ≤ 1 per {FULL_CHECK_SECONDS:.0f} s",
        )
    )
    victims = iter(records)

    def edit() -> None:
        path = work / "notes" / next(victims).id[4:] / "000001.md"
        path.write_bytes(path.read_bytes().replace(b"#", b"# "))  # in place: the id no longer verifies
        due()

    changed: list[int] = []
    rows.append(
        (
            "refresh after one note was edited in place",
            timed(lambda: changed.append(catalog.refresh()), repeat, edit),
            "found when the check is due",
        )
    )
    assert set(changed) == {1}, changed
    extra = iter(range(count, count + repeat))

    def add() -> None:
        i = next(extra)
        record = MemoryRecord.create(
            type="fact", body=f"added later {i}", provenance=Provenance(kind="bench", ref="b"), created_at=T0
        )
        (work / "notes" / record.id[4:]).mkdir()
        (work / "notes" / record.id[4:] / "000001.md").write_bytes(dump_note(record))

    changed.clear()
    rows.append(
        (
            "refresh after one note was added",
            timed(lambda: changed.append(catalog.refresh()), repeat, add),
            "the notes folder changed: no wait",
        )
    )
    assert set(changed) == {1}, changed
    written = iter(range(count + repeat, count + 2 * repeat))

    def write() -> None:
        i = next(written)
        record = MemoryRecord.create(
            type="fact", body=f"written here {i}", provenance=Provenance(kind="bench", ref="b"), created_at=T0
        )
        store.put(record)
        catalog.written([record])

    rows.append(
        (
            "refresh after this process wrote a note",
            timed(catalog.refresh, repeat, write),
            "written() indexed it and keeps the signal quiet",
        )
    )
    rows.append(("status() of the index", timed(catalog.status, repeat), "token comparison + digest check"))
    catalog.close()
    return rows


def section(count: int, rows: list[tuple[str, float, str]]) -> str:
    """Return the ``## Freshness`` section."""
    base = rows[0][1]
    table = ["| step | median ms | vs. reading every note | note |", "|---|--:|--:|---|"]
    for what, seconds, note in rows:
        ratio = f"{seconds / base:.2f}×" if seconds >= base / 100 else f"1/{base / seconds:,.0f}"
        table.append(f"| {what} | {seconds * 1e3:,.2f} | {ratio} | {note} |")
    return "\n".join(
        [
            HEADING,
            "",
            f"Written by `bench/freshness.py` ({count:,} valid note files, a BM25 index; medians).",
            "The baseline is what a freshness check costs without version tokens: reading and",
            "verifying every note. `refresh()` compares cheap tokens (latest file name, size, change",
            "time: a `stat`, not a read) with the ledger in `.cache/indexes/state.sqlite` and reads",
            "only the notes whose token moved; when the notes folder and the log have not changed it",
            f"skips even that for {FULL_CHECK_SECONDS:.0f} s, so an edit in place (which changes neither) is",
            "seen by the next check, and by the next command a user runs (a new process checks at once).",
            'A CLI command therefore pays one full check (the row "full check due"); a long-running',
            "process (the MCP server) pays it at most every few seconds, and nothing after its own writes.",
            "",
            f"Machine: {machine()}.",
            "",
            *table,
            "",
        ]
    )


def write_docs(text: str, path: Path = DOCS) -> None:
    """Replace the ``## Freshness`` section of ``path`` (or add it), keeping every other section."""
    replace_section(HEADING, text, path)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the section and write it to docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000, help="note files in the Home")
    parser.add_argument("--repeat", type=int, default=7, help="runs per step (the median is shown)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="am-freshness-") as work:
        rows = run(args.records, args.repeat, Path(work))
    text = section(args.records, rows)
    print(text)
    if not args.no_write:
        write_docs(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

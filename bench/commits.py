"""What a git commit of a Home costs next to the write it follows: why the MCP server batches its commits.

For Homes of several sizes (note files already committed), measured in one run:

- baseline: ``Memory.remember`` of a new sentence on an open Memory (what one MCP ``remember``
  call does), p50 in ms;
- commit: :meth:`Home.autocommit` of that one write under the writer lock (``git add -A``,
  ``git status``, ``git commit``), p50 in ms, as :class:`agent_memory.mcp.commits.Committer`
  does it.

Ratio: commit p50 over remember p50 — what committing after every call would add to each
write. The server instead commits once per burst (after ``--commit-delay`` seconds without a
write), so a burst of N writes pays one commit.

Run: ``python bench/commits.py`` (sizes 0, 2,000 and 20,000 notes, 7 writes each) or
``--sizes 0 1000 --writes 5``; the table is printed and written to ``docs/benchmarks.md``
under ``## MCP commits`` (``--no-write`` to skip).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import corpus
from report import machine, replace_section

from agent_memory.home import Home
from agent_memory.memory import Memory
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.sync.commits import commit_message

HEADING = "## MCP commits"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Row:
    """One Home size: the p50 of a remember and of the commit after it, in ms."""

    notes: int
    remember_ms: float
    commit_ms: float

    @property
    def ratio(self) -> float:
        """Commit p50 over remember p50."""
        return self.commit_ms / self.remember_ms


def filled_home(folder: Path, notes: int) -> Home:
    """A git Home holding ``notes`` records (one note file each, as the file store writes them), committed."""
    home = Home.init(folder, timezone="UTC", key_file=folder.parent / f"{folder.name}.key")
    source = Provenance(kind="import", ref="bench:commits")
    made = (
        MemoryRecord.create(
            type="fact", body=f"Filler note {n} of the Home.", provenance=source, created_at=T0
        )
        for n in range(notes)
    )
    corpus.write_notes(folder / "notes", made, home.identity())
    home.commit("filler notes")
    return home


def measure(folder: Path, notes: int, writes: int) -> Row:
    """Remember ``writes`` sentences on a Home of ``notes`` notes, committing after each."""
    home = filled_home(folder, notes)
    remember: list[float] = []
    commit: list[float] = []
    with Memory.open(folder) as memory:
        head = memory.log.last()
        seq = head.seq if head else 0
        for n in range(writes):
            started = time.perf_counter()
            memory.remember(f"Benchmark sentence {n} about the {notes}-note Home.", source="bench")
            remember.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            with home.writer_lock():
                made = home.autocommit(commit_message(memory.log, since_seq=seq))
            commit.append((time.perf_counter() - started) * 1000)
            if not made:
                raise SystemExit(f"no commit was made at {notes} notes: is git installed?")
            last = memory.log.last()
            seq = last.seq if last else seq
    return Row(notes, statistics.median(remember), statistics.median(commit))


def section(rows: list[Row], writes: int) -> str:
    """The ``## MCP commits`` section: what was measured, the machine and one row per size."""
    lines = [
        HEADING,
        "",
        "Written by `bench/commits.py`. For each Home size (note files already committed), "
        f"{writes} writes: a `Memory.remember` of a new sentence (the baseline: what one MCP "
        "`remember` call does), then `Home.autocommit` of that write under the writer lock, as "
        "the MCP server's committer makes it. Ratio: commit p50 over remember p50, what a commit "
        "after every call would add to each write. The server commits once per burst instead "
        "(`serve --commit-delay`, default 2 s without a write; at least every 30 s).",
        "",
        f"Machine: {machine()}.",
        "",
        "| notes in the Home | remember p50 ms | commit p50 ms | commit / remember |",
        "|--:|--:|--:|--:|",
    ]
    lines += [f"| {r.notes:,} | {r.remember_ms:,.1f} | {r.commit_ms:,.1f} | {r.ratio:.1f}× |" for r in rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Measure, print the section and write it into ``docs/benchmarks.md`` (unless ``--no-write``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 2_000, 20_000])
    parser.add_argument("--writes", type=int, default=7)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-commits-") as scratch:
        os.environ["XDG_CONFIG_HOME"] = str(Path(scratch) / "config")
        rows = [measure(Path(scratch) / f"home-{n}", n, args.writes) for n in args.sizes]
    text = section(rows, args.writes)
    print(text)
    if not args.no_write:
        replace_section(HEADING, text)


if __name__ == "__main__":
    main()

"""Log reads benchmark: reading the tail of a large JSONL month costs what is read (issue 10).

A Home's operation log of N entries (10,000 and 100,000 by default) in one month file, with
put events and every 20th a supersede with a reason (about 230 bytes a line), written
straight to ``log/2026-01.jsonl``. Timed, each the median of several runs, in the same run:

- the **baseline** (before): the previous algorithm, which parsed the month holding
  ``since_seq`` from its first line (here: :func:`agent_memory.log.month_file.tail_start`
  swapped for "start at byte 0", every other step the same);
- **after**: ``JsonlLog.entries(since_seq=N - k)`` bisecting byte offsets for the start
  (k = 10: ``Memory.open`` on a log that is not settled, ``Home.commit_message``; k = 1,000);
- ``home.commit_message(log, since_seq=N - 10)``: the message of a git Home's commit, which
  reads the log since the last commit (before and after);
- erase's scan for the day's erasure ids: before, the whole log; after,
  ``entries_from_time`` (bisecting seqs) for the last three days of the 28 the log spans;
- ``JsonlLog.last()``, which already read backwards from the end (no baseline).

Lines parsed are counted (every ``LogEntry.from_line``), so the figures do not rest on
timing alone. Usage: ``python bench/log_tail.py [--sizes N ...] [--repeat R] [--quick]
[--no-write]``. Prints the ``## Log reads`` section and writes it into
``docs/benchmarks.md``, leaving the others alone.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from report import machine, replace_section

import agent_memory.log.jsonl as jsonl_module
from agent_memory.log import JsonlLog, LogEntry
from agent_memory.log.base import entries_from_time
from agent_memory.log.chain import next_entry
from agent_memory.sync.commits import commit_message

HEADING = "## Log reads"
START = datetime(2026, 1, 1, tzinfo=UTC)
TAILS = (10, 1000)


def write_month(folder: Path, count: int) -> int:
    """Write a valid chain of ``count`` entries into one month file; return its size in bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    step = timedelta(days=28) / count
    head: LogEntry | None = None
    lines: list[bytes] = []
    for i in range(count):
        if i % 20 == 19:
            ids, action = [f"mem:{i - 1:032x}", f"mem:{i:032x}"], "supersede"
            details: dict[str, Any] = {"reason": "the owner corrected the date of the meeting"}
        else:
            ids, action, details = [f"mem:{i:032x}"], "put", {"version": 1 + i % 3}
        head = next_entry(
            head, action, actor="agent:claude", record_ids=ids, details=details, now=START + step * i
        )
        lines.append(head.line + b"\n")
    data = b"".join(lines)
    (folder / "2026-01.jsonl").write_bytes(data)
    return len(data)


@contextmanager
def counting() -> Iterator[list[int]]:
    """Count every line parsed (``LogEntry.from_line``) while the block runs."""
    count = [0]
    real = LogEntry.__dict__["from_line"].__func__

    def counted(cls: type[LogEntry], line: bytes) -> LogEntry:
        count[0] += 1
        entry: LogEntry = real(cls, line)
        return entry

    setattr(LogEntry, "from_line", classmethod(counted))  # noqa: B010 - a classmethod swap
    try:
        yield count
    finally:
        setattr(LogEntry, "from_line", classmethod(real))  # noqa: B010


@contextmanager
def previous_algorithm() -> Iterator[None]:
    """Read the month holding ``since_seq`` from its first line, as before the bisection."""
    real = vars(jsonl_module)["tail_start"]
    setattr(jsonl_module, "tail_start", lambda path, since_seq, first: (0, first))  # noqa: B010
    try:
        yield
    finally:
        setattr(jsonl_module, "tail_start", real)  # noqa: B010


def timed(read: Callable[[], object], repeat: int) -> tuple[float, int]:
    """Return (median seconds over ``repeat`` runs, lines parsed by one run)."""
    seconds = []
    parsed = 0
    for _ in range(repeat):
        with counting() as count:
            begin = time.perf_counter()
            read()
            seconds.append(time.perf_counter() - begin)
        parsed = count[0]
    return statistics.median(seconds), parsed


def measure(count: int, repeat: int) -> list[dict[str, Any]]:
    """Time tail reads before and after on a log of ``count`` entries; one row per read."""
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="log-tail-") as tmp:
        folder = Path(tmp) / "log"
        size = write_month(folder, count)
        log = JsonlLog(folder)
        slow_repeat = max(1, repeat // 3) if count > 20_000 else repeat
        for tail in TAILS:
            since = count - tail

            def read(since: int = since) -> list[LogEntry]:
                return list(log.entries(since_seq=since))

            assert len(read()) == tail
            with previous_algorithm():
                before, parsed_before = timed(read, slow_repeat)
            after, parsed_after = timed(read, repeat)
            rows.append(
                {"lines": count, "bytes": size, "read": f"entries after seq N − {tail:,}", "before": before}
                | {"after": after, "parsed_before": parsed_before, "parsed_after": parsed_after}
            )
        since = count - 10
        with previous_algorithm():
            before, parsed_before = timed(lambda: commit_message(log, since_seq=since), slow_repeat)
        after, parsed_after = timed(lambda: commit_message(log, since_seq=since), repeat)
        rows.append(
            {"lines": count, "bytes": size, "read": "`commit_message`, 10 events since", "before": before}
            | {"after": after, "parsed_before": parsed_before, "parsed_after": parsed_after}
        )
        recent = START + timedelta(days=25)  # erase's scan: three days before its stamp

        def erase_ids(entries: Iterable[LogEntry]) -> list[object]:
            return [e.details.get("erasure_id") for e in entries if e.action == "erase"]

        before, parsed_before = timed(lambda: erase_ids(log.entries()), slow_repeat)
        after, parsed_after = timed(lambda: erase_ids(entries_from_time(log, recent)), repeat)
        rows.append(
            {"lines": count, "bytes": size, "read": "erase's id scan (last 3 of 28 days)", "before": before}
            | {"after": after, "parsed_before": parsed_before, "parsed_after": parsed_after}
        )
        head, parsed = timed(log.last, repeat)
        rows.append(
            {"lines": count, "bytes": size, "read": "last() (head)", "before": None, "after": head}
            | {"parsed_before": None, "parsed_after": parsed}
        )
    return rows


def render(rows: list[dict[str, Any]], repeat: int) -> str:
    """Return the ``## Log reads`` section."""
    table = [
        "| entries in the month | read | before | after | lines parsed before → after | speed-up |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        size = f"{row['lines']:,} ({row['bytes'] / 2**20:.1f} MiB)"
        after = f"{row['after'] * 1000:.2f} ms"
        if row["before"] is None:
            parsed = row["parsed_after"]
            table.append(f"| {size} | {row['read']} | (already read from the end) | {after} | {parsed} | — |")
            continue
        ratio = row["before"] / row["after"]
        table.append(
            f"| {size} | {row['read']} | {row['before']:.2f} s | {after} "
            f"| {row['parsed_before']:,} → {row['parsed_after']:,} | {ratio:,.0f}× |"
        )
    return "\n".join(
        [
            HEADING,
            "",
            "`python bench/log_tail.py` (issue 10): reading the operation log after a seq, as",
            "`Memory.open` does on a log that is not settled, `Home.commit_message` in a git Home and",
            "`log --since`. One JSONL month file of N entries (~230 bytes a line). *Before* is the previous",
            "algorithm measured in the same run (the month holding the seq parsed from its first line);",
            "*after* bisects byte offsets for the start (`log/month_file.py`), parsing about log2(bytes)",
            "lines, then reads on from there. Erase's scan for the day's erasure ids (before: the whole",
            "log) now reads from three days before its stamp (`entries_from_time`, bisecting seqs); the",
            "log here spans 28 days, so that is about a tenth of it. `verify` still checks the whole chain.",
            f"Medians of {repeat} runs (a third of them for the 100k baseline); lines parsed are counted,",
            "not estimated.",
            "",
            *table,
            "",
            f"Machine: {machine()}.",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the section and write it unless ``--no-write``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="entries per log")
    parser.add_argument("--repeat", type=int, default=5, help="runs per timing (median)")
    parser.add_argument("--quick", action="store_true", help="1,000 and 10,000 entries, 3 runs, not written")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md")
    args = parser.parse_args(argv)
    sizes, repeat = ([1_000, 10_000], 3) if args.quick else (args.sizes, args.repeat)
    rows = [row for count in sizes for row in measure(count, repeat)]
    text = render(rows, repeat)
    print(text)
    if not (args.no_write or args.quick):
        replace_section(HEADING, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Withdrawal gate benchmark: what applying withdrawal controls before exposure costs (issue 6 items 1-3).

An in-memory store of N records (default 5,000) in 50 namespaces, a fifth of them derived
from an earlier record (``provenance.ref`` = its id, chains up to 5 deep), and an operation
log with a put event per record. Timed, each the median of several runs:

- the **baseline**: ``store.list()``, the read an export cannot avoid;
- the gate's decision for every record (what a plain export adds, controls already read):
  with no withdrawal in force (every record passes without a look), and with 12 withdrawals
  in force (record ids, namespaces, archive and source refs), derivation followed to the roots;
- reading the controls from the JSONL log (a Home's): the first catch-up over the whole log
  (a new process: every CLI command), and after one new event (a long-running process);
- a recall (BM25, budget 2,000 tokens) without and with the 12 withdrawals in force.

Usage: ``python bench/governance.py [--records N] [--repeat R] [--no-write]``. Prints the
``## Withdrawal gate`` section and writes it into ``docs/benchmarks.md``, leaving the others alone.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from report import machine, replace_section

from agent_memory.governance.gate import Gate, GateView
from agent_memory.log.jsonl import JsonlLog
from agent_memory.memory import Memory
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.search.catalog import IndexCatalog
from agent_memory.stores.inmemory import InMemoryStore

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
HEADING = "## Withdrawal gate"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
WORDS = [
    *("staging", "host", "database", "backup", "deploy", "release", "branch", "team", "lunch", "meeting"),
    *("office", "printer", "vpn", "certificate", "payroll", "invoice", "budget", "ticket", "customer"),
    *("portal", "cluster", "upgrade", "quarter", "monday", "friday", "morning", "tea", "coffee", "ada"),
]
QUERIES = ["staging host", "backup friday", "vpn certificate", "team lunch monday", "cluster upgrade"]


def fill(memory: Memory, count: int, seed: int = 11) -> list[MemoryRecord]:
    """Put ``count`` records (a fifth derived from an earlier one) and log a put for each."""
    rng = random.Random(seed)  # noqa: S311 - reproducible text, not secrets
    records: list[MemoryRecord] = []
    for i in range(count):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18))) + f" #{i}."
        if records and rng.random() < 0.2:
            ref = rng.choice(records[-50:]).id  # recent parents make chains
        else:
            ref = f"archive/2026-01-{1 + i % 28:02d}.md#mem-2026-01-{1 + i % 28:02d}-{i:03d}"
        record = MemoryRecord.create(
            type="fact",
            body=body,
            provenance=Provenance(kind="bench", ref=ref),
            created_at=T0 + timedelta(seconds=i),
            namespace=f"user:u{i % 50}",
        )
        memory.store.put(record)
        memory.log.append("put", actor="bench", record_ids=(record.id,), details={"version": 1}, now=T0)
        records.append(record)
    memory.catalog.refresh(force=True)
    return records


def withdraw_some(memory: Memory, records: list[MemoryRecord]) -> None:
    """Put 12 withdrawals in force: 6 by record id, 2 namespaces, 2 archive files, 2 sources."""
    now = T0 + timedelta(days=1)
    for record in records[100:700:100]:
        memory.withdraw(memory_item_ids=[record.id], reason="bench", now=now)
    memory.withdraw(namespaces=["user:u3"], reason="bench", now=now)
    memory.withdraw(namespaces=["user:u7"], reason="bench", now=now)
    memory.withdraw(archive_refs=["archive/2026-01-05.md"], reason="bench", now=now)
    memory.withdraw(archive_refs=["archive/2026-01-17.md"], reason="bench", now=now)
    memory.withdraw(source_or_run_refs=["archive/2026-01-09.md#mem-2026-01-09-008"], reason="bench", now=now)
    memory.withdraw(source_or_run_refs=["run:none"], reason="bench", now=now)


def timed(action: Callable[[], object], repeat: int) -> float:
    """Return the median seconds of ``action`` over ``repeat`` runs."""
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def run(count: int, repeat: int, work: Path) -> tuple[list[tuple[str, float, str]], int]:
    """Time each step; return the rows and how many records the withdrawals hide."""
    store = InMemoryStore()
    memory = Memory(store, JsonlLog(work / "log"), IndexCatalog.in_memory(store))
    records = fill(memory, count)
    log = memory.log
    gate = Gate(log, store)

    def gate_all() -> int:
        view = GateView(gate.state().in_force(), store.get)  # nothing memoised between runs
        return sum(1 for record in store.list() if view.is_exposed(record))

    recall_at = T0 + timedelta(days=2)
    queries = iter(QUERIES * repeat * 2)

    def recall() -> None:
        memory.recall(next(queries), now=recall_at, touch=False)

    memory.recall("warm up", now=recall_at, touch=False)  # the porcelain's gate and review book read the log
    rows = [
        ("store.list() (baseline)", timed(store.list, repeat), f"{count:,} records"),
        (
            "list + gate, no withdrawal in force",
            timed(gate_all, repeat),
            "every record passes without a look",
        ),
        ("recall, no withdrawal in force", timed(recall, repeat), "BM25, 2,000 tokens"),
    ]
    withdraw_some(memory, records)
    hidden = count - gate_all()
    rows.append(("list + gate, 12 withdrawals in force", timed(gate_all, repeat), f"{hidden:,} hidden"))
    rows.append(
        (
            "first read of the controls (whole log)",
            timed(lambda: Gate(log, store).state(), repeat),
            f"{count + 12:,} events, 12 controls; once per process",
        )
    )

    def one_more() -> None:
        log.append("export", actor="bench", now=recall_at)
        gate.state()

    rows.append(("catch up after one new log event", timed(one_more, repeat), "append + catch-up"))
    memory.recall("warm up", now=recall_at, touch=False)
    rows.append(("recall, 12 withdrawals in force", timed(recall, repeat), "derivation followed per hit"))
    memory.close()
    return rows, hidden


def section(count: int, rows: list[tuple[str, float, str]]) -> str:
    """Return the ``## Withdrawal gate`` section."""
    base = rows[0][1]
    table = ["| step | median ms | vs. store.list() | note |", "|---|--:|--:|---|"]
    for what, seconds, note in rows:
        ratio = f"{seconds / base:.2f}×" if seconds >= base / 100 else f"1/{base / seconds:,.0f}"
        table.append(f"| {what} | {seconds * 1e3:,.2f} | {ratio} | {note} |")
    return "\n".join(
        [
            HEADING,
            "",
            f"Written by `bench/governance.py` ({count:,} records in the in-memory store, a fifth",
            "derived from an earlier record, a JSONL log; medians). The gate reads the withdrawal",
            "controls from the operation log once per log change and then decides each record from its id,",
            "namespace and anchors, following derivation (evidence, `mem:` refs) to the roots only",
            "while a withdrawal is in force; with none in force a record passes without a look.",
            "",
            f"Machine: {machine()}.",
            "",
            *table,
            "",
        ]
    )


def write_docs(text: str, path: Path = DOCS) -> None:
    """Replace the ``## Withdrawal gate`` section of ``path`` (or add it), keeping every other section."""
    replace_section(HEADING, text, path)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the section and write it to docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--records", type=int, default=5_000, help="records in the store")
    parser.add_argument("--repeat", type=int, default=7, help="runs per step (the median is shown)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="am-governance-") as work:
        rows, _ = run(args.records, args.repeat, Path(work))
    text = section(args.records, rows)
    print(text)
    if not args.no_write:
        write_docs(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

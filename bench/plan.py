"""The plan of ``python -m bench``: each benchmark's settings, expected minutes, and the schedule.

The full settings reproduce every figure ``docs/benchmarks.md`` shows (the 10k and 100k
scale tiers, both retrieval datasets in full, the peers' slice); the quick settings are a
smoke run. The expected minutes are wall minutes of one benchmark running beside one other
on this project's 2-core machine with nothing else on it: measured at load 1.5-4 (session 4:
search, stores, commits, cli, consolidate, freshness, governance, importers, log_tail,
mcp_load, note_reads, and every quick run), else scaled from the runs recorded in the docs and
the quick runs (the comments say how); ``--list`` prints them and the schedule's total, and the
runner's table gives the measured seconds to correct them.

Invariant: a benchmark this table does not know still runs (with no arguments, expected
minutes :data:`UNKNOWN_MINUTES`), so a new script is never silently left out.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

# A benchmark not in PLANS is expected to take this long (a guess, printed as such).
UNKNOWN_MINUTES = 5.0


@dataclass(frozen=True)
class Plan:
    """How the runner runs one benchmark.

    Attributes:
        full: Arguments of the full run (the settings the docs' figures come from).
        quick: Arguments of ``--quick`` (added to ``--quick`` itself when the script declares it).
        minutes: Expected wall minutes of the full run (2 cores, one other benchmark beside it).
        quick_minutes: Expected wall minutes of the quick run.
        opt_in: The runner option that adds it to a run of everything (``""``: always run).
        writes: The file and ``##`` sections it rewrites (for ``--list`` and the docs' header).
    """

    full: tuple[str, ...] = ()
    quick: tuple[str, ...] = ()
    minutes: float = UNKNOWN_MINUTES
    quick_minutes: float = 1.0
    opt_in: str = ""
    writes: str = "docs/benchmarks.md"


PLANS: dict[str, Plan] = {
    # Scale ran 47 min at load 4-12 (docs, session 3); an earlier run at lower load was 2-2.5x
    # faster per tier. Retrieval hardly speeds up on a quieter machine (quick runs at load 8
    # and 2: 422 s and 406 s) and has half again as many variants as its 38-min run: scaled
    # from its quick run (3 of 7 conversations, 40 of 293 questions), about 38 min, three
    # quarters of it the variants on all LongMemEval questions (`--sample N` would cut that).
    "scale": Plan(minutes=25, quick_minutes=1.5, writes="## Scale, docs/benchmarks/scale-*.png, scale.json"),
    "retrieval": Plan(minutes=38, quick_minutes=7, writes="## Retrieval quality"),
    "peers": Plan(minutes=6, quick_minutes=2.5, writes="## Peers"),
    "writes": Plan(minutes=9, quick_minutes=0.7, writes="## First write, docs/benchmarks/writes.json"),
    "recall": Plan(("--large", "--hybrid"), ("--queries", "100"), 8, 0.5, writes="## Recall"),
    "embedders": Plan(
        ("--write", "--conversations", "7", "--fp32", "auto"),
        ("--conversations", "1", "--sentences", "128"),
        8,
        3,
        writes="## Embedders",
    ),
    "pg_search": Plan(("--large",), (), 6, 0.5, writes="## PostgreSQL search"),
    # Builds both stores at 10k and 100k (100k: ~25 min at load 10, session 5), then 4 x 300 questions.
    "pg_recall": Plan(
        ("--large",), ("--sizes", "1000", "--queries", "30"), 35, 1, writes="## PostgreSQL recall"
    ),
    "search": Plan(("--large",), ("--queries", "100"), 2, 0.4, writes="## Search"),
    "mcp_load": Plan(
        (), ("--seconds", "5", "--clients", "4", "--solo-seconds", "3"), 3.2, 0.6, writes="## MCP load"
    ),
    "freshness": Plan((), ("--records", "1000", "--repeat", "3"), 1, 0.1, writes="## Freshness"),
    "commits": Plan((), ("--sizes", "0", "500", "--writes", "3"), 1, 0.1, writes="## MCP commits"),
    "log_tail": Plan(minutes=0.6, quick_minutes=0.2, writes="## Log reads"),
    "stores": Plan((), ("--count", "1000"), 1, 0.1, writes="## Stores"),
    "consolidate": Plan((), ("--repeat", "1"), 0.6, 0.3, writes="## Consolidation"),
    "governance": Plan((), ("--records", "1000", "--repeat", "3"), 0.3, 0.1, writes="## Withdrawal gate"),
    "cli": Plan((), ("--runs", "3", "--records", "1000"), 0.8, 0.2, writes="## CLI start-up"),
    "importers": Plan(
        (), ("--items", "100", "--repeat", "1"), 0.8, 0.1, writes="## Importers, ## Folder importers"
    ),
    "note_reads": Plan(minutes=0.3, quick_minutes=0.1, writes="## Note reads"),
    # Session 15: 20,000 notes screened 5 times under each variant (about 20 s).
    "screen": Plan(minutes=0.4, quick_minutes=0.1, writes="## Secrets screen"),
    # Issue 22: the review page at 100k records (building the Home and its BM25 index is most of
    # it); its default run is 10k, its quick run 2k records (measured at load 6: 0.6 min).
    "ui": Plan(("--records", "100000"), (), 8, 0.6, writes="## Review page"),
    # Session 4 (H2): the docs' section has 10k and 100k rows of the three stores (its default is
    # 10k only); it builds each Home itself (PostgreSQL's 100k indexes are most of its time).
    "recall_path": Plan(("--sizes", "10000", "100000"), (), 12, 0.3, writes="## Recall path"),
    # Session 12: builds the server memory benchmark's Home at 10k and 100k (100k: about 3 min
    # of notes and 1 min of reindex), then 200 questions under two variants (about 1 min each).
    "hybrid_query": Plan(minutes=8, quick_minutes=1, writes="## Hybrid query"),
    # The reliability soak (issue 11) writes docs/reliability.md; at full size it took 154 min
    # of wall time in 16 pytest processes, so a run of everything takes it only when asked.
    "soak": Plan(
        (),
        ("--fuzz", "2000", "--interface", "200", "--kills", "5", "--remembers", "20"),
        154,
        4,
        opt_in="--with-soak",
        writes="docs/reliability.md ## Last soak run",
    ),
}


def plan_of(name: str) -> Plan:
    """Return the plan of benchmark ``name`` (a default plan for a benchmark not in :data:`PLANS`)."""
    return PLANS.get(name, Plan())


def expected(name: str, *, quick: bool) -> float:
    """Return the expected wall minutes of ``name`` in a full or a quick run."""
    plan = plan_of(name)
    return plan.quick_minutes if quick else plan.minutes


def longest_first(names: Sequence[str], *, quick: bool) -> list[str]:
    """Return ``names`` in the order the runner starts them: longest expected first (ties by name)."""
    return sorted(names, key=lambda n: (-expected(n, quick=quick), n))


def schedule_minutes(names: Sequence[str], jobs: int, *, quick: bool) -> float:
    """Return the expected wall minutes of running ``names`` ``jobs`` at a time, longest first.

    Each benchmark starts as soon as a slot is free (the runner's own rule), so this is the
    end of the last one when every benchmark takes its expected minutes.

    Raises:
        ValueError: ``jobs`` is below 1.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    slots = [0.0] * jobs
    for name in longest_first(names, quick=quick):
        start = heapq.heappop(slots)
        heapq.heappush(slots, start + expected(name, quick=quick))
    return max(slots)

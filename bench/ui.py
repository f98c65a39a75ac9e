"""Review page benchmark: browse paging, filters and search of ``agent-memory ui`` at scale (issue 22).

The aim: paging and search at 100k records answer in under 200 ms p50. A Home of ``--records``
notes (the realistic notes of ``bench/corpus.py`` when the datasets are present, else generated
sentences; 1 in 10 an episode, 1 in 50 tainted, so quarantined) is built once under ``--work``,
with the ``bm25`` recipe (the vectors of the default hybrid would take the build minutes of
MiniLM embedding at 100k; recall's own cost per recipe is in ``## Recall``). The page is
served for real (:func:`agent_memory.ui.server.start`: uvicorn on 127.0.0.1, in this process)
and asked over HTTP with the session cookie, each request timed from send to the last byte:

- **browse**: the first page, a page deep in the list, a filtered page (episodes), the review
  filter (quarantined records: every record's review state is looked up);
- **search**: the recall box, with the questions of the datasets (or words of the notes).

The first browse (reading every note into :class:`~agent_memory.ui.latest.LatestRecords`) and
the first search (opening or building the index) are timed apart, as "cold". Usage: ``python
bench/ui.py [--records N] [--requests N] [--work DIR] [--quick] [--no-write]``; ``--quick`` is
2,000 records and 10 requests of each kind. Writes ``## Review page`` of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import corpus
from report import machine, replace_section

HEADING = "## Review page"
NOW = datetime(2026, 11, 1, tzinfo=UTC)
AIM_MS = 200.0
_WORDS = (
    "staging",
    "deploy",
    "host",
    "database",
    "backup",
    "release",
    "review",
    "meeting",
    "travel",
    "family",
    "dinner",
    "doctor",
    "budget",
    "invoice",
    "garden",
    "hiking",
    "coffee",
    "morning",
    "weekend",
    "project",
    "deadline",
    "ticket",
    "server",
    "cache",
)


def texts(count: int) -> list[tuple[str, str]]:
    """Return ``count`` ``(text, ref)`` notes: the datasets' when present, else generated sentences."""
    if corpus.available():
        return list(corpus.scale_texts(count))
    rng = random.Random(7)  # noqa: S311 - a reproducible Home, not a secret
    return [
        (f"{' '.join(rng.choice(_WORDS) for _ in range(12)).capitalize()} (note {n}).", f"bench:{n}")
        for n in range(count)
    ]


def questions(count: int, notes: list[tuple[str, str]]) -> list[str]:
    """Return ``count`` search questions: the datasets' when present, else three words of notes."""
    if corpus.available():
        asked = corpus.questions()
        return [asked[n % len(asked)] for n in range(count)]
    rng = random.Random(11)  # noqa: S311
    return [" ".join(rng.choice(notes)[0].split()[:3]) for _ in range(count)]


def build(folder: Path, count: int) -> Path:
    """Make (or reuse) a Home of ``count`` notes under ``folder``; return its root."""
    from agent_memory.home import Home
    from agent_memory.records.record import MemoryRecord, Provenance

    root = folder / "home"
    if (folder / "built").exists():
        return root
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    keys = Home.init(root, timezone="UTC", key_file=folder / "bench.key", git=False, now=NOW).identity()
    settings = root / "memory.toml"
    text = settings.read_text(encoding="utf-8")
    settings.write_text(text.replace('# recipes = ["hybrid"]', 'recipes = ["bm25"]'), encoding="utf-8")
    made = (
        MemoryRecord.create(
            type="episode" if number % 10 == 0 else "fact",
            body=body,
            provenance=Provenance(kind="import", ref=ref),
            created_at=NOW - timedelta(minutes=count - number),
            tags=("bench",) if number % 10 == 0 else (),
            taint=("external",) if number % 50 == 0 else None,
        )
        for number, (body, ref) in enumerate(texts(count))
    )
    corpus.write_notes(root / "notes", made, keys)
    from agent_memory.memory import Memory

    with Memory.open(root) as memory:  # the BM25 index, built here rather than inside a timed request
        memory.catalog.refresh()
    (folder / "built").write_text("built\n", encoding="utf-8")
    return root


class Client:
    """An HTTP client holding the page's session cookie."""

    def __init__(self, url: str) -> None:
        self.base = url.split("/?token=")[0]
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )
        self.first_ms = self.get_url(url)  # the token for the cookie, then the first page (303 followed)

    def get_url(self, url: str) -> float:
        """Fetch ``url`` whole; return the milliseconds it took."""
        started = time.perf_counter()
        with self.opener.open(url, timeout=600) as response:
            response.read()
            assert response.status == 200, f"{url}: {response.status}"
        return (time.perf_counter() - started) * 1000

    def get(self, path: str, **params: Any) -> float:
        """Fetch ``path`` with query ``params``; return the milliseconds."""
        query = urllib.parse.urlencode(params)
        return self.get_url(f"{self.base}{path}{'?' + query if query else ''}")


def bare_recall(root: Path, asked: list[str]) -> list[float]:
    """Time ``Memory.recall`` in process, as the search box asks it, once per question: the baseline."""
    from agent_memory.memory import Memory
    from agent_memory.ui.browse import SEARCH_BUDGET_TOKENS, SEARCH_LIMIT

    with Memory.open(root) as memory:
        memory.recall(asked[-1], budget_tokens=SEARCH_BUDGET_TOKENS, k=SEARCH_LIMIT, touch=False)  # warm
        times = []
        for question in asked[:-1]:
            started = time.perf_counter()
            memory.recall(question, budget_tokens=SEARCH_BUDGET_TOKENS, k=SEARCH_LIMIT, touch=False)
            times.append((time.perf_counter() - started) * 1000)
    return times


def measure(root: Path, count: int, requests: int) -> dict[str, Any]:
    """Serve the Home at ``root`` and time each kind of request ``requests`` times, beside the baselines.

    Baselines, from the same run: the stylesheet (``/static/ui.css``) over the same server,
    session and cookie (what any answer costs: HTTP, the guard, the thread hop), and
    ``Memory.recall`` called in process with the search box's arguments (what the search
    itself costs, without the page).
    """
    from agent_memory.ui.server import start

    started = time.perf_counter()
    running = start(root)
    opened_s = time.perf_counter() - started
    asked = questions(requests + 1, texts(min(count, 2000)))
    try:
        client = Client(running.url)
        cold_browse = client.first_ms
        cold_search = client.get("/", q=asked[-1])
        # The first page of a filter works the filtered list out (then kept until a write or review).
        first_filtered = {
            "episodes": client.get("/", type="episode"),
            "quarantined": client.get("/", review="quarantined"),
        }
        deep = max(1, count // 50 // 2)
        kinds = {
            "static file (baseline)": lambda n: client.get("/static/ui.css"),
            "browse, first page": lambda n: client.get("/"),
            f"browse, page {deep:,} (deep)": lambda n: client.get("/", page=deep),
            "browse, episodes only, page 2": lambda n: client.get("/", type="episode", page=2),
            "browse, quarantined only": lambda n: client.get("/", review="quarantined"),
            "search (recall box)": lambda n: client.get("/", q=asked[n]),
        }
        times: dict[str, list[float]] = {name: [] for name in kinds}
        for n in range(requests):
            for name, call in kinds.items():  # interleaved, so the load falls on every kind alike
                times[name].append(call(n))
    finally:
        running.stop()
    times["recall in process (baseline)"] = bare_recall(root, asked)
    return {
        "records": count,
        "requests": requests,
        "open_s": opened_s,
        "cold_browse_ms": cold_browse,
        "cold_search_ms": cold_search,
        "first_filtered_ms": first_filtered,
        "kinds": {
            name: (statistics.median(v), sorted(v)[int(0.95 * (len(v) - 1))]) for name, v in times.items()
        },
    }


def _baseline_of(name: str) -> str:
    if name.startswith("search"):
        return "recall in process (baseline)"
    return "" if "baseline" in name else "static file (baseline)"


def section(run: dict[str, Any]) -> str:
    """Return the docs section for one run."""
    kinds = run["kinds"]
    rows = []
    for name, (p50, p95) in kinds.items():
        base = _baseline_of(name)
        ratio = f"{p50 / kinds[base][0]:.1f}× {base.split(' (')[0]}" if base else "baseline"
        aim = "" if not base else ("yes" if p50 < AIM_MS else "no")
        rows.append(f"| {name} | {p50:.0f} | {p95:.0f} | {ratio} | {aim} |")
    source = "the datasets' notes" if corpus.available() else "generated sentences"
    first = run["first_filtered_ms"]
    return f"""{HEADING}

`python bench/ui.py --records {run["records"]}` (issue 22): `agent-memory ui` served for real
(uvicorn on 127.0.0.1) over a Home of {run["records"]:,} notes ({source}; 1 in 10 an episode, 1 in
50 tainted; recipe `bm25`), each request timed over HTTP from send to its last byte, {run["requests"]}
of each kind, interleaved. Aim: paging and search under {AIM_MS:.0f} ms p50. Baselines from the
same run: the stylesheet over the same server and session (what any answer costs), and
`Memory.recall` in process with the search box's arguments (k 50, budget 100,000 tokens, no
salience touch).

| request | p50 ms | p95 ms | p50 against its baseline | under the aim |
|---|--:|--:|---|---|
{chr(10).join(rows)}

A filter's list is worked out once, at its first page ({first["episodes"]:,.0f} ms for episodes,
{first["quarantined"]:,.0f} ms for quarantined: a review state per tainted record), then kept
until a write or a review moves the records or the log; the other pages of it only slice.
Cold: opening the Home {run["open_s"]:.1f} s; the first page {run["cold_browse_ms"]:,.0f} ms (every
note read and verified once into the page's record list, then kept in step through the log and
the notes folder); the first search {run["cold_search_ms"]:,.0f} ms (the index opened, and every
note's version token compared with it once, as at the first recall of every process).
Machine: {machine()}.
"""


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the section and write it unless ``--no-write``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--work", type=Path, default=None, help="Keep the built Home here for the next run.")
    parser.add_argument("--quick", action="store_true", help="2,000 records, 10 requests of each kind.")
    parser.add_argument("--no-write", action="store_true", help="Print the section only.")
    args = parser.parse_args(argv)
    if args.quick:
        args.records, args.requests = 2_000, 10
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-ui-"))
    os.environ["XDG_CONFIG_HOME"] = str(work / "config")
    try:
        root = build(work / f"ui-{args.records}", args.records)
        run = measure(root, args.records, args.requests)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    text = section(run)
    print(text)
    if not args.no_write:
        replace_section(HEADING, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

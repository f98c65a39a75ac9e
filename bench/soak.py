"""Soak run of the reliability suite: long fuzzing, many kills, full-size concurrency (issue 11 item 7).

Runs ``pytest tests/reliability`` with ``AGENT_MEMORY_SOAK=1`` and the sizes given, collects the
figures each test appends to a JSON-lines file (``AGENT_MEMORY_RELIABILITY_REPORT``) and the
per-test outcome (pytest's JUnit XML), prints them, and writes the ``## Last soak run`` section
of ``docs/reliability.md``, leaving the rest of that page alone.

The defaults are the issue's sizes: 100,000 generated inputs per parser (note files,
MemoryFiles, inbox lines on the parse, capture and archive paths, ``memory.toml``), 10,000
recall queries per store and MCP tool calls per session, 200 SIGKILLs per operation, 4 writer
processes × 500 remembers per store. ``--jobs J`` spreads the tests (each parametrized case on
its own) over J pytest processes, longest first. ``--only`` runs some test files; ``--work DIR``
collects into a folder that later runs append to, and ``--assemble`` writes the section from
such a folder alone, so a soak can run in parts. A run that must fit a time box takes smaller
sizes; the page says which were used, how long it took, and the commit it started from.

Usage: ``python bench/soak.py [--fuzz N] [--interface N] [--kills N] [--remembers N] [--jobs J]
[--only FILE ...] [--work DIR] [--assemble] [--no-write]``. Exit status 1 when a test failed (the
figures are written all the same).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from report import machine, replace_section

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "reliability.md"
HEADING = "## Last soak run"
SUITE = ROOT / "tests" / "reliability"


def outcomes(junit: Path) -> dict[str, tuple[str, float]]:
    """``{test id: (outcome, started)}`` from a JUnit XML file (``passed``, ``failed``, ``xfailed``…).

    ``started`` (epoch seconds) is the suite's start plus the time of the tests before it in the
    file, so that of two runs of one test (a rerun after a fix) the later one can win.
    """
    found: dict[str, tuple[str, float]] = {}
    if not junit.exists():
        return found
    root = ET.parse(junit).getroot()  # noqa: S314 - our own file
    for suite in root.iter("testsuite"):
        stamp = suite.get("timestamp")
        started = datetime.fromisoformat(stamp).timestamp() if stamp else junit.stat().st_mtime
        for case in suite.iter("testcase"):
            name, status = case.get("name", "?"), case_status(case)
            if name not in found or found[name][1] <= started:
                found[name] = (status, started)
            started += float(case.get("time", "0"))
    return found
    for case in ET.parse(junit).getroot().iter("testcase"):  # noqa: S314 - our own file
        found[case.get("name", "?")] = (case_status(case), float(case.get("time", "0")))
    return found


def read_figures(path: Path) -> list[dict[str, Any]]:
    """Return the figures the tests appended to ``path``, one dict per JSON line."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def case_status(case: ET.Element) -> str:
    """Return a JUnit ``testcase``'s outcome: passed, failed, skipped or xfailed."""
    status = "passed"
    for child in case:
        if child.tag in ("failure", "error"):
            status = "failed"
        elif child.tag == "skipped":
            status = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
    return status


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines


def _counts(figure: dict[str, Any], skip: Iterable[str]) -> str:
    shown = {k: v for k, v in figure.items() if k not in {"test", "soak", *skip} and isinstance(v, int)}
    return ", ".join(f"{v:,} {k}" for k, v in sorted(shown.items())) or "—"


def section(
    figures: list[dict[str, Any]], results: dict[str, tuple[str, float]], meta: dict[str, Any]
) -> str:
    """Build the ``## Last soak run`` section from the figures and outcomes of one run."""
    by_test: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for figure in figures:
        by_test[figure["test"]].append(figure)
    status: defaultdict[str, int] = defaultdict(int)
    for outcome, _ in results.values():
        status[outcome] += 1
    lines = [
        HEADING,
        "",
        f"Written by `python bench/soak.py` on {meta['date']}: {meta['machine']}.",
        "",
        f"Sizes: {meta['fuzz']:,} inputs per parser; {meta['interface']:,} recall queries per store and MCP "
        f"calls per session; {meta['kills']} kills per operation; {meta['writers']} writers × "
        f"{meta['remembers']} remembers per store. Wall time {meta['minutes']:.1f} min "
        f"({meta['jobs']} pytest process{'es' if meta['jobs'] > 1 else ''} side by side, "
        f"{meta['cpu_minutes']:.0f} process-minutes); tree {meta['tree']}. Outcome: "
        + ", ".join(f"{n} {k}" for k, n in sorted(status.items()))
        + ".",
        "",
        "### Fuzzing",
        "",
    ]
    fuzz = merged([f for name, group in sorted(by_test.items()) if name.startswith("fuzz-") for f in group])
    lines += _table(
        ["target", "where", "inputs", "outcomes"],
        [
            [
                f["test"].removeprefix("fuzz-"),
                f.get("store") or f.get("session") or "—",
                f"{f['inputs'] if 'inputs' in f else _inputs(f):,}",
                _counts(f, ("inputs",)),
            ]
            for f in fuzz
        ],
    )
    lines += ["", "### Crash consistency (SIGKILL)", ""]
    lines += _table(
        ["operation", "kills", "acknowledged writes checked", "doctor found", "doctor --fix did", "seconds"],
        [
            [
                f["op"],
                f["kills"],
                f"{f['acknowledged']:,}",
                _pairs(f["doctor_found"]),
                _pairs(f["doctor_fixed"]),
                f["seconds"],
            ]
            for f in by_test["crash"]
        ],
    )
    lines += ["", "### Concurrency", ""]
    lines += _table(
        [
            "store",
            "writers × remembers",
            "records at the end",
            "seconds",
            "remembers/s",
            "recalls beside",
            "errors",
        ],
        [
            [
                f["store"],
                f"{f['writers']} × {f['remembers_per_writer']}",
                f"{f['records']:,}",
                f["seconds"],
                f["remembers_per_second"],
                f"{f['recalls']:,}",
                f["errors"],
            ]
            for f in by_test["concurrency"]
        ],
    )
    lines += ["", "### Poisoning", ""]
    lines += _table(
        [
            "channel",
            "attacks",
            "refused at write",
            "succeeded",
            "attack success rate",
            "true value still autoloaded",
        ],
        [
            [
                f["channel"],
                f["attacks"],
                f["refused_at_write"],
                f["succeeded"],
                f"{f['success_rate']:.0%}",
                "yes" if f.get("trusted_value_still_autoloaded") else "no (disputed)",
            ]
            for f in by_test["poisoning"]
        ],
    )
    lines += ["", "### Erasure scan", ""]
    lines += _table(
        ["store", "holders on the receipt", "where the text remains (all marked partially-completed)"],
        [[f["store"], f["holders"], _places(f["remaining"])] for f in by_test["erasure"]],
    )
    failed = sorted(name for name, (outcome, _) in results.items() if outcome == "failed")
    lines += ["", "### Tests that failed (in their last run)", ""]
    lines += [f"- `{name}`" for name in failed] or ["None."]
    lines += ["", "### Parts (pytest processes, in the order they started)", ""]
    if any(p["rc"] for p in meta.get("parts", [])):
        lines += [
            "A part that exited with 1 met a failure; its test ran again after the fix (the later"
            " run is the one counted above), and *What the suite found* says what was fixed.",
            "",
        ]
    if any(p["part"].endswith("-again") for p in meta.get("parts", [])):
        lines += [
            "A part ending in `-again` ran its tests a second time on a later tree, once the"
            " fixes were in; the tables above show that run's figures.",
            "",
        ]
    lines += _table(
        ["part", "started (UTC)", "minutes", "commit (+ files others had changed)", "exit status"],
        [
            [
                p["part"],
                f"{datetime.fromtimestamp(p['start'], UTC):%H:%M}",
                f"{p['seconds'] / 60:.1f}",
                f"{p.get('head', '?')} (+{p.get('dirty', '?')})",
                p["rc"],
            ]
            for p in sorted(meta.get("parts", []), key=lambda p: p["start"])
        ],
    )
    return "\n".join(lines) + "\n"


def merged(figures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sum the counts of fuzz figures of one target and place (a target run in several processes)."""
    sums: dict[tuple[str, str], dict[str, Any]] = {}
    for figure in figures:
        key = (figure["test"], str(figure.get("store") or figure.get("session") or ""))
        into = sums.setdefault(key, {k: v for k, v in figure.items() if not _count(k, v)})
        for name, value in figure.items():
            if _count(name, value):
                into[name] = into.get(name, 0) + value
    return list(sums.values())


def _count(name: str, value: Any) -> bool:
    return name != "soak" and isinstance(value, int) and not isinstance(value, bool)


def _inputs(figure: dict[str, Any]) -> int:
    """The inputs a fuzz figure counts: the sum of its outcome counts (``soak`` is a flag, not one)."""
    return sum(v for k, v in figure.items() if k != "soak" and isinstance(v, int))


def _pairs(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} ×{n}" for name, n in sorted(counts.items())) or "clean every time"


def _places(paths: list[str]) -> str:
    objects = sum(1 for p in paths if p.startswith(".git/") or p == "pack")
    named = [f"`{p}`" for p in paths if not (p.startswith(".git/") or p == "pack")]
    if objects:
        named.append(f"{objects} git object{'s' if objects > 1 else ''} (history is not rewritten)")
    return ", ".join(named) or "nowhere"


# Rough seconds one test (one parametrized case) took at full size in the soak of 2026-11-30,
# two cores under a load average of 6 to 13, by file: how :func:`plan` spreads the tests.
COST = {
    "test_fuzz_parsers.py": 400.0,
    "test_fuzz_interfaces.py": 250.0,
    "test_crash_consistency.py": 230.0,
    "test_concurrency.py": 100.0,
    "test_poisoning.py": 30.0,
}


def collect(files: Iterable[str], env: dict[str, str]) -> list[str]:
    """Return the pytest node ids of the tests in ``files`` (under ``tests/reliability``)."""
    argv = [sys.executable, "-m", "pytest", *(str(SUITE / f) for f in files), "--collect-only", "-q"]
    out = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if "::" in line]


def plan(nodes: list[str], jobs: int) -> list[list[str]]:
    """Spread test node ids over ``jobs`` processes, longest first onto the least loaded (by :data:`COST`)."""

    def cost(node: str) -> float:
        return COST.get(node.split("::")[0].rsplit("/", 1)[-1], 10.0)

    loads = [0.0] * jobs
    groups: list[list[str]] = [[] for _ in range(jobs)]
    for node in sorted(nodes, key=cost, reverse=True):
        least = loads.index(min(loads))
        groups[least].append(node)
        loads[least] += cost(node)
    return [group for group in groups if group]


def tree() -> dict[str, Any]:
    """The commit the run starts from and how many files differ from it (others may be editing)."""
    git = ["git", "-C", str(ROOT)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout
    dirty = subprocess.run([*git, "diff", "--name-only", "HEAD"], capture_output=True, text=True).stdout
    return {"head": head.strip() or "?", "dirty": len(dirty.split())}


def run_parts(work: Path, groups: list[list[str]], env: dict[str, str]) -> None:
    """Run one pytest process per group of node ids; append each one's outcome to ``parts.jsonl``."""
    processes = []
    for number, nodes in enumerate(groups):
        junit = work / f"junit-{number}.xml"
        argv = [sys.executable, "-m", "pytest", *nodes, "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"]
        started = {"part": f"process-{number}", "start": time.time(), **tree()}
        processes.append((subprocess.Popen(argv, cwd=ROOT, env=env), started))
    for process, started in processes:
        code = process.wait()
        line = {**started, "rc": code, "seconds": round(time.time() - started["start"], 1)}
        with open(work / "parts.jsonl", "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")


def assemble(work: Path, sizes: dict[str, int]) -> tuple[str, bool]:
    """Build the section from what the runs into ``work`` left there; return it and whether all passed.

    A test run again (after a fix) counts by its last run; every process is listed as a part.

    Reads ``figures.jsonl`` (the tests' figures), every ``junit-*.xml`` and ``parts.jsonl`` (one
    line per pytest process: ``start`` (epoch seconds), ``seconds``, ``rc``, ``head``, ``dirty``).
    """
    results: dict[str, tuple[str, float]] = {}
    for junit in work.glob("junit-*.xml"):
        for name, (outcome, started) in outcomes(junit).items():
            if name not in results or results[name][1] <= started:  # the later run wins (a rerun)
                results[name] = (outcome, started)
    parts = read_figures(work / "parts.jsonl")
    first = min((p["start"] for p in parts), default=time.time())
    last = max((p["start"] + p["seconds"] for p in parts), default=first)
    heads = sorted({f"{p['head']} (+{p['dirty']} files changed)" for p in parts if "head" in p})
    meta = {
        "date": f"{datetime.now(UTC):%Y-%m-%d}",
        "machine": machine(),
        **sizes,
        "writers": 4,
        "minutes": (last - first) / 60,
        "jobs": len(parts),
        "cpu_minutes": sum(p["seconds"] for p in parts) / 60,
        "tree": ", ".join(heads) or "?",
        "parts": parts,
    }
    passed = bool(results) and all(outcome != "failed" for outcome, _ in results.values())
    return section(read_figures(work / "figures.jsonl"), results, meta), passed


def main() -> int:
    """Run the soak (see the module docstring); return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fuzz", type=int, default=100_000, help="inputs per parser")
    parser.add_argument("--interface", type=int, default=10_000, help="recall queries per store, MCP calls")
    parser.add_argument("--kills", type=int, default=200, help="SIGKILLs per operation")
    parser.add_argument("--remembers", type=int, default=500, help="remembers per writer process (4 writers)")
    parser.add_argument("--jobs", type=int, default=1, help="pytest processes the tests are spread over")
    parser.add_argument("--only", nargs="*", default=None, help="test files to run (default: all)")
    parser.add_argument("--work", type=Path, default=None, help="folder for figures and outcomes (appended)")
    parser.add_argument("--assemble", action="store_true", help="only write the section from --work")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/reliability.md alone")
    args = parser.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="agent-memory-soak-"))
    work.mkdir(parents=True, exist_ok=True)
    sizes = {"fuzz": args.fuzz, "interface": args.interface, "kills": args.kills, "remembers": args.remembers}
    if not args.assemble:
        env = {
            **os.environ,
            "AGENT_MEMORY_SOAK": "1",
            "AGENT_MEMORY_SOAK_FUZZ": str(args.fuzz),
            "AGENT_MEMORY_SOAK_INTERFACE": str(args.interface),
            "AGENT_MEMORY_SOAK_KILLS": str(args.kills),
            "AGENT_MEMORY_SOAK_REMEMBERS": str(args.remembers),
            "AGENT_MEMORY_RELIABILITY_REPORT": str(work / "figures.jsonl"),
        }
        files = args.only or sorted(p.name for p in SUITE.glob("test_*.py"))
        run_parts(work, plan(collect(files, env), max(1, args.jobs)), env)
    text, passed = assemble(work, sizes)
    print(text)
    if not args.no_write:
        replace_section(HEADING, text, DOCS)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())

"""Soak run of the reliability suite: long fuzzing, many kills, full-size concurrency (issue 11 item 7).

Runs ``pytest tests/reliability`` with ``AGENT_MEMORY_SOAK=1`` and the sizes given, collects the
figures each test appends to a JSON-lines file (``AGENT_MEMORY_RELIABILITY_REPORT``) and the
per-test outcome (pytest's JUnit XML), prints them, and writes the ``## Last soak run`` section
of ``docs/reliability.md``, leaving the rest of that page alone.

The defaults are the issue's sizes: 100,000 generated inputs per parser (note files,
MemoryFiles, inbox lines on the parse, capture and archive paths, ``memory.toml``), 10,000
recall queries per store and MCP tool calls per session, 200 SIGKILLs per operation, 4 writer
processes × 500 remembers per store. ``--jobs 2`` runs the fuzzing beside the rest (two pytest
processes). A run that must fit a time box takes smaller sizes; the page says which were used.

Usage: ``python bench/soak.py [--fuzz N] [--interface N] [--kills N] [--remembers N] [--jobs J]
[--no-write]``. Exit status 1 when a test failed (the figures are written all the same).
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
FUZZ_FILES = ("test_fuzz_parsers.py", "test_fuzz_interfaces.py")


def outcomes(junit: Path) -> dict[str, tuple[str, float]]:
    """``{test id: (outcome, seconds)}`` from a JUnit XML file (``passed``, ``failed``, ``xfailed``…)."""
    found: dict[str, tuple[str, float]] = {}
    if not junit.exists():
        return found
    for case in ET.parse(junit).getroot().iter("testcase"):  # noqa: S314 - our own file
        name = case.get("name", "?")
        status = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                status = "failed"
            elif child.tag == "skipped":
                status = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
        found[name] = (status, float(case.get("time", "0")))
    return found


def read_figures(path: Path) -> list[dict[str, Any]]:
    """Return the figures the tests appended to ``path``, one dict per JSON line."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


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
    status = defaultdict(int)
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
        f"({meta['jobs']} pytest process{'es' if meta['jobs'] > 1 else ''}). Outcome: "
        + ", ".join(f"{n} {k}" for k, n in sorted(status.items()))
        + ".",
        "",
        "### Fuzzing",
        "",
    ]
    fuzz = [f for name, group in sorted(by_test.items()) if name.startswith("fuzz-") for f in group]
    lines += _table(
        ["target", "where", "inputs", "outcomes"],
        [
            [
                f["test"].removeprefix("fuzz-"),
                f.get("store") or f.get("session") or "—",
                f"{sum(v for k, v in f.items() if isinstance(v, int) and k not in ('items', 'problems')):,}"
                if "inputs" not in f
                else f"{f['inputs']:,}",
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
    lines += ["", "### Tests that failed", ""]
    lines += [f"- `{name}`" for name in failed] or ["None."]
    return "\n".join(lines) + "\n"


def _pairs(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} ×{n}" for name, n in sorted(counts.items())) or "clean every time"


def _places(paths: list[str]) -> str:
    objects = sum(1 for p in paths if p.startswith(".git/") or p == "pack")
    named = [f"`{p}`" for p in paths if not (p.startswith(".git/") or p == "pack")]
    if objects:
        named.append(f"{objects} git object{'s' if objects > 1 else ''} (history is not rewritten)")
    return ", ".join(named) or "nowhere"


def main() -> int:
    """Run the soak (see the module docstring); return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fuzz", type=int, default=100_000, help="inputs per parser")
    parser.add_argument("--interface", type=int, default=10_000, help="recall queries per store, MCP calls")
    parser.add_argument("--kills", type=int, default=200, help="SIGKILLs per operation")
    parser.add_argument("--remembers", type=int, default=500, help="remembers per writer process (4 writers)")
    parser.add_argument("--jobs", type=int, default=1, choices=(1, 2), help="pytest processes")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/reliability.md alone")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="agent-memory-soak-"))
    report = work / "figures.jsonl"
    env = {
        **os.environ,
        "AGENT_MEMORY_SOAK": "1",
        "AGENT_MEMORY_SOAK_FUZZ": str(args.fuzz),
        "AGENT_MEMORY_SOAK_INTERFACE": str(args.interface),
        "AGENT_MEMORY_SOAK_KILLS": str(args.kills),
        "AGENT_MEMORY_SOAK_REMEMBERS": str(args.remembers),
        "AGENT_MEMORY_RELIABILITY_REPORT": str(report),
    }
    rest = sorted(p.name for p in SUITE.glob("test_*.py") if p.name not in FUZZ_FILES)
    groups = [list(FUZZ_FILES), rest] if args.jobs == 2 else [[*FUZZ_FILES, *rest]]
    started = time.perf_counter()
    processes = []
    for number, files in enumerate(groups):
        junit = work / f"junit-{number}.xml"
        argv = [
            sys.executable,
            "-m",
            "pytest",
            *(str(SUITE / f) for f in files),
            "-q",
            "-p",
            "no:cacheprovider",
        ]
        processes.append((subprocess.Popen([*argv, f"--junitxml={junit}"], cwd=ROOT, env=env), junit))
    codes = [process.wait() for process, _ in processes]
    minutes = (time.perf_counter() - started) / 60
    results: dict[str, tuple[str, float]] = {}
    for _, junit in processes:
        results.update(outcomes(junit))
    meta = {
        "date": f"{datetime.now(UTC):%Y-%m-%d}",
        "machine": machine(),
        "fuzz": args.fuzz,
        "interface": args.interface,
        "kills": args.kills,
        "writers": 4,
        "remembers": args.remembers,
        "minutes": minutes,
        "jobs": len(groups),
    }
    text = section(read_figures(report), results, meta)
    print(text)
    if not args.no_write:
        replace_section(HEADING, text, DOCS)
    return 0 if all(code == 0 for code in codes) else 1


if __name__ == "__main__":
    sys.exit(main())

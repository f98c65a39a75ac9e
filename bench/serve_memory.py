"""Server memory benchmark: the resident set of ``agent-memory serve`` over a large Home (issue 23).

What a user runs: a file Home of N records (the scale benchmark's texts: the datasets' turns,
then notes of two or three of their sentences; notes signed with the Home's key and written
straight to ``notes/`` as a copy or a git pull leaves them), its indexes built by
``agent-memory reindex``, then ``agent-memory serve`` over stdio driven by the MCP SDK's
client: ``recall`` of the datasets' questions (budget 2,000 tokens) and ``remember`` of new
sentences, interleaved. The figure is the server process's peak resident set (``VmHWM`` in
``/proc/<pid>/status``, read before the client closes), beside the baseline measured in the
same run: the same server over an empty Home with the same recipes (the interpreter, the
libraries and the model, nothing of the Home).

Vectors: 384 dimensions, as MiniLM's, held by the same vector index and fused by the same
hybrid (BM25 and vectors min-max normalised, weighted 2 : 1, the thread mean × 0.5, floor
0.2), but computed by the hash embedder: embedding 100k texts with MiniLM takes about 44
minutes on two cores (Scale section), and what is measured here is the layout of 100k
vectors of that width in the server, not their meaning. The MiniLM model itself is not
loaded, so the baseline holds no model either; add the MiniLM start's resident set (about
150 MB: the Embedders section) for a Home on the default recipe.

Usage: ``python bench/serve_memory.py [--sizes N ...] [--questions N] [--no-write]``. Prints the
``## Server memory`` section and writes it into ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import corpus
from report import machine, replace_section

HEADING = "## Server memory"
AIM_MB = 400.0
"""Aim (issue 23): peak RSS of the MCP server over 100k records with 384-d vectors."""
BUDGET = 2_000
COMMAND = shutil.which("agent-memory", path=str(Path(sys.executable).parent)) or "agent-memory"
RECIPES = """
[search.recipe.vectors384]
kind = "vector"
embedder = "hash"
dimensions = 384
thread_weight = 0.5
min_similarity = 0.2

[search.recipe.hybrid384]
kind = "hybrid"
parts = ["bm25", "vectors384"]
fusion = "weighted"
normalise = "minmax"
weights = [2.0, 1.0]
"""


def build_home(folder: Path, size: int) -> Path:
    """Write a Home of ``size`` signed notes with the 384-d hybrid recipe and build its indexes."""
    import scale

    from agent_memory.home import Home

    home = Home.init(folder / "home", timezone="UTC", key_file=folder / "home.key", git=False, now=scale.NOW)
    settings = home.root / "memory.toml"
    text = settings.read_text(encoding="utf-8")
    text = text.replace("\n[search]\n", '\n[search]\nrecipes = ["hybrid384"]\n', 1)
    settings.write_text(text + RECIPES, encoding="utf-8")
    if size:
        records = corpus.signed(scale.make_records(list(corpus.scale_texts(size))), home.identity())
        corpus.write_notes(home.root / "notes", records)
        del records
    subprocess.run([COMMAND, "reindex", "--home", str(home.root)], check=True, capture_output=True)
    return home.root


def server_pid(home: Path) -> int:
    """Return the pid of the ``agent-memory serve`` process serving ``home`` (a child of this one)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and str(home).encode() in argv:
            return int(entry.name)
    raise RuntimeError(f"no agent-memory serve process over {home}")


def status_mb(pid: int, field: str) -> float:
    """Return ``field`` (``VmHWM``, ``VmRSS``) of ``/proc/<pid>/status`` in MB."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


@contextmanager
def serving(home: Path) -> Iterator[Any]:
    """Serve ``home`` over stdio; yield ``(call(tool, **arguments) -> dict, pid)``."""
    from anyio.from_thread import start_blocking_portal
    from mcp import Client, StdioServerParameters

    env = {**os.environ}
    params = StdioServerParameters(command=COMMAND, args=["serve", "--home", str(home)], env=env)
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(Client(params)) as connected:

        def call(tool: str, **arguments: Any) -> dict[str, Any]:
            result = portal.call(connected.call_tool, tool, arguments)
            if result.is_error or result.structured_content is None:
                raise RuntimeError(f"{tool} failed: {result.content}")
            return dict(result.structured_content)

        yield call, server_pid(home)


def measure(home: Path, questions: list[str], writes: list[str]) -> dict[str, float]:
    """Drive the server over ``home``; return its peak and final RSS (MB) and call latencies (ms)."""
    recall_ms: list[float] = []
    remember_ms: list[float] = []
    returned: list[int] = []
    with serving(home) as (call, pid):
        started = time.perf_counter()
        call("status")
        first_s = time.perf_counter() - started
        for number, question in enumerate(questions):
            began = time.perf_counter()
            found = call("recall", query=question, budget_tokens=BUDGET)["records"]
            recall_ms.append((time.perf_counter() - began) * 1000)
            returned.append(len(found))
            if number < len(writes):
                began = time.perf_counter()
                call("remember", text=writes[number], source="bench:serve-memory")
                remember_ms.append((time.perf_counter() - began) * 1000)
        peak, final = status_mb(pid, "VmHWM"), status_mb(pid, "VmRSS")
    return {
        "peak_mb": peak,
        "final_mb": final,
        "first_call_s": first_s,
        "recall_p50_ms": statistics.median(recall_ms),
        "remember_p50_ms": statistics.median(remember_ms) if remember_ms else float("nan"),
        "questions": float(len(recall_ms)),
        "returned": statistics.mean(returned),
    }


def section(rows: list[tuple[int, dict[str, float]]], base: dict[str, float]) -> str:
    """Render the ``## Server memory`` section."""
    lines = [
        HEADING,
        "",
        "Written by `bench/serve_memory.py` (the module docstring says what is run). The baseline is",
        "the same server over an empty Home with the same recipes, in the same run. *first call* is",
        "the server's start plus its first `status` (what opening the Home costs that process).",
        "",
        f"Machine: {machine()}.",
        "",
        "| records | questions | peak RSS MB | RSS at the end MB | × empty Home | first call s |"
        " recall p50 ms | records per recall | remember p50 ms |",
        "|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
        f"| 0 (baseline) | {base['questions']:.0f} | {base['peak_mb']:.0f} | {base['final_mb']:.0f} | 1.00 |"
        f" {base['first_call_s']:.2f} | {base['recall_p50_ms']:.1f} | {base['returned']:.1f} |"
        f" {base['remember_p50_ms']:.1f} |",
    ]
    for size, row in rows:
        lines.append(
            f"| {size:,} | {row['questions']:.0f} | {row['peak_mb']:.0f} | {row['final_mb']:.0f} |"
            f" {row['peak_mb'] / base['peak_mb']:.2f} | {row['first_call_s']:.2f} |"
            f" {row['recall_p50_ms']:.1f} | {row['returned']:.1f} | {row['remember_p50_ms']:.1f} |"
        )
    lines.append("")
    for size, row in rows:
        if size >= 100_000:
            verdict = "met" if row["peak_mb"] <= AIM_MB else "not met"
            lines.append(
                f"- Aim (issue 23): peak RSS ≤ {AIM_MB:.0f} MB, MCP server over {size:,} records with"
                f" 384-d vectors: {row['peak_mb']:.0f} MB ({verdict}); of it,"
                f" {row['peak_mb'] - base['peak_mb']:.0f} MB is the Home (the rest: the empty Home's server)."
            )
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """Measure the server over an empty Home and each size; print the section and write it."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    corpus.add_tier_options(parser, asked="recalls")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    if not corpus.available():
        print(corpus.missing())
        return 0
    sizes, questions = corpus.tiers(args)
    writes = [
        f"Server memory check {n}: the nightly build ran on runner {n % 7}."
        for n in range(len(questions) // 4)
    ]
    with tempfile.TemporaryDirectory(prefix="am-serve-mem-") as scratch:
        folder = Path(scratch)
        os.environ["XDG_CONFIG_HOME"] = str(folder / "config")
        os.environ["XDG_CACHE_HOME"] = str(folder / "cache")
        base = measure(build_home(folder / "empty", 0), questions, writes)
        rows = []
        for size in sizes:
            started = time.perf_counter()
            home = build_home(folder / f"n{size}", size)
            print(f"built {size:,} records in {time.perf_counter() - started:.0f} s", file=sys.stderr)
            rows.append((size, measure(home, questions, writes)))
            shutil.rmtree(home.parent)
    text = section(rows, base)
    print(text)
    if not args.no_write:
        replace_section(HEADING, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Peers side by side: the same LoCoMo slice through agent-memory and through each peer (issue 10 items 3, 5).

Usage: ``python bench/peers [--quick] [--conversations N] [--no-write]`` (or ``python -m bench
--only peers``). Each peer is installed from PyPI into its own venv under a cache folder
outside the repository (:mod:`envs`; Python 3.12 where it needs it) and run through its own
API or CLI in a subprocess by a driver under ``drivers/``; agent-memory runs the same way
with the project's Python. All see the same slice: the first ``N`` LoCoMo conversations
(default 2), each its own index (the paper's protocol), one note per turn; every question of
those conversations asked as a user would ask it (no ids, no labels).

Figures: turn-level evidence recall@10 (found evidence turns / evidence turns, a question
without evidence counting 1; LoCoMo's definition), overall and for categories 1-4 (the
answerable ones), query p50 in the driver's process, and indexing time; cold start (a fresh
process answering one question, through the CLI where the system has one: wall and CPU
seconds, best of 3) and MCP round trip (the SDK client over stdio: the first answer after
spawning the server, then p50 of tool calls) where the system has an MCP server. Peers that
cannot run offline are listed with the reason. Writes the ``## Peers`` section.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import corpus  # noqa: E402 - the folders are put on the path just above
from envs import CACHE, Peer, ensure  # noqa: E402
from report import machine, replace_section  # noqa: E402

HEADING = "## Peers"
DRIVERS = HERE / "drivers"
OURS = "agent-memory"
PEERS = [Peer("basic-memory", "0.24.1"), Peer("memweave", "0.2.1"), Peer("agentic-memory-ai", "0.1.2")]
# Looked at and left out, with the reason: each needs a service or a download this machine cannot reach.
OFFLINE_BLOCKED = [
    (
        "mem0ai 2.2.1",
        "its `add` asks an LLM to extract memories and its default embedder is OpenAI's API;"
        " the local choices need an Ollama server or a model downloaded from a hub",
    ),
    ("memsearch 0.4.23", "needs an embedding server (dependencies.md); no keyword-only mode"),
]


@dataclass
class System:
    """One system under test: its driver, Python, and how to start it cold and over MCP."""

    name: str
    python: str
    driver: Path
    env: dict[str, str] = field(default_factory=dict)
    cold: Callable[[Path, str], list[str]] | None = None
    mcp: Callable[[Path], tuple[list[str], str, Callable[[str], dict[str, Any]]]] | None = None
    notes: list[str] = field(default_factory=list)


def make_slice(conversations: int, questions: int | None) -> dict[str, Any]:
    """Return the slice every system sees: turns and questions of the first LoCoMo conversations."""
    chosen = corpus.locomo()[:conversations]
    return {
        "conversations": [
            {
                "id": conversation["sample_id"],
                "turns": corpus.locomo_turns(conversation),
                "questions": [str(qa["question"]) for qa in conversation["qa"][:questions]],
                "evidence": [sorted(corpus.evidence_ids(qa)) for qa in conversation["qa"][:questions]],
                "category": [int(qa["category"]) for qa in conversation["qa"][:questions]],
            }
            for conversation in chosen
        ]
    }


def score(data: dict[str, Any], ranked: list[list[str]]) -> dict[str, float]:
    """Return evidence recall@10 overall and for categories 1-4."""
    gold = [
        (set(e), c)
        for conv in data["conversations"]
        for e, c in zip(conv["evidence"], conv["category"], strict=True)
    ]
    per = [(len(g & set(r[:10])) / len(g) if g else 1.0, c) for (g, c), r in zip(gold, ranked, strict=True)]
    return {
        "all": statistics.fmean(s for s, _ in per),
        "cat1-4": statistics.fmean(s for s, c in per if c != 5),
        "questions": len(per),
    }


def timed_process(command: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Run ``command``; return wall seconds, CPU seconds (user + system) and the exit code."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime, process.returncode


def cold_start(system: System, work: Path, question: str) -> str:
    """Return ``wall s / CPU s`` of the best of 3 fresh processes answering one question, or why not."""
    if system.cold is None:
        return "—"
    runs = [timed_process(system.cold(work, question), system.env) for _ in range(3)]
    failed = [code for _, _, code in runs if code != 0]
    if failed:
        return f"failed (exit {failed[0]})"
    wall, cpu, _ = min(runs)
    return f"{wall:.2f} / {cpu:.2f}"


def mcp_round_trip(system: System, work: Path, questions: list[str]) -> str:
    """Return ``first answer s; p50 ms`` over stdio with the official MCP client, or why not."""
    if system.mcp is None:
        return "no MCP server"
    import anyio
    from mcp import Client, StdioServerParameters

    command, tool, arguments = system.mcp(work)
    params = StdioServerParameters(command=command[0], args=command[1:], env=system.env)
    timings: dict[str, Any] = {}

    async def drive() -> None:
        started = time.perf_counter()
        async with Client(params) as client:
            await client.call_tool(tool, arguments(questions[0]))
            timings["first"] = time.perf_counter() - started
            calls = []
            for question in questions[1:]:
                begun = time.perf_counter()
                result = await client.call_tool(tool, arguments(question))
                calls.append((time.perf_counter() - begun) * 1000)
                if result.is_error:
                    raise RuntimeError(str(result.content)[:200])
            timings["p50"] = statistics.median(calls)

    try:
        anyio.run(drive)
    except Exception as exc:  # a peer's server failing is a result, reported in the table
        return f"failed: {type(exc).__name__}: {str(exc)[:120]}"
    return f"{timings['first']:.2f} s; {timings['p50']:.1f} ms"


def systems(work: Path) -> list[System | tuple[str, str]]:
    """Return agent-memory and each installable peer, or ``(name, why not)`` when one cannot be set up."""
    ours_cli = shutil.which("agent-memory", path=str(Path(sys.executable).parent)) or "agent-memory"
    home = work / OURS
    found: list[System | tuple[str, str]] = [
        System(
            OURS,
            sys.executable,
            DRIVERS / "agent_memory_run.py",
            env={**os.environ, "XDG_CONFIG_HOME": str(home / "config")},
            cold=lambda w, q: [ours_cli, "recall", q, "--home", str(w / OURS / "conv0"), "--json"],
            mcp=lambda w: (
                [ours_cli, "serve", "--home", str(w / OURS / "conv0")],
                "recall",
                lambda q: {"query": q, "budget_tokens": 2000},
            ),
        )
    ]
    for peer in PEERS:
        try:
            python = ensure(peer)
        except RuntimeError as exc:
            found.append((f"{peer.name} {peer.version}", str(exc)))
            continue
        folder = work / peer.name
        if peer.name == "basic-memory":
            bm = str(Path(python).parent / "basic-memory")
            env = {
                **os.environ,
                "HOME": str(folder / "home"),
                "BASIC_MEMORY_AUTO_UPDATE": "false",
                "BASIC_MEMORY_DEFAULT_SEARCH_TYPE": "text",
            }

            def bm_cold(w: Path, q: str, bm: str = bm) -> list[str]:
                return [bm, "tool", "search-notes", q, "--json", "--project", "conv0"]

            def bm_mcp(w: Path, bm: str = bm) -> tuple[list[str], str, Callable[[str], dict[str, Any]]]:
                return (
                    [bm, "mcp", "--project", "conv0"],
                    "search_notes",
                    lambda q: {"query": q, "page_size": 10, "search_type": "text"},
                )

            found.append(
                System(
                    peer.name,
                    python,
                    DRIVERS / "basic_memory_run.py",
                    env=env,
                    cold=bm_cold,
                    notes=[
                        "keyword search only: its semantic search needs SQLite extension loading (absent"
                        " from this Python build, it says) and a fastembed model downloaded from a hub"
                    ],
                    mcp=bm_mcp,
                )
            )
        elif peer.name == "memweave":
            driver = DRIVERS / "memweave_run.py"

            def mw_cold(w: Path, q: str, p: str = python, d: Path = driver) -> list[str]:
                return [p, str(d), "--cold", str(w / "memweave"), q]

            found.append(
                System(
                    peer.name,
                    python,
                    driver,
                    env=dict(os.environ),
                    cold=mw_cold,
                    notes=[
                        "its keyword search joins every word of the query with AND (an FTS5 MATCH of all"
                        " tokens), so a question whose words do not all occur in one turn finds nothing;"
                        " its vector half needs an embeddings API (LiteLLM), absent offline",
                        "cold start through its API in a fresh process (its CLI's search embeds the query"
                        " through LiteLLM first, which retries an unreachable API for about ten seconds)",
                    ],
                )
            )
        elif peer.name == "agentic-memory-ai":
            found.append(
                System(
                    peer.name,
                    python,
                    DRIVERS / "agentic_memory_run.py",
                    env=dict(os.environ),
                    notes=[
                        "no cold start or MCP figure: its default store lives in memory, and it has no server"
                    ],
                )
            )
    return found


def run_system(system: System, data: dict[str, Any], work: Path, mcp_questions: list[str]) -> dict[str, Any]:
    """Run ``system``'s driver on the slice, then its cold start and MCP round trip; return a table row."""
    folder = work / system.name
    folder.mkdir(parents=True, exist_ok=True)
    (work / "slice.json").write_text(json.dumps(data), encoding="utf-8")
    out = folder / "result.json"
    print(f"running {system.name}", flush=True)
    done = subprocess.run(
        [system.python, str(system.driver), str(work / "slice.json"), str(folder), str(out)],
        env=system.env,
        capture_output=True,
        text=True,
        check=False,
        timeout=3600,
    )
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        return {"name": system.name, "error": tail[0][:200]}
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    result |= {"name": system.name, "recall": score(data, result["ranked"])}
    result["p50_ms"] = statistics.median(result["latency_ms"])
    result["cold"] = cold_start(system, work, mcp_questions[0])
    result["mcp"] = mcp_round_trip(system, work, mcp_questions)
    result["notes"] = system.notes
    print({k: v for k, v in result.items() if k not in ("ranked", "latency_ms")}, flush=True)
    return result


def findings(rows: list[dict[str, Any]]) -> list[str]:
    """Return one line per peer comparing it with agent-memory on the same slice (from the rows)."""
    ours = next((r for r in rows if r["name"] == OURS and "error" not in r), None)
    if ours is None:
        return []
    lines = []
    for row in rows:
        if row is ours or "error" in row:
            continue
        gap = ours["recall"]["all"] - row["recall"]["all"]
        lines.append(
            f"- agent-memory against {row['name']}: evidence recall@10 {ours['recall']['all']:.3f} against"
            f" {row['recall']['all']:.3f} ({gap:+.3f}); query p50 {ours['p50_ms']:.1f} ms against"
            f" {row['p50_ms']:.1f} ms ({ours['p50_ms'] / max(row['p50_ms'], 1e-9):.2f}×)."
        )
    return lines


def section(rows: list[dict[str, Any]], blocked: list[tuple[str, str]], data: dict[str, Any]) -> str:
    """Return the ``## Peers`` section."""
    conversations = data["conversations"]
    table = [
        "| system | mode | evidence recall@10, all | categories 1-4 | query p50 ms | index s"
        " | cold start, one question (wall s / CPU s) | MCP over stdio (first answer; call p50) |",
        "|---|---|--:|--:|--:|--:|---|---|",
    ]
    for row in rows:
        if "error" in row:
            table.append(f"| {row['name']} | failed: {row['error']} | | | | | | |")
            continue
        name = f"{row['name']} {row['version']}"
        table.append(
            f"| {name} | {row['mode']} | {row['recall']['all']:.3f} | {row['recall']['cat1-4']:.3f}"
            f" | {row['p50_ms']:.1f} | {row['index_s']:.1f} | {row['cold']} | {row['mcp']} |"
        )
    for name, why in blocked:
        table.append(f"| {name} | not run: cannot run offline here: {why} | | | | | | |")
    notes = findings(rows) + [f"- {row['name']}: {note}." for row in rows for note in row.get("notes", [])]
    questions = sum(len(c["questions"]) for c in conversations)
    turns = sum(len(c["turns"]) for c in conversations)
    return "\n".join(
        [
            HEADING,
            "",
            "Written by `bench/peers/` (`python -m bench --only peers`). Each peer is installed from PyPI",
            f"into its own venv under `{CACHE}` (Python 3.12) and run by a driver",
            "under `bench/peers/drivers/` through its own API and CLI in a subprocess; agent-memory runs",
            "the same way. The slice: LoCoMo conversations"
            f" {', '.join(c['id'] for c in conversations)} ({turns:,} turns, {questions:,} questions), each",
            "its own index with one note per turn; the questions are asked as a user would, with no",
            "ids or labels. Evidence recall@10 as the LoCoMo paper defines it (categories 1-4 leave out",
            "the adversarial questions). Query p50 is inside the driver's process; index s is the time",
            "to take in the notes (basic-memory: `project add` + `reindex` through its CLI, process",
            "starts included). Cold start: a fresh process answering one question (agent-memory and",
            "basic-memory through their CLIs), best of 3; CPU seconds are the stable figure on a shared",
            "machine. MCP: the official SDK client spawns the server over stdio; the first answer",
            "includes the server's start.",
            "",
            f"Machine: {machine()}.",
            "",
            *table,
            "",
            *notes,
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    """Run every system on the slice, print the section, write it unless ``--no-write``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one conversation, its first 30 questions")
    parser.add_argument("--conversations", type=int, default=2, help="LoCoMo conversations in the slice")
    parser.add_argument("--only", nargs="+", help="run only these systems")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args(argv)
    if not corpus.LOCOMO.is_file():
        print(corpus.missing())
        return 0
    data = make_slice(1, 30) if args.quick else make_slice(args.conversations, None)
    mcp_questions = data["conversations"][0]["questions"][: 10 if args.quick else 30]
    work = Path(tempfile.mkdtemp(prefix="am-peers-"))
    rows: list[dict[str, Any]] = []
    blocked = list(OFFLINE_BLOCKED)
    try:
        for system in systems(work):
            if isinstance(system, tuple):
                blocked.append(system)
            elif not args.only or system.name in args.only:
                rows.append(run_system(system, data, work, mcp_questions))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = section(rows, blocked, data)
    print(text)
    if not args.no_write:
        replace_section(HEADING, text)
    return 1 if any("error" in row for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

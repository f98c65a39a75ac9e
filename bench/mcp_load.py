"""Load on the MCP server: concurrent HTTP clients mixing remember and recall on one Home (issue 8).

The same workload runs twice per client count, one run after the other, in one process:

- baseline: the porcelain in-process, one shared ``Memory`` called from N threads (what the
  server does inside, with no protocol, transport or serialisation);
- MCP: ``agent-memory serve --http`` in a subprocess, N clients of the official SDK (each
  its own streamable-HTTP session) in this process's event loop.

First with one client (the protocol's own overhead per call), then with N (20) clients.
Each worker loops until the time is up: half its calls ``remember`` a new, unique sentence,
half ``recall`` two words of the vocabulary (budget 500 tokens). Figures: calls per second,
p50/p99 latency per operation, errors (exceptions and ``is_error`` results; aim 0) and lost
writes — remembers that answered with a record id the Home does not hold afterwards, or a
record count short of preload + successful remembers (aim 0). Cost: baseline calls/s over
MCP calls/s, and MCP p50 over baseline p50. Every run starts from a copy of one preloaded Home.

Run: ``python bench/mcp_load.py`` (1 client for 15 s, then 20 clients for 60 s) or
``--seconds 10 --clients 5 --solo-seconds 5``; the table is printed and written to
``docs/benchmarks.md`` under ``## MCP load`` (``--no-write`` to skip).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from report import machine, replace_section

from agent_memory.home import Home
from agent_memory.memory import Memory

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
HEADING = "## MCP load"
PRELOAD = 300
BUDGET = 500
WORDS = [
    *("deploy", "staging", "backup", "queue", "invoice", "rotation", "printer", "runner", "cache"),
    *("schema", "token", "lunch", "budget", "release", "laptop", "vpn", "gateway", "review"),
    *("meeting", "ticket", "dashboard", "alert", "latency", "region", "bucket"),
]


@dataclass
class Tally:
    """What one run measured."""

    name: str
    clients: int
    seconds: float = 0.0
    remember_ms: list[float] = field(default_factory=list)
    recall_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    lost: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def calls(self) -> int:
        """Calls made, failed ones included."""
        return len(self.remember_ms) + len(self.recall_ms) + len(self.errors)

    def add(self, operation: str, elapsed_ms: float, record_id: str | None = None) -> None:
        """Count one successful call (and the record a remember wrote)."""
        with self.lock:
            (self.remember_ms if operation == "remember" else self.recall_ms).append(elapsed_ms)
            if record_id is not None:
                self.written.append(record_id)

    def fail(self, message: str) -> None:
        """Count one failed call."""
        with self.lock:
            self.errors.append(message)


def sentence(rng: random.Random, worker: int, number: int) -> str:
    """A unique sentence (so no remember is deduped) made of vocabulary words."""
    words = " ".join(rng.choice(WORDS) for _ in range(6))
    return f"Worker {worker} note {number}: the {words} entry."


def query(rng: random.Random) -> str:
    """Two vocabulary words."""
    return f"{rng.choice(WORDS)} {rng.choice(WORDS)}"


def make_home(path: Path) -> Path:
    """A Home preloaded with the same :data:`PRELOAD` records as every other run's."""
    root = Home.init(path, git=False).root
    rng = random.Random(1)  # noqa: S311 - a reproducible workload, not a secret
    with Memory.open(root) as memory:
        for number in range(PRELOAD):
            memory.remember(sentence(rng, -1, number), source="bench:preload")
    return root


def count_and_check(home: Path, tally: Tally) -> None:
    """Set ``tally.lost``: answered record ids the Home lacks, or a count short of what was written."""
    with Memory.open(home) as memory:
        held = {record.id for record in memory.store.list()}
    missing = sum(1 for record_id in tally.written if record_id not in held)
    short = max(0, PRELOAD + len(tally.written) - len(held))
    tally.lost = max(missing, short)


def run_baseline(home: Path, clients: int, seconds: float) -> Tally:
    """The workload on one in-process Memory from ``clients`` threads."""
    tally = Tally("porcelain in-process (threads)", clients)
    with Memory.open(home, actor="agent:bench", source_kind="mcp") as memory:
        memory.recall("warm up", budget_tokens=BUDGET)  # untimed: loads models, as the MCP run does
        deadline = time.perf_counter() + seconds

        def worker(number: int) -> None:
            rng = random.Random(100 + number)  # noqa: S311 - reproducible workload
            count = 0
            while time.perf_counter() < deadline:
                start = time.perf_counter()
                try:
                    if rng.random() < 0.5:
                        count += 1
                        result = memory.remember(sentence(rng, number, count), source="bench")
                        tally.add("remember", (time.perf_counter() - start) * 1000, result.record_id)
                    else:
                        memory.recall(query(rng), budget_tokens=BUDGET)
                        tally.add("recall", (time.perf_counter() - start) * 1000)
                except Exception as exc:  # every failure is a counted error
                    tally.fail(f"{type(exc).__name__}: {exc}")

        started = time.perf_counter()
        threads = [threading.Thread(target=worker, args=(n,)) for n in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        tally.seconds = time.perf_counter() - started
    count_and_check(home, tally)
    return tally


@dataclass
class Gate:
    """Holds every MCP worker until all are connected, so the clock times calls, not handshakes."""

    expected: int
    seconds: float
    connected: int = 0
    opened: anyio.Event = field(default_factory=anyio.Event)
    start: float = 0.0

    async def arrive(self) -> float:
        """Wait for the others; return the shared deadline (perf_counter seconds)."""
        self.connected += 1
        if self.connected == self.expected:
            self.start = time.perf_counter()
            self.opened.set()
        await self.opened.wait()
        return self.start + self.seconds


async def _mcp_worker(url: str, number: int, gate: Gate, tally: Tally) -> None:
    rng = random.Random(100 + number)  # noqa: S311 - reproducible workload
    count = 0
    async with Client(url) as client:
        await client.call_tool(
            "recall", {"query": "warm up", "budget_tokens": BUDGET}
        )  # untimed: loads models
        deadline = await gate.arrive()
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            try:
                if rng.random() < 0.5:
                    count += 1
                    text = sentence(rng, number, count)
                    result = await client.call_tool("remember", {"text": text, "source": "bench"})
                    operation = "remember"
                else:
                    result = await client.call_tool("recall", {"query": query(rng), "budget_tokens": BUDGET})
                    operation = "recall"
            except Exception as exc:  # every failure is a counted error
                tally.fail(f"{type(exc).__name__}: {exc}")
                continue
            elapsed = (time.perf_counter() - start) * 1000
            content: dict[str, Any] | None = result.structured_content
            if result.is_error or content is None:
                tally.fail(str(result.content))
            else:
                tally.add(operation, elapsed, content.get("record_id") if operation == "remember" else None)


def run_mcp(home: Path, clients: int, seconds: float, work: Path) -> Tally:
    """The workload through ``serve --http`` with ``clients`` SDK clients."""
    tally = Tally("MCP streamable HTTP (SDK clients)", clients)
    command = shutil.which("agent-memory", path=str(Path(sys.executable).parent))
    if command is None:
        raise SystemExit("the agent-memory command is not installed next to this Python")
    port = free_port()
    log = work / f"serve-{clients}.log"
    with log.open("wb") as sink:
        server = subprocess.Popen(
            [command, "serve", "--http", "--port", str(port), "--home", str(home), "--agent", "bench"],
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for(port, server, log)
        url = f"http://127.0.0.1:{port}/mcp"

        gate = Gate(clients, seconds)

        async def drive() -> None:
            async with anyio.create_task_group() as group:
                for number in range(clients):
                    group.start_soon(_mcp_worker, url, number, gate, tally)

        anyio.run(drive)
        tally.seconds = time.perf_counter() - gate.start
    finally:
        server.terminate()
        code = server.wait(timeout=30)
    if code != 0:
        tally.fail(f"serve exited with {code}: {log.read_text(encoding='utf-8')[-500:]}")
    count_and_check(home, tally)
    return tally


def free_port() -> int:
    """A port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(port: int, server: subprocess.Popen[bytes], log: Path, limit: float = 60.0) -> None:
    """Return once the server accepts connections; exit if it dies or never listens."""
    deadline = time.perf_counter() + limit
    while time.perf_counter() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.1):
                return
        except OSError:
            pass
        try:
            server.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            continue
        raise SystemExit(f"serve exited with {server.returncode}: {log.read_text(encoding='utf-8')}")
    raise SystemExit(f"serve did not listen on {port} within {limit} s")


def pct(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0–1) of ``values``; NaN when empty."""
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def table(pairs: Sequence[tuple[Tally, Tally]]) -> str:
    """Render each (baseline, MCP) pair as rows of one Markdown table."""
    lines = [
        "| run | clients | seconds | calls | calls/s | remember p50 / p99 ms | recall p50 / p99 ms | "
        "cost vs in-process (calls/s; p50 remember, recall) | errors | lost writes |",
        "|---|--:|--:|--:|--:|--:|--:|---|--:|--:|",
    ]
    for base, mcp in pairs:
        for tally in (base, mcp):
            cost = "—"
            if tally is mcp:
                cost = (
                    f"{(base.calls / base.seconds) / (mcp.calls / mcp.seconds):.2f}×; "
                    f"{pct(mcp.remember_ms, 0.5) / pct(base.remember_ms, 0.5):.2f}×, "
                    f"{pct(mcp.recall_ms, 0.5) / pct(base.recall_ms, 0.5):.2f}×"
                )
            lines.append(
                f"| {tally.name} | {tally.clients} | {tally.seconds:.0f} | {tally.calls:,} | "
                f"{tally.calls / tally.seconds:,.1f} | "
                f"{pct(tally.remember_ms, 0.5):,.1f} / {pct(tally.remember_ms, 0.99):,.1f} | "
                f"{pct(tally.recall_ms, 0.5):,.1f} / {pct(tally.recall_ms, 0.99):,.1f} | {cost} | "
                f"{len(tally.errors)} | {tally.lost} |"
            )
    return "\n".join(lines)


def section(pairs: Sequence[tuple[Tally, Tally]]) -> str:
    """Return the whole ``## MCP load`` section for ``docs/benchmarks.md``."""
    parts = [
        HEADING,
        "",
        "Written by `bench/mcp_load.py`. Each run starts from a copy of one Home (file store, default",
        f"search recipes) preloaded with {PRELOAD} records; each call is `remember` of a new sentence",
        "or `recall` of two words (budget 500 tokens), half and half. The baseline is the same",
        "workload on one in-process `Memory` called from threads, measured in the same run. Cost:",
        "baseline calls/s divided by MCP calls/s, and MCP p50 divided by the baseline's. With one",
        "client the p50 ratio is the protocol's own overhead per call; with many, writes queue for",
        "the Home's one writer, so latency is mostly waiting (in-process threads are served",
        "unfairly, hence their p99). Lost writes: answered record ids missing from the Home",
        "afterwards, or a record count short of preload + successful remembers.",
        "",
        f"Machine: {machine()}.",
        "",
        table(pairs),
    ]
    for base, mcp in pairs:
        for tally in (base, mcp):
            if tally.errors:
                parts += ["", f"First error of {tally.name} ({tally.clients}): `{tally.errors[0][:200]}`"]
    return "\n".join(parts) + "\n"


def write_docs(text: str, path: Path = DOCS) -> None:
    """Replace the ``## MCP load`` section of ``path`` (or add it), keeping every other section."""
    replace_section(HEADING, text, path)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one client, then many, each in-process and through MCP; print and record the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=20, help="concurrent workers of the load run (20)")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each load run (60)")
    parser.add_argument("--solo-seconds", type=float, default=15.0, help="length of each 1-client run (15)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args(argv)
    scratch = os.environ.get("BENCH_DIR")
    pairs: list[tuple[Tally, Tally]] = []
    with tempfile.TemporaryDirectory(prefix="agent-memory-mcp-load-", dir=scratch) as folder:
        work = Path(folder)
        os.environ["XDG_CONFIG_HOME"] = str(work / "config")  # key files stay in the scratch folder
        template = make_home(work / "template")
        for clients, seconds in ((1, args.solo_seconds), (args.clients, args.seconds)):
            base_home = Path(shutil.copytree(template, work / f"baseline-{clients}"))
            mcp_home = Path(shutil.copytree(template, work / f"mcp-{clients}"))
            pairs.append(
                (run_baseline(base_home, clients, seconds), run_mcp(mcp_home, clients, seconds, work))
            )
    text = section(pairs)
    print(text)
    if not args.no_write:
        write_docs(text)
        print(f"written to {DOCS}", file=sys.stderr)
    failed = any(tally.errors or tally.lost for pair in pairs for tally in pair)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

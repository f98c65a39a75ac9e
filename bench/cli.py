"""CLI start-up benchmark: cold ``agent-memory --help`` and ``recall`` against ``python -c pass`` (issue 8).

Every figure is a fresh process, timed from spawn to exit (wall clock), N runs each, the
commands interleaved round by round so machine load hits them alike, each running from
bytecode as an installed package does (with ``PYTHONDONTWRITEBYTECODE`` set, the processes
keep theirs in a scratch ``PYTHONPYCACHEPREFIX``, filled by the warm-up round); the table gives medians
and the ratio to the baseline measured in the same run, ``python -c pass`` (the floor any
Python CLI pays). Rows:

- ``python -c pass``: the baseline.
- ``agent-memory --help``: the lazy command group (no command module imported). Aim: < 0.3 s.
- ``agent-memory CMD --help`` for one command: that command's module, imported on demand.
- ``--help`` with every command module imported first: what eager registration (every module
  imported at start-up, as before the lazy group) costs, for comparison.
- ``agent-memory recall QUERY`` on a 10k-record Home (BM25 recipe, index built beforehand):
  open the Home, check freshness, query, score, print. Queries are the datasets' questions.
- ``import agent_memory.memory``: the import floor of any command that opens a Home.
- ``agent-memory remember`` and ``recall`` on a small Home (``--small``, 100 records by
  default) with the recipes a new Home gets (``hybrid``: BM25 + MiniLM): what a person at the
  prompt or an agent calling the CLI per turn waits for (issue 24 item 3). Aim: ≤ 0.3 s each.
  Each ``remember`` writes a new text (a dedup would skip the write).
- MiniLM start: import the embedder, load the int8 model and embed one question: what the
  default ``hybrid`` recipe adds to each ``recall`` process (its 10k vectors take minutes to
  build on two cores, so the Home here reads BM25; ``--hybrid`` builds them and times recall).
  Once from the optimised copy of the model kept in the user's cache folder (what every
  process but the first one on a machine does: ``search/model_cache.py``) and once with no
  cache folder it could use (the original int8 model, optimised at every start).

The Home is made of real notes (``corpus.scale_texts``: LoCoMo and LongMemEval turns from
``../shared/datasets``, read in place) written straight to ``notes/`` as a copy or a git pull
would leave them; without the datasets the recall rows are skipped and the reason printed.

Usage: ``python bench/cli.py [--runs N] [--records N] [--small N] [--hybrid] [--no-write]``. Prints the
``## CLI start-up`` section and writes it into ``docs/benchmarks.md``.
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
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import corpus
from report import machine, replace_section

HEADING = "## CLI start-up"
AIM_HELP_S = 0.3
AIM_COMMAND_S = 0.3
"""Aim for ``remember`` and ``recall`` on a small Home (issue 24 item 3)."""
NOW = datetime(2026, 11, 1, tzinfo=UTC)
COMMAND = shutil.which("agent-memory", path=str(Path(sys.executable).parent))


Argv = list[str] | Callable[[], list[str]]
"""A row's command, or a function making a fresh one per run (``remember`` of a new text)."""


def spawn(argv: Argv, env: dict[str, str]) -> float:
    """Run ``argv`` to completion (output discarded) and return its wall-clock seconds."""
    argv = argv() if callable(argv) else argv
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    return time.perf_counter() - started


def build_home(folder: Path, records: int, *, hybrid: bool, name: str = "home") -> Path:
    """Write a Home of ``records`` real notes (one version each) and build its index once."""
    from agent_memory.home import Home
    from agent_memory.records.record import MemoryRecord, Provenance
    from agent_memory.search.recipes import SearchSettings, splice_search

    home = Home.init(folder / name, timezone="UTC", key_file=folder / f"{name}.key", git=False, now=NOW)
    settings = home.root / "memory.toml"
    recipes = SearchSettings(recipes=("hybrid",) if hybrid else ("bm25",))
    settings.write_text(splice_search(settings.read_text(encoding="utf-8"), recipes), encoding="utf-8")
    made = (
        MemoryRecord.create(
            type="fact",
            body=text,
            provenance=Provenance(kind="import", ref=ref),
            created_at=NOW - timedelta(minutes=records - number),
        )
        for number, (text, ref) in enumerate(corpus.scale_texts(records))
    )
    corpus.write_notes(home.root / "notes", made, home.identity())
    env = {**os.environ, "XDG_CONFIG_HOME": str(folder)}
    subprocess.run(
        [str(COMMAND), "reindex", "--home", str(home.root)], env=env, check=True, capture_output=True
    )
    return home.root


def measure(rows: dict[str, Argv], runs: int, env: dict[str, str]) -> dict[str, list[float]]:
    """Run every row ``runs`` times, interleaved; one unrecorded warm-up round first (file cache)."""
    times: dict[str, list[float]] = {name: [] for name in rows}
    for round_ in range(runs + 1):
        for name, argv in rows.items():
            seconds = spawn(argv, env)
            if round_:
                times[name].append(seconds)
    return times


def section(times: dict[str, list[float]], notes: list[str], runs: int) -> str:
    """Render the ``## CLI start-up`` section: medians, ratios to ``python -c pass``, the aim."""
    base = statistics.median(times["python -c pass"])
    lines = [
        HEADING,
        "",
        f"_`bench/cli.py`, {datetime.now(UTC):%Y-%m-%d}._ Machine: {machine()}.",
        "",
        f"Each row is a fresh process, wall clock from spawn to exit; median and fastest of {runs} runs,"
        " rows interleaved round by round after one warm-up round; ratio = median ÷ the median of"
        " `python -c pass` in the same run.",
        "",
        "| command | median (s) | fastest (s) | × python -c pass |",
        "|---|---|---|---|",
    ]
    for name, values in times.items():
        median = statistics.median(values)
        lines.append(f"| `{name}` | {median:.3f} | {min(values):.3f} | {median / base:.1f} |")
    help_s = statistics.median(times["agent-memory --help"])
    verdict = "met" if help_s < AIM_HELP_S else "NOT met"
    lines += ["", f"Aim `--help` < {AIM_HELP_S} s: {verdict} ({help_s:.3f} s median)."]
    for name, values in times.items():
        if "-record Home, as init makes it" in name:
            median = statistics.median(values)
            met = "met" if median <= AIM_COMMAND_S else "NOT met"
            lines.append(f"Aim `{name.split(' (')[0]}` ≤ {AIM_COMMAND_S} s: {met} ({median:.3f} s median).")
    lines.append("")
    lines += [f"{note}" for note in notes]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """Measure, print the section and write it into ``docs/benchmarks.md`` (unless ``--no-write``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=15, help="timed runs per row [15]")
    parser.add_argument("--records", type=int, default=10_000, help="records in the Home [10000]")
    parser.add_argument(
        "--small", type=int, default=100, help="records in the small Home of remember/recall [100]"
    )
    parser.add_argument(
        "--hybrid", action="store_true", help="build MiniLM vectors and time recall over hybrid"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    assert COMMAND, "agent-memory is not installed next to this Python"
    python = sys.executable
    rows: dict[str, Argv] = {
        "python -c pass": [python, "-c", "pass"],
        "agent-memory --help": [COMMAND, "--help"],
        "agent-memory recall --help": [COMMAND, "recall", "--help"],
        "--help with every command module imported (eager registration)": [
            python,
            "-c",
            "from agent_memory.cli import COMMANDS, cli, main;"
            " [cli.commands[name] for name in COMMANDS]; main(['--help'])",
        ],
        "python -c 'import agent_memory.memory'": [python, "-c", "import agent_memory.memory"],
    }
    notes = []
    try:
        from agent_memory.search.embedders import MiniLMEmbedder

        MiniLMEmbedder()
        rows["MiniLM start: import, load, embed one question"] = [
            python,
            "-c",
            "from agent_memory.search.embedders import MiniLMEmbedder;"
            " MiniLMEmbedder().embed(['where is it?'])",
        ]
        # /dev/null/x cannot be made: the embedder loads the original model, as with no copy.
        rows["MiniLM start without the cached optimised copy"] = [
            python,
            "-c",
            "import os; os.environ['XDG_CACHE_HOME'] = '/dev/null/x';"
            " from agent_memory.search.embedders import MiniLMEmbedder;"
            " MiniLMEmbedder().embed(['where is it?'])",
        ]
    except Exception as exc:  # any reason the extra cannot load is reported, not fatal
        notes.append(f"MiniLM row skipped: {exc}")
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as scratch:
        folder = Path(scratch)
        env = {**os.environ, "XDG_CONFIG_HOME": str(folder)}
        env.pop("AGENT_MEMORY_HOME", None)
        if env.pop("PYTHONDONTWRITEBYTECODE", None):
            # An installed package runs from bytecode; without it every row would compile the
            # package's sources again. The warm-up round fills this folder, outside the sources.
            env["PYTHONPYCACHEPREFIX"] = str(folder / "bytecode")
        if corpus.available() and args.small:
            small = build_home(folder, args.small, hybrid=True, name="small")
            written = iter(range(1_000_000))
            label = f"{args.small}-record Home, as init makes it: hybrid"
            rows[f"agent-memory remember ({label})"] = lambda: [
                str(COMMAND),
                "remember",
                f"Bench note {next(written)}: the staging host moved.",
                "--source",
                "bench",
                "--home",
                str(small),
            ]
            rows[f"agent-memory recall ({label})"] = [
                COMMAND,
                "recall",
                corpus.questions()[0],
                "--home",
                str(small),
            ]
            notes.append(
                "remember on the small Home pays the import of the porcelain (the `import"
                " agent_memory.memory` row) and the write: signature, note, log line, BM25. Its"
                " vectors wait for the next query (search/freshness.py, Deferred), so it imports"
                " neither numpy nor onnxruntime, and an ordinary sentence passes the secrets"
                " pre-screen without importing detect-secrets. recall on the hybrid Home pays the"
                " porcelain and the MiniLM start (numpy, onnxruntime, the session from its cached"
                " optimised copy: the `MiniLM start` row) before it embeds the question and what the"
                " remember rows left, so on two cores it stays above the aim; a bm25 Home's recall is"
                " the last row. The small Home has no git repository; in one that has (init's"
                " default) each write adds its commit (a few git processes)."
            )
        if corpus.available() and args.records:
            started = time.perf_counter()
            home = build_home(folder, args.records, hybrid=args.hybrid)
            recipe = "hybrid (BM25 + MiniLM)" if args.hybrid else "bm25"
            question = corpus.questions()[0]
            rows[f"agent-memory recall ({args.records:,}-record Home, {recipe})"] = [
                COMMAND,
                "recall",
                question,
                "--home",
                str(home),
            ]
            notes.append(
                f"The Home: {args.records:,} real notes (one version each, recipe {recipe}), built and"
                f" indexed in {time.perf_counter() - started:.0f} s before timing;"
                f" the question: {question!r}."
            )
        else:
            notes.append(f"recall rows skipped: {corpus.missing()}")
        times = measure(rows, args.runs, env)
    text = section(times, notes, args.runs)
    print(text)
    if not args.no_write:
        replace_section(HEADING, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Importers benchmark: what importing a conversation file through ``remember`` costs (issue 9 item 1).

LoCoMo turns from ``../shared/datasets/locomo/locomo.json`` (read in place; the first
``--sessions`` sessions of every conversation, at most ``--items``) into a fresh Home with the
BM25 recipe. Timed, each the median of ``--repeat`` runs:

- the **baseline**: reading the file into items, and putting the same number of prebuilt
  records straight into the Home's ``FileStore`` (no dedup, no log, no index, no screening);
- ``import_path``: every item through ``Memory.remember`` (secrets screening, dedup, store,
  log, index update), one at a time;
- importing the same file again (every item recognised as already present).

The ratio of ``import_path`` to the raw store puts says whether a bulk path is worth having:
a bulk path could at most remove the difference.

Then the product as users drive it, per recipe (``## Importers``, second table): ``agent-memory
init``, ``agent-memory import --from locomo`` of one whole conversation (conv-26, every session),
and the first ``agent-memory recall`` after it, each a fresh process, into a Home on the
default recipe (BM25 + MiniLM vectors: the writes leave the vectors behind,
``search/freshness.py`` "Deferred", and the import embeds every turn at its end,
``cli/transfer.py`` ``_index``; the recall then loads the model for its question) and into
one on the BM25 recipe. Aim (issue 21 item 5): import plus first recall with vectors at most
3× the BM25-only pair.

The same turns are also written as an OpenClaw workspace (one ``memory/YYYY-MM-DD.md`` daily
log per session day, one ``## HH:MM`` section per turn) and imported with ``--from openclaw``
(the ``## Folder importers`` section): the folder walk, the Markdown parse and the tainted
writes, against the same two baselines. Usage:
``python bench/importers.py [--sessions S] [--items N] [--repeat R] [--no-write]``. Prints the
two sections and writes them into ``docs/benchmarks.md``, leaving the others alone.
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
from datetime import UTC, datetime
from pathlib import Path

import corpus
from report import machine, replace_section

from agent_memory.home import Home
from agent_memory.importers import Item, import_path, read_all, read_items
from agent_memory.memory import Memory
from agent_memory.records.record import MemoryRecord, Provenance

LOCOMO = corpus.LOCOMO
COMMAND = shutil.which("agent-memory", path=str(Path(sys.executable).parent)) or "agent-memory"
AIM_VECTORS = 3.0
"""Aim (issue 21 item 5): CLI import + first recall with vectors ÷ the same with BM25 alone."""
QUESTION = "What did Caroline research?"
HEADING = "## Importers"
FOLDER_HEADING = "## Folder importers"


def _home(root: Path) -> Path:
    from agent_memory.search.recipes import BUILTIN_RECIPES, splice_search

    home = Home.init(root, git=False)
    path = root / "memory.toml"
    bm25 = home.settings.search.activating(BUILTIN_RECIPES["bm25"])
    path.write_text(splice_search(path.read_text(encoding="utf-8"), bm25), encoding="utf-8")
    return root


def _timed(run: Callable[[Path], None], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as scratch:
            root = _home(Path(scratch) / "home")
            started = time.perf_counter()
            run(root)
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(sessions: int, items: int, repeat: int) -> tuple[list[tuple[str, float, str]], int]:
    """Return ``[(step, seconds, note)]`` and the number of items imported."""
    from zoneinfo import ZoneInfo

    path = str(LOCOMO)
    parsed = read_items("locomo", path, zone=ZoneInfo("UTC"), limit=sessions)[:items]
    count = len(parsed)
    started = time.perf_counter()
    for _ in range(repeat):
        read_items("locomo", path, zone=ZoneInfo("UTC"), limit=sessions)
    read_s = (time.perf_counter() - started) / repeat
    stamp = datetime.now(UTC)

    def raw(root: Path) -> None:
        store = Home.open(root).store()
        for item in parsed:
            store.put(
                MemoryRecord.create(
                    type=item.type,
                    body=item.text,
                    created_at=stamp,
                    provenance=Provenance(kind="import", ref=item.source, agent=None),
                    occurred_at=item.occurred_at,
                )
            )

    def full(root: Path) -> None:
        with Memory.open(root, source_kind="import") as memory:
            import_path(memory, "locomo", path, limit=sessions, max_items=items)

    def twice(root: Path) -> None:
        with Memory.open(root, source_kind="import") as memory:
            import_path(memory, "locomo", path, limit=sessions, max_items=items)
            again = time.perf_counter()
            import_path(memory, "locomo", path, limit=sessions, max_items=items)
            second.append(time.perf_counter() - again)

    second: list[float] = []
    raw_s = _timed(raw, repeat)
    full_s = _timed(full, repeat)
    _timed(twice, repeat)
    again_s = statistics.median(second)
    rows = [
        ("read the file into items (baseline)", read_s, "JSON parse and date parsing"),
        ("put prebuilt records into the FileStore (baseline)", raw_s, "1.00× — no dedup, log, index"),
        ("import_path: remember each item", full_s, f"{full_s / raw_s:.2f}× the raw puts"),
        ("import the same file again", again_s, f"{again_s / full_s:.2f}× the first import; adds nothing"),
    ]
    return rows, count


def _cli(*args: str) -> float:
    """Run ``agent-memory ARGS`` in a fresh process; return its wall-clock seconds."""
    started = time.perf_counter()
    subprocess.run([COMMAND, *args], check=True, capture_output=True)
    return time.perf_counter() - started


def measure_cli(repeat: int) -> tuple[dict[str, tuple[float, float]], int]:
    """Return ``{recipe: (import s, first recall s)}`` (medians) for one conversation, and its turns."""
    data = json.loads(LOCOMO.read_text(encoding="utf-8"))
    times: dict[str, list[tuple[float, float]]] = {"default": [], "bm25": []}
    with tempfile.TemporaryDirectory() as scratch:
        conversation = Path(scratch) / "conv-26.json"
        conversation.write_text(json.dumps(data[:1]), encoding="utf-8")
        for round_ in range(repeat):
            for recipe in times:  # interleaved, so machine load hits both alike
                home = Path(scratch) / f"{recipe}-{round_}"
                _cli("init", str(home), "--no-git", "--timezone", "UTC")
                if recipe == "bm25":
                    settings = home / "memory.toml"
                    text = settings.read_text(encoding="utf-8")
                    settings.write_text(text.replace("\n[search]\n", '\n[search]\nrecipes = ["bm25"]\n', 1))
                imported = _cli("import", "--home", str(home), "--from", "locomo", str(conversation))
                recalled = _cli("recall", "--home", str(home), QUESTION)
                times[recipe].append((imported, recalled))
        found = subprocess.run(
            [COMMAND, "status", "--home", str(home), "--json"], check=True, capture_output=True, text=True
        )
    turns = int(json.loads(found.stdout)["records"])
    medians = {
        recipe: (statistics.median(i for i, _ in rows), statistics.median(r for _, r in rows))
        for recipe, rows in times.items()
    }
    return medians, turns


def render(
    rows: list[tuple[str, float, str]],
    count: int,
    sessions: int,
    cli: tuple[dict[str, tuple[float, float]], int] | None = None,
) -> str:
    """Return the ``## Importers`` section."""
    lines = [
        HEADING,
        "",
        "Written by `bench/importers.py`. LoCoMo (`../shared/datasets/locomo/locomo.json`, read in place):",
        f"the first {sessions} sessions of every conversation, {count} turns, into a fresh Home with the",
        "BM25 recipe; medians. `import_path` sends every item through `Memory.remember`, one at a time.",
        "",
        "| step | seconds | ms per item | note |",
        "|---|--:|--:|---|",
    ]
    for step, seconds, note in rows:
        lines.append(f"| {step} | {seconds:.2f} | {seconds / count * 1000:.1f} | {note} |")
    if cli is not None:
        medians, turns = cli
        base = sum(medians["bm25"])
        lines += [
            "",
            f"The CLI, one whole conversation (conv-26, {turns} turns), fresh processes, medians:",
            "`agent-memory import --from locomo` (which embeds every turn at its end), then the first",
            "`agent-memory recall` (which loads the model for its question). Ratio: import + first recall",
            "÷ the BM25 pair.",
            "",
            "| recipe | import (s) | first recall (s) | both (s) | ratio |",
            "|---|--:|--:|--:|--:|",
        ]
        for recipe, label in (("bm25", "BM25"), ("default", "default: BM25 + MiniLM vectors")):
            imported, recalled = medians[recipe]
            both = imported + recalled
            lines.append(f"| {label} | {imported:.2f} | {recalled:.2f} | {both:.2f} | {both / base:.2f}× |")
        ratio = sum(medians["default"]) / base
        verdict = "met" if ratio <= AIM_VECTORS else "not met"
        lines += [
            "",
            f"- **Aim (issue 21 item 5):** with vectors {ratio:.2f}× BM25 alone"
            f" ({verdict}: at most {AIM_VECTORS:.0f}×).",
        ]
    lines += ["", f"Machine: {machine()}.", ""]
    return "\n".join(lines)


def write_workspace(root: Path, items: list[Item]) -> Path:
    """Write ``items`` as an OpenClaw workspace under ``root``: a daily log per day, a section per item."""
    days: dict[str, list[str]] = {}
    for item in items:
        when = item.occurred_at or datetime(2023, 1, 1, tzinfo=UTC)
        days.setdefault(when.strftime("%Y-%m-%d"), []).append(f"## {when:%H:%M}\n\n{item.text}\n")
    (root / "memory").mkdir(parents=True)
    for day, sections in days.items():
        (root / "memory" / f"{day}.md").write_text(f"# {day}\n\n" + "\n".join(sections), encoding="utf-8")
    return root


def measure_folder(sessions: int, items: int, repeat: int) -> tuple[list[tuple[str, float, str]], int]:
    """Return ``[(step, seconds, note)]`` for ``--from openclaw`` and the number of items imported."""
    from zoneinfo import ZoneInfo

    turns = read_items("locomo", str(LOCOMO), zone=ZoneInfo("UTC"), limit=sessions)[:items]
    with tempfile.TemporaryDirectory(prefix="bench-openclaw-") as scratch:
        return _measure_workspace(write_workspace(Path(scratch) / "workspace", turns), repeat)


def _measure_workspace(workspace: Path, repeat: int) -> tuple[list[tuple[str, float, str]], int]:
    from zoneinfo import ZoneInfo

    parsed, _ = read_all("openclaw", str(workspace), zone=ZoneInfo("UTC"))
    started = time.perf_counter()
    for _ in range(repeat):
        read_all("openclaw", str(workspace), zone=ZoneInfo("UTC"))
    read_s = (time.perf_counter() - started) / repeat
    stamp = datetime.now(UTC)
    second: list[float] = []

    def raw(root: Path) -> None:
        store = Home.open(root).store()
        for item in parsed:
            provenance = Provenance(kind="import", ref=item.source, agent=None)
            store.put(
                MemoryRecord.create(type=item.type, body=item.text, created_at=stamp, provenance=provenance)
            )

    def full(root: Path) -> None:
        with Memory.open(root, source_kind="import") as memory:
            import_path(memory, "openclaw", str(workspace))

    def twice(root: Path) -> None:
        with Memory.open(root, source_kind="import") as memory:
            import_path(memory, "openclaw", str(workspace))
            again = time.perf_counter()
            import_path(memory, "openclaw", str(workspace))
            second.append(time.perf_counter() - again)

    raw_s = _timed(raw, repeat)
    full_s = _timed(full, repeat)
    _timed(twice, repeat)
    again_s = statistics.median(second)
    rows = [
        ("walk and parse the workspace into items (baseline)", read_s, "safe reads, frontmatter, sections"),
        ("put prebuilt records into the FileStore (baseline)", raw_s, "1.00× — no dedup, log, index"),
        ("import_path --from openclaw", full_s, f"{full_s / raw_s:.2f}× the raw puts; tainted external"),
        (
            "import the same workspace again",
            again_s,
            f"{again_s / full_s:.2f}× the first import; adds nothing",
        ),
    ]
    return rows, len(parsed)


def render_folder(rows: list[tuple[str, float, str]], count: int, sessions: int) -> str:
    """Return the ``## Folder importers`` section."""
    lines = [
        FOLDER_HEADING,
        "",
        "Written by `bench/importers.py`. The LoCoMo turns of the `## Importers` run (first",
        f"{sessions} sessions of every conversation) written as an OpenClaw workspace, one daily log per",
        f"session day and one `## HH:MM` section per turn: {count} sections, imported with `--from openclaw`",
        "into a fresh Home with the BM25 recipe; medians.",
        "",
        "| step | seconds | ms per item | note |",
        "|---|--:|--:|---|",
    ]
    for step, seconds, note in rows:
        lines.append(f"| {step} | {seconds:.2f} | {seconds / count * 1000:.1f} | {note} |")
    lines += ["", f"Machine: {machine()}.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the section and write it unless ``--no-write``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if not LOCOMO.exists():
        print(corpus.missing(), file=sys.stderr)
        return 0
    os.environ.setdefault("XDG_CONFIG_HOME", tempfile.mkdtemp(prefix="bench-importers-config-"))
    rows, count = measure(args.sessions, args.items, args.repeat)
    section = render(rows, count, args.sessions, measure_cli(args.repeat))
    print(section)
    if not args.no_write:
        replace_section(HEADING, section)
    rows, count = measure_folder(args.sessions, args.items, args.repeat)
    section = render_folder(rows, count, args.sessions)
    print(section)
    if not args.no_write:
        replace_section(FOLDER_HEADING, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())

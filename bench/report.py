"""What every benchmark shares: a description of the machine, and writing its section of the docs.

Each benchmark owns one ``## Section`` of ``docs/benchmarks.md`` and replaces only that one,
keeping every other section as it is. The runner (``python -m bench``, issue 10 item 1) owns
the text above the first section: the title, the machine and versions of the run, and the
list of benchmarks with their outcome (:func:`write_header`).
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import os
import platform
import re
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "benchmarks.md"
PLOTS = ROOT / "docs" / "benchmarks"
# The packages whose versions move the figures: runtime, search, embeddings, servers, plots.
KEY_PACKAGES = (
    *("numpy", "click", "PyYAML", "fg-agent-id", "onnxruntime", "tokenizers", "bm25s", "psycopg"),
    *("mcp", "anyio", "matplotlib"),
)


def machine() -> str:
    """Describe the machine and the load it was under (cores, system, Python, SQLite, load, date)."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    system = f"{platform.system()} {platform.machine()}, Python {platform.python_version()}"
    return (
        f"{os.cpu_count()} cores, {system},"
        f" SQLite {sqlite3.sqlite_version}; load average at the end {load} (other jobs shared the machine"
        f" when above the core count); measured {datetime.now(UTC):%Y-%m-%d}"
    )


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock for ``path`` while rewriting it (benchmarks run side by side).

    The lock is a file in the temporary folder named after ``path`` (``fcntl.flock``; released
    when the process dies), so no lock file lands in the docs.
    """
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"agent-memory-bench-{digest}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename (never a half-written file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def replace_section(heading: str, text: str, path: Path = DOCS) -> None:
    """Replace the section starting with the line ``heading`` in ``path`` by ``text`` (or append it).

    Safe beside other benchmarks writing their own sections at the same time (:func:`locked`).

    Args:
        heading: The section's heading line, e.g. ``## Stores``.
        text: The whole new section, starting with ``heading``.
        path: The Markdown file (created with a ``# Benchmarks`` title if absent).
    """
    with locked(path):
        existing = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
        lines = existing.splitlines(keepends=True)
        start = next((i for i, line in enumerate(lines) if line.rstrip() == heading), None)
        if start is None:
            updated = existing.rstrip("\n") + "\n\n" + text
        else:
            end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
            tail = "".join(lines[end:])
            updated = "".join(lines[:start]) + text + ("\n" + tail if tail else "")
        write_atomically(path, updated)


def _first(pattern: str, path: str) -> str | None:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = re.search(pattern, text, flags=re.MULTILINE)
    return found.group(1).strip() if found else None


def _git(*args: str) -> str:
    git = shutil.which("git")
    if git is None:
        return ""
    done = subprocess.run([git, *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def commit() -> str:
    """Return the repository's commit (short hash), with ``+ uncommitted changes`` when the tree is dirty."""
    head = _git("rev-parse", "--short=12", "HEAD") or "unknown (not a git checkout)"
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    return f"{head} + uncommitted changes" if dirty else head


def postgres_version() -> str | None:
    """Return the installed PostgreSQL server's version (``initdb --version``), or ``None``."""
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb")) if Path("/usr/lib").is_dir() else []
    initdb = str(candidates[-1]) if candidates else shutil.which("initdb")
    if initdb is None:
        return None
    done = subprocess.run([initdb, "--version"], capture_output=True, text=True, check=False)
    found = re.search(r"\(PostgreSQL\) (\S+)", done.stdout)
    return found.group(1) if done.returncode == 0 and found else None


def environment() -> dict[str, str]:
    """Describe the machine and the versions a run used: CPU, cores, RAM, OS, Python, commit, packages.

    Returns:
        Ordered ``{label: value}``; packages not installed read ``not installed``.
    """
    kib = _first(r"^MemTotal:\s+(\d+)", "/proc/meminfo")
    os_name = _first(r'^PRETTY_NAME="?([^"\n]*)', "/etc/os-release") or platform.platform()
    versions = []
    for name in KEY_PACKAGES:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} not installed")
    return {
        "CPU": _first(r"^model name\s*:\s*(.+)$", "/proc/cpuinfo") or platform.processor() or "unknown",
        "cores": str(os.cpu_count()),
        "RAM": f"{int(kib) / 2**20:.1f} GiB" if kib else "unknown",
        "OS": f"{os_name}, kernel {platform.release()} ({platform.machine()})",
        "Python": f"{platform.python_version()} ({platform.python_implementation()})",
        "agent-memory": f"{importlib.metadata.version('agent-memory')}, commit {commit()}",
        "SQLite": sqlite3.sqlite_version,
        "PostgreSQL": postgres_version() or "not installed",
        "packages": ", ".join(versions),
    }


@dataclass
class Outcome:
    """How one benchmark of a run ended.

    Attributes:
        name: The benchmark.
        outcome: ``ok``, ``skipped``, ``failed`` or ``interrupted``.
        seconds: Wall seconds.
        peak_mb: Peak resident memory of its largest process, MiB (0 when unknown).
        note: What the table says beside it (the failure's last line, the skip reason, …).
        tail: The last lines it printed (shown for a failure).
    """

    name: str
    outcome: str
    seconds: float
    peak_mb: float
    note: str = ""
    tail: list[str] = field(default_factory=list)


_ROW = re.compile(r"^\| `(\w+)` \|")
_FINISHED = re.compile(r"finished (\d{4}-\d\d-\d\d \d\d:\d\d) UTC")
THIS_RUN = "this run"


def _carried(head: str, ran: set[str]) -> tuple[dict[str, str], list[str]]:
    """Return ``({benchmark: run its section is from}, rows to keep)`` from an earlier header.

    Rows of benchmarks not in ``ran`` are kept, their "this run" turned into the earlier run's
    finishing time; rows in the old four-column form (benchmark, outcome, seconds, note) are
    brought to the present form.
    """
    found = _FINISHED.search(head)
    earlier = f"run of {found.group(1)} UTC" if found else "an earlier run"
    sources: dict[str, str] = {}
    rows: list[str] = []
    for line in head.splitlines():
        match = _ROW.match(line)
        if match is None:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4:  # benchmark | outcome | seconds | note (the first runner's table)
            peak = re.search(r"peak RSS ([\d,]+) MB", cells[3])
            from_run = earlier if cells[1] == "ok" else "an earlier run"
            cells = [*cells[:3], peak.group(1) if peak else "", from_run, "" if peak else cells[3]]
        if len(cells) != 6:
            continue
        if cells[4] == THIS_RUN:
            cells[4] = earlier
        sources[match.group(1)] = cells[4]
        if match.group(1) not in ran:
            rows.append("| " + " | ".join(cells) + " |")
    return sources, rows


def write_header(outcomes: Sequence[Outcome], command: str, started: float, path: Path = DOCS) -> None:
    """Replace the text above the first ``## `` section of ``path``: title, machine, versions, outcomes.

    The table has a row per benchmark: its outcome, seconds, peak memory, and the run its
    section of the docs comes from. A benchmark that failed, was skipped or interrupted left its
    earlier section (and plots) in place: its row names the run they come from. Rows of
    benchmarks this run left out stay, so ``--only`` updates its own rows alone.

    Args:
        outcomes: One per benchmark run, in run order.
        command: The command line that produced the run.
        started: When the run started (``time.time()``).
        path: The Markdown file (created when absent).
    """
    with locked(path):
        _write_header(outcomes, command, started, path)


def _write_header(outcomes: Sequence[Outcome], command: str, started: float, path: Path) -> None:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    first = re.search(r"^## ", existing, flags=re.MULTILINE)
    head, body = (existing[: first.start()], existing[first.start() :]) if first else (existing, "")
    sources, rows = _carried(head, {o.name for o in outcomes})
    for o in outcomes:
        source = THIS_RUN if o.outcome == "ok" else sources.get(o.name, "none (no section yet)")
        outcome = o.outcome if o.outcome in ("ok", "skipped") else f"**{o.outcome}**"
        peak = f"{o.peak_mb:,.0f}" if o.peak_mb else ""
        note = o.note.replace("|", "\\|")
        rows.append(f"| `{o.name}` | {outcome} | {o.seconds:,.0f} | {peak} | {source} | {note} |")
    failed = [o.name for o in outcomes if o.outcome in ("failed", "interrupted")]
    began = datetime.fromtimestamp(started, UTC)
    lines = [
        "# Benchmarks",
        "",
        "Every figure below is measured by a script under `bench/`, beside a baseline measured in the",
        "same run; `python -m bench` runs them all and rewrites this file (each script its own `##`",
        "section) and the plots under `docs/benchmarks/`. Timings come from a machine shared with",
        "other work, so ratios to the same-run baseline are the figures to compare, not absolute times.",
        "",
        f"Last run: `{command}`, started {began:%Y-%m-%d %H:%M} UTC, finished"
        f" {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load average at the end {load}."
        + (
            f" **Failed: {', '.join(failed)}**; their sections are from the run named in the table."
            if failed
            else ""
        )
        + " The column *section from* says which run wrote each benchmark's section; rows of"
        " benchmarks this run left out are kept from earlier runs. A script run on its own"
        " (`python bench/<name>.py`) rewrites its section but not this table; each section's"
        " Machine line gives the date it was measured.",
        "",
        *(f"- **{label}:** {value}" for label, value in environment().items()),
        "",
        "| benchmark | outcome | seconds | peak RSS MB | section from | note |",
        "|---|---|--:|--:|---|---|",
        *rows,
        "",
        "",
    ]
    write_atomically(path, "\n".join(lines) + body)


def loglog_plot(path: Path, title: str, ylabel: str, series: dict[str, list[tuple[float, float]]]) -> None:
    """Draw cost against records on log-log axes, one line per series, each with its fitted exponent.

    The exponent is the slope of ``numpy.polyfit`` of log cost on log records (1.0 is linear
    growth); a series of fewer than two points is drawn without one. A series whose label holds
    ``baseline`` is dashed, in the colour of the series named before its first comma. Writes a
    PNG with the Agg backend (no display needed).

    Args:
        path: The PNG to write.
        title: The plot's title.
        ylabel: The cost axis label, with its unit.
        series: ``{label: [(records, cost), …]}``; costs must be positive.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    figure, axes = plt.subplots(figsize=(7.2, 4.8), dpi=100)
    colours: dict[str, str] = {}
    for label, points in series.items():
        # A baseline shares its store's colour, dashed, so each cost sits beside its own.
        store = label.split(",")[0]
        points = sorted(p for p in points if p[1] > 0)
        if not points:
            continue
        xs, ys = np.array([p[0] for p in points], float), np.array([p[1] for p in points], float)
        if len(points) >= 2:
            slope = float(np.polyfit(np.log(xs), np.log(ys), 1)[0])
            label = f"{label} (exponent {slope:.2f})"
        colours.setdefault(store, f"C{len(colours)}")
        style = "--" if "baseline" in label else "-"
        axes.plot(xs, ys, style, marker="o", color=colours[store], label=label)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("records")
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="small")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)

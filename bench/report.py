"""What every benchmark shares: a description of the machine, and writing its section of the docs.

Each benchmark owns one ``## Section`` of ``docs/benchmarks.md`` and replaces only that one,
keeping every other section as it is. The runner (``python -m bench``, issue 10 item 1) owns
the text above the first section: the title, the machine and versions of the run, and the
list of benchmarks with their outcome (:func:`write_header`).
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import shutil
import sqlite3
import subprocess
from collections.abc import Sequence
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


def replace_section(heading: str, text: str, path: Path = DOCS) -> None:
    """Replace the section starting with the line ``heading`` in ``path`` by ``text`` (or append it).

    Args:
        heading: The section's heading line, e.g. ``## Stores``.
        text: The whole new section, starting with ``heading``.
        path: The Markdown file (created with a ``# Benchmarks`` title if absent).
    """
    existing = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    lines = existing.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == heading), None)
    if start is None:
        updated = existing.rstrip("\n") + "\n\n" + text
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        tail = "".join(lines[end:])
        updated = "".join(lines[:start]) + text + ("\n" + tail if tail else "")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(updated, encoding="utf-8")


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


def write_header(outcomes: Sequence[tuple[str, str, float, str]], command: str, path: Path = DOCS) -> None:
    """Replace the text above the first ``## `` section of ``path``: title, machine, versions, outcomes.

    Args:
        outcomes: ``(benchmark, outcome, seconds, note)`` per benchmark run, in run order;
            outcome is ``ok``, ``skipped`` or ``failed``.
        command: The command line that produced the run.
        path: The Markdown file (created when absent).
    """
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    first = re.search(r"^## ", existing, flags=re.MULTILINE)
    head, body = (existing[: first.start()], existing[first.start() :]) if first else (existing, "")
    # Rows of benchmarks this run left out stay, so `--only` updates its own rows alone.
    ran = {name for name, *_ in outcomes}
    rows = [
        line
        for line in head.splitlines()
        if (found := re.match(r"\| `(\w+)` \|", line)) is not None and found.group(1) not in ran
    ]
    rows += [
        f"| `{name}` | {outcome} | {seconds:,.0f} | {note} |" for name, outcome, seconds, note in outcomes
    ]
    lines = [
        "# Benchmarks",
        "",
        "Every figure below is measured by a script under `bench/`, beside a baseline measured in the",
        "same run; `python -m bench` runs them all and rewrites this file (each script its own `##`",
        "section) and the plots under `docs/benchmarks/`. Timings come from a machine shared with",
        "other work, so ratios to the same-run baseline are the figures to compare, not absolute times.",
        "",
        f"Last run: `{command}`, finished {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load average {load};",
        "rows of benchmarks it left out are from earlier runs.",
        "",
        *(f"- **{label}:** {value}" for label, value in environment().items()),
        "",
        "| benchmark | outcome | seconds | note |",
        "|---|---|--:|---|",
        *rows,
        "",
        "",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + body, encoding="utf-8")


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

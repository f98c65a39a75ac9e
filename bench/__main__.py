"""Run every benchmark of the project: ``python -m bench [--quick] [--only NAME…] [--with-1m]`` (issue 10).

Each benchmark is a script under ``bench/`` with a ``main()`` (or a folder with a
``__main__.py``, such as ``bench/peers/``) that writes its own ``## Section`` of
``docs/benchmarks.md``. This runner finds them (new ones are picked up without a change
here), runs each in its own Python process, so that one crash, one import error or one
module's peak memory does not touch the others, then writes the header of
``docs/benchmarks.md``: the machine, the versions and the outcome of each benchmark. It lists
the benchmarks that failed and exits 1 if any did.

Options:

- ``--quick``: the smallest settings of each benchmark (a smoke run of a few minutes); the
  figures are printed but not written to the docs unless ``--write`` is also given, so a
  quick run never replaces measured figures by rough ones.
- ``--only NAME…``: run only these benchmarks (names as listed by ``--list``).
- ``--with-1m``: also the 1M-record tier of ``bench/scale.py``.

Invariant: a benchmark the runner does not know is still run, with no arguments (plus
``--quick`` / ``--no-write`` when its source declares those options).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from report import write_header  # noqa: E402 - the bench folder is put on the path just above

# Modules of bench/ that are libraries of the benchmarks, not benchmarks.
HELPERS = frozenset({"__main__", "report", "corpus", "search_cjk"})
# The settings of the known benchmarks: (full run, quick run). The full run reproduces the
# sizes in docs/benchmarks.md; scale and peers take --with-1m / --quick themselves.
PLANS: dict[str, tuple[list[str], list[str]]] = {
    "stores": ([], ["--count", "1000"]),
    "search": (["--large"], ["--queries", "100"]),
    "pg_search": (["--large"], []),
    "recall": (["--large", "--hybrid"], ["--queries", "100"]),
    "consolidate": ([], ["--repeat", "1"]),
    "freshness": ([], ["--records", "1000", "--repeat", "3"]),
    "governance": ([], ["--records", "1000", "--repeat", "3"]),
    "importers": ([], ["--items", "100", "--repeat", "1"]),
    "mcp_load": ([], ["--seconds", "5", "--clients", "4", "--solo-seconds", "3"]),
    "embedders": (["--write"], ["--conversations", "1", "--sentences", "128"]),
    "cli": ([], ["--runs", "3", "--records", "1000"]),
    "commits": ([], ["--sizes", "0", "500", "--writes", "3"]),
    "soak": ([], ["--fuzz", "2000", "--interface", "200", "--kills", "5", "--remembers", "20"]),
}


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: its name and the path Python runs (a script, or a folder with ``__main__.py``)."""

    name: str
    path: Path

    @property
    def source(self) -> str:
        """The text of its entry file (read to find the options it declares)."""
        entry = self.path / "__main__.py" if self.path.is_dir() else self.path
        return entry.read_text(encoding="utf-8")


def discover(folder: Path = BENCH) -> list[Benchmark]:
    """Return the benchmarks under ``folder``, sorted by name, the scale and peer runs last.

    A benchmark is a ``*.py`` file defining ``def main(`` that is not in :data:`HELPERS`, or a
    sub-folder with a ``__main__.py``.
    """
    found = [
        Benchmark(path.stem, path)
        for path in folder.glob("*.py")
        if path.stem not in HELPERS and re.search(r"^def main\(", path.read_text(encoding="utf-8"), re.M)
    ]
    found += [Benchmark(path.parent.name, path.parent) for path in folder.glob("*/__main__.py")]
    last = {"scale": 1, "peers": 2}
    return sorted(found, key=lambda b: (last.get(b.name, 0), b.name))


def arguments(bench: Benchmark, *, quick: bool, write: bool, with_1m: bool) -> list[str]:
    """Return the command-line arguments ``bench`` runs with (see :data:`PLANS` and the module doc)."""
    source = bench.source
    full, small = PLANS.get(bench.name, ([], []))
    args = list(small if quick else full)
    if quick and bench.name not in PLANS and '"--quick"' in source:
        args.append("--quick")
    if not write and '"--no-write"' in source:
        args.append("--no-write")
    if bench.name == "embedders" and not write:
        args = [a for a in args if a != "--write"]
    if with_1m and '"--with-1m"' in source:
        args.append("--with-1m")
    return args


@dataclass
class Outcome:
    """How one benchmark ended."""

    name: str
    outcome: str
    seconds: float
    note: str


def run(bench: Benchmark, args: Sequence[str]) -> Outcome:
    """Run ``bench`` in its own Python process, echoing its output; return how it ended.

    The note gives the process's peak resident memory (``os.wait4``); a benchmark that
    prints a line starting with ``skipped`` counts as skipped, with that line as the note.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(BENCH), env.get("PYTHONPATH", "")) if p)
    command = [sys.executable, str(bench.path), *args]
    print(f"\n=== {bench.name}: {shlex.join(command[1:])}", flush=True)
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=BENCH.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    skipped, tail = "", []
    with process.stdout:
        for line in process.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            tail = [*tail[-4:], line.rstrip()]
            if line.startswith("skipped") and not skipped:
                skipped = line.strip()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    peak = f"peak RSS {usage.ru_maxrss / 1024:,.0f} MB"
    if process.returncode != 0:
        last = next((line for line in reversed(tail) if line.strip()), "")
        return Outcome(bench.name, "failed", seconds, f"exit {process.returncode}: {last[:160]}")
    if skipped:
        return Outcome(bench.name, "skipped", seconds, skipped[:200])
    return Outcome(bench.name, "ok", seconds, peak)


def main(argv: Sequence[str] | None = None, folder: Path = BENCH, docs: Path | None = None) -> int:
    """Run the chosen benchmarks, write the docs header, list failures; return 1 if any failed.

    Args:
        argv: The options (see the module docstring); ``sys.argv[1:]`` by default.
        folder: Where the benchmarks are found.
        docs: The Markdown file whose header is written; ``docs/benchmarks.md`` by default.
    """
    parser = argparse.ArgumentParser(prog="python -m bench", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smallest settings; print, do not write docs")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these benchmarks")
    parser.add_argument("--with-1m", action="store_true", help="also the 1M-record scale tier")
    parser.add_argument("--write", action="store_true", help="with --quick: write the docs all the same")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and their arguments")
    options = parser.parse_args(argv)
    write = not options.no_write and (options.write or not options.quick)
    benches = discover(folder)
    if options.only:
        unknown = sorted(set(options.only) - {b.name for b in benches})
        if unknown:
            parser.error(
                f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(b.name for b in benches)}"
            )
        benches = [b for b in benches if b.name in options.only]
    plans = [(b, arguments(b, quick=options.quick, write=write, with_1m=options.with_1m)) for b in benches]
    if options.list:
        for bench, args in plans:
            print(f"{bench.name:12} {shlex.join(args)}")
        return 0
    outcomes = [run(bench, args) for bench, args in plans]
    print("\n=== summary")
    for outcome in outcomes:
        print(f"{outcome.name:12} {outcome.outcome:8} {outcome.seconds:8.0f} s  {outcome.note}")
    if write:
        command = shlex.join(["python", "-m", "bench", *(argv if argv is not None else sys.argv[1:])])
        rows = [(o.name, o.outcome, o.seconds, o.note) for o in outcomes]
        write_header(rows, command, *([docs] if docs is not None else []))
    failed = [o.name for o in outcomes if o.outcome == "failed"]
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

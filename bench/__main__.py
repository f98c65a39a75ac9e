"""Run every benchmark: ``python -m bench [--quick] [--jobs N] [--only NAME…] [--list]`` (issue 10).

Each benchmark is a script under ``bench/`` with a ``main()`` (or a folder with a
``__main__.py``, such as ``bench/peers/``) that writes its own ``## Section`` of
``docs/benchmarks.md``. This runner finds them (new ones are picked up without a change
here), runs each in its own Python process, so that one crash, one import error or one
module's peak memory does not touch the others, then writes the header of
``docs/benchmarks.md``: the machine, the versions, the commit and, per benchmark, its outcome,
seconds, peak memory and the run its section comes from. It lists the benchmarks that failed
and exits 1 if any did; the sections of the others are written all the same.

Options:

- ``--quick``: the smallest settings of each benchmark (a smoke run of a few minutes); the
  figures are printed but not written to the docs unless ``--write`` is also given, so a
  quick run never replaces measured figures by rough ones.
- ``--jobs N``: run N benchmarks at a time, longest expected first (default 2, the cores of
  the machine the docs come from). Every figure is paired with a baseline measured in the same
  process, so the ratios stay same-run; absolute times carry the load, as the header says.
- ``--only NAME…``: run only these benchmarks (names as listed by ``--list``).
- ``--list``: print the plan (arguments, expected minutes, sections written) and its total.
- ``--with-1m``: also the 1M-record tier of ``bench/scale.py``; ``--with-soak``: also the
  reliability soak (``bench/soak.py``, docs/reliability.md; hours at full size).

Plots: after a benchmark succeeds, files under ``docs/benchmarks/`` named after it
(``<name>-*`` or ``<name>.*``) that it did not rewrite in this run are removed as stale; after
a failure its previous plots and section stay, and the header says from which run they come.

Invariant: a benchmark the runner does not know is still run, with no arguments (plus
``--quick`` / ``--no-write`` when its source declares those options).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from plan import expected, longest_first, plan_of, schedule_minutes  # noqa: E402 - bench is on the path
from report import PLOTS, Outcome, write_header  # noqa: E402

# Modules of bench/ that are libraries of the benchmarks, not benchmarks.
HELPERS = frozenset({"__main__", "report", "plan", "corpus", "search_cjk"})
_PRINT = threading.Lock()
_RUNNING: dict[str, subprocess.Popen[str]] = {}


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


# Packages the benchmarks import beyond agent-memory's own (the `bench` and `dev` extras).
NEEDED = ("bm25s", "matplotlib", "psycopg", "onnxruntime", "mcp")


def missing_packages(names: Sequence[str] = NEEDED) -> list[str]:
    """Return the names among ``names`` that cannot be imported here (checked without importing)."""
    return [name for name in names if importlib.util.find_spec(name) is None]


def arguments(bench: Benchmark, *, quick: bool, write: bool, with_1m: bool) -> list[str]:
    """Return the command-line arguments ``bench`` runs with (see :mod:`plan` and the module doc)."""
    source = bench.source
    plan = plan_of(bench.name)
    args = list(plan.quick if quick else plan.full)
    if quick and not plan.quick and '"--quick"' in source:
        args.append("--quick")
    if not write and '"--no-write"' in source:
        args.append("--no-write")
    if not write and "--write" in args:
        args.remove("--write")
    if with_1m and '"--with-1m"' in source:
        args.append("--with-1m")
    return args


def _echo(name: str, line: str, prefix: bool) -> None:
    with _PRINT:
        sys.stdout.write(f"[{name}] {line}" if prefix else line)
        sys.stdout.flush()


def stale_plots(name: str, since: float, folder: Path = PLOTS) -> list[Path]:
    """Return the files of ``folder`` named after benchmark ``name`` last written before ``since``.

    A benchmark's plots and saved data are ``<name>-*`` or ``<name>.*`` (``scale-recall-p50.png``,
    ``scale.json``); ``since`` is a ``time.time()`` stamp (its start).
    """
    if not folder.is_dir():
        return []
    return sorted(
        path
        for path in folder.iterdir()
        if path.is_file()
        and (path.name.startswith(f"{name}-") or path.name.startswith(f"{name}."))
        and path.stat().st_mtime < since
    )


def run(
    bench: Benchmark, args: Sequence[str], *, prefix: bool = False, write: bool = True, plots: Path = PLOTS
) -> Outcome:
    """Run ``bench`` in its own Python process, echoing its output; return how it ended.

    Peak memory is the process's maximum resident set (``os.wait4``: its largest process,
    children it waited for included). A benchmark that prints a line starting with
    ``skipped`` counts as skipped, with that line as the note. After success of a run that
    writes the docs (``write``), its stale plots (:func:`stale_plots`) are removed; a run that
    prints only leaves them alone.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(BENCH), env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    command = [sys.executable, str(bench.path), *args]
    _echo(bench.name, f"{'' if prefix else chr(10)}=== {bench.name}: {shlex.join(command[1:])}\n", prefix)
    started, wall = time.perf_counter(), time.time()
    process = subprocess.Popen(
        command,
        cwd=BENCH.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group: stopped as a whole (see stop())
    )
    _RUNNING[bench.name] = process
    assert process.stdout is not None
    skipped, tail = "", list[str]()
    with process.stdout:
        for line in process.stdout:
            _echo(bench.name, line, prefix)
            tail = [*tail[-19:], line.rstrip()]
            if line.startswith("skipped") and not skipped:
                skipped = line.strip()
    _, status, usage = os.wait4(process.pid, 0)
    _RUNNING.pop(bench.name, None)
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    peak = usage.ru_maxrss / 1024
    if process.returncode != 0:
        last = next((line for line in reversed(tail) if line.strip()), "")
        return Outcome(bench.name, "failed", seconds, peak, f"exit {process.returncode}: {last[:160]}", tail)
    if skipped:
        return Outcome(bench.name, "skipped", seconds, peak, skipped[:200])
    removed = stale_plots(bench.name, wall, plots) if write else []
    for path in removed:
        path.unlink()
    note = f"removed stale {', '.join(p.name for p in removed)}" if removed else ""
    return Outcome(bench.name, "ok", seconds, peak, note)


def stop(processes: Sequence[subprocess.Popen[str]], grace: float = 15.0) -> None:
    """Stop benchmarks the runner started, each with the processes it started (its process group).

    SIGINT first, so that Python's exit handlers run (temporary Homes and PostgreSQL clusters
    are removed); SIGKILL to a group still there after ``grace`` seconds.
    """
    for process in processes:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGINT)
    deadline = time.monotonic() + grace
    for process in processes:
        while time.monotonic() < deadline and _alive(process.pid):
            time.sleep(0.1)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def _alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def run_all(
    plans: Sequence[tuple[Benchmark, list[str]]],
    jobs: int,
    *,
    quick: bool,
    write: bool = True,
    plots: Path = PLOTS,
) -> list[Outcome]:
    """Run ``plans`` ``jobs`` at a time, longest expected first; return outcomes in plan order.

    On Ctrl-C (or SIGTERM) the running benchmarks are terminated and every one not finished is reported
    ``interrupted``.
    """
    order = {b.name: i for i, (b, _) in enumerate(plans)}
    by_name = {b.name: (b, a) for b, a in plans}
    queue = longest_first(list(by_name), quick=quick)
    outcomes: dict[str, Outcome] = {}
    prefix = jobs > 1
    pool = ThreadPoolExecutor(max_workers=jobs)
    futures = {
        name: pool.submit(run, *by_name[name], prefix=prefix, write=write, plots=plots) for name in queue
    }
    try:
        for name in queue:
            try:
                outcomes[name] = futures[name].result()
            except OSError as exc:  # the process could not start or be read: report it, run the rest
                outcomes[name] = Outcome(name, "failed", 0.0, 0.0, f"runner: {exc!r}"[:200])
    except KeyboardInterrupt:
        for future in futures.values():
            future.cancel()
        running = dict(_RUNNING)
        stop(list(running.values()))
        for name in queue:
            future = futures[name]
            if name in outcomes:
                continue
            if (
                name not in running
                and future.done()
                and not future.cancelled()
                and future.exception() is None
            ):
                outcomes[name] = future.result()  # it had ended before the stop
            else:
                outcomes[name] = Outcome(name, "interrupted", 0.0, 0.0, "stopped by Ctrl-C or SIGTERM")
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return sorted(outcomes.values(), key=lambda o: order[o.name])


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _print_plan(plans: Sequence[tuple[Benchmark, list[str]]], jobs: int, *, quick: bool) -> None:
    names = [b.name for b, _ in plans]
    print(f"{'benchmark':12} {'minutes':>7}  arguments  →  writes")
    arguments_of = {bench.name: shlex.join(args) or "(defaults)" for bench, args in plans}
    for name in longest_first(names, quick=quick):
        minutes = expected(name, quick=quick)
        print(f"{name:12} {minutes:7.1f}  {arguments_of[name]}  →  {plan_of(name).writes}")
    serial = sum(expected(n, quick=quick) for n in names)
    print(
        f"expected: {schedule_minutes(names, jobs, quick=quick):.0f} min with --jobs {jobs}"
        f" ({serial:.0f} min one at a time) on 2 otherwise idle cores"
    )


def main(argv: Sequence[str] | None = None, folder: Path = BENCH, docs: Path | None = None) -> int:
    """Run the chosen benchmarks, write the docs header, list failures; return 1 if any failed.

    Args:
        argv: The options (see the module docstring); ``sys.argv[1:]`` by default.
        folder: Where the benchmarks are found.
        docs: The Markdown file whose header is written; ``docs/benchmarks.md`` by default.

    Returns:
        0 when every benchmark run ended ok or skipped, 1 when one failed, 130 on Ctrl-C.
    """
    parser = argparse.ArgumentParser(prog="python -m bench", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smallest settings; print, do not write docs")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these benchmarks")
    parser.add_argument("--jobs", type=int, default=2, help="benchmarks run at a time, longest first [2]")
    parser.add_argument("--with-1m", action="store_true", help="also the 1M-record scale tier")
    parser.add_argument("--with-soak", action="store_true", help="also the reliability soak (hours)")
    parser.add_argument("--write", action="store_true", help="with --quick: write the docs all the same")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    parser.add_argument("--list", action="store_true", help="print the plan and its expected minutes")
    options = parser.parse_args(argv)
    if options.jobs < 1:
        parser.error("--jobs must be at least 1")
    write = not options.no_write and (options.write or not options.quick)
    benches = discover(folder)
    if options.only:
        unknown = sorted(set(options.only) - {b.name for b in benches})
        if unknown:
            parser.error(
                f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(b.name for b in benches)}"
            )
        benches = [b for b in benches if b.name in options.only]
    else:
        chosen = {"--with-soak": options.with_soak}
        benches = [b for b in benches if not plan_of(b.name).opt_in or chosen.get(plan_of(b.name).opt_in)]
    plans = [(b, arguments(b, quick=options.quick, write=write, with_1m=options.with_1m)) for b in benches]
    _print_plan(plans, options.jobs, quick=options.quick)
    if options.list:
        return 0
    missing = missing_packages(NEEDED)
    if missing:
        parser.error(
            f"the benchmarks need {', '.join(missing)}, not installed here:"
            f" run `{sys.executable} -m pip install -e '.[bench,dev]'` first"
        )
    started = time.time()
    previous = signal.signal(signal.SIGTERM, _stop)  # a `kill` ends the run as Ctrl-C does
    try:
        plots = PLOTS if docs is None else docs.with_suffix("")  # docs/benchmarks.md → docs/benchmarks/
        outcomes = run_all(plans, options.jobs, quick=options.quick, write=write, plots=plots)
    finally:
        signal.signal(signal.SIGTERM, previous)
    print("\n=== summary")
    for o in outcomes:
        print(f"{o.name:12} {o.outcome:11} {o.seconds:7.0f} s {o.peak_mb:7,.0f} MB  {o.note}")
    if write:
        command = shlex.join(["python", "-m", "bench", *(argv if argv is not None else sys.argv[1:])])
        write_header(outcomes, command, started, *([docs] if docs is not None else []))
    failed = [o for o in outcomes if o.outcome in ("failed", "interrupted")]
    for o in failed:
        print(f"\n=== {o.name} {o.outcome}; its last lines:", *o.tail, sep="\n", file=sys.stderr)
    if failed:
        print(f"failed: {', '.join(o.name for o in failed)}", file=sys.stderr)
        return 130 if any(o.outcome == "interrupted" for o in failed) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

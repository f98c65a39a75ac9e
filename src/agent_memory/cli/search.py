"""``agent-memory reindex`` and ``agent-memory golden``: rebuild the search indexes, test recall (issue 4).

Both import the core when they run; ``rich`` (the progress bar, :mod:`agent_memory.cli.progress`)
is imported only when ``reindex`` draws on a terminal, so ``agent-memory --help`` stays light.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from agent_memory.cli.common import echo_json, home_option, json_option, open_home
from agent_memory.cli.progress import progress as _progress

if TYPE_CHECKING:
    from agent_memory.doctor.golden import GoldenReport
    from agent_memory.home import Home
    from agent_memory.memory import Memory
    from agent_memory.search.recipes import RecipeSpec


@click.command()
@click.option(
    "--recipe",
    "recipe_file",
    metavar="FILE",
    default=None,
    type=click.Path(path_type=str),
    help="Build the recipe in FILE next to the current indexes; switch only if golden.yaml agrees.",
)
@click.option(
    "--all", "everything", is_flag=True, help="First delete every index in .cache/indexes, unused ones too."
)
@home_option
@json_option
def reindex(recipe_file: str | None, everything: bool, home: str | None, as_json: bool) -> None:
    """Rebuild the search indexes from the notes, with a progress bar; logs a reindex event.

    Without --recipe, the indexes recall reads are emptied and filled again from the
    notes (--all first deletes .cache/indexes entirely). With --recipe FILE (TOML: name,
    kind and options, as a [search.recipe.NAME] table of memory.toml), that recipe's index
    is built beside the current ones, golden.yaml is run on both, and memory.toml switches
    to it only when it finds at least as many questions; otherwise the current indexes stay
    and both scores are printed. (Seed 003.)
    """
    from agent_memory.memory import Memory

    opened = open_home(home)
    if everything:
        with opened.writer_lock():
            shutil.rmtree(opened.cache_dir / "indexes", ignore_errors=True)
    with Memory.open(opened.root) as memory:
        if recipe_file is None:
            report = _rebuild(memory, as_json)
        else:
            report = _try_recipe(opened, memory, Path(recipe_file), as_json)
        memory.log.append("reindex", actor=memory.actor, details=report["log"])
    if as_json:
        echo_json({k: v for k, v in report.items() if k != "log"})
    else:
        for line in report["lines"]:
            click.echo(line)


def _rebuild(memory: Memory, quiet: bool) -> dict[str, Any]:
    catalog = memory.catalog
    started = time.perf_counter()
    with _progress(f"indexing ({', '.join(catalog.active)})", quiet=quiet) as progress:
        read = catalog.rebuild(progress=progress)
    catalog.flush()
    seconds = time.perf_counter() - started
    names = list(catalog.active)
    return {
        "recipes": names,
        "records": read,
        "seconds": round(seconds, 3),
        "log": {"recipes": names, "records": read, "rebuilt": True},
        "lines": [f"reindexed {', '.join(names)}: {read} records read in {seconds:.1f} s"],
    }


def _try_recipe(home: Home, memory: Memory, path: Path, quiet: bool) -> dict[str, Any]:
    from agent_memory.doctor.golden import load_golden, run_golden
    from agent_memory.errors import ConfigError
    from agent_memory.search.holdings import unavailable
    from agent_memory.search.recipes import load_recipe_file

    catalog = memory.catalog
    spec = load_recipe_file(path, home.settings.search)
    if spec.name in catalog.active:
        raise ConfigError(f"{spec.name} is already what recall reads", path=str(path), field="name")
    reason = unavailable(spec)
    if reason is not None:
        raise ConfigError(reason, path=str(path))
    questions = load_golden(home.root / "golden.yaml")
    current = list(catalog.active)
    catalog.add_recipe(spec)
    with _progress(f"building {spec.name}", quiet=quiet) as progress:
        catalog.refresh(force=True, progress=progress)
    catalog.flush()
    before = run_golden(memory, questions)
    after = run_golden(memory, questions, recipes=[spec.name])
    switch = after.found >= before.found
    if switch:
        _switch(home, spec)
        catalog.activate([spec.name], "memory.toml [search] recipes")
    lines = [
        f"golden.yaml: {len(questions)} questions",
        f"current {', '.join(current)}: {before.summary()}",
        f"new     {spec.name}: {after.summary()}",
    ]
    if not questions:
        lines.append("golden.yaml has no questions, so nothing guards this switch: add some to it")
    if switch:
        lines.append(f"switched: memory.toml now reads {spec.name}")
    else:
        lines.append(
            f"kept {', '.join(current)}: {spec.name} found {after.found} of {after.evaluated} questions,"
            f" fewer than {before.found}; its index stays in .cache/indexes/{spec.name}"
        )
        lines += [f"  {_miss_line(o.to_json())}" for o in after.outcomes if o.verdict == "missed"]
    counts = {"current": before.found, "new": after.found, "questions": after.evaluated}
    return {
        "recipe": spec.name,
        "current": current,
        "switched": switch,
        "golden": {"current": before.to_json(), "new": after.to_json()},
        "log": {"recipe": spec.name, "current": current, "switched": switch, "found": counts},
        "lines": lines,
    }


def _switch(home: Home, spec: RecipeSpec) -> None:
    """Make ``spec`` the only recipe memory.toml names, keeping the rest of the file as it is."""
    from agent_memory.search.recipes import splice_search
    from agent_memory.settings import Settings
    from agent_memory.stores.file_io import write_bytes_atomic

    path = home.root / "memory.toml"
    with home.writer_lock():
        settings = Settings.load(path)  # what is there now, not what this process read at start
        text = splice_search(path.read_text(encoding="utf-8"), settings.search.activating(spec))
        check = path.with_name(".memory.toml.check")
        check.write_text(text, encoding="utf-8")
        try:
            Settings.load(check)  # never write a memory.toml that does not read back
        finally:
            check.unlink()
        write_bytes_atomic(path, text.encode("utf-8"))


def _miss_line(outcome: dict[str, Any]) -> str:
    return f"MISS #{outcome['number']} {outcome['query']!r} expected {outcome['expected']}: {outcome['note']}"


@click.command()
@click.option(
    "--recipe",
    "recipes",
    multiple=True,
    metavar="NAME",
    help="Ask this configured or built-in recipe's index instead of the active ones (repeatable).",
)
@home_option
@json_option
def golden(recipes: tuple[str, ...], home: str | None, as_json: bool) -> None:
    """Run golden.yaml's questions through recall; print recall@k and the misses.

    Each question's record (by id, followed through superseded_by, or by a text it
    contains) must be within the top k records (k from the entry, default 5); erased and
    withdrawn records are skipped with a note. Exit status 1 when any question is missed.
    (DESIGN.md §9 "Golden recall".)
    """
    from agent_memory.doctor.golden import load_golden, run_golden
    from agent_memory.errors import ConfigError
    from agent_memory.memory import Memory
    from agent_memory.search.holdings import unavailable

    opened = open_home(home)
    questions = load_golden(opened.root / "golden.yaml")
    specs = [opened.settings.search.recipe(name) for name in recipes]
    for spec in specs:
        reason = unavailable(spec)
        if reason is not None:
            raise ConfigError(reason, field="--recipe")
    with Memory.open(opened.root) as memory:
        for spec in specs:
            if spec.name not in memory.catalog.active:
                memory.catalog.add_recipe(spec)
        report = run_golden(memory, questions, recipes=recipes or None)
    _print_report(report, as_json)
    if report.count("missed"):
        raise click.exceptions.Exit(1)


def _print_report(report: GoldenReport, as_json: bool) -> None:
    if as_json:
        echo_json(report.to_json())
        return
    if not report.outcomes:
        click.echo("golden.yaml has no questions yet (see the comment in it for the format)")
        return
    click.echo(report.summary())
    for outcome in report.outcomes:
        data = outcome.to_json()
        if outcome.verdict == "missed":
            click.echo(_miss_line(data))
        elif outcome.verdict == "skipped":
            click.echo(
                f"skip #{data['number']} {data['query']!r} expected {data['expected']}: {data['note']}"
            )

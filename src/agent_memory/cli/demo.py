"""``agent-memory demo``: build a Home from real input and walk its whole lifecycle (issue 9 item 1)."""

from __future__ import annotations

import click

from agent_memory.cli.common import non_empty_path

__all__ = ["demo"]


@click.command()
@click.option(
    "--home",
    "home",
    metavar="PATH",
    default=None,
    callback=non_empty_path,
    help="A new or empty folder for the demo Home [default: a fresh temporary folder, kept].",
)
@click.option(
    "--repo",
    metavar="PATH",
    default=None,
    help="The git repository to import [default: the one the current directory is in].",
)
@click.option(
    "--dataset",
    metavar="FILE",
    default=None,
    type=click.Path(exists=True, dir_okay=False, path_type=str),
    help="A LoCoMo or LongMemEval JSON file to import instead of a repository.",
)
def demo(home: str | None, repo: str | None, dataset: str | None) -> None:
    """Build a Home from real input, then capture, consolidate, render, recall, supersede, dispute, withdraw.

    By default the input is the git repository you are in: its latest commits become dated
    episodes with their authors and README / docs/*.md become notes sourced to file and
    line. With --dataset, a LoCoMo or LongMemEval file's first sessions become episodes.
    The input is bounded (printed) so the demo finishes within a minute. Each step prints
    the command that does the same by hand. Exit status 3 when the input cannot be read or
    --home is not empty.
    """
    from agent_memory.demo import run_demo

    if repo is not None and dataset is not None:
        raise click.UsageError("pass --repo or --dataset, not both")
    result = run_demo(home, repo=repo, dataset=dataset, echo=click.echo)
    if result.imported.error is not None:
        raise click.exceptions.Exit(3)

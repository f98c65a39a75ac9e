"""``agent-memory demo``: build a Home from real input and walk its whole lifecycle (issue 9 item 1)."""

from __future__ import annotations

import click

from agent_memory.cli.common import non_empty, quiet_option
from agent_memory.cli.progress import progress

__all__ = ["demo"]


@click.command()
@click.option(
    "--home",
    "home",
    metavar="PATH",
    default=None,
    callback=non_empty,
    help="A new or empty folder for the demo Home [default: a fresh temporary folder, kept, key inside].",
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
@quiet_option
def demo(home: str | None, repo: str | None, dataset: str | None, quiet: bool) -> None:
    """Build a Home from real input, then capture, consolidate, render, recall, supersede, dispute, withdraw.

    By default the input is the git repository you are in: its latest commits become dated
    episodes with their authors and README / docs/*.md become notes sourced to file and
    line. With --dataset, a LoCoMo or LongMemEval file's first sessions become episodes.
    The input is bounded (printed) so the demo finishes within a minute. Each step prints
    the command that does the same by hand; a spinner on stderr names the running step
    (only on a terminal; not with --quiet). The last three lines say what was built,
    where, and the next three commands to try on it.

    Without --home the Home is made in a fresh temporary folder with its signing key
    beside it (``agent-memory-demo-…/home`` and ``…/signing.key``): removing that folder
    removes both, and nothing is left in ~/.config. Exit status 3 when the input cannot be
    read or --home is not empty.
    """
    from agent_memory.demo import run_demo

    if repo is not None and dataset is not None:
        raise click.UsageError("pass --repo or --dataset, not both")
    with progress("demo", quiet=quiet) as bar:
        result = run_demo(home, repo=repo, dataset=dataset, echo=click.echo, on_step=bar.step)
    if result.imported.error is not None:
        raise click.exceptions.Exit(3)

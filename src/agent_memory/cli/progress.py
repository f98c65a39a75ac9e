"""Progress on stderr for commands that can run longer than a second (issue 24 item 2).

One helper for every command: :func:`progress` yields a :class:`Progress` whose
``update(done, total)`` moves a bar (or a spinner while the total is unknown) and whose
``step(label)`` names the part now running. It draws with ``rich`` on stderr, and only when
stderr is a terminal: under ``--quiet`` or ``--json``, in a pipe, a file or a test, nothing is
drawn and ``rich`` is never imported, so scripts see exactly the output they saw before and
start-up stays light.

Invariant: progress never writes to stdout and never changes what a command prints or
returns; a bar left on screen is cleared when the work ends (``transient``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Progress", "progress", "shows_progress"]


def shows_progress(quiet: bool = False) -> bool:
    """Return whether progress would be drawn: not ``quiet`` and stderr is a terminal.

    ``TERM=dumb`` counts as no terminal (rich could not redraw a line there).
    """
    if quiet or os.environ.get("TERM") == "dumb":
        return False
    return _is_terminal(sys.stderr)


def _is_terminal(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):  # a stream replaced or closed
        return False


class Progress:
    """A running progress display; every method is a no-op when nothing is drawn.

    Use through :func:`progress`. ``update`` is shaped as the ``(done, total)`` callback the
    core's long operations take (``catalog.rebuild(progress=…)``, importers).
    """

    def __init__(self, bar: Any = None, task: Any = None) -> None:
        self._bar = bar
        self._task = task

    @property
    def drawn(self) -> bool:
        """Whether anything is being drawn (stderr is a terminal and not ``--quiet``)."""
        return self._bar is not None

    def update(self, done: int, total: int | None = None) -> None:
        """Show ``done`` of ``total`` items (a spinner and the count while ``total`` is None)."""
        if self._bar is not None:
            self._bar.update(self._task, completed=done, total=total)

    def advance(self, count: int = 1) -> None:
        """Count ``count`` more items done."""
        if self._bar is not None:
            self._bar.advance(self._task, count)

    def step(self, label: str, total: int | None = None) -> None:
        """Name the part of the work now running, and start its count from zero."""
        if self._bar is not None:
            self._bar.update(self._task, description=label, completed=0, total=total)

    def __call__(self, done: int, total: int) -> None:
        """The ``(done, total)`` callback form of :meth:`update`."""
        self.update(done, total)


@contextmanager
def progress(label: str, *, quiet: bool = False, total: int | None = None) -> Iterator[Progress]:
    """Draw progress for the work inside the ``with`` block, on stderr, only on a terminal.

    Args:
        label: What is being done, e.g. ``"importing locomo.json"``.
        quiet: ``--quiet`` or ``--json`` was given: draw nothing.
        total: Items expected, when known (a bar with ``done/total``); a spinner otherwise.

    Yields:
        The :class:`Progress` to update (a no-op one when nothing is drawn).
    """
    if not shows_progress(quiet):
        yield Progress()
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as RichProgress

    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    console = Console(stderr=True)
    # Lines a command prints meanwhile go above the bar when stdout is the same terminal;
    # stdout sent to a pipe or file is left alone (rich would otherwise send it to stderr).
    redirect = _is_terminal(sys.stdout)
    with RichProgress(
        *columns, console=console, transient=True, redirect_stdout=redirect, redirect_stderr=False
    ) as bar:
        task = bar.add_task(label, total=total)
        yield Progress(bar, task)

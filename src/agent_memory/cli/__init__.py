"""The ``agent-memory`` command line (DESIGN.md §8): one group, one module per family of commands.

Start-up stays light: this module imports only click; each command imports what it needs
when it runs, so ``agent-memory --help`` never loads the record, store or search code.
Errors become one line on stderr plus an optional hint, in one place (:func:`main`).

Exit status: 0 success; 1 a check found problems (``verify``); 2 a usage error;
3 the operation could not be done (bad input, unreadable file, store error).
"""

from __future__ import annotations

import sqlite3
import sys

import click

from agent_memory.cli.demo import demo
from agent_memory.cli.doctor import doctor
from agent_memory.cli.erasure import erase, forget
from agent_memory.cli.feedback import feedback
from agent_memory.cli.governance import approve, controls, reinstate, reject, review, withdraw
from agent_memory.cli.home import init, init_key
from agent_memory.cli.jobs import archive_inbox, capture, inbox, render, schedule
from agent_memory.cli.log import log
from agent_memory.cli.maintenance import consolidate
from agent_memory.cli.memory import archive_, recall, remember, resolve, status, supersede
from agent_memory.cli.migrate import migrate
from agent_memory.cli.promotion import promote, promote_accept, promote_reject, promotions
from agent_memory.cli.proposals import accept, decline, proposals, revert
from agent_memory.cli.records import history, list_, show
from agent_memory.cli.search import golden, reindex
from agent_memory.cli.serve import serve
from agent_memory.cli.transfer import export_, import_
from agent_memory.cli.verify import verify

__all__ = ["EXIT_ERROR", "EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "cli", "main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_ERROR = 3


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agent-memory")
def cli() -> None:
    """Long-term memory for LLM agents: Markdown notes you can read, diff and carry away."""


for command in (
    init,
    init_key,
    remember,
    recall,
    supersede,
    resolve,
    archive_,
    status,
    show,
    list_,
    history,
    log,
    export_,
    import_,
    verify,
    serve,
    migrate,
    feedback,
    reindex,
    golden,
    withdraw,
    reinstate,
    controls,
    review,
    approve,
    reject,
    capture,
    inbox,
    archive_inbox,
    schedule,
    render,
    consolidate,
    erase,
    forget,
    promote,
    promotions,
    promote_accept,
    promote_reject,
    proposals,
    accept,
    decline,
    revert,
    doctor,
    demo,
):
    cli.add_command(command)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; turn every ``AgentMemoryError`` into a one-line message and exit status 3."""
    from agent_memory.errors import AgentMemoryError

    try:
        # Outside standalone mode click returns the code of a ``click.exceptions.Exit``.
        result = cli.main(args=argv, prog_name="agent-memory", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_USAGE if isinstance(exc, click.UsageError) else EXIT_ERROR)
    except click.exceptions.Abort:
        click.echo("agent-memory: aborted", err=True)
        sys.exit(EXIT_ERROR)
    except AgentMemoryError as exc:
        click.echo(f"agent-memory: error: {exc}", err=True)
        if exc.hint:
            click.echo(f"hint: {exc.hint}", err=True)
        sys.exit(EXIT_ERROR)
    except OSError as exc:
        # A file system refusal outside our own checks (a path under /proc, a file for a folder).
        where = f": {exc.filename}" if exc.filename else ""
        click.echo(f"agent-memory: error: {exc.strerror or exc}{where}", err=True)
        sys.exit(EXIT_ERROR)
    except sqlite3.Error as exc:
        click.echo(f"agent-memory: error: SQLite: {exc}", err=True)
        click.echo("hint: is the path a database of agent-memory's?", err=True)
        sys.exit(EXIT_ERROR)
    sys.exit(result if isinstance(result, int) else EXIT_OK)

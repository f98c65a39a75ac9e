"""Options and helpers shared by the commands: ``--home``, ``--json`` and opening a Home."""

from __future__ import annotations

import getpass
import json
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from agent_memory.home import Home

__all__ = [
    "commit_home",
    "default_source",
    "echo_json",
    "home_option",
    "json_option",
    "non_empty",
    "open_home",
    "quiet_option",
    "scope_options",
]

F = TypeVar("F", bound=Callable[..., Any])


def non_empty(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Click callback: refuse an empty or blank value, which would otherwise mean the default.

    An empty ``--home ""`` would mean ``./memory``, an empty ``--source ""`` the default
    ``cli:<user>@<date>``: both are usage errors (exit status 2) instead. ``value`` is a
    string, ``None`` (left out) or, for a ``multiple`` option, a tuple of strings.

    Raises:
        click.BadParameter: ``value`` (or one of its items) is ``""`` or only spaces (click's
            message names the parameter).
    """
    values = value if isinstance(value, tuple) else (value,)
    if any(item is not None and not str(item).strip() for item in values):
        raise click.BadParameter("must not be empty (leave it out to use the default)")
    return value


def home_option(func: F) -> F:
    """Add ``--home PATH`` (default ``$AGENT_MEMORY_HOME``, then ``./memory``; DESIGN.md §8).

    An empty ``--home ""`` is a usage error (exit status 2), never the default Home.
    """
    return click.option(
        "--home",
        "home",
        metavar="PATH",
        default=None,
        callback=non_empty,
        help="The Home folder [default: $AGENT_MEMORY_HOME, else ./memory].",
    )(func)


def json_option(func: F) -> F:
    """Add ``--json``: print machine-readable JSON instead of text."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")(func)


def scope_options(func: F) -> F:
    """Add the withdrawal scope selectors of seed 000 §12.2 (``withdraw``, ``forget``).

    ``--record ID``, ``--archive-ref REF``, ``--source REF``, ``--namespace NS``, each
    repeatable, passed as the tuples ``records``, ``archive_refs``, ``sources``, ``namespaces``.
    """
    options = [
        click.option(
            "--record", "records", multiple=True, metavar="ID", help="A record id (mem:…); repeat for more."
        ),
        click.option(
            "--archive-ref",
            "archive_refs",
            multiple=True,
            metavar="REF",
            help="An archive file or anchor (archive/2026-11-29.md[#…]); a file covers its anchors.",
        ),
        click.option(
            "--source",
            "sources",
            multiple=True,
            metavar="REF",
            callback=non_empty,
            help="A source or run ref (covers its #anchors).",
        ),
        click.option(
            "--namespace", "namespaces", multiple=True, metavar="NS", help="A namespace (user:u1, …)."
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def open_home(home: str | None) -> Home:
    """Open the Home named by ``--home`` / the environment / ``./memory``.

    Raises:
        ConfigError: There is no Home there (the message says how to create one).
    """
    from agent_memory.home import Home, resolve_home

    return Home.open(resolve_home(home))


def commit_home(opened: Home, command: str, *, since: float) -> bool:
    """Commit what a Home-level command (``capture``, ``archive-inbox``, ``render``) changed.

    Takes the Home's writer lock, then :meth:`Home.autocommit
    <agent_memory.home.Home.autocommit>` with the message ``agent-memory: COMMAND``; commands
    that open a :class:`~agent_memory.memory.Memory` commit when it closes instead.

    Args:
        opened: The Home.
        command: The command's name, for the message.
        since: When the command began (``time.time()``): only files it changed are staged.

    Returns:
        True when a commit was made.
    """
    with opened.writer_lock():
        return opened.autocommit(f"agent-memory: {command}", since=since)


def echo_json(value: Any) -> None:
    """Print a JSON value, UTF-8, indented, keys in insertion order."""
    click.echo(json.dumps(value, ensure_ascii=False, indent=2))


def default_source(now: datetime | None = None) -> str:
    """Return the source a CLI write gets without ``--source``: ``cli:<user>@<local date>``.

    The user is :func:`getpass.getuser` (``$LOGNAME``, ``$USER``, ``$LNAME`` or
    ``$USERNAME``, else the password entry of the process's uid, so a shell without ``$USER``
    still names ``root``); ``unknown`` only when none of those names anyone. The date is the
    local calendar day (ISO 8601) of ``now`` (default: the current time), so a CLI write is
    never unsourced (DESIGN.md §2: ``provenance.ref`` is required on every write).

    Args:
        now: The moment to date the source by (aware or naive; read in local time).

    Returns:
        e.g. ``"cli:ana@2026-11-30"``.
    """
    try:
        user = getpass.getuser() or "unknown"
    except (KeyError, OSError, ImportError):  # no name in the environment and no password entry
        user = "unknown"
    return f"cli:{user}@{(now or datetime.now()).astimezone().date().isoformat()}"


def quiet_option(func: F) -> F:
    """Add ``--quiet``: draw no progress on stderr (``--json`` silences it too; issue 24 item 2)."""
    return click.option(
        "--quiet",
        "-q",
        "quiet",
        is_flag=True,
        help="Draw no progress on stderr (it shows only on a terminal).",
    )(func)

"""Run ``archive-inbox`` daily with the machine's own scheduler (seed 000 §13, ``memory:L2``).

No home-made daemon: :func:`schedule_text` prints what to install for cron, a systemd user
timer or a launchd agent, each calling the installed ``agent-memory archive-inbox --home
<Home>`` with absolute paths and sending its output to ``<Home>/.cache/archive-inbox.log``.
:func:`archive_due` lets a long-running process that is idle anyway (the MCP server) decide
whether to run the job now.

Which hour the job runs does not change any date: each item is archived under its own
capture day (:mod:`agent_memory.jobs.archive`). Each printer quotes every path for its
format (cron's ``%``, systemd's ``%`` and ``$`` specifiers, XML entities), so a Home in a
folder with spaces or quotes still works.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from datetime import datetime, time
from pathlib import Path
from xml.sax.saxutils import escape

from agent_memory.home import Home
from agent_memory.jobs.inbox import local_day, read_inbox
from agent_memory.log.base import Action
from agent_memory.records.wire import utc_now

__all__ = ["DEFAULT_TIME", "SCHEDULERS", "archive_due", "schedule_text", "unit_name"]

SCHEDULERS = ("cron", "systemd", "launchd")
DEFAULT_TIME = time(4, 10)
"""Default run time: 04:10, as the origin's Kubernetes CronJob (origin-notes §3 use cases)."""


def unit_name(home: Home) -> str:
    """Return the job's name for this Home: ``agent-memory-archive-<first 8 hex of home_id>``."""
    return f"agent-memory-archive-{home.settings.home_id[:8]}"


def schedule_text(kind: str, home: Home, command: Sequence[str], *, at: time = DEFAULT_TIME) -> str:
    """Return the crontab line, systemd units or launchd plist that runs archive-inbox daily.

    Args:
        kind: One of :data:`SCHEDULERS`.
        home: The Home (its absolute path and ``home_id`` name the job).
        command: The argv that starts agent-memory (e.g. ``["/venv/bin/agent-memory"]``).
        at: Time of day: the machine's local time for cron and launchd; the Home's zone for
            systemd (``OnCalendar`` takes a zone).

    Raises:
        ValueError: An unknown ``kind``.
    """
    root = home.root.resolve()
    argv = [*command, "archive-inbox", "--home", str(root)]
    log = str(root / ".cache" / "archive-inbox.log")
    if kind == "cron":
        return _cron(argv, log, at, root)
    if kind == "systemd":
        return _systemd(argv, at, home, root)
    if kind == "launchd":
        return _launchd(argv, log, at, home)
    raise ValueError(f"unknown scheduler {kind!r} (one of: {', '.join(SCHEDULERS)})")


def archive_due(home: Home, *, now: datetime | None = None) -> bool:
    """Return whether archive-inbox should run now: the inbox holds an item from before today.

    Today is the local day of ``now`` in the Home's zone (naive: wall-clock time there). An
    inbox with only today's items waits until tomorrow, so a day's captures are archived
    together; a malformed line makes the job due, so that its refusal is reported.

    Raises:
        RecordError: The inbox cannot be read.
    """
    today = local_day(now if now is not None else utc_now(), home.settings.zone)
    parsed = read_inbox(home)
    return bool(parsed.problems) or any(item.day < today for item in parsed.items)


def _cron(argv: list[str], log: str, at: time, root: Path) -> str:
    line = " ".join(_cron_quote(arg) for arg in argv) + f" >>{_cron_quote(log)} 2>&1"
    return (
        f"# agent-memory: archive the inbox of {root} daily at {at:%H:%M} (this machine's local time).\n"
        f"# Install: crontab -e and add the line below ({Action.ARCHIVE_INBOX.value}, seed 000 §13).\n"
        f"{at.minute} {at.hour} * * * {line}\n"
    )


def _cron_quote(arg: str) -> str:
    # In a crontab command an unescaped % ends the command; escape it after shell quoting.
    return shlex.quote(arg).replace("%", "\\%")


def _systemd(argv: list[str], at: time, home: Home, root: Path) -> str:
    name = unit_name(home)
    exec_start = " ".join(_systemd_quote(arg) for arg in argv)
    return (
        f"# file: ~/.config/systemd/user/{name}.service\n"
        "[Unit]\n"
        f"Description=agent-memory: archive the inbox of {_systemd_escape(str(root))}\n"
        "\n"
        "[Service]\n"
        "Type=oneshot\n"
        f"ExecStart={exec_start}\n"
        "\n"
        f"# file: ~/.config/systemd/user/{name}.timer\n"
        "[Unit]\n"
        f"Description=Run {name}.service daily (seed 000 §13)\n"
        "\n"
        "[Timer]\n"
        f"OnCalendar=*-*-* {at:%H:%M}:00 {home.settings.timezone}\n"
        "Persistent=true\n"
        "\n"
        "[Install]\n"
        "WantedBy=timers.target\n"
        "\n"
        "# Install: save each part under the file name above, then run\n"
        f"#   systemctl --user daemon-reload && systemctl --user enable --now {name}.timer\n"
    )


def _systemd_escape(text: str) -> str:
    return text.replace("%", "%%").replace("$", "$$")


def _systemd_quote(arg: str) -> str:
    inner = _systemd_escape(arg).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{inner}"'


def _launchd(argv: list[str], log: str, at: time, home: Home) -> str:
    label = f"dev.agent-memory.archive.{home.settings.home_id[:8]}"
    arguments = "".join(f"\n    <string>{escape(arg)}</string>" for arg in argv)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
        f"<!-- Save as ~/Library/LaunchAgents/{label}.plist, then run: launchctl load -w that file.\n"
        f"     Runs agent-memory archive-inbox daily at {at:%H:%M}, this machine's local time\n"
        "     (seed 000 §13). -->\n"
        '<plist version="1.0">\n'
        "<dict>\n"
        f"  <key>Label</key>\n  <string>{label}</string>\n"
        f"  <key>ProgramArguments</key>\n  <array>{arguments}\n  </array>\n"
        "  <key>StartCalendarInterval</key>\n"
        f"  <dict>\n    <key>Hour</key>\n    <integer>{at.hour}</integer>\n"
        f"    <key>Minute</key>\n    <integer>{at.minute}</integer>\n  </dict>\n"
        f"  <key>StandardOutPath</key>\n  <string>{escape(log)}</string>\n"
        f"  <key>StandardErrorPath</key>\n  <string>{escape(log)}</string>\n"
        "</dict>\n"
        "</plist>\n"
    )

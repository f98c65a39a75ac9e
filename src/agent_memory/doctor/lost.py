"""What a cut log lost, read back from the Home's last git commit (for ``doctor``'s log check, issue 19).

A log cut below its signed checkpoint makes every reader refuse (the withdrawal gate fails
closed, :class:`~agent_memory.governance.gate.Gate`); doctor then says what the missing
entries did, when the Home's git ``HEAD`` still holds them: each withdrawal, erasure,
supersede, archival and review mark the working log no longer has would stop applying, so
the records they name would be served again were the refusal lifted by hand.

Invariant: read-only (``git ls-tree`` and ``git show`` only); a Home without git, or whose
last commit holds nothing more than the working log, gives nothing.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from typing import TYPE_CHECKING

from agent_memory.errors import LogError
from agent_memory.log.base import LogEntry
from agent_memory.log.chain import read_entry

if TYPE_CHECKING:
    from agent_memory.home import Home

__all__ = ["lost_entries", "lost_lines"]

_RETIRING = {"withdraw", "erase", "supersede", "archive", "resolve"}
_MARKS = {"reject", "stale"}


def lost_entries(home: Home) -> list[LogEntry]:
    """Return the entries of the log at git ``HEAD`` that the working log does not hold, oldest first.

    An entry counts as held when the working log has the same seq with the same digest; from
    the first seq where the two differ (or where the working log ends), the committed entries
    are lost. ``[]`` when git is absent, the Home has no commit, or nothing is missing.
    """
    committed = _committed(home)
    if not committed:
        return []
    held: dict[int, str] = {}
    try:
        for entry in home.log().entries():
            held[entry.seq] = entry.digest
    except LogError:
        pass  # read up to the damage: what follows it counts as lost
    lost: list[LogEntry] = []
    for entry in committed:
        if lost or held.get(entry.seq) != entry.digest:
            lost.append(entry)
    return lost


def _committed(home: Home) -> list[LogEntry]:
    git = shutil.which("git")
    if git is None or not (home.root / ".git").exists():
        return []
    names = _git(git, home, "ls-tree", "--name-only", "HEAD", "log/")
    entries: list[LogEntry] = []
    for name in sorted(n for n in names.decode("utf-8", "replace").splitlines() if n.endswith(".jsonl")):
        data = _git(git, home, "show", f"HEAD:{name}")
        for number, line in enumerate(data.split(b"\n"), 1):
            if not line:
                continue
            try:
                entries.append(read_entry(line, path=f"git HEAD:{name}", where=f"line {number}"))
            except LogError:
                return entries  # a damaged commit: what came before still counts
    return sorted(entries, key=lambda e: e.seq)


def _git(git: str, home: Home, *args: str) -> bytes:
    result = subprocess.run(  # noqa: S603 - fixed git arguments, no shell
        [git, *args], cwd=home.root, capture_output=True, check=False
    )
    return result.stdout if result.returncode == 0 else b""


def lost_lines(entries: list[LogEntry]) -> list[str]:
    """Word what ``entries`` (lost from the log) did that would stop applying, one line each, then the rest.

    Returns:
        ``"seq N <action> <ids>: …"`` for each withdrawal, erasure, supersede, archival,
        resolution and reject/stale mark, then one line counting the other entries; empty
        when ``entries`` is.
    """
    lines: list[str] = []
    others: Counter[str] = Counter()
    for entry in entries:
        action, ids = str(entry.action), ", ".join(entry.record_ids)
        verdict = entry.details.get("verdict")
        if action in _RETIRING or (action == "review" and verdict in _MARKS):
            what = f"{action} {verdict}" if action == "review" else action
            lines.append(f"seq {entry.seq} {what} {ids}: lost, so what it names would be served again")
        else:
            others[action] += 1
    if others:
        counted = ", ".join(f"{action} x{n}" if n > 1 else action for action, n in others.items())
        lines.append(f"other lost entries ({sum(others.values())}): {counted}")
    return lines

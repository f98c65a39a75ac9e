"""The Home's git commits: what a write produced, staged and sealed with the log head (DESIGN.md §3, §6).

:func:`commit` stages the Home (all of it, or with ``only_library_notes`` only what the
library wrote: :func:`library_note_paths` under ``notes/``, :func:`produced_paths` elsewhere)
and commits it with an ``Agent-Memory-Checkpoint`` trailer (:mod:`agent_memory.log.anchor`).
:func:`autocommit` is the commit after a write: it never makes a repository, never fails the
write, and leaves a repository in the middle of a merge alone. :func:`commit_message` names
the operations logged since a mark. Changed files come from one ``git status``
(:meth:`~agent_memory.sync.git.GitTree.status`).

Invariant: a file dropped into the Home by hand, a note ``sync`` refused and an edit made
before the writes began are never staged by an autocommit (issue 18 case 5).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from agent_memory.errors import AgentMemoryError, ConfigError
from agent_memory.log.anchor import Checkpoint, trailer
from agent_memory.log.base import OperationLog
from agent_memory.records.record import MemoryRecord
from agent_memory.records.wire import loads_json
from agent_memory.sync.git import GitTree

__all__ = [
    "HOME_PARTS",
    "STALE_GIT_LOCK_SECONDS",
    "autocommit",
    "commit",
    "commit_message",
    "library_note_paths",
    "produced_paths",
]

HOME_PARTS = (
    *("memory.toml", "notes", "log", "archive", "proposals", "topics", ".cache", ".state"),
    *("inbox.md", "MEMORY.md", "index.md", "conventions.md", "golden.yaml"),
)
"""The Home's own files and folders (none may be a symbolic link: issue 11)."""
STALE_GIT_LOCK_SECONDS = 120.0
"""Age from which a ``.git/index.lock`` found under the writer lock is a killed git's leftover."""
_UNFINISHED_GIT = ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply")
_LAYOUT_FOLDERS = frozenset({"log", "archive", "proposals", "topics"})
_LAYOUT_FILES = frozenset({*HOME_PARTS, ".gitignore", ".gitattributes", ".state/.gitignore"}) - {
    *_LAYOUT_FOLDERS,
    *("notes", ".cache", ".state"),
}
_CLOCK_SLACK = 0.1  # seconds
_VERSION_FILE = re.compile(r"\Anotes/[0-9a-f]{32}/[0-9]{6}\.(?:md|json)\Z")

Sealing = Callable[[], Checkpoint | None]
"""Makes the checkpoint a commit seals (the log head signed with the Home's key), or ``None``."""


def commit(
    root: Path, message: str, *, seal: Sealing, only_library_notes: bool = False, since: float | None = None
) -> bool:
    """Commit the Home at ``root`` to git; return False when git is absent or nothing changed.

    Makes the repository when there is none. The message gets the ``Agent-Memory-Checkpoint``
    trailer of ``seal()`` (none when it returns ``None``). An unset git identity falls back
    to ``agent-memory <agent-memory@localhost>`` for this commit only (CI machines have none).

    Args:
        root: The Home's folder.
        message: The commit message.
        seal: Makes the checkpoint to seal (:data:`Sealing`).
        only_library_notes: Stage only what the library wrote (issue 18 case 5): under
            ``notes/`` the version files :func:`library_note_paths` vouches for, elsewhere
            the Home's own files changed since ``since`` (:func:`produced_paths`).
        since: With ``only_library_notes``: when the writes being committed began
            (``time.time()`` seconds); ``None`` takes every changed file of the layout.

    Raises:
        ConfigError: git failed.
    """
    git = shutil.which("git")
    if git is None:
        return False
    if not (root / ".git").exists():
        _git(git, root, "init", "-q", "-b", "main")
    if only_library_notes:
        changed = _changed(git, root)  # one git status for both parts
        notes = [rel for rel in changed if rel.startswith("notes/")]
        others = [rel for rel in changed if not rel.startswith("notes/")]
        stage = library_note_paths(root, notes)[0] + produced_paths(root, since, others)[0]
        if stage:
            _git(git, root, "add", "-A", "--", *stage)
        if not _git(git, root, "diff", "--cached", "--name-only").strip():
            return False
    else:
        _git(git, root, "add", "-A")
        if not _git(git, root, "status", "--porcelain").strip():
            return False
    identity = []
    if not _git(git, root, "config", "user.email", check=False).strip():
        identity = ["-c", "user.name=agent-memory", "-c", "user.email=agent-memory@localhost"]
    # Every commit witnesses the log head it seals (issue 19): a signed trailer that a copy
    # or clone carries along, where editing the Home's files alone cannot reach.
    try:
        checkpoint = seal()
    except AgentMemoryError:
        checkpoint = None  # a log that cannot be read is reported by log --verify, not here
    trailers = ["-m", trailer(checkpoint)] if checkpoint is not None else []
    _git(git, root, *identity, "commit", "-q", "-m", message, *trailers)
    return True


def autocommit(
    root: Path,
    message: str,
    *,
    seal: Sealing,
    since: float | None = None,
    stale_after: float = STALE_GIT_LOCK_SECONDS,
) -> bool:
    """Commit the Home's changes after a write, when it is a git repository (DESIGN.md §3, §6).

    Unlike :func:`commit` this never makes a repository (a Home made with ``git=False``
    stays without one) and never fails the write that came before it: a commit that git
    refuses leaves the changes in the working tree, and the next autocommit whose ``since``
    is no later takes them along. It stages only what the writes produced (``commit`` with
    ``only_library_notes``). Call it while holding the Home's writer lock, so that a
    ``.git/index.lock`` older than ``stale_after`` seconds can only be left by a killed git
    process and is removed.

    Args:
        root: The Home's folder.
        message: The commit message (one line; the operations done).
        seal: As for :func:`commit`.
        since: When the writes being committed began (``time.time()`` seconds: the
            Memory's open, the command's start, the last commit of a server); ``None``
            takes every changed file of the Home's layout.
        stale_after: Age in seconds from which a leftover ``index.lock`` counts as stale.

    Returns:
        True when a commit was made; False when git is absent, the Home is not a
        repository, a merge, rebase or cherry-pick is unfinished (a person settles it
        first), nothing changed, or git refused (the changes wait for the next one).
    """
    git = shutil.which("git")
    dot_git = root / ".git"
    if git is None or not dot_git.is_dir():
        return False
    if any((dot_git / name).exists() for name in _UNFINISHED_GIT):
        return False  # a merge or rebase in progress: committing would seal conflict markers
    lock = dot_git / "index.lock"
    try:
        if time.time() - lock.stat().st_mtime > stale_after:
            lock.unlink()
    except FileNotFoundError:
        pass
    try:
        return commit(root, message, seal=seal, only_library_notes=True, since=since)
    except ConfigError:
        return False


def produced_paths(root: Path, since: float | None, changed: list[str]) -> tuple[list[str], list[str]]:
    """Split changed files outside ``notes/`` into what the writes since ``since`` produced, and the rest.

    A file counts as produced when the Home's layout names it (``memory.toml``, the views,
    ``inbox.md``, ``conventions.md``, ``golden.yaml``, git's two dot files and the ``log/``,
    ``archive/``, ``proposals/`` and ``topics/`` folders) and it changed at or after
    ``since`` (its modification time; any time when ``None``), or was removed. A file of
    any other name, or one last changed before the writes began, is left out.

    Args:
        root: The Home's folder.
        since: When the writes began (``time.time()`` seconds), or ``None``.
        changed: The changed paths outside ``notes/``, relative to ``root``.

    Returns:
        ``(to stage, left out)``: paths relative to the Home, POSIX separators.
    """
    stage: list[str] = []
    left: list[str] = []
    # File times come from the kernel's coarse clock, a few milliseconds behind time.time().
    start = None if since is None else since - _CLOCK_SLACK
    for rel in changed:
        try:
            moved: float | None = (root / rel).lstat().st_mtime
        except FileNotFoundError:
            moved = None  # removed (an erasure's sanitized holder, a spent proposal)
        ours = rel in _LAYOUT_FILES or rel.split("/", 1)[0] in _LAYOUT_FOLDERS
        fresh = moved is None or start is None or moved >= start
        (stage if ours and fresh else left).append(rel)
    return stage, left


def library_note_paths(root: Path, changed: list[str]) -> tuple[list[str], list[str]]:
    """Split the changed files under ``notes/`` into what the library wrote and what it did not.

    A version file counts as the library's when it sits at ``notes/<32 hex>/<6 digits>.md``
    (or ``.json``), reads as a record whose id matches its birth content, is byte for byte
    what the codec writes for that record, and, when signed, verifies. Anything else — a
    note dropped in by hand, one ``sync`` refused, a hand edit of a version — is not: it is
    never staged by an autocommit (issue 18 case 5). A removed file outside the version
    layout (a new note ``sync`` turned into a record) is staged as removed.

    Args:
        root: The Home's folder.
        changed: The changed paths under ``notes/``, relative to ``root``.

    Returns:
        ``(to stage, left out)``: paths relative to the Home, POSIX separators.
    """
    stage: list[str] = []
    left: list[str] = []
    for rel in changed:
        target = root / rel
        versioned = _VERSION_FILE.match(rel) is not None
        if not target.exists():
            (left if versioned else stage).append(rel)
        elif versioned and _written_by_library(target):
            stage.append(rel)
        else:
            left.append(rel)
    return stage, left


def commit_message(log: OperationLog, *, since_seq: int) -> str:
    """Return ``agent-memory: <action> xN, …`` for the log entries after ``since_seq``, or ``""``.

    Actions are counted in the order they first appear; at most 8 are named.

    Raises:
        LogError: The log cannot be read.
    """
    head = log.last()
    if head is None or head.seq <= since_seq:
        return ""  # nothing logged since: read no entry (every read-only command closes a Memory)
    counts: dict[str, int] = {}
    for entry in log.entries(since_seq=since_seq):
        counts[entry.action] = counts.get(entry.action, 0) + 1
    if not counts:
        return ""
    named = [f"{action} x{n}" if n > 1 else action for action, n in counts.items()]
    more = f", and {len(named) - 8} more" if len(named) > 8 else ""
    return "agent-memory: " + ", ".join(named[:8]) + more


def _changed(git: str, root: Path) -> list[str]:
    """Return the paths ``git status`` reports changed, added or removed in the Home, relative to it."""
    return [path.relative_to(root).as_posix() for path in GitTree(git, root).status(root)]


def _written_by_library(path: Path) -> bool:
    """Whether the version file ``path`` is exactly what the store writes for a record that verifies."""
    from agent_memory.records.note import dump_note, load_note
    from agent_memory.records.signing import verify_record

    try:
        data = path.read_bytes()
        if path.suffix == ".json":
            record = MemoryRecord.from_wire(loads_json(data, path=str(path)), path=str(path))
            written = record.canonical_bytes()
        else:
            record = load_note(data, path=str(path))
            written = dump_note(record)
        if written != data or path.parent.name != record.id.removeprefix("mem:"):
            return False
        if record.signed_by or record.signature:
            verify_record(record)
    except (AgentMemoryError, OSError):
        return False
    return True


def _git(git: str, cwd: Path, *args: str, check: bool = True) -> str:
    result = subprocess.run(  # noqa: S603 - fixed git arguments, no shell
        [git, *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    if check and result.returncode != 0:
        raise ConfigError(f"git {args[0]} failed: {result.stderr.strip()}", path=str(cwd))
    return result.stdout

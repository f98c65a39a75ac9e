"""The Home part of an erasure: sanitize every file holder, then scan, then say what remains.

:meth:`~agent_memory.governance.erasure.erase.Erasure.erase` calls :func:`sweep_home` under
the Home's writer lock, after the store holds the tombstones and the indexes and salience
sidecar are purged. In order it

1. sanitizes the archive (:func:`~.sanitizing.sanitize_archive`: new segment identities with
   lineage), the inbox and ``proposals/`` (:mod:`.sanitizing`);
2. rewrites the MemoryFiles kept in the Home and every export the log shows is this Home's
   (``export`` events, :func:`export_location`: a path relative to the Home, or an absolute
   one logged with this Home's root), each erased record replaced by its tombstone; an
   export logged by another Home (this one is a copy: ``cp -a A B``) or whose file is gone
   is never touched and reads ``unevaluated``;
3. re-renders the views not edited by hand; views edited by hand (which render leaves alone)
   get the marker in place of the erased text, and lose every line showing a withdrawn record
   (:func:`~agent_memory.jobs.view_scrub.refresh_views`, the path withdrawal takes too);
4. rewrites the git history when asked (:mod:`.git_erasure`), else leaves it;
5. scans every file of the Home and every git object, decompressed, and builds one holder per
   area: ``notes/``, ``log/``, ``indexes`` (``.cache/``), ``salience``, ``archive/``,
   ``inbox.md``, ``proposals/``, ``pending``, ``views`` (``MEMORY.md``, ``index.md``,
   ``topics/``), ``conventions.md``; any other folder or file that held or holds erased text;
   ``export:<path>`` per logged export; ``git-history`` and ``git:<ref>`` per ref that
   reaches erased text.

Invariant: a file-area holder is ``completed`` exactly when the final scan finds no erased text
in it (:func:`~.erasure.holder_of` maps a path to its area), so the receipt and an independent
scan agree by construction.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_memory.errors import AgentMemoryError
from agent_memory.governance.erasure.git import has_remotes, objects_holding, refs_reaching, rewrite_history
from agent_memory.governance.erasure.receipt import (
    HolderResult,
    holder_of,
    home_files_holding,
    sanitize_memory_file,
)
from agent_memory.governance.erasure.sanitize import (
    MIN_TEXT_BYTES,
    FileLineage,
    clean_proposals,
    marker,
    sanitize_archive,
    sanitize_inbox,
)
from agent_memory.home import Home
from agent_memory.log.base import OperationLog
from agent_memory.records.record import MemoryRecord

__all__ = ["AREAS", "Sweep", "export_location", "sweep_home"]

AREAS: tuple[str, ...] = (
    "notes/",
    "log/",
    "indexes",
    "salience",
    "archive/",
    "inbox.md",
    "proposals/",
    "pending",
    "views",
    "conventions.md",
)
"""The file areas every Home erasure reports, whether or not they held the text."""

_HUMAN_OWNED = {"conventions.md": "human-owned-file"}


@dataclass
class Sweep:
    """What :func:`sweep_home` did and found.

    Attributes:
        holders: Every file-area, export and git holder with its result.
        sanitized: Files rewritten (relative to the Home; exports outside it absolute).
        removed: Files deleted (proposals that cannot be rewritten), relative to the Home.
        lineage: The archive files rewritten, with their segment lineage.
    """

    holders: list[HolderResult] = field(default_factory=list)
    sanitized: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    lineage: list[FileLineage] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _HeldHome(Home):
    """The Home, for code that takes its writer lock while the erasure already holds it."""

    @contextmanager
    def writer_lock(self) -> Iterator[None]:
        yield


def sweep_home(
    home: Home,
    log: OperationLog,
    *,
    tombstones: Mapping[str, MemoryRecord],
    anchors: Mapping[str, set[str]],
    needles: Sequence[bytes],
    erasure_id: str,
    keys: Any,
    rewrite_git: bool = False,
    quoted_by_kept: bool = False,
) -> Sweep:
    """Sanitize the Home's file holders and report every one (see the module docstring).

    Args:
        home: The Home; the caller holds its writer lock.
        log: Its operation log (``export`` events name the exports).
        tombstones: ``{record id: tombstone}`` of this erasure.
        anchors: ``{archive file: {item ids}}`` the erased records point at.
        needles: The erased texts.
        erasure_id: Named in every marker.
        keys: The Home's key pair (re-signs rewritten signed MemoryFiles), or ``None``.
        rewrite_git: Rewrite the git history too (every ref; commit ids change).
        quoted_by_kept: A record kept (not erased) quotes the text: residue it causes is
            reported as ``dependent-not-erased``.

    Raises:
        StoreError: A file could not be rewritten or removed.
        LogError: The log's archive events cannot be read.
        ConfigError: A git command failed.
    """
    held = _HeldHome(root=home.root, settings=home.settings)
    root = home.root
    sweep = Sweep()
    sweep.lineage = sanitize_archive(held, anchors, needles, erasure_id)
    sweep.sanitized.extend(item.file for item in sweep.lineage)
    if sanitize_inbox(held, needles, erasure_id):
        sweep.sanitized.append("inbox.md")
    rewritten, sweep.removed = clean_proposals(held, needles, erasure_id)
    sweep.sanitized.extend(rewritten)
    sweep.sanitized.extend(_home_exports(root, tombstones, needles, keys))
    rendered = _views(held, needles, erasure_id, sweep)
    export_holders = _logged_exports(root, log, tombstones, needles, keys, sweep)
    git_holders = _git(root, needles, erasure_id, rewrite_git=rewrite_git)
    remaining = home_files_holding(root, needles)
    touched = {holder_of(path) for path in (*sweep.sanitized, *sweep.removed) if not os.path.isabs(path)}
    for area in sorted({*AREAS, *touched, *remaining}, key=_area_order):
        paths = remaining.get(area)
        if not paths:
            sweep.holders.append(HolderResult(area, "completed"))
            continue
        why = _limitation(area, paths, root, needles, rendered=rendered, quoted=quoted_by_kept)
        sweep.holders.append(HolderResult(area, "partially-completed", why))
    sweep.holders.extend(export_holders)
    sweep.holders.extend(git_holders)
    return sweep


def _area_order(area: str) -> tuple[int, str]:
    return (AREAS.index(area), "") if area in AREAS else (len(AREAS), area)


def _limitation(
    area: str, paths: list[str], root: Path, needles: Sequence[bytes], *, rendered: bool, quoted: bool
) -> str:
    long = [n for n in needles if len(n) >= MIN_TEXT_BYTES]
    if not any(needle in (root / path).read_bytes() for path in paths for needle in long):
        return "short-text-kept"
    if area in _HUMAN_OWNED:
        return _HUMAN_OWNED[area]
    if quoted:
        return "dependent-not-erased"
    if area == "views" and not rendered:
        return "views-not-rendered"
    return "content-remains" if area in AREAS else "unmanaged-file"


def _home_exports(
    root: Path, tombstones: Mapping[str, MemoryRecord], needles: Sequence[bytes], keys: Any
) -> list[str]:
    """Rewrite the MemoryFiles in the Home outside its managed areas (exports kept there)."""
    rewritten = []
    for holder, paths in home_files_holding(root, needles).items():
        if holder in AREAS:
            continue
        for relative in paths:
            if sanitize_memory_file(root / relative, tombstones, needles, keys):
                rewritten.append(relative)
    return rewritten


def _views(home: Home, needles: Sequence[bytes], erasure_id: str, sweep: Sweep) -> bool:
    """Re-render the views; in views edited by hand, mark the erased text and drop withdrawn lines.

    The one view path of withdrawal and erasure (:func:`~agent_memory.jobs.view_scrub.refresh_views`);
    returns whether every view was rendered (no view edited by hand was left).
    """
    from agent_memory.jobs.view_scrub import refresh_views

    try:
        done = refresh_views(home, needles=needles, erasure_id=erasure_id, held=True)
    except AgentMemoryError:  # render failed (an unreadable note): scrub every view in place
        done = refresh_views(home, needles=needles, erasure_id=erasure_id, render_views=False, held=True)
    sweep.sanitized.extend(done.scrubbed)
    return not done.kept and not done.scrubbed


def export_location(root: Path, path: str | os.PathLike[str]) -> dict[str, str]:
    """Return how an ``export`` event names the file at ``path``: in words that mean one Home.

    Inside the Home: ``{"path": <relative POSIX path>}``, so a copy of the Home reads its own
    copy of the file. Outside: ``{"path": <absolute path>, "home": <absolute root>}``, so an
    erasure rewrites it only from the Home that made it (issue 20 item 3).
    """
    absolute = Path(os.path.abspath(path))
    home = Path(os.path.abspath(root))
    if absolute.is_relative_to(home):
        return {"path": absolute.relative_to(home).as_posix()}
    return {"path": str(absolute), "home": str(home)}


def _logged_exports(
    root: Path,
    log: OperationLog,
    tombstones: Mapping[str, MemoryRecord],
    needles: Sequence[bytes],
    keys: Any,
    sweep: Sweep,
) -> list[HolderResult]:
    """Rewrite every MemoryFile an ``export`` event shows is this Home's; one holder per logged export.

    A relative path is read against this Home (a file of the Home: scanned with its area). An
    absolute path is this Home's only when the event names this Home's root; one logged by
    another Home (this Home is a copy of it, or was moved) or with no root (logged before
    roots were) is not rewritten: ``unevaluated``, since whether it still holds the text is
    not this Home's to change (issue 20 item 3, issue 19 item 5).
    """
    here = Path(os.path.abspath(root))
    places: dict[str, str | None] = {}
    for entry in log.entries():
        if entry.action == "export" and isinstance(entry.details.get("path"), str):
            made_in = entry.details.get("home")
            places.setdefault(str(entry.details["path"]), made_in if isinstance(made_in, str) else None)
    holders = []
    for text, made_in in places.items():
        ref = f"export:{text}"
        path = Path(text)
        if not path.is_absolute():
            if (here / path).resolve().is_relative_to(here.resolve()):
                continue  # a file of this Home: scanned (and rewritten) with its area
            holders.append(HolderResult(ref, "unevaluated", "export-path-unknown"))
            continue
        if made_in is None or Path(made_in).resolve() != here.resolve():
            if path.resolve().is_relative_to(here.resolve()):
                continue  # a file of this Home after all: scanned with its area
            holders.append(HolderResult(ref, "unevaluated", "export-of-another-home"))
            continue
        if not path.is_file():
            holders.append(HolderResult(ref, "unevaluated", "export-missing"))
            continue
        if not any(needle in path.read_bytes() for needle in needles):
            holders.append(HolderResult(ref, "completed"))
        elif sanitize_memory_file(path, tombstones, needles, keys):
            sweep.sanitized.append(text)
            holders.append(HolderResult(ref, "completed"))
        else:
            holders.append(HolderResult(ref, "partially-completed", _export_limit(path)))
    return holders


def _export_limit(path: Path) -> str:
    from agent_memory.records.memory_file import MemoryFile

    try:
        MemoryFile.loads(path.read_bytes(), path=str(path))
    except (AgentMemoryError, ValueError):
        return "export-not-memory-file"
    return "dependent-not-erased"


def _git(root: Path, needles: Sequence[bytes], erasure_id: str, *, rewrite_git: bool) -> list[HolderResult]:
    """Rewrite the history when asked; return ``git-history`` and a holder per ref still reaching the text."""
    objects = objects_holding(root, needles)
    if objects is None:
        return []
    long = [n for n in needles if len(n) >= MIN_TEXT_BYTES]
    copies = bool(objects) and has_remotes(root)
    if rewrite_git and objects:
        rewrite_history(root, long, marker(erasure_id).encode("ascii"))
        objects = objects_holding(root, needles) or set()
    if not objects:
        holders = [HolderResult("git-history", "completed")]
    else:
        if not rewrite_git:
            why = "git-history-not-rewritten"
        else:
            why = "content-remains" if objects_holding(root, long) else "short-text-kept"
        holders = [HolderResult("git-history", "partially-completed", why)]
        holders += [
            HolderResult(f"git:{ref}", "partially-completed", why) for ref in refs_reaching(root, objects)
        ]
    if copies:
        holders.append(HolderResult("git-remotes", "unevaluated", "git-copies-elsewhere"))
    return holders

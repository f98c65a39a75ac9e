"""``agent-memory sync``: turn hand edits and new files in ``notes/`` into proper records (DESIGN.md §9, §6).

One pass over ``notes/`` makes the checks of ``doctor``'s notes and signatures checks (the
file parses, holds the record its directory names, verifies when signed, and is in the
codec's canonical form) and, when the Home is in git, reads ``git status``. Each finding
becomes one :class:`SyncItem`:

``correct``
    A version file edited by hand: the file is restored to its proven bytes and the edit
    becomes a correction record that supersedes the record (:func:`~agent_memory.sync.edit.correct`).
``restore``
    A version file whose bytes changed but whose content did not (reformatted YAML): restored.
``resolve``
    A version-number clash after a git merge. Versions are numbered per record directory
    (``notes/<hex>/000001.md``, ``000002.md``…, :class:`~agent_memory.stores.files.FileStore`),
    so two clones that each append a version to one record both write the same next number;
    merging them leaves one file with git's conflict markers (or two index stages). The side
    that follows the previous version (and precedes any later one) keeps the number, earlier
    ``updated_at`` first; the other is appended as the next version when that is a legal move.
    Two sides that cannot both stand (two different successors, a move out of a terminal
    state) are reported for a person to choose.
``create``
    A Markdown file in ``notes/`` that is not a version file: remembered as a new record
    (source: its path; optional frontmatter may set the ``remember`` options), then removed.
``problem``
    Anything that cannot be done: the path and the reason are reported and the file is left
    byte for byte as it was.

Proven bytes: the ``HEAD`` bytes of the file, else the newest committed bytes that are a valid
version of the record; without git, the file's own frontmatter with the text of another
version of the record (all versions share one body), accepted only when the result matches
the record's id (and signature). A non-tombstone never replaces a file of an erased record.

Invariant: a file changes only through the action reported for it; on any failure of that
action the file is put back as it was. Version files are written only as proven bytes (atomic
replace) or by :meth:`FileStore.put`; records only through :class:`~agent_memory.memory.Memory`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_memory.errors import AgentMemoryError, RecordError
from agent_memory.home import Home
from agent_memory.records.note import load_note
from agent_memory.records.record import State
from agent_memory.sync.edit import NoteEdit, correct, read_note_edit
from agent_memory.sync.git import GitTree, conflict_sides
from agent_memory.sync.items import SyncItem, SyncReport, new_file_step
from agent_memory.sync.notes import (
    RECORD_DIR,
    VERSION,
    plan_clash,
    proven,
    read,
    read_or_none,
    replace,
    versions,
)

if TYPE_CHECKING:
    from agent_memory.sync.edit import Writes

__all__ = ["SyncItem", "SyncReport", "sync"]

_UNMERGED = frozenset({"DD", "AU", "UD", "UA", "DU", "AA", "UU"})


@dataclass
class _Scan:
    """What one pass over ``notes/`` found, by kind."""

    edited: dict[str, list[Path]] = field(default_factory=dict)
    clashes: list[tuple[str, Path]] = field(default_factory=list)
    new_files: list[Path] = field(default_factory=list)
    deleted: list[Path] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Step:
    """A planned item and the action that carries it out (``None``: report only)."""

    item: SyncItem
    apply: Callable[[], SyncItem] | None = None
    memory: bool = False  # the step writes records through Memory (which commits the Home)


class _Context:
    """The Home, its git tree and a lazily opened porcelain shared by the steps."""

    def __init__(self, home: Home, tree: GitTree | None, memory: Callable[[], Writes]) -> None:
        self.home = home
        self.root = home.root.resolve()
        self.tree = tree
        self._open = memory
        self._memory: Writes | None = None

    @property
    def memory(self) -> Writes:
        if self._memory is None:
            self._memory = self._open()
        return self._memory

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def log(self, record_ids: tuple[str, ...], details: dict[str, Any]) -> None:
        self.home.log().append("sync", actor=self.home.settings.owner, record_ids=record_ids, details=details)

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()


def sync(
    home: Home,
    *,
    open_memory: Callable[[], Writes],
    dry_run: bool = False,
    namespace: str = "default",
    now: datetime | None = None,
) -> SyncReport:
    """Find hand edits, merge clashes and new files in ``home``'s ``notes/`` and make them records.

    Args:
        home: The opened Home.
        open_memory: Opens the Memory of ``home`` that records are written through, e.g.
            ``lambda: Memory.open(home.root, source_kind="file")``; called only when a step
            writes, and closed (which commits the Home) when the run ends.
        dry_run: Plan and report only; write nothing.
        namespace: The namespace of records made from new files (their frontmatter may say
            otherwise); corrections keep the namespace of the record they correct.
        now: Clock for the records written (aware); the current time by default.

    Returns:
        One item per file found, in the order clashes, edits, deletions, new files (each by
        path). ``report.ok`` is False when any item is a problem.

    Raises:
        ConfigError: The Home cannot be opened for writing (only when something is to be written).
    """
    root = home.root.resolve()  # git names absolute paths; every path here is absolute too
    tree = GitTree.find(root)
    notes = root / "notes"
    everywhere = tree.status(root) if tree is not None else {}
    status = {path: code for path, code in everywhere.items() if path.is_relative_to(notes)}
    scan = _scan(notes, status)
    context = _Context(home, tree, open_memory)
    items: list[SyncItem] = []
    try:
        # Clashes first: the edits of a record are planned against its settled versions.
        clashes = [
            _Step(
                *plan_clash(
                    rid,
                    path,
                    status.get(path, ""),
                    tree=tree,
                    rel=context.rel,
                    store=home.store,
                    log=context.log,
                )
            )
            for rid, path in scan.clashes
        ]
        items += _run(clashes, dry_run)
        items += [
            SyncItem(
                context.rel(path),
                "problem",
                "unmerged in git: sync settles version files in notes/ only",
                hint="settle this file by hand (the log is hash-chained: its lines cannot simply be "
                "joined), then git add it",
            )
            for path, code in sorted(everywhere.items())
            if code in _UNMERGED and not path.is_relative_to(notes)
        ]
        unsettled = sum(item.action == "problem" for item in items)
        steps: list[_Step] = []
        for record_id, paths in sorted(scan.edited.items()):
            steps += _edits(context, record_id, paths, now)
        steps += [
            _problem(
                context,
                path,
                "a version file was deleted by hand; versions are never deleted",
                hint=f"restore it: git checkout -- {context.rel(path)} (to forget a memory use "
                "agent-memory withdraw or erase)",
            )
            for path in scan.deleted
        ]
        for path in scan.new_files:
            item, apply = new_file_step(
                context.rel(path), path, lambda: context.memory, context.log, now, namespace=namespace
            )
            steps.append(_Step(item, apply, memory=True))
        if unsettled:
            # Writing records commits the Home (Memory.close): never with conflict markers in it.
            steps = [_deferred(step, unsettled) if step.memory and step.apply else step for step in steps]
        items += _run(steps, dry_run)
    finally:
        context.close()
    return SyncReport(tuple(items), dry_run=dry_run, git=tree is not None)


def _run(steps: list[_Step], dry_run: bool) -> list[SyncItem]:
    """Carry out the steps (or, in a dry run, list them); a failed step becomes a problem item."""
    items = []
    for step in steps:
        if dry_run or step.apply is None:
            items.append(step.item)
            continue
        try:
            items.append(step.apply())
        except AgentMemoryError as exc:
            items.append(step.item.failed(exc))
    return items


def _deferred(step: _Step, unsettled: int) -> _Step:
    reason = (
        f"not done: {unsettled} merge conflict(s) in notes/ are not settled, and writing a record "
        "commits the Home"
    )
    hint = "settle the conflicts reported above (git checkout --ours or --theirs), then run sync again"
    return _Step(SyncItem(step.item.path, "problem", reason, step.item.record_id, hint=hint))


# ---------------------------------------------------------------------- finding


def _scan(notes: Path, status: dict[Path, str]) -> _Scan:
    found = _Scan()
    for folder, folders, files in os.walk(notes):
        folders[:] = sorted(d for d in folders if not d.startswith("."))
        here = Path(folder)
        in_record = here.parent == notes and RECORD_DIR.match(here.name) is not None
        for name in sorted(files):
            if name.startswith("."):
                continue  # temp files of the store and of editors
            path = here / name
            if in_record and VERSION.match(name):
                kind = _classify("mem:" + here.name, path, status.get(path, ""))
                if kind == "clash":
                    found.clashes.append(("mem:" + here.name, path))
                elif kind == "edited":
                    found.edited.setdefault("mem:" + here.name, []).append(path)
            elif name.endswith(".md"):
                found.new_files.append(path)
    for path, code in sorted(status.items()):
        if "D" in code and not path.exists() and _is_version_path(notes, path):
            found.deleted.append(path)
    return found


def _is_version_path(notes: Path, path: Path) -> bool:
    return (
        path.parent.parent == notes
        and RECORD_DIR.match(path.parent.name) is not None
        and VERSION.match(path.name) is not None
    )


def _classify(record_id: str, path: Path, code: str) -> str | None:
    """Return ``"clash"``, ``"edited"`` or ``None`` (a sound version file, or a tombstone)."""
    try:
        data = read(path)
    except OSError:
        return "edited"
    if conflict_sides(data) is not None:
        return "clash"
    record = proven(record_id, data)
    if record is None:
        return "clash" if code in _UNMERGED else "edited"
    if record.redacted or code in _UNMERGED:
        # Erasure is the one legal rewrite of a version file; an unmerged file that is sound
        # was settled in the working tree (by sync or by hand): `git add` concludes the merge.
        return None
    return "edited" if "M" in code else None


def _good_bytes(context: _Context, record_id: str, path: Path, data: bytes) -> bytes | None:
    """Return proven bytes for an edited version file (git first, then the other versions)."""
    others = [read_or_none(p) for _, p in versions(path.parent) if p != path]
    sound = [r for r in (proven(record_id, d, tombstoned=False) for d in others if d) if r]
    tombstoned = any(r.redacted for r in sound)
    if context.tree is not None:
        seen = {data}
        head = context.tree.head_blob(path)
        for blob in ([head] if head else []) + list(context.tree.past_blobs(path)):
            if blob not in seen and proven(record_id, blob, tombstoned=tombstoned) is not None:
                return blob
            seen.add(blob)
    end = data.find(b"\n---\n", 3)
    if end < 0 or tombstoned:
        return None
    head_bytes = data[: end + len(b"\n---\n")]
    for body in dict.fromkeys(r.body for r in sound if not r.redacted):
        candidate = head_bytes + body.encode("utf-8") + b"\n"
        if proven(record_id, candidate, tombstoned=False) is not None:
            return candidate
    return None


# ---------------------------------------------------------------------- hand edits


def _edits(context: _Context, record_id: str, paths: list[Path], now: datetime | None) -> list[_Step]:
    """Plan the edited version files of one record: one correction (or restores), or problems."""
    planned: list[tuple[Path, bytes, bytes, NoteEdit]] = []
    for path in paths:
        data = read_or_none(path)
        good = _good_bytes(context, record_id, path, data) if data is not None else None
        if data is None or good is None:
            return [
                _problem(
                    context,
                    path,
                    "edited by hand, and no proven copy to restore it from (not in git, and no "
                    "other version of the record holds its text)",
                    record_id,
                    hint="restore it from a backup, or move it out of notes/ and remember its text again",
                )
            ] + [
                _problem(context, p, "another version of this record cannot be restored", record_id)
                for p in paths
                if p != path
            ]
        try:
            edit = read_note_edit(load_note(good), data, path=context.rel(path))
        except RecordError as exc:
            return [_problem(context, path, exc.detail, record_id, hint=exc.hint)] + [
                _problem(
                    context, p, f"not applied: {context.rel(path)} of the same record is refused", record_id
                )
                for p in paths
                if p != path
            ]
        planned.append((path, data, good, edit))
    changed = [edit for *_, edit in planned if edit.changed]
    if not changed:
        return [_restore_step(context, record_id, path, data, good) for path, data, good, _ in planned]
    if len({(e.body, tuple(sorted(e.changes.items()))) for e in changed}) > 1:
        reason = "several versions of this record were edited differently; keep the edit in one of them"
        return [_problem(context, path, reason, record_id) for path, *_ in planned]
    latest_path = versions(paths[0].parent)[-1][1]
    latest_bytes = next((good for p, _, good, _ in planned if p == latest_path), None)
    try:
        latest = load_note(latest_bytes if latest_bytes is not None else read(latest_path))
    except (RecordError, OSError):
        reason = f"edited by hand, but the latest version {context.rel(latest_path)} is not readable"
        return [_problem(context, path, reason, record_id) for path, *_ in planned]
    if latest.state is not State.ACTIVE:
        successor = f" by {latest.superseded_by}" if latest.superseded_by else ""
        reason = (
            f"edited by hand, but the record is {latest.state.value}{successor}: "
            "only an active record can be corrected"
        )
        return [
            _problem(
                context,
                path,
                reason,
                record_id,
                hint="move the edit to the live record (agent-memory edit ID)",
            )
            for path, *_ in planned
        ]
    source = context.rel(next(p for p, *_, e in planned if e.changed))
    edit = changed[0]
    count = len(versions(paths[0].parent))
    item = SyncItem(source, "correct", f"correction of the {edit.describe()}", record_id)

    def apply() -> SyncItem:
        for path, _, good, _ in planned:
            replace(path, good)
        try:
            result = correct(
                context.memory,
                latest,
                edit.body,
                source=source,
                reason=f"hand edit of {source} (agent-memory sync)",
                expected_version=count,
                changes=edit.changes,
                now=now,
            )
        except BaseException:
            for path, data, _, _ in planned:
                replace(path, data)
            raise
        context.log((record_id, result.record_id), {"action": "correct", "path": source})
        return SyncItem(
            source, "correct", item.detail + "; the version file is restored", record_id, result.record_id
        )

    return [_Step(item, apply, memory=True)]


def _restore_step(context: _Context, record_id: str, path: Path, data: bytes, good: bytes) -> _Step:
    rel = context.rel(path)
    item = SyncItem(rel, "restore", "its bytes changed but not its content: restored", record_id)

    def apply() -> SyncItem:
        context.log((record_id,), {"action": "restore", "path": rel})  # first: a broken log stops it
        replace(path, good)
        return item

    return _Step(item, apply)


def _problem(
    context: _Context, path: Path, reason: str, record_id: str | None = None, *, hint: str | None = None
) -> _Step:
    return _Step(SyncItem(context.rel(path), "problem", reason, record_id, hint=hint))

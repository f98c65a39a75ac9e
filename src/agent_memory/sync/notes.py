"""Version files as ``agent-memory sync`` handles them: proven bytes, atomic restores, merge clashes.

A version file is *sound* (:func:`proven`) when it parses as a note, holds the record its
directory names, is byte for byte the codec's canonical form of that record, and verifies
when signed: the checks of ``doctor``'s notes and signatures checks, plus canonical form.

The version-number clash (DESIGN.md §6): :class:`~agent_memory.stores.files.FileStore`
numbers versions per record directory (``000001.md``, ``000002.md``…), so two clones that
each append a version to one record both write the same next number, and a git merge leaves
that file with conflict markers (or, while the merge is open, two index stages).
:func:`plan_clash` keeps at that number the side that follows the version before it (and
precedes any version after it), the earlier ``updated_at`` first, and appends the other side
as the next version through :meth:`FileStore.put` when that is a legal move (else the other
order is tried: an ``archived`` side after a ``superseded`` one). Two sides that cannot both
stand (two different successors, no legal order) are reported and the file is left as it is.

Invariant: every byte written to a version file is first proven to be a sound version of
its record; writes are atomic (a ``.tmp-`` file every reader ignores, then ``os.replace``).
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_memory.errors import AgentMemoryError, RecordError, SignatureError, StoreError
from agent_memory.records.note import dump_note, load_note
from agent_memory.records.record import MemoryRecord
from agent_memory.records.signing import verify_record
from agent_memory.stores.base import check_next_version
from agent_memory.stores.files import FileStore
from agent_memory.sync.git import GitTree, conflict_sides
from agent_memory.sync.items import SyncItem

__all__ = ["RECORD_DIR", "VERSION", "plan_clash", "proven", "read", "read_or_none", "replace", "versions"]

RECORD_DIR = re.compile(r"\A[0-9a-f]{32}\Z")
"""A record directory's name: the 32 hex digits after ``mem:``."""
VERSION = re.compile(r"\A([0-9]{6,})\.md\Z")
"""A version file's name; the group is its number."""

_SETTLE = "keep one side (git checkout --ours or --theirs the file), then run agent-memory sync again"


def proven(record_id: str, data: bytes, *, tombstoned: bool = False) -> MemoryRecord | None:
    """Return the record in ``data`` if it is a sound version of ``record_id``, else ``None``.

    Args:
        record_id: The record the file's directory names.
        data: The bytes to check.
        tombstoned: The record has been erased: only a tombstone is acceptable (so that
            restoring from git never brings erased content back).
    """
    try:
        record = load_note(data)
    except RecordError:
        return None
    if record.id != record_id or dump_note(record) != data or (tombstoned and not record.redacted):
        return None
    if record.signed_by or record.signature:
        try:
            verify_record(record)
        except SignatureError:
            return None
    return record


def versions(record_dir: Path) -> list[tuple[int, Path]]:
    """Return ``(number, path)`` of every version file in ``record_dir``, by number."""
    found = ((VERSION.match(p.name), p) for p in record_dir.iterdir())
    return sorted((int(m.group(1)), p) for m, p in found if m)


def plan_clash(
    record_id: str,
    path: Path,
    code: str,
    *,
    tree: GitTree | None,
    rel: Callable[[Path], str],
    store: Callable[[], FileStore],
    log: Callable[[tuple[str, ...], dict[str, Any]], None],
) -> tuple[SyncItem, Callable[[], SyncItem] | None]:
    """Plan the resolution of a version-number clash in the version file ``path``.

    Args:
        record_id: The record whose directory holds ``path``.
        path: The version file with conflict markers (or unmerged in git's index).
        code: Its ``git status`` code (``UU``, ``AA``…; empty without git).
        tree: The git work tree, to read the two index stages while the merge is open.
        rel: Names a path relative to the Home.
        store: Returns the Home's note store (the other side is appended through it).
        log: Appends a ``sync`` event.

    Returns:
        The planned ``resolve`` item and its action, or a ``problem`` item and ``None``.
    """
    shown = rel(path)
    sides = None
    if tree is not None and ("U" in code or code == "AA"):
        ours, theirs = tree.stage_blob(path, 2), tree.stage_blob(path, 3)
        sides = (ours, theirs) if ours is not None and theirs is not None else None
    sides = sides or conflict_sides(read_or_none(path) or b"")
    if sides is None:
        return SyncItem(
            shown, "problem", "has merge conflict markers that do not split", record_id, hint=_SETTLE
        ), None
    number = int(path.stem)
    numbered = dict(versions(path.parent))
    try:
        if number > 1 and number - 1 not in numbered:
            raise RecordError(f"version {number - 1} is missing")
        named = {
            label: _sound(record_id, side, shown)
            for label, side in zip(("ours", "theirs"), sides, strict=True)
        }
        previous = (
            _sound(record_id, numbered[number - 1].read_bytes(), rel(numbered[number - 1]))
            if number > 1
            else None
        )
        later = [
            _sound(record_id, numbered[n].read_bytes(), rel(numbered[n]))
            for n in sorted(numbered)
            if n > number
        ]
    except (RecordError, OSError) as exc:
        return SyncItem(shown, "problem", f"merge clash, but {exc}", record_id, hint=_SETTLE), None
    order = sorted(named.items(), key=lambda kv: (kv[1].updated_at, kv[1].canonical_bytes()))
    fits = [kv for kv in order if _follows(previous, kv[1]) and (not later or _follows(kv[1], later[0]))]
    if not fits:
        reason = "merge clash: neither side follows the versions around it"
        return SyncItem(shown, "problem", reason, record_id, hint=_SETTLE), None
    choice, refusal = None, ""
    for kept_label, kept in fits:  # the earlier side first; the later one if only that order is legal
        other_label, other = next(kv for kv in order if kv[0] != kept_label)
        last = later[-1] if later else kept
        same = other.canonical_bytes() == kept.canonical_bytes()
        try:
            if not same:
                check_next_version(last, other)
                if other.superseded_by and last.superseded_by and other.superseded_by != last.superseded_by:
                    raise RecordError(f"two successors, {last.superseded_by} and {other.superseded_by}")
        except AgentMemoryError as exc:
            refusal = refusal or exc.detail
            continue
        choice = (kept_label, kept, other_label, other, same)
        break
    if choice is None:
        reason = f"merge clash: the two sides cannot both stand: {refusal}"
        hint = f"{_SETTLE}; settle the other change with agent-memory resolve or supersede"
        return SyncItem(shown, "problem", reason, record_id, hint=hint), None
    kept_label, kept, other_label, other, same = choice
    detail = f"kept the {kept_label} side ({kept.state.value}) as version {number}"
    if not same:
        detail += f"; appended the {other_label} side ({other.state.value}) as the next version"
    item = SyncItem(shown, "resolve", detail, record_id)

    def apply() -> SyncItem:
        # Logged first: a log that cannot be written (a merge conflict in log/) stops it here.
        numbers = [number] if same else [number, number + len(later) + 1]
        log((record_id,), {"action": "resolve", "path": shown, "versions": numbers})
        replace(path, dump_note(kept))
        if not same:
            store().put(other)
        return item

    return item, apply


def _sound(record_id: str, data: bytes, shown: str) -> MemoryRecord:
    record = proven(record_id, data)
    if record is None:
        raise RecordError(f"{shown} is not a sound version of {record_id}")
    return record


def _follows(previous: MemoryRecord | None, record: MemoryRecord) -> bool:
    try:
        check_next_version(previous, record)
    except AgentMemoryError:
        return False
    return True


def read(path: Path) -> bytes:
    """Return a file's bytes, refusing a symbolic link (it could point anywhere on the machine).

    Raises:
        OSError: The file cannot be read or is a symbolic link.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as file:
        return file.read()


def read_or_none(path: Path) -> bytes | None:
    """Return a file's bytes, or ``None`` when it cannot be read."""
    try:
        return read(path)
    except OSError:
        return None


def replace(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (a ``.tmp-`` file every reader ignores, then rename).

    Raises:
        StoreError: The file system refused (the path named); ``path`` is unchanged.
    """
    temp = path.parent / f".tmp-{uuid.uuid4().hex}"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise StoreError(f"cannot write: {exc.strerror or exc}", path=str(path)) from exc

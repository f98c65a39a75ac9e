"""`FileStore`: record versions as one file each, in the origin's directory layout.

Layout (seed 001 stores, origin-notes §1.16, DESIGN.md §3)::

    <root>/<32 hex after "mem:">/000001.md     Markdown codec (a Home's notes/, the default)
    <root>/<32 hex after "mem:">/000001.json   canonical JSON codec (fg-agent-memory 0.1's layout)

Invariants:

- A version file is created whole or not at all and is never rewritten. As the origin
  writes (origin-notes §1.16, §1.21), the bytes go to a ``.tmp-<uuid4 hex>`` file in the
  record directory (``O_CREAT|O_EXCL``, mode 0644), are fsynced, then hard-linked to the
  next version name, and the directory is fsynced. ``os.link`` never replaces an existing
  name, so a writer that loses a race re-reads the new latest version, re-runs
  :func:`check_next_version` against it and tries the next number. Several processes may
  write at once and a writer killed at any point leaves the old or the new version plus, at
  worst, a stray temp file that every reader ignores.
- Erasure is the one exception: :meth:`FileStore.erase` replaces every version file in place
  by the tombstone (temp file + ``os.replace`` per file) and removes stray temp files.
- :meth:`FileStore.restore_erased` (used by ``migrate`` to carry an erasure over) creates a
  whole record directory of tombstones at once: a temp folder renamed into place.
- An id is checked by :func:`check_record_id` before any path is built from it.
- Parsed versions are kept in a :class:`~agent_memory.stores.base.RecordCache` keyed by the
  file's inode, size and times, so an unchanged note is parsed once per process; any change
  to the file is a miss, and :meth:`FileStore.erase` empties the cache. :meth:`FileStore.get`
  reuses a record directory's listing while the directory's inode and times are unchanged
  (:class:`~agent_memory.stores.file_tokens.Listings`); the note file's own identity (its
  ``lstat``) is checked on every read.
- A version file that cannot be parsed, or whose record id is not its directory's, is a
  :class:`StoreError` naming the path; it is left byte-identical, and every other record
  stays readable. Symbolic links are never followed: a linked version file or record
  directory is such an error too, and :meth:`FileStore.list` leaves a linked directory out.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import os
import re
import shutil
import stat
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Unpack

from agent_memory.errors import AgentMemoryError, RecordNotFound, StoreError
from agent_memory.records.note import dump_note, load_note
from agent_memory.records.record import MemoryRecord
from agent_memory.records.wire import loads_json, utc_now
from agent_memory.stores.base import (
    ListFilters,
    RecordCache,
    check_erased_history,
    check_next_version,
    check_record_id,
    filter_records,
)
from agent_memory.stores.file_io import TEMP_PREFIX as _TEMP_PREFIX
from agent_memory.stores.file_io import fsync_dir as _fsync_dir
from agent_memory.stores.file_io import write_temp as _write_temp
from agent_memory.stores.file_tokens import RECORD_DIR as _RECORD_DIR
from agent_memory.stores.file_tokens import Listings, all_tokens

__all__ = ["CODECS", "FileStore"]

CODECS: tuple[str, ...] = ("markdown", "json")
_EXTENSIONS = {"markdown": "md", "json": "json"}
_HINT = (
    "restore it from git or a backup, or move it aside; "
    "agent-memory doctor --home <home> lists every unreadable note"
)
# Spelled here because inside the class body ``list`` names the port's method.
_Records = list[MemoryRecord]
_Versions = list[tuple[int, Path]]
# Each lost race means another writer appended a version; this bound only stops a livelock.
_MAX_ATTEMPTS = 1000
_SETTLED_NS = 2_000_000_000  # a version file is cached once its times are this old (see _read)


def _load_json(data: bytes, path: str) -> MemoryRecord:
    return MemoryRecord.from_wire(loads_json(data, path=path), path=path)


def _dump_json(record: MemoryRecord) -> bytes:
    return record.canonical_bytes()


def _load_markdown(data: bytes, path: str) -> MemoryRecord:
    return load_note(data, path=path)


class FileStore:
    """Append-only record versions in a directory tree (a :class:`RecordStore`).

    Args:
        root: The store's directory (a Home's ``notes/``; ``<path>/records/`` of an origin
            ``Memory``). Created on the first write.
        codec: ``"markdown"`` (``NNNNNN.md`` notes, the default) or ``"json"`` (canonical
            JSON ``NNNNNN.json``, byte-identical to what fg-agent-memory 0.1 writes).

    Raises:
        StoreError: ``codec`` is not one of :data:`CODECS`.
    """

    def __init__(self, root: str | os.PathLike[str], codec: str = "markdown") -> None:
        if codec not in _EXTENSIONS:
            raise StoreError(f"unknown codec {codec!r} (one of: {', '.join(CODECS)})")
        self.root = Path(root)
        self._top = os.fspath(self.root)
        self.codec = codec
        self.extension = _EXTENSIONS[codec]
        self._version_name = re.compile(rf"\A([0-9]{{6,}})\.{self.extension}\Z")
        self._dump: Callable[[MemoryRecord], bytes] = dump_note if codec == "markdown" else _dump_json
        self._load: Callable[[bytes, str], MemoryRecord] = (
            _load_markdown if codec == "markdown" else _load_json
        )
        self._cache = RecordCache()
        self._listings = Listings(self._version_name, _SETTLED_NS)

    def __repr__(self) -> str:
        return f"FileStore({str(self.root)!r}, codec={self.codec!r})"

    # ------------------------------------------------------------------ the port

    def put(self, record: MemoryRecord) -> int:
        """Append ``record`` as the next version file of its id; return the version number (1-based).

        The new file is durable (file and directory fsynced) when this returns.

        Raises:
            StoreError: The id is refused, the latest version cannot be read, the record
                was erased meanwhile, or the file system refused the write.
            RecordError: An immutable field differs from the previous version.
            LifecycleError: The state change is not one of the seven legal moves.
        """
        if not isinstance(record, MemoryRecord):
            raise StoreError(f"can only store a MemoryRecord, not {type(record).__name__}")
        check_next_version(None, record)  # refuses a bad id or a tombstone before any write
        record_dir = self._record_dir(record.id)
        data = self._dump(record)
        try:
            self._make_record_dir(record_dir)
            temp = _write_temp(record_dir, data)
            try:
                return self._link_next(record, record_dir, temp)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temp)
        except OSError as exc:
            raise _os_error("cannot write a version", exc, record.id) from exc

    def get(self, record_id: str) -> MemoryRecord:
        """Return the latest version.

        Raises:
            RecordNotFound: No version file for this id.
            StoreError: The id is refused, or the latest version file is unreadable (path named).
        """
        record_dir = f"{self._top}/{check_record_id(record_id)[len('mem:') :]}"
        try:  # the listing is reused while the directory is unchanged; the file is always checked
            versions = self._listings.versions(record_dir)
        except OSError as exc:
            raise _os_error("cannot list the record directory", exc, None, record_dir) from exc
        if versions is None:
            self._versions(Path(record_dir))  # raises: a linked record directory is never followed
        if not versions:
            raise RecordNotFound("no such record", record_id=record_id)
        return self._read(record_id, f"{record_dir}/{versions[-1][1]}")

    def history(self, record_id: str) -> _Records:
        """Return every version, oldest first.

        Raises:
            RecordNotFound: No version file for this id.
            StoreError: The id is refused, or a version file is unreadable (path named).
        """
        versions = self._versions(self._record_dir(record_id))
        if not versions:
            raise RecordNotFound("no such record", record_id=record_id)
        return [self._read(record_id, path) for _, path in versions]

    def list(self, **filters: Unpack[ListFilters]) -> _Records:
        """Return the latest version of every matching record, by ``(created_at, id)``.

        Walks every record directory and reads its latest version file.

        Raises:
            StoreError: A latest version file is unreadable (the first one found is named;
                :meth:`check` lists them all).
        """
        latest = (self._read(record_id, path) for record_id, path in self._latest_paths())
        return filter_records(latest, **filters)

    def contains(self, record_id: str) -> bool:
        """Return whether any version file exists for ``record_id``.

        Raises:
            StoreError: The id is refused.
        """
        return bool(self._versions(self._record_dir(record_id)))

    # ------------------------------------------------------------------ beyond the port

    def erase(self, record_id: str, reason: str, *, now: datetime | None = None) -> MemoryRecord:
        """Replace every version file of ``record_id`` by its tombstone; return the tombstone.

        The tombstone is built from the latest version (seed 001 redaction, DESIGN.md §9).
        Each file is replaced atomically (temp file + ``os.replace``), stray temp files in
        the record directory are removed, and the directory is fsynced. Versions that a
        concurrent writer links meanwhile are replaced too; such a writer sees the tombstone
        and fails. Disk blocks freed by the file system are outside this store's reach.

        Raises:
            RecordNotFound: No version file for this id.
            RecordError: The record is already a tombstone, or ``reason`` is empty.
            StoreError: The id is refused or the latest version is unreadable.
        """
        record_dir = self._record_dir(record_id)
        versions = self._versions(record_dir)
        if not versions:
            raise RecordNotFound("no such record", record_id=record_id)
        latest = self._read(record_id, versions[-1][1])
        tombstone = latest.tombstone(reason, now=now if now is not None else utc_now())
        data = self._dump(tombstone)
        self._cache.clear()  # no erased content stays in this process's memory
        self._listings.clear()
        replaced: set[int] = set()
        try:
            while pending := [(n, p) for n, p in self._versions(record_dir) if n not in replaced]:
                # Oldest first, the latest last: an erasure cut short leaves the latest
                # version readable, so running it again builds the tombstone and finishes.
                for number, path in pending:
                    os.replace(_write_temp(record_dir, data), path)
                    replaced.add(number)
                for entry in os.scandir(record_dir):
                    if entry.name.startswith(_TEMP_PREFIX):
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(entry.path)
                _fsync_dir(record_dir)
        except OSError as exc:
            raise _os_error("erasure did not finish; run it again", exc, record_id) from exc
        finally:
            self._cache.clear()  # again: a read in another thread may have cached it meanwhile
        return tombstone

    def restore_erased(self, history: Sequence[MemoryRecord]) -> int:
        """Write an erased record's history (copies of one tombstone) under an id not held yet.

        The counterpart of :meth:`erase` for ``agent-memory migrate``: a tombstone cannot be
        ``put``, yet an erasure must follow the records to their new store. The version files
        are written and fsynced in a private ``.tmp-<uuid4 hex>`` folder of the root, which
        is then renamed to the record directory in one step, so readers and other writers
        see all of the versions or none; a leftover temp folder is ignored by every reader.

        Returns:
            The number of version files written (``len(history)``).

        Raises:
            StoreError: ``history`` is not an erased history
                (:func:`~agent_memory.stores.base.check_erased_history`), the store already
                holds a version of that id (also when another writer creates it meanwhile),
                or the file system refused; nothing is written.
        """
        tombstone = check_erased_history(history)
        record_dir = self._record_dir(tombstone.id)
        if self._versions(record_dir):
            raise StoreError("already holds this record; nothing restored", record_id=tombstone.id)
        data = self._dump(tombstone)
        staging = self.root / f"{_TEMP_PREFIX}{uuid.uuid4().hex}"
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            os.mkdir(staging)
            try:
                for number in range(1, len(history) + 1):
                    os.rename(_write_temp(staging, data), staging / f"{number:06d}.{self.extension}")
                _fsync_dir(staging)
                # rename() replaces an empty directory (one a writer just made) but never one with files.
                os.rename(staging, record_dir)
            except OSError as exc:
                shutil.rmtree(staging, ignore_errors=True)
                if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                    raise StoreError(
                        "another writer created this record meanwhile; nothing restored",
                        record_id=tombstone.id,
                    ) from exc
                raise
            _fsync_dir(self.root)
        except OSError as exc:
            raise _os_error("cannot restore the erased record", exc, tombstone.id) from exc
        return len(history)

    def version_tokens(self, record_ids: Iterable[str] | None = None) -> dict[str, str]:
        """Return a cheap token per record that changes whenever its latest version file does.

        The token is ``<latest file name>:<size>:<mtime_ns>``, from ``stat`` only (no file is
        read), so an index catalog can tell which records to re-read (DESIGN.md §9
        "Freshness"). ``record_ids`` limits the scan to those records (absent ones are left out).
        """
        if record_ids is None:
            return all_tokens(self.root, self._version_name)
        tokens: dict[str, str] = {}
        for record_id in record_ids:
            versions = self._versions(self._record_dir(record_id))
            if versions:
                path = versions[-1][1]
                try:
                    info = os.stat(path)
                except FileNotFoundError:
                    continue
                tokens[record_id] = f"{path.name}:{info.st_size}:{info.st_mtime_ns}"
        return tokens

    def check(self) -> builtins.list[StoreError]:
        """Read every version file of every record and return the problems found, by path.

        For ``agent-memory doctor``: unlike :meth:`list`, one bad file does not hide the others.
        """
        problems: list[StoreError] = []
        with contextlib.suppress(FileNotFoundError), os.scandir(self.root) as entries:
            for entry in entries:
                if _RECORD_DIR.match(entry.name) and entry.is_symlink():
                    try:
                        self._versions(self.root / entry.name)
                    except StoreError as exc:
                        problems.append(exc)
        for record_id, _ in self._latest_paths():
            for _, path in self._versions(self._record_dir(record_id)):
                try:
                    self._read(record_id, path)
                except StoreError as exc:
                    problems.append(exc)
        return problems

    # ------------------------------------------------------------------ internals

    def _record_dir(self, record_id: str) -> Path:
        return self.root / check_record_id(record_id)[len("mem:") :]

    def _make_record_dir(self, record_dir: Path) -> None:
        # Like the origin, the root is not fsynced for a new record directory: the fsyncs
        # of the temp file and of the record directory commit the journal of ext4, xfs,
        # btrfs or APFS, whose commits are ordered, and so the mkdir with them. (One more
        # fsync per new record, a third of a put's cost, buys this on unjournaled systems.)
        try:
            os.mkdir(record_dir)
        except FileExistsError:
            return
        except FileNotFoundError:
            self.root.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                os.mkdir(record_dir)

    def _versions(self, record_dir: Path) -> _Versions:
        """Return ``(number, path)`` of every version file, by number; temp files and strays are ignored."""
        if os.path.islink(record_dir):
            raise StoreError(
                "the record directory is a symbolic link, which the store never follows",
                path=str(record_dir),
                hint=_HINT,
            )
        try:
            with os.scandir(record_dir) as entries:
                names = [entry.name for entry in entries]
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise _os_error("cannot list the record directory", exc, None, record_dir) from exc
        found = ((self._version_name.match(name), name) for name in names)
        return sorted((int(m.group(1)), record_dir / name) for m, name in found if m)

    def _latest_paths(self) -> Iterator[tuple[str, Path]]:
        try:
            with os.scandir(self.root) as entries:
                # A linked directory could lead anywhere: never followed (check() reports it).
                names = sorted(
                    e.name for e in entries if _RECORD_DIR.match(e.name) and e.is_dir(follow_symlinks=False)
                )
        except FileNotFoundError:
            return
        for name in names:
            versions = self._versions(self.root / name)
            if versions:
                yield "mem:" + name, versions[-1][1]

    def _read(self, record_id: str, path: str | Path) -> MemoryRecord:
        # Cached by inode, size and times (the file's lstat; fstat of the open file on a miss): any
        # rewrite is a miss. A file changed in the last _SETTLED_NS is not cached: an edit within
        # one clock tick could leave its times unchanged (git's "racily clean" rule).
        try:
            seen = os.lstat(path)
            if not stat.S_ISLNK(seen.st_mode):  # a link is opened below, and refused
                cached = self._cache.get(_identity(record_id, seen))
                if cached is not None:
                    return cached
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)  # never a link
            try:
                info = os.fstat(fd)
                data = b"".join(iter(lambda: os.read(fd, 1 << 16), b""))
            finally:
                os.close(fd)
        except OSError as exc:
            raise _os_error("cannot read the version file", exc, record_id, path) from exc
        record = self._parse(record_id, path, data)
        if time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) > _SETTLED_NS:
            self._cache.put(_identity(record_id, info), record)
        return record

    def _parse(self, record_id: str, path: str | Path, data: bytes) -> MemoryRecord:
        try:
            record = self._load(data, str(path))
        except (AgentMemoryError, ValueError, TypeError) as exc:
            detail, field = (exc.detail, exc.field) if isinstance(exc, AgentMemoryError) else (str(exc), None)
            where = {"path": str(path), "record_id": record_id, "hint": _HINT}
            raise StoreError(f"unreadable version file: {detail}", field=field, **where) from exc
        if record.id != record_id:
            detail = f"the file holds {record.id}, not the record its directory names"
            raise StoreError(detail, path=str(path), record_id=record_id, hint=_HINT)
        return record

    def _link_next(self, record: MemoryRecord, record_dir: Path, temp: Path) -> int:
        for _ in range(_MAX_ATTEMPTS):
            versions = self._versions(record_dir)
            number, previous, previous_bytes = 0, None, b""
            if versions:
                number, previous_path = versions[-1]
                previous_bytes = _read_bytes(record.id, previous_path)
                previous = self._parse(record.id, previous_path, previous_bytes)
            check_next_version(previous, record)
            target = record_dir / f"{number + 1:06d}.{self.extension}"
            try:
                os.link(temp, target)
            except FileExistsError:
                continue  # another writer took this number: re-check against its version
            except FileNotFoundError as exc:
                # erase() removes stray temp files, a concurrent writer's included.
                raise StoreError(
                    "the record was erased while this version was written", record_id=record.id
                ) from exc
            with contextlib.suppress(FileNotFoundError):  # erase() may have removed it already
                os.unlink(temp)
            _fsync_dir(record_dir)
            if versions:
                self._follow_erasure(record.id, versions[-1][1], previous_bytes, target)
            return number + 1
        raise StoreError(f"gave up after {_MAX_ATTEMPTS} lost races with other writers", record_id=record.id)

    def _follow_erasure(self, record_id: str, previous: Path, previous_bytes: bytes, target: Path) -> None:
        """Undo a version linked after an erasure replaced the previous one (erase's only race)."""
        now_bytes = _read_bytes(record_id, previous)
        try:
            if now_bytes == previous_bytes or not self._parse(record_id, previous, now_bytes).redacted:
                return
        except StoreError:
            return  # edited by hand meanwhile: not an erasure, and not this writer's to report
        try:
            os.replace(_write_temp(target.parent, now_bytes), target)
            _fsync_dir(target.parent)
        except FileNotFoundError:
            pass  # erase() removed this temp file, so its next scan replaces ``target`` itself
        raise StoreError("the record was erased while this version was written", record_id=record_id)


def _read_bytes(record_id: str, path: Path) -> bytes:
    try:
        # O_NOFOLLOW: a version file that is a symlink could point anywhere on the machine.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as file:
            return file.read()
    except OSError as exc:
        raise _os_error("cannot read the version file", exc, record_id, path) from exc


def _identity(record_id: str, info: os.stat_result) -> tuple[str, int, int, int, int]:
    return (record_id, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _os_error(detail: str, exc: OSError, record_id: str | None, path: str | Path | None = None) -> StoreError:
    where = path if path is not None else exc.filename
    return StoreError(
        f"{detail}: {exc.strerror or exc}",
        path=str(where) if where is not None else None,
        record_id=record_id,
        hint=_HINT if path is not None else None,
    )

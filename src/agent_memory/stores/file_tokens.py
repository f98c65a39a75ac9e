"""File identity for a `FileStore`: every record's version token, and the listings a read reuses.

A file Home's freshness check (DESIGN.md §9 "Freshness") compares these tokens with what
its indexes hold; at 100,000 notes that walk is the one cost a recall may pay for the whole
store (issue 10), so it uses ``DirEntry`` values and strings rather than paths. A token is
``<latest version file name>:<size>:<mtime_ns>``: it moves whenever the latest version file
is added, replaced or edited in place. :class:`Listings` keeps the version file names of a
record directory while the directory's own identity (inode, mtime, ctime) is unchanged.
:func:`change_signal` is cheaper still: one value for the whole Home, which moves when a note
folder is added or removed or the log grows (recall's freshness and the review page's record
list both read it between their full comparisons).
Invariant: no file is opened or read here, and no symbolic link is followed to a directory.
"""

from __future__ import annotations

import os
import re
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

__all__ = ["RECORD_DIR", "Listings", "all_tokens", "change_signal"]

RECORD_DIR = re.compile(r"\A[0-9a-f]{32}\Z")
"""The name of a record directory: the 32 hex digits after ``mem:``."""


def all_tokens(root: Path, version_name: re.Pattern[str]) -> dict[str, str]:
    """Return ``{record id: token}`` for every record directory under ``root`` that holds a version.

    Args:
        root: The store's root (a Home's ``notes/``); absent means no records.
        version_name: Matches a version file name, its number in group 1 (``000001.md``).

    Linked record directories are left out, as ``FileStore.list`` leaves them out; a
    directory removed during the walk is skipped.
    """
    top = os.fspath(root)
    try:
        with os.scandir(top) as entries:
            names = [e.name for e in entries if RECORD_DIR.match(e.name) and e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return {}
    match = version_name.match
    tokens: dict[str, str] = {}
    for name in names:
        latest: os.DirEntry[str] | None = None
        number = 0
        try:
            with os.scandir(f"{top}/{name}") as files:
                for entry in files:
                    found = match(entry.name)
                    if found and int(found.group(1)) > number:
                        latest, number = entry, int(found.group(1))
            if latest is not None:
                info = latest.stat()
                tokens["mem:" + name] = f"{latest.name}:{info.st_size}:{info.st_mtime_ns}"
        except (FileNotFoundError, NotADirectoryError):
            continue
    return tokens


def change_signal(notes: Path, log: Path) -> Callable[[], object]:
    """Return a callable whose value moves when a note folder is added or removed, or the log grows.

    The value is the ``notes`` folder's change time and the name, size and change time of
    every file in ``log``: two ``stat`` calls and one listing, whatever the number of notes.
    A note edited in place moves neither (callers compare every token now and then for that).
    An absent folder reads as empty.
    """

    def signal() -> object:
        try:
            notes_time = os.stat(notes).st_mtime_ns
        except OSError:
            notes_time = 0
        files = []
        try:
            with os.scandir(log) as entries:
                for entry in entries:
                    if entry.is_file():
                        info = entry.stat()
                        files.append((entry.name, info.st_size, info.st_mtime_ns))
        except OSError:
            files = []
        return notes_time, tuple(sorted(files))

    return signal


class Listings:
    """The version files of recently read record directories, trusted while each directory is unchanged.

    Listing a record directory (``scandir``, then matching and sorting the names) was most of
    a cached ``FileStore.get`` (issue 10: recall reads ~64 notes). A listing is kept with the
    directory's inode, mtime and ctime from one ``lstat``, taken *before* the listing, and is
    reused only while a new ``lstat`` gives the same three: adding, linking, renaming or
    removing a version file changes the directory's mtime. As for parsed notes, a listing
    is kept only once those times are ``settled_ns`` old (an entry added within one clock
    tick could leave them unchanged). The note file's own identity is still checked on every
    read (``FileStore``): this saves the listing only, never the file's truth.

    Args:
        version_name: Matches a version file name, its number in group 1.
        settled_ns: How old the directory's times must be for its listing to be kept.
        size: Directories kept; the least recently used go first. 16,384 listings are about
            7 MB; a Home of 100k notes held them all at 29 MB (issue 23), and a missing one
            costs one ``scandir``.
    """

    def __init__(self, version_name: re.Pattern[str], settled_ns: int, size: int = 16384) -> None:
        self._match = version_name.match
        self._settled_ns = settled_ns
        self._size = size
        self._items: OrderedDict[str, tuple[tuple[int, int, int], list[tuple[int, str]]]] = OrderedDict()
        self._lock = threading.Lock()

    def versions(self, directory: str) -> list[tuple[int, str]] | None:
        """Return ``(number, file name)`` of every version file in ``directory``, by number.

        Returns:
            ``[]`` when the directory does not exist (or is not a directory), ``None`` when
            it is a symbolic link (never followed: the caller refuses it).

        Raises:
            OSError: The directory exists but cannot be listed.
        """
        try:
            info = os.lstat(directory)
        except (FileNotFoundError, NotADirectoryError):
            return []
        if stat.S_ISLNK(info.st_mode):
            return None
        if not stat.S_ISDIR(info.st_mode):
            return []
        identity = (info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
        with self._lock:
            kept = self._items.get(directory)
            if kept is not None and kept[0] == identity:
                self._items.move_to_end(directory)
                return list(kept[1])
        try:
            with os.scandir(directory) as entries:
                names = [entry.name for entry in entries]
        except (FileNotFoundError, NotADirectoryError):
            return []
        found = sorted((int(m.group(1)), name) for name in names if (m := self._match(name)))
        if time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) > self._settled_ns:
            with self._lock:
                self._items[directory] = (identity, found)
                self._items.move_to_end(directory)
                while len(self._items) > self._size:
                    self._items.popitem(last=False)
        return list(found)

    def clear(self) -> None:
        """Forget every listing."""
        with self._lock:
            self._items.clear()

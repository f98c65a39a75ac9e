"""Debris an interrupted write leaves in ``notes/``: stray temp files and empty record folders.

A :class:`~agent_memory.stores.files.FileStore` write goes to a ``.tmp-<uuid4 hex>`` file in
the record folder, is fsynced, then hard-linked to its version name. A writer killed before
the link (``kill -9`` during ``remember``) leaves the temp file, and one killed after making
the folder leaves an empty record folder: never an acknowledged write (the log entry comes
after the put), and every reader ignores both. :func:`find_debris` names them for
``doctor``; :func:`remove_debris` (``doctor --fix``) removes them under the writer lock, so
no write in progress loses its temp file (issue 20 item 4).

Invariant: only names starting with :data:`~agent_memory.stores.file_io.TEMP_PREFIX` and
folders with nothing else in them are ever removed; a version file (``000001.md`` …),
complete or not, is never touched.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from agent_memory.home import Home
from agent_memory.stores.file_io import TEMP_PREFIX

__all__ = ["Debris", "find_debris", "remove_debris"]

_RECORD_FOLDER = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True, slots=True)
class Debris:
    """What :func:`find_debris` found, as paths relative to the Home.

    Attributes:
        temp_files: Stray ``notes/<id>/.tmp-*`` files (and ``notes/.tmp-*`` folders of an
            interrupted ``restore_erased``).
        empty_folders: Record folders holding no version file (nothing, or only temp files).
    """

    temp_files: tuple[str, ...] = ()
    empty_folders: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.temp_files or self.empty_folders)

    def lines(self) -> tuple[str, ...]:
        """Return one line per leftover, for ``doctor``."""
        return (
            *(f"{path}: temp file of an interrupted write (never a version)" for path in self.temp_files),
            *(f"{path}/: record folder with no version file" for path in self.empty_folders),
        )


def find_debris(home: Home) -> Debris:
    """Return the leftovers of interrupted writes in ``home``'s ``notes/`` (read-only).

    A folder is empty when it holds no name other than temp files; a folder holding any
    other file (a version file, or a file someone put there) is never listed.
    """
    notes = home.root / "notes"
    temps: list[str] = []
    empty: list[str] = []
    try:
        entries = sorted(os.scandir(notes), key=lambda e: e.name)
    except OSError:
        return Debris()
    for entry in entries:
        if entry.name.startswith(TEMP_PREFIX):
            temps.append(f"notes/{entry.name}")
            continue
        if not entry.is_dir(follow_symlinks=False) or not _RECORD_FOLDER.fullmatch(entry.name):
            continue
        try:
            names = sorted(os.listdir(entry.path))
        except OSError:
            continue
        stray = [name for name in names if name.startswith(TEMP_PREFIX)]
        temps += [f"notes/{entry.name}/{name}" for name in stray]
        if len(stray) == len(names):
            empty.append(f"notes/{entry.name}")
    return Debris(tuple(temps), tuple(empty))


def remove_debris(home: Home) -> Debris:
    """Remove what :func:`find_debris` finds, under the Home's writer lock; return what was removed.

    Raises:
        OSError: A leftover could not be removed (the ones before it are gone).
    """
    with home.writer_lock():
        found = find_debris(home)
        for relative in found.temp_files:
            path = home.root / relative
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        for relative in found.empty_folders:
            Path(home.root / relative).rmdir()  # refuses a folder that is not empty after all
    return found

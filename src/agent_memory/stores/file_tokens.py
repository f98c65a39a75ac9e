"""The version tokens of every record of a `FileStore`, from one ``scandir`` and one ``stat`` each.

A file Home's freshness check (DESIGN.md §9 "Freshness") compares these tokens with what
its indexes hold; at 100,000 notes that walk is the one cost a recall may pay for the whole
store (issue 10), so it uses ``DirEntry`` values and strings rather than paths. A token is
``<latest version file name>:<size>:<mtime_ns>``: it moves whenever the latest version file
is added, replaced or edited in place. Invariant: no file is opened or read, and no symbolic
link is followed to a directory.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["RECORD_DIR", "all_tokens"]

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

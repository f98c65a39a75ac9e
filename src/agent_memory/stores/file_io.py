"""Durable writes for `FileStore`: a temp file written and fsynced whole, and a directory fsync.

A version file is first written to a ``.tmp-<uuid4 hex>`` file in its record directory
(``O_CREAT|O_EXCL``, mode 0644) and fsynced; the store then links or renames it into place
and fsyncs the directory (see :mod:`agent_memory.stores.files`). Invariant: a temp file that
returns from :func:`write_temp` holds every byte durably; one whose write failed is removed.
Every reader ignores names starting with :data:`TEMP_PREFIX`.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

__all__ = ["TEMP_PREFIX", "fsync_dir", "write_temp"]

TEMP_PREFIX = ".tmp-"


def write_temp(directory: Path, data: bytes) -> Path:
    """Write ``data`` to a new ``.tmp-<uuid4 hex>`` file in ``directory``, fsynced; return its path."""
    temp = directory / f"{TEMP_PREFIX}{uuid.uuid4().hex}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(temp)
        raise
    os.close(fd)
    return temp


def fsync_dir(directory: Path) -> None:
    """Fsync ``directory`` itself, so that names added to or removed from it are durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

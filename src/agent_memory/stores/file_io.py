"""Durable writes: a temp file written and fsynced whole, a directory fsync, an atomic replace.

A version file is first written to a ``.tmp-<uuid4 hex>`` file in its record directory
(``O_CREAT|O_EXCL``, mode 0644) and fsynced; the store then links or renames it into place
and fsyncs the directory (see :mod:`agent_memory.stores.files`). Invariant: a temp file that
returns from :func:`write_temp` holds every byte durably; one whose write failed is removed.
Every reader ignores names starting with :data:`TEMP_PREFIX`. :func:`write_bytes_atomic`
is the replace-a-whole-file of every other file the library keeps (journals, receipts,
proposals, MemoryFiles, the model cache's manifest): readers see the old bytes or the new,
never a torn file.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

__all__ = ["TEMP_PREFIX", "file_sha256", "fsync_dir", "write_bytes_atomic", "write_temp"]

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


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, *, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it, fsynced, then renamed over it.

    Args:
        path: The file (its folder must exist).
        data: Its whole new content.
        mode: Permission bits of the file written (``0o600`` for a journal holding record text).

    Raises:
        OSError: The write failed; ``path`` is unchanged and the temporary file removed.
    """
    target = Path(path)
    temp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)


def fsync_dir(directory: Path) -> None:
    """Fsync ``directory`` itself, so that names added to or removed from it are durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def file_sha256(path: Path) -> str:
    """Return the sha256 (hex) of the file at ``path``, read in blocks.

    Raises:
        OSError: The file cannot be read.
    """
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()

"""An erasure scan written independently of the code under test: where is a text still?

Every file of a Home is read as bytes; git objects are read twice, loose ones decompressed
with ``zlib`` and every object (packed too) through ``git cat-file --batch-all-objects``;
each ref's history is searched commit by commit with ``git grep``. Places are named as the
receipt names its holders (:func:`owner`), so a test can compare the two sets.
"""

from __future__ import annotations

import shutil
import subprocess
import zlib
from pathlib import Path

AREAS = {
    "notes": "notes/",
    "log": "log/",
    ".cache": "indexes",
    "archive": "archive/",
    "topics": "views",
    "proposals": "proposals/",
}


def owner(path: str) -> str:
    """Return the receipt's holder for a path relative to the Home (``git…`` names pass through)."""
    if path.startswith("git"):
        return path
    if path == ".cache/salience.json" or path.startswith(".state/"):
        return "salience"
    if path in ("MEMORY.md", "index.md"):
        return "views"
    if path.startswith("proposals/pending/"):
        return "pending"
    top, _, rest = path.partition("/")
    if not rest:
        return path
    return AREAS.get(top, f"{top}/")


def git(root: Path, *args: str) -> bytes:
    return subprocess.run(
        [shutil.which("git") or "git", *args], cwd=root, capture_output=True, check=True
    ).stdout


def scan(root: Path, text: str) -> set[str]:
    """Return every place in the Home holding ``text``: file paths, ``git-history``, ``git:<ref>``."""
    needle = text.encode("utf-8")
    found = {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts and needle in p.read_bytes()
    }
    objects = root / ".git" / "objects"
    if not objects.is_dir():
        return found
    for loose in objects.glob("[0-9a-f][0-9a-f]/*"):
        if needle in zlib.decompress(loose.read_bytes()):
            found.add("git-history")
    if needle in git(root, "cat-file", "--batch-all-objects", "--batch"):
        found.add("git-history")
    for ref in git(root, "for-each-ref", "--format=%(refname)").decode().split():
        commits = git(root, "rev-list", ref).decode().split()
        messages = git(root, "log", "--format=%B", ref)
        hits = subprocess.run(
            [shutil.which("git") or "git", "grep", "-F", "-q", "-e", text, *commits],
            cwd=root,
            capture_output=True,
            check=False,
        )
        if hits.returncode == 0 or needle in messages:
            found.add(f"git:{ref}")
    return found


def places(root: Path, text: str) -> set[str]:
    """Return the holders (:func:`owner`) of every place :func:`scan` finds."""
    return {owner(path) for path in scan(root, text)}

"""What ``agent-memory sync`` asks git: changed files, committed bytes, and the two sides of a merge conflict.

A Home is a git repository (DESIGN.md §3), so the bytes a version file had when it was
committed are the authority for restoring a file edited by hand. Every question here is a
read: ``git status``, ``git show`` and ``git log``; nothing is staged, committed or checked
out. Without git (not installed, or the Home is not in a work tree) :meth:`GitTree.find`
returns ``None`` and sync works from the files alone.

Invariant: paths crossing this module are absolute :class:`~pathlib.Path` objects inside the
work tree; bytes are returned exactly as git stores them (notes are ``-text`` in
``.gitattributes``, so no newline translation happens on checkout).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GitTree", "conflict_sides"]

_OURS, _BASE, _THEIRS, _END = b"<<<<<<< ", b"||||||| ", b"=======", b">>>>>>> "


@dataclass(frozen=True, slots=True)
class GitTree:
    """The git work tree holding a Home.

    Attributes:
        git: The git executable.
        top: The work tree's top folder (the Home itself, or a folder above it).
    """

    git: str
    top: Path

    @classmethod
    def find(cls, folder: Path) -> GitTree | None:
        """Return the work tree ``folder`` is in, or ``None`` (no git, or not a work tree)."""
        git = shutil.which("git")
        if git is None:
            return None
        result = _run(git, folder, "rev-parse", "--show-toplevel")
        if result is None:
            return None
        return cls(git, Path(result.decode("utf-8").strip()).resolve())

    def status(self, folder: Path) -> dict[Path, str]:
        """Return ``{path: XY}`` of ``git status --porcelain`` for changed files under ``folder``.

        ``XY`` is git's two-letter code: `` M`` modified, `` D`` deleted, ``??`` untracked,
        ``UU``/``AA``/``DU``… unmerged. Untracked files are listed one by one.
        """
        out = _run(
            self.git, self.top, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", str(folder)
        )
        entries = (out or b"").split(b"\0")
        found: dict[Path, str] = {}
        index = 0
        while index < len(entries):
            entry = entries[index]
            index += 1
            if len(entry) < 4:
                continue
            code = entry[:2].decode("ascii", "replace")
            found[self.top / entry[3:].decode("utf-8", "surrogateescape")] = code
            if code[0] in "RC":
                index += 1  # a rename or copy names its source next
        return found

    def head_blob(self, path: Path) -> bytes | None:
        """Return ``path``'s bytes in the ``HEAD`` commit, or ``None`` (not committed, no commit yet)."""
        return _run(self.git, self.top, "show", f"HEAD:{self._relative(path)}")

    def stage_blob(self, path: Path, stage: int) -> bytes | None:
        """Return ``path``'s bytes at index ``stage`` (2 ours, 3 theirs during a merge), or ``None``."""
        return _run(self.git, self.top, "show", f":{stage}:{self._relative(path)}")

    def past_blobs(self, path: Path, *, limit: int = 50) -> Iterator[bytes]:
        """Yield ``path``'s bytes in the commits that changed it, newest first (at most ``limit``)."""
        log = _run(self.git, self.top, "log", f"-{limit}", "--format=%H", "--", self._relative(path))
        for commit in (log or b"").decode("ascii", "replace").split():
            blob = _run(self.git, self.top, "show", f"{commit}:{self._relative(path)}")
            if blob is not None:
                yield blob

    def _relative(self, path: Path) -> str:
        return path.resolve().relative_to(self.top).as_posix()


def conflict_sides(data: bytes) -> tuple[bytes, bytes] | None:
    """Split a file with git conflict markers into its two sides (ours, theirs).

    Lines outside the markers belong to both sides; a ``diff3`` base section
    (``|||||||`` … ``=======``) belongs to neither.

    Returns:
        ``None`` when ``data`` has no complete conflict block, or a block is malformed.
    """
    ours: list[bytes] = []
    theirs: list[bytes] = []
    section = "both"
    seen = False
    for line in data.splitlines(keepends=True):
        bare = line.rstrip(b"\r\n")
        if line.startswith(_OURS) and section == "both":
            section, seen = "ours", True
        elif line.startswith(_BASE) and section == "ours":
            section = "base"
        elif bare == _THEIRS and section in ("ours", "base"):
            section = "theirs"
        elif line.startswith(_END) and section == "theirs":
            section = "both"
        elif section == "both":
            ours.append(line)
            theirs.append(line)
        elif section == "ours":
            ours.append(line)
        elif section == "theirs":
            theirs.append(line)
    if not seen or section != "both":
        return None
    return b"".join(ours), b"".join(theirs)


def _run(git: str, cwd: Path, *args: str) -> bytes | None:
    """Run git; return stdout bytes, or ``None`` when git fails (not a repo, no such blob)."""
    try:
        result = subprocess.run(  # noqa: S603 - fixed git arguments, no shell
            [git, "-c", "core.quotepath=off", *args], cwd=cwd, capture_output=True, check=False, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 else None

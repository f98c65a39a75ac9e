"""The Home's git history as an erasure holder: which refs still reach erased text, and a rewrite.

DESIGN.md §9: "git history is reported ``partially-completed`` unless the user asks for a
rewrite; a scan of git objects must read them decompressed". Maintenance branches
(``maintenance/<stamp>``, :mod:`agent_memory.jobs.branches`) commit proposal and version files
that hold record bodies, so each ref is a holder of its own.

- :func:`objects_holding` reads every object (loose and packed, reachable or not) through
  ``git cat-file --batch-all-objects --batch`` and returns the ids whose decompressed bytes
  hold a needle.
- :func:`refs_reaching` names the refs (branches, tags, the stash) whose history reaches
  one of those objects (``git rev-list --objects``).
- :func:`rewrite_history` is the opt-in rewrite (``erase(..., rewrite_git=True)``): every
  ref is passed through ``git fast-export`` → every ``data`` block (file contents, commit and
  tag messages) has each needle replaced by the marker → ``git fast-import --force``; then
  reflogs are expired, the index is reset to the rewritten ``HEAD`` (the working tree is not
  touched) and ``git gc --prune=now`` drops the old objects.

Invariants: nothing here runs a shell or takes user text as an argument; the rewrite changes
commit ids of every rewritten commit (clones and remotes keep the old ones: the receipt says
so); a Home that is not a git repository, or a machine without git, has no git holder
(``None``).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from agent_memory.errors import ConfigError

__all__ = ["has_remotes", "objects_holding", "refs_reaching", "rewrite_history"]


def _git() -> str | None:
    return shutil.which("git")


def _run(root: Path, *args: str, data: bytes | None = None) -> bytes:
    git = _git()
    if git is None:
        raise ConfigError("git is not installed", path=str(root))
    done = subprocess.run(  # noqa: S603 - fixed git arguments, no shell
        [git, *args], cwd=root, input=data, capture_output=True, check=False
    )
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", errors="replace").strip()
        raise ConfigError(f"git {args[0]} failed: {message}", path=str(root))
    return done.stdout


def _is_repository(root: Path) -> bool:
    return _git() is not None and (root / ".git").exists()


def objects_holding(root: Path, needles: Sequence[bytes]) -> set[str] | None:
    """Return the ids of the git objects whose decompressed bytes hold a needle; ``None`` without git.

    Raises:
        ConfigError: A git command failed.
    """
    if not _is_repository(root) or not needles:
        return None
    out = _run(root, "cat-file", "--batch-all-objects", "--batch")
    found: set[str] = set()
    offset = 0
    while offset < len(out):
        end = out.index(b"\n", offset)
        header = out[offset:end].split()
        size = int(header[2])
        body = out[end + 1 : end + 1 + size]
        offset = end + 1 + size + 1
        if any(needle in body for needle in needles):
            found.add(header[0].decode("ascii"))
    return found


def refs_reaching(root: Path, objects: set[str]) -> list[str]:
    """Return the refs (``refs/heads/main``, ``refs/heads/maintenance/…``) whose history reaches ``objects``.

    Raises:
        ConfigError: A git command failed.
    """
    if not objects or not _is_repository(root):
        return []
    refs = _run(root, "for-each-ref", "--format=%(refname)").decode("utf-8").split()
    reaching = []
    for ref in refs:
        listed = _run(root, "rev-list", "--objects", ref).decode("utf-8").splitlines()
        if any(line.split(" ", 1)[0] in objects for line in listed):
            reaching.append(ref)
    return reaching


def has_remotes(root: Path) -> bool:
    """Return whether the Home's git repository names any remote (copies the rewrite cannot reach)."""
    return _is_repository(root) and bool(_run(root, "remote").strip())


def rewrite_history(root: Path, needles: Sequence[bytes], replacement: bytes) -> int:
    """Rewrite every ref so that no commit, tree or blob holds a needle; return the blocks changed.

    Args:
        root: The Home (a git repository).
        needles: The erased texts.
        replacement: What stands in their place (the erasure's marker; no content).

    Returns:
        How many ``data`` blocks of the history changed (0: nothing was rewritten).

    Raises:
        ConfigError: git is missing or a git command failed; a failure before
            ``fast-import`` leaves the repository as it was.
    """
    if not _is_repository(root) or not needles:
        return 0
    stream = _run(root, "fast-export", "--all", "--signed-tags=strip", "--tag-of-filtered-object=rewrite")
    rewritten, changed = _replace_in_data(stream, needles, replacement)
    if not changed:
        return 0
    _run(root, "fast-import", "--force", "--quiet", data=rewritten)
    _run(root, "reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
    (root / ".git" / "ORIG_HEAD").unlink(missing_ok=True)
    if _run(root, "rev-parse", "--verify", "-q", "HEAD").strip():
        _run(root, "reset", "-q")  # the index follows the rewritten HEAD; the working tree stays
    _run(root, "gc", "--prune=now", "--quiet")
    return changed


def _replace_in_data(stream: bytes, needles: Sequence[bytes], replacement: bytes) -> tuple[bytes, int]:
    """Return the fast-export ``stream`` with needles replaced inside every ``data <n>`` block."""
    out = bytearray()
    changed = 0
    offset = 0
    ordered = sorted(needles, key=len, reverse=True)
    while offset < len(stream):
        end = stream.find(b"\n", offset)
        end = len(stream) if end < 0 else end
        line = stream[offset:end]
        if not line.startswith(b"data "):
            out += line + b"\n"
            offset = end + 1
            continue
        size = int(line[5:])
        block = stream[end + 1 : end + 1 + size]
        offset = end + 1 + size
        new = block
        for needle in ordered:
            new = new.replace(needle, replacement)
        changed += new != block
        out += b"data %d\n" % len(new) + new
    return bytes(out), changed

"""Erasure receipts and the Home's holders (seed 000 §12.3; origin-notes §3; DESIGN.md §9 "Erasure").

An erasure replaces every stored version of the covered records by the tombstone and then
walks every *holder* that may still keep the erased text. This module holds what does not
need a :class:`~agent_memory.memory.Memory`: the ``erasure-tombstone-v1`` receipt, its
``memerase-YYYY-MM-DD-NNN`` ids, the scan that finds where given texts still are in a Home's
files (git objects: :mod:`.git_erasure`), the mapping of a file to its holder, and the
rewriting of MemoryFile exports.

Invariants:

- a receipt never holds erased content: scope refs are record ids, holder refs are paths or
  names, limitations are fixed words from :data:`LIMITATIONS`;
- a holder is ``completed`` only when the final scan finds none of the erased texts in the
  files it owns; where a text remains, the holder is ``partially-completed`` (a known
  limitation) — so the receipt and an independent scan agree by construction;
- the needles (erased bodies) live only in memory for the call; they are never written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_memory.errors import RecordError
from agent_memory.jobs.inert import inert_inline, view_forms

if TYPE_CHECKING:
    from agent_memory.governance.erasure.sanitize import FileLineage

__all__ = [
    "ERASURE_ID_PATTERN",
    "LIMITATIONS",
    "RESULTS",
    "ErasureReceipt",
    "HolderResult",
    "holder_of",
    "home_files_holding",
    "needles_of",
    "next_erasure_id",
    "sanitize_memory_file",
]

RECORD_TYPE = "erasure-tombstone-v1"
ERASURE_ID_PATTERN = re.compile(r"\Amemerase-(\d{4}-\d{2}-\d{2})-(\d{3,})\Z")
RESULTS: tuple[str, ...] = ("completed", "partially-completed", "unevaluated")
"""The three holder results of seed 000 §12.3."""

LIMITATIONS: Mapping[str, str] = {
    "tombstone-keeps-id": "the tombstone keeps the id, birth_digest and links (seed 001 redaction)",
    "git-history-not-rewritten": "git objects keep earlier versions; erase with rewrite_git to rewrite them",
    "git-copies-elsewhere": "clones, remotes and pushed copies of the git history are not reached",
    "dependent-not-erased": "a record quotes or points at the erased scope; pass it to erase it too",
    "source-anchor-erased": "a retained record's source line was redacted: its source audit is lost",
    "human-owned-file": "a human-owned file (conventions.md) quotes it; revise it by hand",
    "unmanaged-file": "a file agent-memory does not manage quotes it; delete or revise it by hand",
    "views-not-rendered": "the views could not be re-rendered (edited by hand or no renderer)",
    "short-text-kept": "the erased text is too short to cut out of other text safely; revise by hand",
    "postgres-residue": "PostgreSQL may keep old row versions in its WAL, backups, replicas or freed blocks",
    "export-path-unknown": "an export was logged with a relative path outside the Home: it cannot be located",
    "export-missing": "a logged export file is gone; copies made of it are not known",
    "export-of-another-home": "a logged export was made by another Home (this Home is a copy of it, "
    "or was moved): it is left to that Home, and may still hold the text",
    "export-not-memory-file": "a logged export is not a MemoryFile, so it cannot be rewritten",
    "content-remains": "the final scan still finds erased text in this holder",
}
"""Fixed limitation words (``limitation_ref``) and what each means; never content."""


@dataclass(frozen=True, slots=True)
class HolderResult:
    """One holder of the erased scope and what the erasure achieved there.

    Attributes:
        holder_ref: A path relative to the Home (``notes/``, ``archive/2026-11-29.md``), a
            record (``record:mem:…``) or a name (``git-history``, ``index:fts``).
        result: One of :data:`RESULTS`.
        limitation_ref: A key of :data:`LIMITATIONS` when not ``completed`` (or a retained
            non-content residue such as ``tombstone-keeps-id``), else ``None``.
    """

    holder_ref: str
    result: str
    limitation_ref: str | None = None

    def __post_init__(self) -> None:
        if self.result not in RESULTS:
            raise RecordError(f"must be one of {RESULTS}, got {self.result!r}", field="result")
        if self.limitation_ref is not None and self.limitation_ref not in LIMITATIONS:
            raise RecordError(f"unknown limitation {self.limitation_ref!r}", field="limitation_ref")

    def to_wire(self) -> dict[str, Any]:
        """Return ``{holder_ref, result, limitation_ref}``."""
        return {"holder_ref": self.holder_ref, "result": self.result, "limitation_ref": self.limitation_ref}


@dataclass(frozen=True, slots=True)
class ErasureReceipt:
    """An ``erasure-tombstone-v1`` receipt (seed 000 §12.3 minimum shape; origin-notes §3).

    Attributes:
        erasure_id: ``memerase-YYYY-MM-DD-NNN`` (local day of the Home, NNN per day from 001).
        scope_refs: The erased record ids, sorted (opaque ids, never content).
        authority_ref: Who or what authorized it (a person, ticket or request id).
        decided_by: The actor who executed it (holds the ``erase`` grant).
        reason: The stated reason (the caller's words; must not quote the content).
        decided_at: When the erasure was requested (RFC 3339 UTC text).
        executed_at: When the last holder was processed (RFC 3339 UTC text).
        holders: Every known holder with its result.
        sanitized_replacement_refs: Files rewritten without the erased content (relative to the
            Home, or absolute for exports outside it).
        removed_refs: Files deleted because they could not be rewritten without it (proposals).
        archive_lineage: Each archive file rewritten, with its old and new segment identities
            (:class:`~agent_memory.governance.erasure.sanitize.FileLineage`; the ledger follows it).
    """

    erasure_id: str
    scope_refs: tuple[str, ...]
    authority_ref: str
    decided_by: str
    reason: str
    decided_at: str
    executed_at: str
    holders: tuple[HolderResult, ...] = ()
    sanitized_replacement_refs: tuple[str, ...] = field(default=())
    removed_refs: tuple[str, ...] = field(default=())
    archive_lineage: tuple[FileLineage, ...] = field(default=())

    @property
    def complete(self) -> bool:
        """Whether every holder is ``completed``."""
        return all(holder.result == "completed" for holder in self.holders)

    def to_wire(self) -> dict[str, Any]:
        """Return the receipt as logged and printed (``record_type: erasure-tombstone-v1``)."""
        return {
            "erasure_id": self.erasure_id,
            "record_type": RECORD_TYPE,
            "scope_refs": list(self.scope_refs),
            "authority_ref": self.authority_ref,
            "decided_by": self.decided_by,
            "reason": self.reason,
            "decided_at": self.decided_at,
            "executed_at": self.executed_at,
            "holders": [holder.to_wire() for holder in self.holders],
            "sanitized_replacement_refs": list(self.sanitized_replacement_refs),
            "removed_refs": list(self.removed_refs),
            "archive_lineage": [lineage.to_json() for lineage in self.archive_lineage],
        }


def next_erasure_id(taken: Iterable[str], day: str) -> str:
    """Return ``memerase-<day>-NNN`` with NNN one more than the highest taken that day (001 first).

    Ids in ``taken`` that are not erasure ids are ignored.
    """
    numbers = [int(m.group(2)) for m in map(ERASURE_ID_PATTERN.match, taken) if m and m.group(1) == day]
    return f"memerase-{day}-{max(numbers, default=0) + 1:03d}"


def needles_of(bodies: Iterable[str]) -> tuple[bytes, ...]:
    """Return the byte strings a scan looks for: each body as UTF-8, as the views show it, JSON-escaped.

    Bodies of fewer than 4 characters (``[redacted]`` excepted, never a needle) are kept
    too: erasing a short text may report holders that merely contain those letters, which
    errs on the side of ``partially-completed``.
    """
    import json

    found: set[bytes] = set()
    for body in bodies:
        if not body or body == "[redacted]":
            continue
        found.add(body.encode("utf-8"))
        # As the views show it (escaped by jobs.inert): a view edited by hand keeps that form.
        found.update(form.encode("utf-8") for form in {inert_inline(body), *view_forms(body)} - {body})
        found.add(json.dumps(body, ensure_ascii=False)[1:-1].encode("utf-8"))
        found.add(json.dumps(body)[1:-1].encode("ascii"))
    return tuple(sorted(found))


def holder_of(relative: str) -> str:
    """Return the holder ref that owns a Home file (path relative to the Home, ``/`` separators).

    ``notes/…`` → ``notes/``; ``.state/…`` (and an older ``.cache/salience.json``) →
    ``salience``; other ``.cache/…`` →
    ``indexes``; ``log/…`` → ``log/``; ``archive/X.md`` → ``archive/``; ``MEMORY.md``,
    ``index.md`` and ``topics/…`` → ``views``; ``proposals/pending/…`` → ``pending``; other
    ``proposals/…`` → ``proposals/``; other top-level files stay themselves (``inbox.md``,
    ``conventions.md``); any other nested file → its first folder.
    """
    parts = relative.split("/")
    fixed = {".cache/salience.json": "salience", "MEMORY.md": "views", "index.md": "views"}
    if relative in fixed:
        return fixed[relative]
    if len(parts) == 1:
        return relative
    if parts[0] == ".state":
        return "salience"
    if parts[0] in ("topics", ".cache"):
        return "views" if parts[0] == "topics" else "indexes"
    if parts[0] == "proposals" and parts[1] == "pending" and len(parts) > 2:
        return "pending"
    return f"{parts[0]}/"


def home_files_holding(root: Path, needles: Sequence[bytes]) -> dict[str, list[str]]:
    """Return ``{holder_ref: [relative paths]}`` of the Home files (``.git`` excepted) holding a needle.

    Reads every regular file under ``root`` as bytes (symlinks are not followed).
    """
    found: dict[str, list[str]] = {}
    if not needles:
        return found
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if relative == ".git" or relative.startswith(".git/") or path.is_symlink() or not path.is_file():
            continue
        if relative.startswith(".cache/erase-journal/"):
            continue  # the erasure's own working copy of its texts, removed with its receipt

        data = path.read_bytes()
        if any(needle in data for needle in needles):
            found.setdefault(holder_of(relative), []).append(relative)
    return found


def sanitize_memory_file(path: Path, erased: Mapping[str, Any], needles: Sequence[bytes], keys: Any) -> bool:
    """Rewrite the MemoryFile at ``path`` with each erased record replaced by its tombstone.

    Args:
        path: A file in the Home that holds a needle.
        erased: ``{record id: tombstone}`` of this erasure.
        needles: The erased texts.
        keys: The Home's key pair, to re-sign a file that was signed (``None``: leave unsigned).

    Returns:
        ``True`` when the file was a MemoryFile and no longer holds a needle after the
        rewrite; ``False`` when it is not a MemoryFile or still quotes erased text (in a
        record this erasure did not cover), in which case it is left unchanged.
    """
    import dataclasses

    from agent_memory.errors import AgentMemoryError
    from agent_memory.records.memory_file import MemoryFile
    from agent_memory.stores.file_io import write_bytes_atomic

    try:
        loaded = MemoryFile.loads(path.read_bytes(), path=str(path))
    except (AgentMemoryError, ValueError):
        return False
    records = tuple(erased.get(record.id, record) for record in loaded.records)
    rewritten = dataclasses.replace(loaded, records=records, signature="")
    if loaded.signature and keys is not None:
        rewritten = rewritten.sign(keys)
    data = rewritten.dumps()
    if any(needle in data for needle in needles):
        return False
    write_bytes_atomic(path, data)
    return True

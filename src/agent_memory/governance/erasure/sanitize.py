"""Sanitizing the Home's text holders for an erasure: archive segments, the inbox, proposals.

Seed 000 §12.3: "If one archive object mixes erased and retained scopes, the binding must use
deletable storage or create a new sanitized identity that preserves allowed material and
lineage without retaining erased bytes." This module holds the file-level steps
:mod:`.erasing` runs under the Home's writer lock:

- :func:`sanitize_archive` rewrites ``archive/YYYY-MM-DD.md``. An item line an erased record
  points at (``archive/D.md#mem-D-NNN`` in its ``provenance.ref``, ``sources`` or
  ``evidence``) is replaced whole by a redaction line that keeps its date, id, kind and
  taint, so anchors still resolve; in any other line only the erased text is replaced by
  :func:`marker`. Each rewritten segment gets a new identity (offset, length, SHA-256), and
  the old → new pairs are returned as :class:`FileLineage` for the receipt, which the archive
  ledger (:mod:`agent_memory.jobs.ledger`) follows.
- :func:`sanitize_inbox` does the same for ``inbox.md`` (no ledger: the inbox is rewritten
  by every archive run).
- :func:`clean_proposals` treats ``proposals/``: a JSON proposal that quotes erased text is
  deleted (its records cannot be rewritten and stay valid; accepting it would bring the text
  back), any other file has the erased text replaced by the marker.

Invariants: a replacement line or marker holds only ids, kinds, taint labels and the
erasure id, never erased text; needles shorter than :data:`MIN_TEXT_BYTES` are never
replaced inside unrelated text (that would destroy retained material), so where such a
needle remains the final scan reports the holder ``partially-completed``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_memory.jobs.files import read_bytes, replace_bytes
from agent_memory.jobs.inbox import InboxItem, format_line, parse_inbox
from agent_memory.jobs.ledger import Segment, check_files, read_runs
from agent_memory.records.record import Kind

if TYPE_CHECKING:
    from agent_memory.home import Home
    from agent_memory.records.record import MemoryRecord

__all__ = [
    "ERASED_SOURCE",
    "MIN_TEXT_BYTES",
    "FileLineage",
    "clean_proposals",
    "covered_anchors",
    "is_redacted",
    "marker",
    "replace_text",
    "sanitize_archive",
    "sanitize_inbox",
    "sanitize_lines",
]

MIN_TEXT_BYTES = 8
"""Needles shorter than this are found by the scan but never replaced inside other text."""
ERASED_SOURCE = "source-erased"
"""The ``Source`` (and ``Subject``) a redacted line carries (seed 000 §12.3 "source-erased")."""

_ANCHOR = re.compile(r"\A(archive/\d{4}-\d{2}-\d{2}\.md)#(mem-\d{4}-\d{2}-\d{2}-\d{3,})\Z")
_ARCHIVE_STRUCTURE = re.compile(r"\A(?:# Archive \d{4}-\d{2}-\d{2}|## Archived \S+)\Z")
_INBOX_STRUCTURE = re.compile(r"\A# Inbox \d{4}-\d{2}-\d{2}\Z")
_MARKER = re.compile(r"\(erased by memerase-\d{4}-\d{2}-\d{2}-\d{3,}\)")


def marker(erasure_id: str) -> str:
    """Return the text that stands where erased text was: ``(erased by memerase-…)``.

    Valid inside an inbox line, a YAML plain scalar, a JSON string and Markdown alike.
    """
    return f"(erased by {erasure_id})"


@dataclass(frozen=True, slots=True)
class FileLineage:
    """How an erasure rewrote one archive file: the file's and each segment's old and new identity.

    Attributes:
        file: ``archive/YYYY-MM-DD.md``.
        old_sha256: SHA-256 of the file before (64 hex).
        new_sha256: SHA-256 of the sanitized file.
        segments: ``(old, new)`` for every logged segment of the file, in order (unchanged
            segments move when an earlier one shrinks); empty when the file did not match
            its ledger before the erasure (the check keeps reporting it).
        items: The ids of the lines replaced whole.
    """

    file: str
    old_sha256: str
    new_sha256: str
    segments: tuple[tuple[Segment, Segment], ...]
    items: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """Return ``{file, old_sha256, new_sha256, segments: [{old, new}], items}`` (no content)."""
        return {
            "file": self.file,
            "old_sha256": self.old_sha256,
            "new_sha256": self.new_sha256,
            "segments": [{"old": old.to_json(), "new": new.to_json()} for old, new in self.segments],
            "items": list(self.items),
        }


def covered_anchors(histories: Iterable[Sequence[MemoryRecord]]) -> dict[str, set[str]]:
    """Return ``{archive file: {item ids}}`` the erased records point at, over every version."""
    found: dict[str, set[str]] = {}
    for history in histories:
        for version in history:
            for ref in (version.provenance.ref, *(version.sources or ()), *version.evidence):
                match = _ANCHOR.match(ref or "")
                if match:
                    found.setdefault(match[1], set()).add(match[2])
    return found


def is_redacted(item: InboxItem) -> bool:
    """Return whether an archive or inbox item is a redaction line an erasure left (no content).

    Distillation should skip such lines: the marker is not a memory (seed 000 §12.3 "prevent
    re-distillation").
    """
    return item.source == ERASED_SOURCE and _MARKER.fullmatch(item.text) is not None


def _long(needles: Sequence[bytes]) -> list[str]:
    """The needles long enough to cut out of other text, longest first (one may hold another)."""
    long = [n.decode("utf-8") for n in needles if len(n) >= MIN_TEXT_BYTES]
    return sorted(long, key=len, reverse=True)


def _redacted(item: InboxItem, erasure_id: str) -> str:
    subject = ERASED_SOURCE if item.kind is Kind.STATE else None
    line = format_line(item.day, item.id, item.kind, marker(erasure_id), ERASED_SOURCE, subject, item.taint)
    return line + ("\r" if item.raw.endswith("\r") else "")


def sanitize_lines(
    text: str, ids: set[str], needles: Sequence[bytes], erasure_id: str, *, archive: bool
) -> tuple[str, list[str]]:
    """Return ``text`` with covered lines redacted and erased text replaced, and the ids redacted whole.

    Args:
        text: An archive segment or file, or the inbox.
        ids: Item ids (``mem-D-NNN``) to replace whole (the erased records' anchors).
        needles: The erased texts (:func:`~agent_memory.governance.erasure.receipt.needles_of`).
        erasure_id: Named in the markers.
        archive: Archive headings (``True``) or inbox headers count as structure.
    """
    structure = _ARCHIVE_STRUCTURE if archive else _INBOX_STRUCTURE
    lines = text.split("\n")
    items = {item.line: item for item in parse_inbox(text, structure=structure).items}
    texts = _long(needles)
    whole: list[str] = []
    for number, line in enumerate(lines, start=1):
        item = items.get(number)
        if item is not None and item.id in ids:
            lines[number - 1] = _redacted(item, erasure_id)
            whole.append(item.id)
            continue
        if not any(needle in line for needle in texts):
            continue
        replaced = line
        for needle in texts:
            replaced = replaced.replace(needle, marker(erasure_id))
        reread = parse_inbox(replaced, structure=structure)
        if item is not None and (reread.problems or not reread.items):
            replaced = _redacted(item, erasure_id)  # the marker broke the line's format
            whole.append(item.id)
        lines[number - 1] = replaced
    return "\n".join(lines), whole


def _text(data: bytes) -> str:
    # Bytes that are not UTF-8 (a damaged file) pass through unchanged.
    return data.decode("utf-8", errors="surrogateescape")


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sanitize_archive(
    home: Home, anchors: Mapping[str, set[str]], needles: Sequence[bytes], erasure_id: str
) -> list[FileLineage]:
    """Rewrite every archive file that holds an erased anchor or text; return each file's lineage.

    A file that matches its ledger is sanitized segment by segment, so every segment keeps a
    recorded identity; one that does not (edited by hand, an interrupted run) is sanitized
    whole, with file digests only. Call under the Home's writer lock; log the lineage with the
    receipt.

    Raises:
        LogError: The log's archive events cannot be read.
        StoreError: A file cannot be read or written (the files before it stay rewritten).
    """
    folder = home.root / "archive"
    if not folder.is_dir():
        return []
    runs = read_runs(home.log())
    broken = {problem.file for problem in check_files(home.root, runs)}
    lineage = []
    for path in sorted(folder.glob("*.md")):
        name = f"archive/{path.name}"
        data = read_bytes(path)
        ids = set(anchors.get(name, ()))
        if not ids and not any(n in data for n in needles if len(n) >= MIN_TEXT_BYTES):
            continue
        segments = [s for run in runs for s in run.segments if s.file == name]
        pairs: tuple[tuple[Segment, Segment], ...] = ()
        if name in broken or not segments:
            text, whole = sanitize_lines(_text(data), ids, needles, erasure_id, archive=True)
            new = _bytes(text)
        else:
            new, pairs, whole = _by_segment(data, segments, ids, needles, erasure_id)
        if new == data:
            continue
        replace_bytes(path, new)
        lineage.append(FileLineage(name, _sha(data), _sha(new), pairs, tuple(sorted(whole))))
    return lineage


def _by_segment(
    data: bytes, segments: list[Segment], ids: set[str], needles: Sequence[bytes], erasure_id: str
) -> tuple[bytes, tuple[tuple[Segment, Segment], ...], list[str]]:
    chunks, pairs, whole, offset = [], [], [], 0
    for old in sorted(segments, key=lambda s: s.offset):
        chunk = data[old.offset : old.offset + old.length]
        text, redacted = sanitize_lines(_text(chunk), ids, needles, erasure_id, archive=True)
        new_chunk = _bytes(text)
        chunks.append(new_chunk)
        whole.extend(redacted)
        pairs.append((old, Segment(old.file, offset, len(new_chunk), _sha(new_chunk))))
        offset += len(new_chunk)
    return b"".join(chunks), tuple(pairs), whole


def sanitize_inbox(home: Home, needles: Sequence[bytes], erasure_id: str) -> bool:
    """Replace erased text in ``inbox.md`` (a line that would not parse is redacted whole).

    Returns:
        Whether the inbox was rewritten.

    Raises:
        StoreError: The inbox cannot be read or written.
    """
    path = home.root / "inbox.md"
    data = read_bytes(path)
    if not any(n in data for n in needles if len(n) >= MIN_TEXT_BYTES):
        return False
    text, _ = sanitize_lines(_text(data), set(), needles, erasure_id, archive=False)
    replace_bytes(path, _bytes(text))
    return True


def replace_text(path: Path, needles: Sequence[bytes], erasure_id: str) -> bool:
    """Replace every long needle in the file at ``path`` by the marker; return whether it changed.

    Raises:
        StoreError: The file cannot be read or written.
    """
    data = read_bytes(path)
    new = data
    for needle in sorted((n for n in needles if len(n) >= MIN_TEXT_BYTES), key=len, reverse=True):
        new = new.replace(needle, marker(erasure_id).encode("ascii"))
    if new == data:
        return False
    replace_bytes(path, new)
    return True


def clean_proposals(home: Home, needles: Sequence[bytes], erasure_id: str) -> tuple[list[str], list[str]]:
    """Remove erased text from ``proposals/`` (``proposals/pending/`` excepted: the pending records).

    A ``.json`` file that holds erased text is deleted: it embeds signed wire records
    (a merge's new record, a flag's next version) that cannot be rewritten and stay valid, and
    accepting it would write the text back. Other files (promotion ``.md``, policy ``.yaml``:
    ``key: <JSON>`` lines) get the marker in its place and stay readable.

    Returns:
        ``(rewritten, removed)`` paths relative to the Home.

    Raises:
        StoreError: A file cannot be read, written or removed.
    """
    from agent_memory.errors import StoreError

    folder = home.root / "proposals"
    rewritten: list[str] = []
    removed: list[str] = []
    if not folder.is_dir():
        return rewritten, removed
    texts = [n for n in needles if len(n) >= MIN_TEXT_BYTES]
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        relative = path.relative_to(home.root).as_posix()
        if relative.startswith("proposals/pending/") or not any(n in read_bytes(path) for n in texts):
            continue
        if path.suffix == ".json" and _is_json(path):
            try:
                path.unlink()
            except OSError as exc:
                raise StoreError(f"cannot remove: {exc.strerror or exc}", path=str(path)) from None
            removed.append(relative)
        elif replace_text(path, needles, erasure_id):
            rewritten.append(relative)
    return rewritten, removed


def _is_json(path: Path) -> bool:
    try:
        json.loads(read_bytes(path))
    except (ValueError, UnicodeDecodeError):
        return False
    return True

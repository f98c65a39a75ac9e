"""What the log says ``archive-inbox`` appended, and whether ``archive/`` still matches it.

Each ``archive-inbox`` event of the operation log (seed 000 §7.1 capability 5) names, per
archive file, the segment it appended: byte offset, length, SHA-256 (:class:`Segment`).
Reading those events back gives :class:`Run` s; :func:`check_files` compares every file in
``archive/`` with them, so the archive's append-only promise (seed 000 §7.2, §13) is checked
from evidence kept outside the archive itself.

Invariant: a file is intact exactly when it is the concatenation of its logged segments.
Anything else is an :class:`ArchiveProblem`: ``edited`` (a segment's bytes differ),
``appended`` (bytes after the last segment), ``missing`` (logged, deleted), ``unlogged``
(no run wrote it), or ``interrupted`` (the last run's segment is absent or cut short and the
inbox still starts with what that run archived, so ``archive-inbox`` can finish it). Nothing here
writes or repairs. The log holds digests, never item text (DESIGN.md §9).

An authorized erasure may rewrite a segment (seed 000 §12.3: a sanitized segment with a new
identity and recorded lineage): its ``erase`` event lists, under ``archive_lineage``, each
segment's old and new offset, length and SHA-256, and :func:`read_runs` follows that lineage,
so a sanitized file checks as intact while any other change is still reported.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_memory.errors import LogError, RecordError
from agent_memory.jobs.files import tail
from agent_memory.log.base import Action, LogEntry, OperationLog
from agent_memory.records.wire import format_timestamp, parse_timestamp

__all__ = ["ArchiveProblem", "Run", "Segment", "archived_prefix", "check_files", "read_runs"]


@dataclass(frozen=True, slots=True)
class Segment:
    """Bytes one run appended to one archive file, as the log remembers them.

    Attributes:
        file: Path relative to the Home root, ``archive/YYYY-MM-DD.md``.
        offset: Byte offset in the file where the segment starts.
        length: Its length in bytes.
        sha256: SHA-256 of those bytes, 64 lowercase hex.
    """

    file: str
    offset: int
    length: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        """Return the shape stored in the log event."""
        return {"file": self.file, "offset": self.offset, "length": self.length, "sha256": self.sha256}

    @classmethod
    def from_json(cls, data: Any) -> Segment:
        """Read the logged shape back.

        Raises:
            KeyError, TypeError, ValueError: A missing or mistyped field, or a file outside
                ``archive/`` (callers turn these into a ``LogError`` naming the event).
        """
        segment = cls(str(data["file"]), int(data["offset"]), int(data["length"]), str(data["sha256"]))
        name = segment.file.removeprefix("archive/")
        if name == segment.file or "/" in name or not name.endswith(".md"):
            raise ValueError(f"segment file {segment.file!r} is not a file in archive/")
        return segment


@dataclass(frozen=True, slots=True)
class Run:
    """One ``archive-inbox`` event read back.

    Attributes:
        seq: Its log seq.
        archived_at: Canonical UTC time named in its segment headers (``""`` when skipped).
        inbox_sha256: SHA-256 of the inbox bytes it archived (or found empty).
        skipped: The inbox held no item.
        segments: What it appended, one per archive file, in file name order.
    """

    seq: int
    archived_at: str
    inbox_sha256: str
    skipped: bool
    segments: tuple[Segment, ...]


@dataclass(frozen=True, slots=True)
class ArchiveProblem:
    """An archive file that is not what the runs wrote (or a run left unfinished).

    Attributes:
        file: Path relative to the Home root.
        kind: ``edited``, ``missing``, ``appended``, ``unlogged`` or ``interrupted``.
        detail: What was found, with the line and log seq where known.
    """

    file: str
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.file}: {self.kind}: {self.detail}"


def read_runs(log: OperationLog) -> list[Run]:
    """Return every ``archive-inbox`` event of the log as a :class:`Run`, oldest first.

    Raises:
        LogError: The log cannot be read, or an event's details are malformed (naming its seq).
    """
    runs: list[Run] = []
    for entry in log.entries():
        if entry.action == Action.ERASE and entry.details.get("archive_lineage"):
            runs = _follow_lineage(runs, entry)
            continue
        if entry.action != Action.ARCHIVE_INBOX:
            continue
        details = entry.details
        try:
            skipped = bool(details["skipped"])
            segments = () if skipped else tuple(Segment.from_json(s) for s in details["segments"])
            when = "" if skipped else format_timestamp(parse_timestamp(details["archived_at"], "archived_at"))
            runs.append(Run(entry.seq, when, str(details["inbox_sha256"]), skipped, segments))
        except (KeyError, TypeError, ValueError, RecordError) as exc:
            raise LogError(f"malformed archive-inbox event: {exc}", field=f"seq {entry.seq}") from None
    return runs


def _follow_lineage(runs: list[Run], entry: LogEntry) -> list[Run]:
    """Point the segments an erasure rewrote at their sanitized bytes (``archive_lineage``)."""
    moved: dict[Segment, Segment] = {}
    try:
        for item in entry.details["archive_lineage"]:
            for pair in item["segments"]:
                moved[Segment.from_json(pair["old"])] = Segment.from_json(pair["new"])
    except (KeyError, TypeError, ValueError) as exc:
        detail = f"malformed archive_lineage in an erase event: {exc}"
        raise LogError(detail, field=f"seq {entry.seq}") from None
    return [dataclasses.replace(run, segments=tuple(moved.get(s, s) for s in run.segments)) for run in runs]


def archived_prefix(inbox: bytes, sha256: str) -> int | None:
    """Return the length of the start of ``inbox`` whose SHA-256 is ``sha256``, or ``None``.

    A run logs the digest of the inbox it archives and resets the inbox last; a run killed
    before the reset leaves that inbox in place, and captures made since only append to it.
    So the run is unfinished exactly when the inbox is, or starts with (up to a line
    break), the bytes it logged.
    """
    digest = hashlib.sha256()
    if digest.hexdigest() == sha256:
        return 0
    start = 0
    while start < len(inbox):
        end = inbox.find(b"\n", start)
        end = len(inbox) if end < 0 else end + 1
        digest.update(inbox[start:end])
        if digest.hexdigest() == sha256:
            return end
        start = end
    return None


def check_files(root: Path, runs: Sequence[Run]) -> list[ArchiveProblem]:
    """Compare every file in ``root/archive/`` (and every logged one) with its segments, by name."""
    by_file: dict[str, list[tuple[int, Segment]]] = {}
    for run in runs:
        for segment in run.segments:
            by_file.setdefault(segment.file, []).append((run.seq, segment))
    pending: set[Segment] = set()
    if runs and not runs[-1].skipped:
        inbox = tail(root / "inbox.md", 0) or b""
        if archived_prefix(inbox, runs[-1].inbox_sha256) is not None:
            pending = set(runs[-1].segments)  # the inbox was never reset: that run is unfinished
    folder = root / "archive"
    present = {f"archive/{p.name}" for p in folder.glob("*.md")} if folder.is_dir() else set()
    problems = []
    for name in sorted(present | set(by_file)):
        problems.extend(_check_file(root / name, name, by_file.get(name, []), pending))
    return problems


def _check_file(
    path: Path, name: str, segments: list[tuple[int, Segment]], pending: set[Segment]
) -> list[ArchiveProblem]:
    if not segments:
        return [ArchiveProblem(name, "unlogged", "no archive-inbox run wrote this file")]
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        first = segments[0][0]
        if all(segment in pending and segment.offset == 0 for _, segment in segments):
            return [ArchiveProblem(name, "interrupted", f"the run of log seq {first} never wrote it")]
        return [
            ArchiveProblem(name, "missing", f"deleted; {len(segments)} logged segment(s) from seq {first}")
        ]
    except OSError as exc:
        return [ArchiveProblem(name, "missing", f"unreadable: {exc.strerror or exc}")]
    problems = []
    end = 0
    for seq, segment in segments:
        chunk = data[segment.offset : segment.offset + segment.length]
        if segment in pending and segment.offset <= len(data) < segment.offset + segment.length:
            detail = f"the run of log seq {seq} stopped before finishing this file; archive-inbox finishes it"
            problems.append(ArchiveProblem(name, "interrupted", detail + " while inbox.md is unchanged"))
        elif hashlib.sha256(chunk).hexdigest() != segment.sha256:
            line = data.count(b"\n", 0, min(segment.offset, len(data))) + 1
            detail = f"from line {line}, the bytes differ from what log seq {seq} appended"
            problems.append(ArchiveProblem(name, "edited", detail))
        end = segment.offset + segment.length
    if len(data) > end:
        line = data.count(b"\n", 0, end) + 1
        problems.append(
            ArchiveProblem(name, "appended", f"lines from {line} were added after the last logged run")
        )
    return problems

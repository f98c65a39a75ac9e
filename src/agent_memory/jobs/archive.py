"""Archive the inbox into ``archive/YYYY-MM-DD.md`` (seed 000 §13, ``memory:L2``): no model, append-only.

One run, under the Home's writer lock:

1. finish a run that a crash interrupted (below), if any;
2. parse ``inbox.md``; a malformed line refuses the run (the error lists every line number)
   and nothing is written; an inbox with no item is skipped, logged as an ``archive-inbox``
   event with ``skipped: true``;
3. group the items by their own day (the id's date), so each item lands in
   ``archive/<its day>.md`` and ``archive/2026-11-29.md#mem-2026-11-29-003`` is a stable anchor
   that distill can compute from the id alone; every line is copied byte for byte;
4. log one ``archive-inbox`` event naming the item ids and, per file, the appended
   segment's byte offset, length and SHA-256, *before* appending (an intent);
5. append one segment per file (``## Archived <UTC time>`` and the lines; a new file first
   gets ``# Archive <day>``), then re-create the inbox with a date header.

Invariants: an archive file is exactly the concatenation of the segments the log names for
it, so an edit anywhere (a changed, added or removed byte, a deleted file, a file no run
wrote) is detected by :func:`check_archive` and reported, never repaired; a run refuses to
append to a file that fails the check. A run interrupted after step 4 is rolled forward by
the next one (the segments are rebuilt from the unchanged inbox and must match the logged
digests), never back. The log holds digests and ids, never item text (DESIGN.md §9).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from agent_memory.errors import LogError, RecordError, RecordNotFound, StoreError
from agent_memory.home import Home
from agent_memory.jobs.inbox import (
    INBOX,
    InboxItem,
    append_bytes,
    inbox_header,
    local_day,
    parse_inbox,
    read_text,
    to_zone,
)
from agent_memory.log.base import Action, OperationLog
from agent_memory.wire import format_timestamp, parse_timestamp, utc_now

__all__ = [
    "ArchiveProblem",
    "ArchiveResult",
    "Segment",
    "archive_inbox",
    "archived_items",
    "check_archive",
    "find_anchor",
]

_STRUCTURE = re.compile(r"\A(?:# Archive \d{4}-\d{2}-\d{2}|## Archived \S+)\Z")
_ANCHOR = re.compile(r"\Aarchive/(?P<day>\d{4}-\d{2}-\d{2})\.md#(?P<id>mem-\d{4}-\d{2}-\d{2}-\d{3,})\Z")


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


@dataclass(frozen=True, slots=True)
class _Run:
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


@dataclass(frozen=True, slots=True)
class ArchiveResult:
    """What :func:`archive_inbox` did.

    Attributes:
        skipped: The inbox held no item; only a skip event was logged.
        item_ids: The ids archived, in inbox order.
        segments: What was appended, one per archive file.
        finished: The run only finished one a crash had interrupted (its log seq).
        problems: Other archive files that fail :func:`check_archive` (reported, untouched).
        log_seq: Seq of the ``archive-inbox`` event this run logged (``None`` when finishing).
    """

    skipped: bool
    item_ids: tuple[str, ...] = ()
    segments: tuple[Segment, ...] = ()
    finished: int | None = None
    problems: tuple[ArchiveProblem, ...] = field(default=())
    log_seq: int | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the CLI's ``--json`` shape."""
        return {
            "skipped": self.skipped,
            "item_ids": list(self.item_ids),
            "files": [segment.file for segment in self.segments],
            "segments": [segment.to_json() for segment in self.segments],
            "finished_interrupted_run": self.finished,
            "problems": [str(problem) for problem in self.problems],
            "log_seq": self.log_seq,
        }


def archive_inbox(home: Home, *, now: datetime | None = None, actor: str | None = None) -> ArchiveResult:
    """Archive the Home's inbox as the module docstring describes (seed 000 §13).

    Args:
        home: The Home.
        now: The clock (default now; naive means wall-clock time in the Home's zone); it
            names the segment headers and the new inbox's date.
        actor: Who runs it (default the Home's owner).

    Raises:
        RecordError: The inbox has malformed lines (all listed with line numbers), or an
            item's id is already in its archive file; nothing is written.
        StoreError: An archive file this run would append to fails :func:`check_archive`,
            an interrupted run cannot be finished, or a write failed.
        LogError: The log cannot be read or appended to.
    """
    stamp = to_zone(now if now is not None else utc_now(), home.settings.zone)
    who = actor or home.settings.owner
    with home.writer_lock():
        log = home.log()
        runs = _read_runs(log)
        inbox_path = home.root / INBOX
        inbox = read_text(inbox_path)
        finished = _finish_interrupted(home, runs, inbox)
        if finished is not None:
            _reset_inbox(inbox_path, local_day(stamp, home.settings.zone))
            return ArchiveResult(skipped=False, finished=finished.seq, problems=tuple(_check(home, runs)))
        parsed = parse_inbox(inbox)
        if parsed.problems:
            listed = "; ".join(str(problem) for problem in parsed.problems)
            raise RecordError(
                f"{len(parsed.problems)} malformed line(s), nothing archived: {listed}",
                path=str(inbox_path),
                hint="fix or remove those lines (agent-memory inbox lists them), then archive again",
            )
        digest = hashlib.sha256(inbox.encode("utf-8")).hexdigest()
        problems = _check(home, runs)
        if not parsed.items:
            entry = log.append(
                Action.ARCHIVE_INBOX,
                actor=who,
                details={"skipped": True, "reason": "no substantive content", "inbox_sha256": digest},
                now=stamp,
            )
            return ArchiveResult(skipped=True, problems=tuple(problems), log_seq=entry.seq)
        by_file = _group(parsed.items)
        blocked = [p for p in problems if p.file in by_file]
        if blocked:
            raise StoreError(
                "refusing to append to an archive file that is not what earlier runs wrote: "
                + "; ".join(str(p) for p in blocked),
                path=str(home.root / blocked[0].file),
                hint="restore it from git (git checkout -- FILE) or ask who edited it; nothing was archived",
            )
        _refuse_known_ids(home, by_file)
        archived_at = format_timestamp(stamp)
        sizes = {name: _size(home.root / name) for name in by_file}
        planned = _plan(by_file, archived_at, sizes)
        entry = log.append(
            Action.ARCHIVE_INBOX,
            actor=who,
            record_ids=[item.id for item in parsed.items],
            details={
                "skipped": False,
                "archived_at": archived_at,
                "inbox_sha256": digest,
                "items": len(parsed.items),
                "segments": [segment.to_json() for segment, _ in planned],
            },
            now=stamp,
        )
        for segment, data in planned:
            append_bytes(home.root / segment.file, data)
        _reset_inbox(inbox_path, local_day(stamp, home.settings.zone))
        return ArchiveResult(
            skipped=False,
            item_ids=tuple(item.id for item in parsed.items),
            segments=tuple(segment for segment, _ in planned),
            problems=tuple(problems),
            log_seq=entry.seq,
        )


def check_archive(home: Home) -> list[ArchiveProblem]:
    """Compare every archive file with the segments the log says were appended to it.

    Read-only: nothing is repaired. Files are checked in name order.

    Raises:
        LogError: The log cannot be read, or an ``archive-inbox`` event is malformed.
    """
    return _check(home, _read_runs(home.log()))


def archived_items(home: Home, day: date) -> list[InboxItem]:
    """Return the items in ``archive/<day>.md`` with their line numbers there (``[]`` when absent).

    Raises:
        RecordError: The file is unreadable or holds a line that is not an item or a heading
            of the archive (it was edited: :func:`check_archive` says where).
    """
    path = home.root / "archive" / f"{day.isoformat()}.md"
    parsed = parse_inbox(read_text(path), structure=_STRUCTURE)
    if parsed.problems:
        raise RecordError(f"not an archive file: {parsed.problems[0]}", path=str(path))
    return list(parsed.items)


def find_anchor(home: Home, anchor: str) -> InboxItem:
    """Resolve ``archive/YYYY-MM-DD.md#mem-YYYY-MM-DD-NNN`` to the archived item (for distill).

    Raises:
        RecordError: ``anchor`` is not of that shape (field ``source``).
        RecordNotFound: The file holds no item with that id.
    """
    match = _ANCHOR.match(anchor)
    if match is None:
        raise RecordError(
            f"not an archive anchor: {anchor!r} (expected archive/YYYY-MM-DD.md#mem-YYYY-MM-DD-NNN)",
            field="source",
        )
    try:
        day = date.fromisoformat(match["day"])
    except ValueError:
        raise RecordError(f"not a calendar date in {anchor!r}", field="source") from None
    for item in archived_items(home, day):
        if item.id == match["id"]:
            return item
    raise RecordNotFound(f"no item {match['id']} here", path=str(home.root / f"archive/{match['day']}.md"))


# ---------------------------------------------------------------------- the ledger in the log


def _read_runs(log: OperationLog) -> list[_Run]:
    runs = []
    for entry in log.entries():
        if entry.action != Action.ARCHIVE_INBOX:
            continue
        details = entry.details
        try:
            skipped = details["skipped"]
            segments = () if skipped else tuple(_segment_from(s) for s in details["segments"])
            runs.append(
                _Run(
                    entry.seq,
                    ""
                    if skipped
                    else format_timestamp(parse_timestamp(details["archived_at"], "archived_at")),
                    str(details["inbox_sha256"]),
                    bool(skipped),
                    segments,
                )
            )
        except (KeyError, TypeError, ValueError, RecordError) as exc:
            raise LogError(f"malformed archive-inbox event: {exc}", field=f"seq {entry.seq}") from None
    return runs


def _segment_from(data: Any) -> Segment:
    segment = Segment(str(data["file"]), int(data["offset"]), int(data["length"]), str(data["sha256"]))
    if not segment.file.startswith("archive/") or "/" in segment.file[len("archive/") :]:
        raise ValueError(f"segment file {segment.file!r} is outside archive/")
    return segment


def _check(home: Home, runs: Sequence[_Run]) -> list[ArchiveProblem]:
    by_file: dict[str, list[tuple[int, Segment]]] = {}
    for run in runs:
        for segment in run.segments:
            by_file.setdefault(segment.file, []).append((run.seq, segment))
    pending = set(runs[-1].segments) if runs and not runs[-1].skipped else set()
    folder = home.root / "archive"
    present = {f"archive/{p.name}" for p in folder.glob("*.md")} if folder.is_dir() else set()
    problems = []
    for name in sorted(present | set(by_file)):
        problems.extend(_check_file(home.root / name, name, by_file.get(name, []), pending))
    return problems


def _check_file(
    path: Path, name: str, segments: list[tuple[int, Segment]], pending: set[Segment]
) -> list[ArchiveProblem]:
    if not segments:
        return [ArchiveProblem(name, "unlogged", "no archive-inbox run wrote this file")]
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if all(segment in pending and segment.offset == 0 for _, segment in segments):
            return [
                ArchiveProblem(name, "interrupted", f"the run of log seq {segments[0][0]} never wrote it")
            ]
        first = segments[0][0]
        return [
            ArchiveProblem(name, "missing", f"deleted; {len(segments)} logged segment(s) from seq {first}")
        ]
    except OSError as exc:
        return [ArchiveProblem(name, "missing", f"unreadable: {exc.strerror or exc}")]
    problems = []
    end = 0
    for seq, segment in segments:
        chunk = data[segment.offset : segment.offset + segment.length]
        line = data.count(b"\n", 0, min(segment.offset, len(data))) + 1
        if segment in pending and segment.offset <= len(data) < segment.offset + segment.length:
            problems.append(
                ArchiveProblem(
                    name,
                    "interrupted",
                    f"the run of log seq {seq} stopped before finishing this file; archive-inbox "
                    "finishes it while inbox.md is unchanged",
                )
            )
        elif hashlib.sha256(chunk).hexdigest() != segment.sha256:
            problems.append(
                ArchiveProblem(
                    name, "edited", f"from line {line}, the bytes differ from what log seq {seq} appended"
                )
            )
        end = segment.offset + segment.length
    if len(data) > end:
        line = data.count(b"\n", 0, end) + 1
        problems.append(
            ArchiveProblem(name, "appended", f"lines from {line} were added after the last logged run")
        )
    return problems


def _finish_interrupted(home: Home, runs: Sequence[_Run], inbox: str) -> _Run | None:
    """Complete the last run if a crash cut it short; return it, or ``None`` when nothing was pending.

    Pending means: the inbox still holds exactly what that run archived, and each of its
    files ends with a prefix (possibly empty, possibly all) of the segment it planned.
    The segments are rebuilt from the inbox and must match the logged digests; only the
    missing bytes are appended. Anything else is left for :func:`_check` to report.
    """
    if not runs or runs[-1].skipped:
        return None
    last = runs[-1]
    if hashlib.sha256(inbox.encode("utf-8")).hexdigest() != last.inbox_sha256:
        return None  # the inbox was re-created after that run: nothing to finish
    offsets = {segment.file: segment.offset for segment in last.segments}
    rebuilt = {
        seg.file: (seg, data)
        for seg, data in _plan(_group(parse_inbox(inbox).items), last.archived_at, offsets)
    }
    if {name: seg for name, (seg, _) in rebuilt.items()} != {seg.file: seg for seg in last.segments}:
        raise StoreError(
            f"cannot finish the interrupted archive run of log seq {last.seq}: "
            "the segments rebuilt from inbox.md do not match the logged digests",
            path=str(home.root / INBOX),
        )
    missing: list[tuple[Path, bytes]] = []
    for segment in last.segments:
        path = home.root / segment.file
        written = _tail(path, segment.offset)
        data = rebuilt[segment.file][1]
        if written is None or not data.startswith(written):
            return None  # an edit, not an interruption: the check reports it
        if len(written) < len(data):
            missing.append((path, data[len(written) :]))
    for path, rest in missing:
        append_bytes(path, rest)
    return last


def _tail(path: Path, offset: int) -> bytes | None:
    """Return the file's bytes from ``offset`` on (``b""`` when absent); ``None`` when shorter than that."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() < offset:
                return None
            handle.seek(offset)
            return handle.read()
    except FileNotFoundError:
        return b"" if offset == 0 else None
    except OSError:
        return None


# ---------------------------------------------------------------------- planning and writing


def _group(items: Iterable[InboxItem]) -> dict[str, list[InboxItem]]:
    by_file: dict[str, list[InboxItem]] = {}
    for item in items:
        by_file.setdefault(f"archive/{item.day.isoformat()}.md", []).append(item)
    return dict(sorted(by_file.items()))


def _plan(
    by_file: dict[str, list[InboxItem]], archived_at: str, sizes: dict[str, int]
) -> list[tuple[Segment, bytes]]:
    planned = []
    for name, items in by_file.items():
        day = name[len("archive/") : -len(".md")]
        head = f"# Archive {day}\n\n" if sizes.get(name, 0) == 0 else ""
        text = head + f"## Archived {archived_at}\n\n" + "".join(item.raw + "\n" for item in items) + "\n"
        data = text.encode("utf-8")
        offset = sizes.get(name, 0)
        planned.append((Segment(name, offset, len(data), hashlib.sha256(data).hexdigest()), data))
    return planned


def _refuse_known_ids(home: Home, by_file: dict[str, list[InboxItem]]) -> None:
    for name, items in by_file.items():
        known = {item.id for item in archived_items(home, date.fromisoformat(name[8:-3]))}
        again = [item for item in items if item.id in known]
        if again:
            raise RecordError(
                f"inbox line {again[0].line}: id {again[0].id} is already in {name}; ids are stable anchors",
                path=str(home.root / INBOX),
                hint="give the line a new id (agent-memory capture assigns the next free one)",
            )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _reset_inbox(path: Path, day: date) -> None:
    temp = path.with_name(f".tmp-inbox-{os.getpid()}")
    try:
        with temp.open("wb") as handle:
            handle.write(inbox_header(day).encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise StoreError(f"cannot re-create the inbox: {exc.strerror or exc}", path=str(path)) from None

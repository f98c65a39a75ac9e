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
wrote) is detected by :func:`check_archive` (:mod:`.ledger`) and reported, never repaired; a
run refuses to append to a file that fails the check. A run interrupted after step 4 is rolled forward by
the next one (the segments are rebuilt from the inbox, which still starts with what the run
archived, and must match the logged digests; lines captured since stay in the new inbox),
never back. The log holds digests and ids, never item text (DESIGN.md §9).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from agent_memory.errors import RecordError, RecordNotFound, StoreError
from agent_memory.home import Home
from agent_memory.jobs.files import append_bytes, read_text, replace_bytes, tail
from agent_memory.jobs.inbox import INBOX, InboxItem, inbox_header, local_day, parse_inbox, to_zone
from agent_memory.jobs.ledger import ArchiveProblem, Run, Segment, archived_prefix, check_files, read_runs
from agent_memory.log.base import Action
from agent_memory.records.wire import format_timestamp, utc_now

__all__ = [
    "ArchiveProblem",
    "ArchiveResult",
    "Segment",
    "archive_inbox",
    "archived_items",
    "check_archive",
    "find_anchor",
    "finish_interrupted",
]

_STRUCTURE = re.compile(r"\A(?:# Archive \d{4}-\d{2}-\d{2}|## Archived \S+)\Z")
_ANCHOR = re.compile(r"\Aarchive/(?P<day>\d{4}-\d{2}-\d{2})\.md#(?P<id>mem-\d{4}-\d{2}-\d{2}-\d{3,})\Z")


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
        runs = read_runs(log)
        inbox_path = home.root / INBOX
        inbox = read_text(inbox_path)
        finished = _finish_interrupted(home, runs, inbox)
        if finished is not None:
            run, rest = finished
            _reset_inbox(inbox_path, local_day(stamp, home.settings.zone), rest)
            return ArchiveResult(
                skipped=False, finished=run.seq, problems=tuple(check_files(home.root, runs))
            )
        parsed = parse_inbox(inbox)
        if parsed.problems:
            listed = "; ".join(str(problem) for problem in parsed.problems[:10])
            if len(parsed.problems) > 10:
                listed += f"; and {len(parsed.problems) - 10} more"
            raise RecordError(
                f"{len(parsed.problems)} malformed line(s), nothing archived: {listed}",
                path=str(inbox_path),
                hint="fix or remove those lines (agent-memory inbox lists them), then archive again",
            )
        digest = hashlib.sha256(inbox.encode("utf-8")).hexdigest()
        problems = check_files(home.root, runs)
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


def finish_interrupted(home: Home, *, now: datetime | None = None) -> int | None:
    """Finish an archive run a crash cut short, and nothing else; return its log seq, or ``None``.

    What :func:`archive_inbox` does first, on its own for ``doctor --fix``: the missing bytes
    are those the run's logged digests fix, and the inbox is re-created with the lines
    captured since the crash.

    Raises:
        StoreError: The segments rebuilt from the inbox do not match the logged digests, or
            a write failed.
        LogError: The log cannot be read.
    """
    stamp = to_zone(now if now is not None else utc_now(), home.settings.zone)
    with home.writer_lock():
        inbox_path = home.root / INBOX
        finished = _finish_interrupted(home, read_runs(home.log()), read_text(inbox_path))
        if finished is None:
            return None
        run, rest = finished
        _reset_inbox(inbox_path, local_day(stamp, home.settings.zone), rest)
        return run.seq


def check_archive(home: Home) -> list[ArchiveProblem]:
    """Compare every archive file with the segments the log says were appended to it.

    Read-only: nothing is repaired. Files are checked in name order.

    Raises:
        LogError: The log cannot be read, or an ``archive-inbox`` event is malformed.
    """
    return check_files(home.root, read_runs(home.log()))


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


def _finish_interrupted(home: Home, runs: Sequence[Run], inbox: str) -> tuple[Run, str] | None:
    """Complete the last run if a crash cut it short; return it and the inbox lines captured since.

    Pending means: the inbox still starts with exactly what that run archived (captures
    made after the crash only append: :func:`~.ledger.archived_prefix`), and each of its
    files ends with a prefix (possibly empty, possibly all) of the segment it planned.
    The segments are rebuilt from that part of the inbox and must match the logged
    digests; only the missing bytes are appended. Returns ``None`` when nothing was
    pending; anything else is left for :func:`check_archive` to report.
    """
    if not runs or runs[-1].skipped:
        return None
    last = runs[-1]
    data = inbox.encode("utf-8")
    length = archived_prefix(data, last.inbox_sha256)
    if length is None:
        return None  # the inbox was re-created after that run: nothing to finish
    inbox, rest = data[:length].decode("utf-8"), data[length:].decode("utf-8")
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
        written = tail(path, segment.offset)
        data = rebuilt[segment.file][1]
        if written is None or not data.startswith(written):
            return None  # an edit, not an interruption: the check reports it
        if len(written) < len(data):
            missing.append((path, data[len(written) :]))
    for path, tail_bytes in missing:
        append_bytes(path, tail_bytes)
    return last, rest


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


def _reset_inbox(path: Path, day: date, kept: str = "") -> None:
    replace_bytes(path, (inbox_header(day) + kept).encode("utf-8"))

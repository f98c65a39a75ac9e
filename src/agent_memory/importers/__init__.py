"""Importers: turn real input (datasets, a git repository, other tools' memory) into records.

Issue 9 item 2. One module per format reads its input into :class:`Item` values;
:func:`import_path` writes them through :meth:`Memory.remember_many` (``remember`` in batches),
so secrets screening, exact dedup and the operation log apply to every item exactly as to a
hand-written memory. Folder formats also yield a :class:`Problem` for each file they could not
or would not read (``files.py`` reads them).

Invariants: every item carries a source anchor back to the original file and its line range
or position (``locomo.json#conv-26/D1:3``, ``README.md#L10-L24``, ``git:<sha>``); importing
the same input twice adds no record (content addresses plus exact dedup); one bad file or
item is reported with its path and never stops the others. Dataset fields that give answers
away (LongMemEval's session ids, ``has_answer``, questions, answers; LoCoMo's QA, evidence and
generated summaries) are never read into an item. Every import is outside content — a
dataset's conversations, a repository's commits and documents, another tool's memory alike — so
its records arrive tainted ``external`` (:data:`IMPORT_TAINT`): quarantined, recallable but never
autoloaded or promoted until approved (DESIGN.md §9; issue 11 item 4) — unless the caller
vouches for the input with ``trust=True``. :func:`import_taint` is the one place that decides.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any

from agent_memory.errors import AgentMemoryError, RecordError
from agent_memory.importers.items import Item, Problem, Reader, load_json, parse_date

if TYPE_CHECKING:
    from agent_memory.memory import Memory

__all__ = [
    "FORMATS",
    "IMPORT_TAINT",
    "ImportReport",
    "Item",
    "Problem",
    "Reader",
    "import_path",
    "import_taint",
    "load_json",
    "parse_date",
    "read_all",
    "read_items",
]


@dataclass(slots=True)
class ImportReport:
    """What one file's import did.

    Attributes:
        path: The input file or folder.
        fmt: The format name (a key of :data:`FORMATS`).
        read: Items the reader produced.
        added: Ids of records newly written.
        present: Items already held (exact dedup: importing again adds nothing).
        errors: ``"<source>: <message>"`` for each item that could not be written, and
            ``"<file>: <reason>"`` for each file of a folder that could not be read.
        skipped: ``"<file>: <reason>"`` for each file of a folder left out on purpose.
        error: The message when the whole input could not be read (nothing was written).
        held: ``{source anchor: record id}`` for every item now held (added or already present).
        quarantined: Records held (added or already present) that are quarantined after the
            import: tainted and not approved (``agent-memory review`` lists them).
        quarantined_present: Of those, the ones already present before this import
            (``--trust`` vouches only for what it adds; an older quarantine stays).
        trusted: The import was vouched for (``trust=True``).
        cleaned: ``{source anchor: [what was cleaned]}`` for items taken in once the screen
            cleaned their text (control characters replaced; :mod:`agent_memory.write.screen`);
            the record carries the tag ``cleaned-text`` and the import event lists them.
    """

    path: str
    fmt: str
    read: int = 0
    added: list[str] = field(default_factory=list)
    present: int = 0
    errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    error: str | None = None
    held: dict[str, str] = field(default_factory=dict)
    quarantined: int = 0
    quarantined_present: int = 0
    trusted: bool = False
    cleaned: dict[str, list[str]] = field(default_factory=dict)

    @property
    def partial(self) -> bool:
        """Whether the import is done with exceptions: some items (or files) refused, or cleaned.

        A file left out on purpose (binary, over the size limit, a link out of the folder) is
        reported in ``skipped`` but is no exception: it was never someone's memory.
        """
        return bool(self.errors or self.cleaned)

    def summary(self) -> str:
        """Return the one-line text summary of ``agent-memory import`` (and the demo).

        E.g. ``"read 172, added 172, 0 already present, 0 refused, 172 quarantined (review
        them with …)"``: the quarantine part, when any record held is quarantined, says how
        to review and approve them, and either how to vouch for a source (untrusted import)
        or that records already present stay quarantined (``--trust``).
        """
        line = (
            (
                f"read {self.read}, added {len(self.added)}, {self.present} already present, "
                f"{len(self.errors)} refused"
            )
            + (f", {len(self.cleaned)} cleaned" if self.cleaned else "")
            + (f", {len(self.skipped)} files skipped" if self.skipped else "")
        )
        if not self.quarantined:
            return line
        how = "review them with `agent-memory review`, approve with `agent-memory approve ID…`"
        if self.trusted:
            return (
                f"{line}, {self.quarantined} quarantined ({self.quarantined_present} already present "
                f"stay quarantined: --trust vouches only for the records it adds; {how})"
            )
        return (
            f"{line}, {self.quarantined} quarantined ({how}; import with --trust to vouch for a "
            "source you trust)"
        )

    def to_json(self) -> dict[str, Any]:
        """Return the ``--json`` shape of ``agent-memory import``."""
        data: dict[str, Any] = {
            "path": self.path,
            "format": self.fmt,
            "read": self.read,
            "added": self.added,
            "already_present": self.present,
            "errors": self.errors,
            "skipped": self.skipped,
            "quarantined": self.quarantined,
            "quarantined_already_present": self.quarantined_present,
            "cleaned": self.cleaned,
        }
        if self.error is not None:
            data["error"] = self.error
        return data


def _formats() -> dict[str, Reader]:
    from agent_memory.importers.basic_memory import read_basic_memory
    from agent_memory.importers.claude_code import read_claude_code
    from agent_memory.importers.git import read_git
    from agent_memory.importers.locomo import read_locomo
    from agent_memory.importers.longmemeval import read_longmemeval
    from agent_memory.importers.markdown import read_markdown
    from agent_memory.importers.openclaw import read_openclaw

    return {
        "locomo": read_locomo,
        "longmemeval": read_longmemeval,
        "git": read_git,
        "openclaw": read_openclaw,
        "claude-code": read_claude_code,
        "basic-memory": read_basic_memory,
        "markdown": read_markdown,
    }


FORMATS: tuple[str, ...] = (
    "locomo",
    "longmemeval",
    "git",
    "openclaw",
    "claude-code",
    "basic-memory",
    "markdown",
)
"""Formats :func:`import_path` reads (``memory-file`` is handled by :mod:`agent_memory.transfer.exchange`)."""

IMPORT_TAINT: tuple[str, ...] = ("external",)
"""The taint of every record an untrusted import writes, whatever its format (DESIGN.md §9,
seed 003): a conversation, a commit message or a README can carry instructions as well as a
note of another agent's memory can (76% attack success through an untainted LoCoMo import)."""


def import_taint(trust: bool) -> tuple[str, ...]:
    """Return the taint labels an import's records carry: :data:`IMPORT_TAINT`, or none if trusted.

    Args:
        trust: The caller vouches for the input (``--trust``; the demo's own repository).

    Returns:
        ``()`` when trusted, else ``("external",)``.
    """
    return () if trust else IMPORT_TAINT


def read_all(
    fmt: str, path: str, *, zone: tzinfo, limit: int | None = None
) -> tuple[list[Item], list[Problem]]:
    """Read every item of ``path`` in format ``fmt`` before anything is written.

    Args:
        fmt: One of :data:`FORMATS`.
        path: The file (datasets), or the folder (git and the folder formats).
        zone: The Home's time zone; dates without an offset are read in it.
        limit: At most this many units (conversation sessions, commits for git, files for
            the folder formats, the latest daily logs for OpenClaw); all when None.

    Returns:
        ``(items, problems)``: a file with a problem contributes no item.

    Raises:
        RecordError: Unknown format, or input unreadable or malformed as a whole (the path and
            field are named).
    """
    readers = _formats()
    if fmt not in readers:
        raise RecordError(f"unknown import format {fmt!r}", field="from", hint=f"one of {', '.join(FORMATS)}")
    items: list[Item] = []
    problems: list[Problem] = []
    for found in readers[fmt](path, zone=zone, limit=limit):
        if isinstance(found, Problem):
            problems.append(found)
        else:
            items.append(found)
    return items, problems


def read_items(fmt: str, path: str, *, zone: tzinfo, limit: int | None = None) -> list[Item]:
    """Read the items of ``path`` as :func:`read_all` does, leaving out the files it reports.

    Raises:
        RecordError: As for :func:`read_all`.
    """
    return read_all(fmt, path, zone=zone, limit=limit)[0]


def import_path(
    memory: Memory,
    fmt: str,
    path: str,
    *,
    limit: int | None = None,
    max_items: int | None = None,
    now: datetime | None = None,
    trust: bool = False,
) -> ImportReport:
    """Import one file or folder into ``memory`` through ``remember``; never raises for bad input.

    The whole input is read and checked first, so a malformed file writes nothing; then each
    item is remembered with the importer's column of the screen (``clean=True``): someone's
    existing data is kept, its control characters replaced and said in ``cleaned``; an item
    that cannot be taken in (a secret, a conflict marker…) is listed in ``errors`` while the
    rest still import. A folder's file that cannot be read is listed in
    ``errors`` (or ``skipped``) and its items are left out. Logs one ``import`` event per path.

    Args:
        memory: The open Memory (its time zone reads naive dates).
        fmt: One of :data:`FORMATS`.
        path: The input.
        limit: As for :func:`read_items`.
        max_items: Import only the first this many items, in input order (the demo's bound).
        now: The clock (record time of new records).
        trust: The caller vouches for the input: its records are then not tainted
            ``external`` (:func:`import_taint`; logged as ``trusted`` in the import event).
            Untrusted, they are quarantined until approved, whatever the format.

    Returns:
        The report; ``report.error`` is set when the input could not be read.
    """
    report = ImportReport(path=path, fmt=fmt, trusted=trust)
    try:
        items, problems = read_all(fmt, path, zone=memory.zone, limit=limit)
    except AgentMemoryError as exc:
        report.error = str(exc)
        return report
    items = items[:max_items]
    for problem in problems:
        (report.skipped if problem.skipped else report.errors).append(str(problem))
    report.read = len(items)
    taint = import_taint(trust)
    tainted = _remember_all(memory, items, report, now, taint)
    _count_quarantined(memory, report, tainted)
    memory.log.append(
        "import",
        actor=memory.actor,
        record_ids=tuple(report.added),
        details={
            "path": path,
            "format": fmt,
            "read": report.read,
            "already_present": report.present,
            "errors": len(report.errors),
            "skipped": len(report.skipped),
            "quarantined": report.quarantined,
            "cleaned": {report.held[source]: notes for source, notes in report.cleaned.items()},
            "taint": list(taint),
            "trusted": trust,
        },
        now=now,
    )
    return report


def _remember_all(
    memory: Memory, items: Iterable[Item], report: ImportReport, now: datetime | None, taint: tuple[str, ...]
) -> dict[str, bool]:
    """Remember ``items`` in batches, filling ``report``; return ``{record id: tainted}`` of those held."""
    items = list(items)
    tainted: dict[str, bool] = {}
    arguments = [
        {
            "text": item.text,
            "source": item.source,
            "type": item.type,
            "tags": item.tags,
            "occurred_at": item.occurred_at,
            "taint": taint,
        }
        for item in items
    ]
    # In batches (issue 23): each item is screened, deduped and planned as remember does it.
    for item, result in zip(items, memory.remember_many(arguments, clean=True, now=now), strict=True):
        if isinstance(result, AgentMemoryError):
            report.errors.append(f"{item.source}: {result}")
            continue
        report.held[item.source] = result.record_id
        tainted[result.record_id] = result.quarantined  # the taint of the record named
        if result.cleaned:
            report.cleaned[item.source] = list(result.cleaned)
        if result.deduped:
            report.present += 1
        else:
            report.added.append(result.record_id)
    return tainted


def _count_quarantined(memory: Memory, report: ImportReport, tainted: dict[str, bool]) -> None:
    """Set the report's quarantine counts from the review events in the log (DESIGN.md §9).

    ``tainted`` (from the import's own results) spares reading every record back: on a file
    Home just written, none is in the parse cache yet (0.3 s of a 419-turn LoCoMo import).
    """
    from agent_memory.governance.review_book import ReviewBook

    added = set(report.added)
    book = ReviewBook(memory.log)
    for record_id in dict.fromkeys(report.held.values()):
        if book.state_of_id(record_id, tainted=tainted[record_id]) != "quarantined":
            continue
        report.quarantined += 1
        if record_id not in added:
            report.quarantined_present += 1

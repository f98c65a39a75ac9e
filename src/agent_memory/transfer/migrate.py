"""Migration: copy every version of every record from one store to another, and prove the copy.

Issue 3 §6 (``agent-memory migrate --to URL``); store URLs are :mod:`agent_memory.stores.urls`.

Invariants:

- Nothing in the target is ever overwritten. Before the first write, every record the target
  already holds is compared with the source, version by version (canonical bytes): an
  identical history is skipped, a history the source continues (the target holds its first
  versions, e.g. after an interrupted migration) gets the missing versions appended, and any
  other history is a conflict: :class:`~agent_memory.errors.StoreError` naming each such
  record, raised before anything is written.
- The gate comes first (DESIGN.md §5 "One gate in"; issue 18): every version's signature
  verifies, every body passes the screen (as a signed MemoryFile record's does), and a Home
  target takes only versions signed by its own key or a signer its ``memory.toml [trust]``
  names, since its verified read path refuses any other (issue 20); a version that fails is
  named and nothing is written. Both Homes are held under their writer locks throughout.
- Versions are written oldest first, records in the source's ``list`` order
  (``(created_at, id)``), each version through the target's ``put`` (so its checks run), and
  each record's missing versions are checked as a chain before the first of them is written.
- An erased record (every version one tombstone, which no store lets ``put`` write) is written
  by the target adapter's ``restore_erased``, only for an id the target does not hold: the
  erasure follows the records, so erased content cannot come back through the new store.
- At the end both sides are read again: the source must still hold the same ids, and each
  record's :func:`history_digest` must be equal in source and target; otherwise a
  ``StoreError`` says which records differ. Running a migration twice writes nothing the
  second time.
- Withdrawal controls travel with the records (seed 000 §12.2 anti-resurrection rule, §21
  item 20): every ``withdrawal-control-v1`` record of the source's log is appended, in log
  order with its ``supersedes`` chain, to the target's log before the first record is
  written, so the target's gate excludes the scope before anything is exposed
  (:func:`~agent_memory.governance.portability.plan_carry`). A target without a log refuses a
  source with a withdrawal in force, before anything is opened or written.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agent_memory.errors import AgentMemoryError, LogError, RecordNotFound, SignatureError, StoreError
from agent_memory.governance.portability import apply_carry, plan_carry
from agent_memory.records.record import MemoryRecord
from agent_memory.records.wire import utc_now
from agent_memory.stores.base import BatchPut, RecordStore, check_next_version
from agent_memory.stores.urls import AdapterStore, StoreURL, parse_store_url
from agent_memory.stores.verified import Signers

if TYPE_CHECKING:
    from agent_memory.log.base import OperationLog
    from agent_memory.search.freshness import Progress

__all__ = [
    "DIGEST_PREFIX",
    "MigrationReport",
    "history_digest",
    "migrate",
    "migrate_urls",
    "verify_signatures",
]

DIGEST_PREFIX = "sha256:"
_BATCH_VERSIONS = 1000  # versions per put_many transaction (SQLite: one fsync; PostgreSQL: one commit)
_SHOWN = 5  # records named in a conflict or verification message


def history_digest(history: Sequence[MemoryRecord]) -> str:
    """Return ``sha256:<64 hex>`` over the concatenated canonical bytes of ``history``, oldest first.

    The per-record digest that migration compares on both sides (issue 3 §6). Equal digests
    mean byte-identical versions in the same order: each version is one self-delimiting
    canonical JSON object, so no two histories concatenate to the same bytes.
    """
    digest = hashlib.sha256()
    for version in history:
        digest.update(version.canonical_bytes())
    return DIGEST_PREFIX + digest.hexdigest()


@dataclass
class MigrationReport:
    """What a migration did; filled in as it runs, so a failed one still tells what it wrote.

    Attributes:
        source: The source as shown to people (password hidden), or ``""`` for store objects.
        target: The target, likewise.
        source_records: Records in the source.
        copied: Ids new to the target, written version by version, in write order.
        restored: Ids new to the target that arrived erased (via ``restore_erased``).
        extended: Ids whose first versions the target held; the rest were appended.
        skipped: Ids whose identical history the target already held.
        versions_written: Versions written in all.
        target_records: Records in the target after the migration (it may hold others).
        digests: Each source record's :func:`history_digest`, equal in both stores once verified.
        verified: The final check passed.
        controls_added: Withdrawal controls appended to the target's log (ids as stored there).
        controls_skipped: Source controls the target already held (a re-run).
        controls_renamed: ``{source id: target id}`` for controls whose id the target had taken.
        controls_refused: ``{source id: why}`` for reinstatements kept out (their scope stays
            excluded in the target).
    """

    source: str = ""
    target: str = ""
    source_records: int = 0
    copied: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    extended: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    versions_written: int = 0
    target_records: int = 0
    digests: dict[str, str] = field(default_factory=dict)
    verified: bool = False
    controls_added: list[str] = field(default_factory=list)
    controls_skipped: list[str] = field(default_factory=list)
    controls_renamed: dict[str, str] = field(default_factory=dict)
    controls_refused: dict[str, str] = field(default_factory=dict)

    @property
    def written(self) -> list[str]:
        """Ids that got at least one version: copied, restored and extended."""
        return [*self.copied, *self.restored, *self.extended]

    def manifest(self) -> str:
        """Return ``sha256:<hex>`` over the sorted lines ``<id> <digest>``: one value for the whole copy."""
        lines = "".join(f"{record_id} {self.digests[record_id]}\n" for record_id in sorted(self.digests))
        return DIGEST_PREFIX + hashlib.sha256(lines.encode("ascii")).hexdigest()

    def to_json(self) -> dict[str, Any]:
        """Return counts, id lists and the manifest digest (the CLI's ``--json`` shape)."""
        return {
            "from": self.source,
            "to": self.target,
            "verified": self.verified,
            "source_records": self.source_records,
            "target_records": self.target_records,
            "versions_written": self.versions_written,
            "copied": self.copied,
            "restored": self.restored,
            "extended": self.extended,
            "skipped": self.skipped,
            "manifest": self.manifest(),
            "controls": {
                "added": self.controls_added,
                "skipped": self.controls_skipped,
                "renamed": self.controls_renamed,
                "refused": self.controls_refused,
            },
        }

    def log_details(self) -> dict[str, Any]:
        """Return the ``migrate`` event's details: URLs, counts and the manifest, no content."""
        return {
            "from": self.source,
            "to": self.target,
            "completed": self.verified,
            "records": self.source_records,
            "copied": len(self.copied),
            "restored": len(self.restored),
            "extended": len(self.extended),
            "skipped": len(self.skipped),
            "versions": self.versions_written,
            "target_records": self.target_records,
            "manifest": self.manifest(),
            "controls_added": len(self.controls_added),
            "controls_refused": len(self.controls_refused),
        }


def migrate(
    source: RecordStore,
    target: AdapterStore,
    *,
    report: MigrationReport | None = None,
    source_log: OperationLog | None = None,
    target_log: OperationLog | None = None,
    actor: str = "cli",
    now: datetime | None = None,
    signers: Signers | None = None,
    progress: Progress | None = None,
) -> MigrationReport:
    """Copy every version of every record of ``source`` into ``target``, then verify both sides.

    Before anything is written every version passes the gate's checks (DESIGN.md §5 "One gate
    in"; :func:`verify_signatures`): its signature verifies, a target that signs (a Home)
    takes only versions signed by a key it trusts, and every body passes the screen as a
    signed MemoryFile record's does.

    Args:
        source: The store read (never written).
        target: The store written; any adapter (it needs ``restore_erased`` for erased records).
        report: A report to fill in (so a caller keeps what was written when this raises).
        source_log: The source's operation log, whose withdrawal controls travel with the
            records (``None``: the source has none).
        target_log: The target's log, which receives them before any record is written
            (``None``: the target cannot keep controls).
        actor: Who appends the carried controls.
        now: Clock for the carried controls' log events.
        signers: Whose signatures the target takes, when it signs what it holds (a Home: its
            own key and ``memory.toml [trust]``;
            :class:`~agent_memory.stores.verified.Signers`): every version must then be signed
            by one of them, as the target's verified read path would otherwise refuse it.
            ``None``: a target without a key.
        progress: Called with (records done, records) as records are copied, then again
            from zero as they are verified (the CLI's bar).

    Returns:
        The filled-in report, with ``verified`` set.

    Raises:
        StoreError: The source has a withdrawal in force and the target no log (nothing
            written), the target holds a different history for some ids (each named; nothing
            written), a source record cannot be written (named; what was written before it
            stays, and a re-run continues from there), the source changed meanwhile, or the
            final check found a record whose digests differ (named).
        RecordError, LifecycleError: A stored version breaks the target's checks (the record
            is named); nothing of that record is written.
        SignatureError: A source version names a signer and its signature does not verify
            (a field changed by hand), or, with ``signers``, is unsigned or signed by another
            key: the record and version are named, nothing is written, as ``import`` refuses
            such a file (issue 18 case 3).
        ScreenError: A version's body fails the screen (a secret, a git conflict marker, a
            foreign frontmatter block, over 1 MiB): named, nothing is written.
        LogError: A control event of either log is malformed, or the target's log refuses one.
    """
    report = report if report is not None else MigrationReport()
    carry = plan_carry(source_log, target_log, origin=report.source or "migrate", target=report.target)
    ids = [record.id for record in source.list()]
    report.source_records = len(ids)
    verify_signatures(source, ids, signers=signers)
    plan = _plan(source, target, ids)
    if target_log is not None and carry.to_append:
        apply_carry(carry, target_log, actor=actor, now=now)
    report.controls_added, report.controls_skipped = list(carry.added), list(carry.skipped)
    report.controls_renamed, report.controls_refused = dict(carry.renamed), dict(carry.refused)
    _copy(source, target, ids, plan, report, progress)
    _verify(source, target, ids, report, progress)
    return report


def verify_signatures(source: RecordStore, ids: Sequence[str], *, signers: Signers | None = None) -> None:
    """Check every version of the records ``ids`` of ``source`` at the gate, before anything is copied.

    A version that names a signer (``signed_by`` or a ``signature``) must verify, as every
    record of a MemoryFile must on ``import``; with ``signers`` (a target that signs what it
    holds) every version must also be signed by one of them. Each body passes the screen's
    column for signed records (:func:`~agent_memory.write.screen.screen`): a signed text
    cannot be cleaned, so control characters are taken as signed, and a secret, a git
    conflict marker, a foreign frontmatter block or a body over 1 MiB refuses the migration.
    A tombstone carries no signature and no text.

    Raises:
        SignatureError: Naming the record and the version number that fails.
        ScreenError: Naming the record and the field (``body``) a hazard is in.
    """
    from agent_memory.write.screen import screen

    gate = signers or Signers()  # the target's verified read path, checked before the copy
    for record_id in ids:
        for number, version in enumerate(source.history(record_id), start=1):
            if version.redacted:
                continue
            screen(version.body, field="body", clean=True, record_id=record_id)
            try:
                gate.check(version)
            except SignatureError as exc:
                raise _migration_refused(exc, version, number) from None


def _migration_refused(exc: SignatureError, version: MemoryRecord, number: int) -> SignatureError:
    """Word a refusal of :func:`verify_signatures` for migrate: what failed and what to do."""
    if (version.signed_by or version.signature) and exc.field != "signed_by":
        return SignatureError(
            f"version {number} does not verify ({exc.detail}): a field was changed after it was "
            "signed; nothing was migrated",
            record_id=version.id,
            field=exc.field,
            hint="run agent-memory doctor on the source, or restore the version from git",
        )
    who = f"signed by {version.signed_by}" if version.signed_by else "unsigned"
    return SignatureError(
        f"version {number} is {who}, and the target Home takes only records signed by its own "
        "key or one its memory.toml [trust] names; nothing was migrated",
        record_id=version.id,
        field="signed_by",
        hint="add the source's key to the target's memory.toml [trust] trusted_signers, or "
        "export and import instead (records are then signed by the target, tainted when their "
        "signer is not trusted)",
    )


def migrate_urls(
    source_url: str,
    target_url: str,
    *,
    actor: str | None = None,
    now: datetime | None = None,
    report: MigrationReport | None = None,
    progress: Progress | None = None,
) -> tuple[MigrationReport, list[str]]:
    """Open two stores by URL, migrate, and append a ``migrate`` event to the logs of the ends.

    A Home at either end is held under its writer lock for the whole migration (both in path
    order, so two migrations never deadlock). The event goes to the target's log (a Home's
    JSONL log, the ``oplog`` table of a SQLite file or PostgreSQL schema; ``notes:`` and
    ``json:`` folders have none) and, when the source is a Home, to the source's log too. It
    names the ids written and holds :meth:`MigrationReport.log_details`. A migration that
    fails after writing is logged too, with ``completed: false``.

    Args:
        source_url: Where to read (see :mod:`agent_memory.stores.urls`).
        target_url: Where to write.
        actor: Who acts; default the owner of a Home at either end, else ``cli``.
        now: Clock for the log entries (one reading for all of them).
        report: A report to fill in (see :func:`migrate`).
        progress: As for :func:`migrate`.

    Returns:
        The report and the logs written to (URLs as shown to people).

    Raises:
        StoreError: A malformed URL, the same store at both ends, or as :func:`migrate`.
        ConfigError: A ``home:`` URL that names no Home.
        LogError: The migration finished but an event could not be logged.
    """
    from agent_memory.home import Home

    source_end, target_end = parse_store_url(source_url), parse_store_url(target_url)
    if source_end.identity == target_end.identity:
        raise StoreError(
            f"{source_end.display()} and {target_end.display()} are the same store",
            hint="migrate into another folder, file or schema",
        )
    if source_end.kind in ("notes", "json", "sqlite") and not os.path.exists(source_end.location):
        # Opening would create an empty store and "migrate" nothing from a mistyped path.
        raise StoreError(f"{source_end.display()}: no such file or folder", hint="check the --from URL")
    homes = {end.location: Home.open(end.location) for end in (source_end, target_end) if end.kind == "home"}
    if actor is None:
        actor = next(iter(homes.values())).settings.owner if homes else "cli"
    report = report if report is not None else MigrationReport()
    report.source, report.target = source_end.display(), target_end.display()
    now = now or utc_now()  # one time for the event in every log
    logged: list[str] = []
    with ExitStack() as stack:
        for home in sorted(homes.values(), key=lambda h: str(h.root.resolve())):
            stack.enter_context(home.writer_lock())
        source = stack.enter_context(source_end.opened())
        source_log = _opened_log(stack, source_end)
        if target_end.kind in ("notes", "json"):
            # Refuse before the target folder is made: it has no log to keep controls in.
            plan_carry(source_log, None, origin=report.source, target=report.target)
        target = stack.enter_context(target_end.opened())
        target_log = _opened_log(stack, target_end)
        ends = [(target_end, target_log), *([(source_end, source_log)] if source_end.kind == "home" else [])]
        into = homes.get(target_end.location) if target_end.kind == "home" else None
        signers = (
            Signers(into.signer(), frozenset(into.settings.trusted_signers)) if into is not None else None
        )
        try:
            migrate(
                source,
                target,
                report=report,
                source_log=source_log,
                target_log=target_log,
                actor=actor,
                now=now,
                signers=signers,
                progress=progress,
            )
        except AgentMemoryError:
            if report.versions_written:
                # Record what was written; the migration's own error is the one to report.
                with contextlib.suppress(AgentMemoryError):
                    _log(ends, report, actor, now, logged)
            raise
        _log(ends, report, actor, now, logged)
    return report, logged


def _opened_log(stack: ExitStack, end: StoreURL) -> OperationLog | None:
    """Open the log that lives with ``end`` (closed when ``stack`` exits), or ``None`` when it has none."""
    log = end.open_log()
    close = getattr(log, "close", None)
    if callable(close):
        stack.callback(close)
    return log


# ---------------------------------------------------------------------- the three phases


def _plan(source: RecordStore, target: RecordStore, ids: list[str]) -> dict[str, int]:
    """Return ``{id: versions the target already holds}`` for ids to write; raise on any conflict."""
    plan: dict[str, int] = {}
    conflicts: list[tuple[str, str]] = []
    for record_id in ids:
        if not target.contains(record_id):
            plan[record_id] = 0
            continue
        ours, theirs = source.history(record_id), target.history(record_id)
        ours_bytes = [v.canonical_bytes() for v in ours]
        theirs_bytes = [v.canonical_bytes() for v in theirs]
        if ours_bytes == theirs_bytes:
            plan[record_id] = -1  # identical: skip
        elif (
            len(theirs) < len(ours)
            and ours_bytes[: len(theirs)] == theirs_bytes
            and not any(v.redacted for v in ours)
        ):
            plan[record_id] = len(theirs)
        else:
            conflicts.append((record_id, _difference(ours, theirs)))
    if conflicts:
        shown = "; ".join(f"{record_id}: {why}" for record_id, why in conflicts[:_SHOWN])
        more = f"; and {len(conflicts) - _SHOWN} more" if len(conflicts) > _SHOWN else ""
        raise StoreError(
            f"the target holds a different history for {len(conflicts)} record(s), so nothing was "
            f"written: {shown}{more}",
            hint="migrate never overwrites: reconcile them in the target, or migrate into an empty store",
        )
    return plan


def _difference(ours: list[MemoryRecord], theirs: list[MemoryRecord]) -> str:
    if ours[-1].redacted and not theirs[-1].redacted:
        return "erased in the source but not in the target (erase it there to carry the erasure over)"
    if theirs[-1].redacted and not ours[-1].redacted:
        return "erased in the target but not in the source"
    if ours[-1].redacted:
        return "erased in both, with different tombstones"
    for number, (mine, other) in enumerate(zip(ours, theirs, strict=False), start=1):
        if mine.canonical_bytes() != other.canonical_bytes():
            return f"version {number} differs"
    return f"the target holds {len(theirs)} versions, the source only {len(ours)}"


def _copy(
    source: RecordStore,
    target: AdapterStore,
    ids: list[str],
    plan: dict[str, int],
    report: MigrationReport,
    progress: Progress | None,
) -> None:
    batch: list[MemoryRecord] = []
    batch_ids: list[tuple[str, int]] = []

    def flush() -> None:
        if batch:
            assert isinstance(target, BatchPut)  # noqa: S101 - only batched for such stores
            target.put_many(batch)
            for record_id, held in batch_ids:
                (report.extended if held else report.copied).append(record_id)
            report.versions_written += len(batch)
            batch.clear()
            batch_ids.clear()

    batched = isinstance(target, BatchPut)
    for done, record_id in enumerate(ids):
        if progress is not None:
            progress(done, len(ids))
        held = plan[record_id]
        if held < 0:
            report.skipped.append(record_id)
            continue
        history = source.history(record_id)
        erased = held == 0 and history[-1].redacted
        missing = history[held:]
        if not erased:
            previous = history[held - 1] if held else None
            with _naming(record_id):
                for version in missing:  # the whole chain before its first write
                    check_next_version(previous, version)
                    previous = version
            if batched:
                batch.extend(missing)
                batch_ids.append((record_id, held))
                if len(batch) >= _BATCH_VERSIONS:
                    flush()
                continue
        flush()  # keep the write order: records batched earlier go first
        with _naming(record_id):
            if erased:
                report.versions_written += target.restore_erased(history)
                report.restored.append(record_id)
                continue
            for version in missing:
                target.put(version)
                report.versions_written += 1
        (report.extended if held else report.copied).append(record_id)
    flush()


def _verify(
    source: RecordStore,
    target: RecordStore,
    ids: list[str],
    report: MigrationReport,
    progress: Progress | None,
) -> None:
    now_ids = [record.id for record in source.list()]
    if sorted(now_ids) != sorted(ids):
        raise StoreError(
            f"the source changed during the migration: it held {len(ids)} records, now {len(now_ids)}",
            hint="run migrate again: it skips what is already copied",
        )
    problems: list[str] = []
    for done, record_id in enumerate(ids):
        if progress is not None:
            progress(done, len(ids))
        expected = history_digest(source.history(record_id))
        try:
            found = history_digest(target.history(record_id))
        except RecordNotFound:
            found = "missing"
        if found != expected:
            problems.append(f"{record_id}: {found} in the target, {expected} in the source")
        report.digests[record_id] = expected
    report.target_records = len(target.list())
    if report.target_records < len(ids) and not problems:
        problems.append(
            f"the target lists {report.target_records} records, fewer than the source's {len(ids)}"
        )
    if problems:
        shown = "; ".join(problems[:_SHOWN])
        more = f"; and {len(problems) - _SHOWN} more" if len(problems) > _SHOWN else ""
        raise StoreError(
            f"verification failed for {len(problems)} record(s): {shown}{more}",
            hint="if the source changed meanwhile, run migrate again",
        )
    report.verified = True


# ---------------------------------------------------------------------- helpers


@contextlib.contextmanager
def _naming(record_id: str) -> Iterator[None]:
    """Add ``record_id`` to an AgentMemoryError raised inside that does not name a record yet."""
    try:
        yield
    except AgentMemoryError as exc:
        exc.located(record_id=record_id)
        raise


def _log(
    ends: list[tuple[StoreURL, OperationLog | None]],
    report: MigrationReport,
    actor: str,
    now: datetime | None,
    logged: list[str],
) -> None:
    for end, log in ends:
        if log is None:
            continue
        try:
            log.append(
                "migrate", actor=actor, record_ids=report.written, details=report.log_details(), now=now
            )
        except LogError as exc:
            raise LogError(
                f"the migration wrote {report.versions_written} versions, but its event could not be logged: "
                f"{exc.detail}",
                path=exc.path,
            ) from None
        logged.append(end.display())

"""The ``consolidate`` verb of the porcelain: run the passes, write what may apply, keep the rest pending.

A mixin of :class:`agent_memory.memory.Memory`, kept here so the porcelain module stays one
concept long (like :mod:`agent_memory.governance.porcelain`). Under the writer lock it runs
:func:`.consolidate.consolidate` over the records the withdrawal gate exposes, writes the two
passes a job may apply on its own (DESIGN.md §9: exact dedup, opening a dispute) through the
proposal gate, writes every other change as a pending proposal file under
``proposals/pending-consolidation/`` of a Home (kept in the report in memory otherwise),
commits those proposals on a ``maintenance/<UTC stamp>`` branch when the Home is a git
repository (:func:`~.branches.commit_maintenance_branch`, DESIGN.md §9 "Maintenance branches";
a git failure becomes a ``branch`` rejection, the live files stay), and logs one
``consolidate`` event with counts, ids and the branch, never content (DESIGN.md §9).

A proposal a person refused is not filed again (:class:`Refusals`): a reviewer who declines
a proposal, or reverts one they accepted, has said no to that change over those records
(DESIGN.md §5 "review accepts, rejects or later reverts each"). Without it the next run files
the same proposal again: a declined one under the same id (derived from the pass, action and
the digests of the records it was made from), a reverted merge over the correction records the
revert wrote (the fresh-user trial of session 3). Refused are a proposal whose id a
``declined`` verdict names, and one whose records are all, at their current versions, in the
``after`` digests of a ``reverted`` verdict of the same pass; so a record written again since
makes the proposal new. The log is read only from the earliest write time of a proposal's
records (a verdict on those versions cannot be older), through
:func:`~agent_memory.log.base.entries_from_time`; a run that proposes nothing reads none of it.

Invariant: a dry run writes nothing (no record, no file, no log event); opening a dispute is
logged as an ``intent`` first, so an interrupted run is rolled forward on the next open.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agent_memory.jobs.consolidate import ConsolidationConfig, ConsolidationReport, Writer, consolidate
from agent_memory.jobs.pending import PENDING_FOLDER, PendingProposal
from agent_memory.log.base import LogEntry, OperationLog, entries_from_time
from agent_memory.records.record import MemoryRecord
from agent_memory.write.proposals import Proposal, validate_proposals

if TYPE_CHECKING:
    import threading

    from agent_memory.governance.gate import Gate
    from agent_memory.home import Home
    from agent_memory.recall.salience import Salience
    from agent_memory.stores.base import RecordStore

__all__ = ["ConsolidationMethods", "Refusals"]


class ConsolidationMethods:
    """The ``consolidate`` verb of :class:`~agent_memory.memory.Memory` (issue 7 item 4; seed 001)."""

    if TYPE_CHECKING:
        store: RecordStore
        log: OperationLog
        gate: Gate
        salience: Salience
        actor: str
        home: Home | None
        _lock: threading.RLock

        def _clock(self, now: datetime | None) -> datetime: ...

        def _writing(self) -> AbstractContextManager[None]: ...

        def _after_write(self, versions: Sequence[MemoryRecord]) -> None: ...

        def _signed(self, record: MemoryRecord) -> MemoryRecord: ...

        def _address(self) -> str | None: ...

    def consolidate(
        self,
        *,
        dry_run: bool = False,
        config: ConsolidationConfig | None = None,
        branch: bool = True,
        now: datetime | None = None,
    ) -> ConsolidationReport:
        """Consolidate this Memory's records: apply exact dedup and disputes, propose the rest.

        Args:
            dry_run: Compute the report only: nothing is written, filed or logged.
            config: Thresholds and blocking limits (the origin's by default).
            branch: Commit the filed proposals on a maintenance branch when the Home is a
                git repository.
            now: The pass time (aware); decay ages are measured to it.

        Returns:
            The :class:`~agent_memory.jobs.consolidate.ConsolidationReport`; in a Home its
            pending proposals are also files ``proposals/pending-consolidation/<id>.json``.

        Raises:
            LogError: The withdrawal controls cannot be read (the gate fails closed).
            StoreError: A write failed (what was written before it stays, and is logged).
            RecordError: ``now`` is naive.
        """
        stamp = self._clock(now)
        with self._writing():
            view = self.gate.view()
            writer = None if dry_run else self._consolidation_writer(stamp)
            report = consolidate(
                self.store,
                now=stamp,
                exposed=view.is_exposed,
                salience=self.salience,
                config=config,
                write=writer,
                refused=Refusals(self.log).refusal,
                home_signer=self._address(),
            )
            if dry_run:
                return report
            home = self.home
            if home is not None:
                folder = home.root / PENDING_FOLDER
                for pending in report.proposals:
                    pending.write(folder)
                if branch and report.proposals:
                    report.branch = self._maintenance_branch(home, report, stamp)
            applied = sorted(
                {i for action in report.actions if action.action != "protect" for i in action.record_ids}
            )
            self.log.append(
                "consolidate",
                actor=self.actor,
                record_ids=tuple(applied),
                details={
                    "actions": dict(Counter(f"{a.pass_name}:{a.action}" for a in report.actions)),
                    "proposals": [p.id for p in report.proposals],
                    "rejections": len(report.rejections),
                    "stats": dict(report.stats),
                    "branch": report.branch,
                },
                now=stamp,
            )
            return report

    def _maintenance_branch(self, home: Home, report: ConsolidationReport, stamp: datetime) -> str | None:
        from agent_memory.errors import ConfigError
        from agent_memory.jobs.branches import commit_maintenance_branch
        from agent_memory.jobs.pending import Rejection

        try:
            return commit_maintenance_branch(
                home.root, self.store, report.proposals, now=stamp, next_free=True
            )
        except ConfigError as exc:
            report.rejections.append(Rejection("branch", f"no maintenance branch: {exc}"))
            return None

    def _consolidation_writer(self, stamp: datetime) -> Writer:
        # The log never holds content, and a contradiction's reason quotes slot values:
        # events carry the pass name only (the records carry the full reason).
        def write(pass_name: str, proposals: list[Proposal]) -> list[MemoryRecord]:
            ids = tuple(dict.fromkeys(i for p in proposals for i in (p.target_id, p.other_id) if i))
            reason = f"{pass_name} (consolidation)"
            if pass_name != "contradiction":  # noqa: S105 - a pass name, not a secret
                written = self._put_signed(proposals, stamp)
                self._log_write("supersede", written, reason, stamp)
                return written
            details = {"op": "dispute", "reason": reason, "subject": ""}
            intent = self.log.append("intent", actor=self.actor, record_ids=ids, details=details, now=stamp)
            written = self._put_signed(proposals, stamp)
            self.log.append(
                "intent-done",
                actor=self.actor,
                record_ids=ids,
                details={"intent": intent.seq, "op": "dispute", "outcome": "done"},
                now=stamp,
            )
            self._log_write("transition", written, reason, stamp)
            return written

        return write

    def _put_signed(self, proposals: list[Proposal], stamp: datetime) -> list[MemoryRecord]:
        # apply_proposals, with each version signed by the Home as remember signs its records.
        versions = [
            v if v.signature else self._signed(v)
            for v in validate_proposals(self.store, proposals, now=stamp)
        ]
        for version in versions:
            self.store.put(version)
        return versions

    def _log_write(self, action: str, written: list[MemoryRecord], reason: str, stamp: datetime) -> None:
        self.log.append(
            action,
            actor=self.actor,
            record_ids=tuple(v.id for v in written),
            details={"reason": reason, "job": "consolidate"},
            now=stamp,
        )
        self._after_write(written)


class Refusals:
    """The declines and reverts a run must honour, read lazily from an :class:`OperationLog`.

    Args:
        log: The Home's (or Memory's) operation log.
    """

    def __init__(self, log: OperationLog) -> None:
        self._log = log
        self._from: datetime | None = None  # the log is read from this time on
        self._first_seq: int | None = None  # the first seq read
        self._declined: dict[str, int] = {}  # proposal id -> seq of the decline
        self._reverted: list[tuple[str, str, dict[str, str], int]] = []  # (pass, id, after, seq)
        self.reads = 0
        """Log entries read so far (for tests and stats)."""

    def refusal(self, pending: PendingProposal, since: datetime) -> str | None:
        """Return why ``pending`` must not be filed, or ``None`` when no person refused it.

        Args:
            pending: The proposal a run is about to file.
            since: The earliest write time (aware) of the record versions it was made from;
                verdicts before it cannot concern those versions, so the log is read from it.

        Returns:
            ``"declined by a person as <id> (seq N); no record changed since"`` or
            ``"reverted by a person (<id>, seq N); no record changed since"``, else ``None``.

        Raises:
            LogError: The log cannot be read.
        """
        self._read_from(since)
        seq = self._declined.get(pending.id)
        if seq is not None:
            return f"declined by a person as {pending.id} (seq {seq}); no record changed since"
        basis = pending.basis
        for pass_name, proposal_id, after, seq in self._reverted:
            if pass_name == pending.pass_name and basis and all(after.get(i) == d for i, d in basis.items()):
                return f"reverted by a person ({proposal_id}, seq {seq}); no record changed since"
        return None

    def _read_from(self, since: datetime) -> None:
        if self._from is not None and self._from <= since:
            return
        stop = self._first_seq
        for entry in _until(entries_from_time(self._log, since), stop):
            self.reads += 1
            self._fold(entry)
            if self._first_seq is None or entry.seq < self._first_seq:
                self._first_seq = entry.seq
        self._from = since

    def _fold(self, entry: LogEntry) -> None:
        if str(entry.action) != "review":
            return
        details: Mapping[str, Any] = entry.details
        verdict, proposal_id = details.get("verdict"), str(details.get("proposal_id", ""))
        if verdict == "declined":
            self._declined[proposal_id] = entry.seq
        elif verdict == "reverted" and isinstance(details.get("after"), Mapping):
            after = {str(k): str(v) for k, v in details["after"].items()}
            self._reverted.append((str(details.get("pass", "")), proposal_id, after, entry.seq))


def _until(entries: Iterable[LogEntry], stop: int | None) -> Iterator[LogEntry]:
    """Yield ``entries`` up to (not including) the one with seq ``stop`` (all when ``None``)."""
    for entry in entries:
        if stop is not None and entry.seq >= stop:
            return
        yield entry

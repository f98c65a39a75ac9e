"""The ``consolidate`` verb of the porcelain: run the passes, file every change as a proposal.

A mixin of :class:`agent_memory.memory.Memory`, kept here so the porcelain module stays one
concept long (like :mod:`agent_memory.governance.porcelain`). Under the writer lock it runs
:func:`.consolidate.consolidate` over the records the withdrawal gate exposes and applies
nothing (DESIGN.md §9 "What jobs may apply on their own: nothing"; seed 003; issue 19 item 4):
every change — exact dedup, opening a dispute, near-duplicate merges, state supersedes,
promotions, rule flags, decay archival — is filed on the Memory's
:class:`~agent_memory.jobs.pending.ProposalShelf` for ``accept`` to apply:

- in a Home, as ``proposals/pending-consolidation/<id>.json``, and, when the Home is a git
  repository, committed on a ``maintenance/<UTC stamp>`` branch
  (:func:`~.branches.commit_maintenance_branch`, DESIGN.md §9 "Maintenance branches"; a git
  failure becomes a ``branch`` rejection, the live files stay); a Home without git keeps the
  files only, and review reads them there;
- in a Memory without a Home (``Memory.in_memory()``), in the shelf in memory, where
  ``proposals``/``accept``/``decline`` of the review flow find them.

It logs one ``consolidate`` event with the proposal ids, the ids of the records they concern,
counts and the branch, never content (DESIGN.md §9), and writes no record.

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

Invariant: a run writes no record version; a dry run also files and logs nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agent_memory.jobs.consolidate import ConsolidationConfig, ConsolidationReport, consolidate
from agent_memory.jobs.pending import PendingProposal, ProposalShelf
from agent_memory.log.base import LogEntry, OperationLog, entries_from_time

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
        maintenance: ProposalShelf
        _lock: threading.RLock

        def _clock(self, now: datetime | None) -> datetime: ...

        def _writing(self) -> AbstractContextManager[None]: ...

        def _address(self) -> str | None: ...

    def consolidate(
        self,
        *,
        dry_run: bool = False,
        config: ConsolidationConfig | None = None,
        branch: bool = True,
        now: datetime | None = None,
    ) -> ConsolidationReport:
        """Consolidate this Memory's records: file every change as a proposal, apply none.

        Args:
            dry_run: Compute the report only: nothing is filed or logged.
            config: Thresholds and blocking limits (the origin's by default).
            branch: Commit the filed proposals on a maintenance branch when the Home is a
                git repository.
            now: The pass time (aware); decay ages are measured to it.

        Returns:
            The :class:`~agent_memory.jobs.consolidate.ConsolidationReport`; its proposals are
            filed on :attr:`maintenance` (a Home's ``proposals/pending-consolidation/<id>.json``,
            else in memory) for ``accept``.

        Raises:
            LogError: The withdrawal controls cannot be read (the gate fails closed).
            OSError: A proposal file cannot be written (those filed before it stay).
            RecordError: ``now`` is naive.
        """
        stamp = self._clock(now)
        with self._writing():
            view = self.gate.view()
            report = consolidate(
                self.store,
                now=stamp,
                exposed=view.is_exposed,
                salience=self.salience,
                config=config,
                refused=Refusals(self.log).refusal,
                home_signer=self._address(),
            )
            if dry_run:
                return report
            for pending in report.proposals:
                self.maintenance.file(pending)
            home = self.home
            if home is not None and branch and report.proposals:
                report.branch = self._maintenance_branch(home, report, stamp)
            concerned = sorted({i for p in report.proposals for i in p.record_ids})
            self.log.append(
                "consolidate",
                actor=self.actor,
                record_ids=tuple(concerned),
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

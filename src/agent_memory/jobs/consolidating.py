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

Invariant: a dry run writes nothing (no record, no file, no log event); opening a dispute is
logged as an ``intent`` first, so an interrupted run is rolled forward on the next open.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING

from agent_memory.jobs.consolidate import ConsolidationConfig, ConsolidationReport, Writer, consolidate
from agent_memory.jobs.pending import PENDING_FOLDER
from agent_memory.proposals import Proposal, apply_proposals
from agent_memory.records import MemoryRecord

if TYPE_CHECKING:
    import threading

    from agent_memory.governance.gate import Gate
    from agent_memory.home import Home
    from agent_memory.log.base import OperationLog
    from agent_memory.salience import Salience
    from agent_memory.stores.base import RecordStore

__all__ = ["ConsolidationMethods"]


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
            )
            if dry_run:
                return report
            home = getattr(self, "home", None)
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
                written = apply_proposals(self.store, proposals, now=stamp)
                self._log_write("supersede", written, reason, stamp)
                return written
            details = {"op": "dispute", "reason": reason, "subject": ""}
            intent = self.log.append("intent", actor=self.actor, record_ids=ids, details=details, now=stamp)
            written = apply_proposals(self.store, proposals, now=stamp)
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

    def _log_write(self, action: str, written: list[MemoryRecord], reason: str, stamp: datetime) -> None:
        self.log.append(
            action,
            actor=self.actor,
            record_ids=tuple(v.id for v in written),
            details={"reason": reason, "job": "consolidate"},
            now=stamp,
        )
        self._after_write(written)

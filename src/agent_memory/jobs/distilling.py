"""The ``distill`` verb of the porcelain: archived lines → pending proposals, filed, committed, logged.

A mixin of :class:`agent_memory.memory.Memory` (like :mod:`.consolidating`). One run
(issue 7 item 3; seed 000 §14; DESIGN.md §5, §9):

1. select the eligible archive lines and let the operator extract candidates
   (:func:`~.distill.select_lines`; the operator may call a model, so this phase holds no
   writer lock);
2. under the writer lock, select again (the ledger or the controls may have changed
   meanwhile; candidates of lines no longer eligible are dropped) and plan the proposals
   (:func:`~.distill.plan_candidates`): each record is screened for secrets
   (:func:`~agent_memory.governance.secrets.screen_text`) and signed by the Home's key;
3. write each proposal to ``proposals/pending-consolidation/<id>.json``, commit the run's
   proposals on a ``maintenance/<UTC stamp>`` branch when the Home is a git repository
   (:func:`~.branches.commit_maintenance_branch`; a git failure is reported, the live
   files stay), and log one ``distill`` event: the ledger (:func:`~.distill.read_ledger`).

Invariant: a dry run writes nothing (no file, branch or log event); no record is written by
a run at all: proposals wait for ``accept``. ``conventions.md``, ``inbox.md`` and ``archive/``
are only ever read.
"""

from __future__ import annotations

import dataclasses
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING

from agent_memory.errors import ConfigError
from agent_memory.jobs.distill import DistillReport, plan_candidates, record_for, select_lines
from agent_memory.jobs.distill_rules import Candidate, DistillOperator, HeuristicOperator
from agent_memory.jobs.pending import PENDING_FOLDER

if TYPE_CHECKING:
    import threading
    from datetime import tzinfo

    from agent_memory.governance.gate import Gate
    from agent_memory.home import Home
    from agent_memory.jobs.inbox import InboxItem
    from agent_memory.log.base import OperationLog
    from agent_memory.records.record import MemoryRecord
    from agent_memory.stores.base import RecordStore

__all__ = ["DistillMethods", "operator_named"]


def operator_named(name: str, home: Home) -> DistillOperator:
    """Return the operator ``heuristic`` or ``llm`` (the latter from the Home's ``[llm]`` settings).

    Raises:
        ConfigError: An unknown name; ``llm`` without an ``[llm]`` table, or with its key
            variable unset.
    """
    if name == "heuristic":
        return HeuristicOperator()
    if name == "llm":
        from agent_memory.jobs.distill_llm import LLMOperator

        settings = getattr(home.settings, "llm", None)
        if settings is None:
            raise ConfigError(
                "no [llm] table in memory.toml: the llm operator needs an endpoint",
                path=str(home.root / "memory.toml"),
                field="llm",
                hint='add [llm] with base_url = "http://host/v1" and model = "…" (see the docs)',
            )
        return LLMOperator(settings)
    raise ConfigError(f"unknown distill operator {name!r} (heuristic or llm)", field="operator")


class DistillMethods:
    """The ``distill`` verb of :class:`~agent_memory.memory.Memory` (issue 7 item 3; seed 000 §14)."""

    if TYPE_CHECKING:
        store: RecordStore
        log: OperationLog
        gate: Gate
        actor: str
        zone: tzinfo
        home: Home | None
        _lock: threading.RLock

        def _clock(self, now: datetime | None) -> datetime: ...

        def _writing(self) -> AbstractContextManager[None]: ...

        def _address(self) -> str | None: ...

        def _signed(self, record: MemoryRecord) -> MemoryRecord: ...

    def distill(
        self,
        *,
        operator: str | DistillOperator = "heuristic",
        dry_run: bool = False,
        namespace: str = "default",
        branch: bool = True,
        now: datetime | None = None,
    ) -> DistillReport:
        """Distill the Home's archived lines into pending proposals (module docstring).

        Args:
            operator: ``heuristic`` (default, no model), ``llm`` (``memory.toml`` ``[llm]``),
                or an operator object.
            dry_run: Compute the report only: nothing is filed, committed or logged.
            namespace: The namespace of the proposed records (and of the gate's probe).
            branch: Commit the proposals on a maintenance branch when the Home is a git repository.
            now: The run time (aware): ``created_at`` of the proposed records.

        Returns:
            The :class:`~agent_memory.jobs.distill.DistillReport`.

        Raises:
            ConfigError: This Memory has no Home, or the operator cannot be made.
            OperatorError: The LLM endpoint failed; nothing was written.
            LogError: The log cannot be read (the gate and the ledger fail closed).
            RecordError: ``now`` is naive.
        """
        home = self.home
        if home is None:
            raise ConfigError(
                "distill reads a Home's archive/; this Memory has none", hint="open a Home (--home PATH)"
            )
        chosen = operator_named(operator, home) if isinstance(operator, str) else operator
        stamp = self._clock(now)
        first = select_lines(home, self.log, self.gate.view().check, namespace=namespace, now=stamp)
        extraction = chosen.extract(first.eligible)

        def build(item: InboxItem, candidate: Candidate) -> MemoryRecord:
            from agent_memory.write.screen import screen

            screened = screen(candidate.text, field="text", policy=self, tags=candidate.tags)
            text, tags = screened.text, screened.tags
            shown = dataclasses.replace(candidate, text=text, tags=tags)
            record = record_for(
                item, shown, namespace=namespace, now=stamp, zone=self.zone, agent=self._address()
            )
            return self._signed(record)

        with self._writing():
            selection = select_lines(home, self.log, self.gate.view().check, namespace=namespace, now=stamp)
            still = {item.anchor for item in selection.eligible}
            extraction.candidates = [c for c in extraction.candidates if c.anchor in still]
            extraction.skipped = {a: why for a, why in extraction.skipped.items() if a in still}
            selection.eligible = [
                i for i in selection.eligible if i.anchor in {x.anchor for x in first.eligible}
            ]
            report = plan_candidates(
                self.store,
                selection,
                extraction,
                build=build,
                operator=chosen,
                now=stamp,
                home_signer=self._address(),
            )
            if dry_run:
                return report
            for pending in report.proposals:
                pending.write(home.root / PENDING_FOLDER)
            if branch and report.proposals:
                report.branch = self._distill_branch(home, report, stamp)
            entry = self.log.append(
                "distill",
                actor=self.actor,
                record_ids=tuple(sorted(i for p in report.proposals for i in p.record_ids)),
                details=report.ledger_details(),
                now=stamp,
            )
            report.log_seq = entry.seq
        return report

    def _distill_branch(self, home: Home, report: DistillReport, stamp: datetime) -> str | None:
        from agent_memory.jobs.branches import commit_maintenance_branch

        try:
            return commit_maintenance_branch(
                home.root, self.store, report.proposals, now=stamp, next_free=True
            )
        except ConfigError as exc:
            # The live files are the review's input either way; the audit copy is what failed.
            report.selection.problems.append(f"no maintenance branch: {exc}")
            return None

"""``memory.maintenance``: consolidate and distill, each filing proposals and applying none.

A service built on the Memory's :class:`~agent_memory.write.writer.Writer` (its lock, clock,
store, log and signing key), the withdrawal gate, the salience sidecar and the Home (DESIGN.md
§9 "What jobs may apply on their own: nothing"; seed 003; issue 19 item 4). Its two verbs file
every change they find on :attr:`Maintenance.shelf`, a
:class:`~agent_memory.jobs.pending.ProposalShelf`, for ``accept`` to apply:

- in a Home, as ``proposals/pending-consolidation/<id>.json``, and, when the Home is a git
  repository, committed on a ``maintenance/<UTC stamp>`` branch
  (:func:`~.branches.commit_maintenance_branch`, DESIGN.md §9 "Maintenance branches"; a git
  failure is reported, the live files stay); a Home without git keeps the files only, and
  review reads them there;
- in a Memory without a Home (``Memory.in_memory()``), in the shelf in memory, where
  ``proposals``/``accept``/``decline`` of the review flow find them (``consolidate`` only:
  ``distill`` reads a Home's ``archive/``).

:meth:`Maintenance.consolidate` runs :func:`.consolidate.consolidate` over the records the gate
exposes — exact dedup, opening a dispute, near-duplicate merges, state supersedes, promotions,
rule flags, decay archival — and never files again a proposal a person refused
(:class:`~.verdicts.Refusals`); it logs one ``consolidate`` event with the proposal ids, the
ids of the records they concern, counts and the branch, never content (DESIGN.md §9).

:meth:`Maintenance.distill` (issue 7 item 3; seed 000 §14; DESIGN.md §5):

1. selects the eligible archive lines and lets the operator extract candidates
   (:func:`~.distill.select_lines`; the operator may call a model, so this phase holds no
   writer lock);
2. under the writer lock, selects again (the ledger or the controls may have changed
   meanwhile; candidates of lines no longer eligible are dropped) and plans the proposals
   (:func:`~.distill.plan_candidates`): each record is screened
   (:func:`~agent_memory.write.screen.screen`) and signed by the Home's key;
3. files each proposal, commits the run's proposals on a maintenance branch when the Home is
   a git repository, and logs one ``distill`` event: the ledger (:func:`~.distill.read_ledger`).
   ``conventions.md``, ``inbox.md`` and ``archive/`` are only ever read.

Invariant: a run writes no record version; a dry run also files, commits and logs nothing.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from agent_memory.errors import ConfigError
from agent_memory.jobs.consolidate import ConsolidationConfig, ConsolidationReport, consolidate
from agent_memory.jobs.distill import DistillReport, Selection, plan_candidates, record_for, select_lines
from agent_memory.jobs.distill_rules import Candidate, DistillOperator, HeuristicOperator
from agent_memory.jobs.pending import PENDING_FOLDER, PendingProposal, ProposalShelf, Rejection
from agent_memory.jobs.verdicts import Refusals

if TYPE_CHECKING:
    from agent_memory.governance.gate import Gate
    from agent_memory.home import Home
    from agent_memory.jobs.inbox import InboxItem
    from agent_memory.recall.salience import Salience
    from agent_memory.records.record import MemoryRecord
    from agent_memory.write.writer import Writer

__all__ = ["Maintenance", "operator_named"]


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

        settings = home.settings.llm
        if settings is None:
            raise ConfigError(
                "no [llm] table in memory.toml: the llm operator needs an endpoint",
                path=str(home.root / "memory.toml"),
                field="llm",
                hint='add [llm] with base_url = "http://host/v1" and model = "…" (see the docs)',
            )
        return LLMOperator(settings)
    raise ConfigError(f"unknown distill operator {name!r} (heuristic or llm)", field="operator")


@dataclass(eq=False)
class Maintenance:
    """The maintenance verbs over one Memory's parts (``memory.maintenance``; module docstring).

    Args:
        writer: The Memory's Writer: lock, clock, store, log, actor and signing key.
        gate: Withdrawal controls; a run sees only what they expose.
        salience: Touch counts (decay spares what is used).
        home: The Home (its proposals folder, ``archive/`` and git), or ``None``.
        zone: The Home's time zone (the local day of distilled records' sources).

    Attributes:
        shelf: Where filed proposals wait for review (the Home's folder, else memory).
    """

    writer: Writer
    _: KW_ONLY
    gate: Gate
    salience: Salience
    home: Home | None
    zone: tzinfo
    shelf: ProposalShelf = field(init=False)

    def __post_init__(self) -> None:
        self.shelf = ProposalShelf(self.home.root / PENDING_FOLDER if self.home is not None else None)

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
            filed on :attr:`shelf` for ``accept``.

        Raises:
            LogError: The withdrawal controls cannot be read (the gate fails closed).
            OSError: A proposal file cannot be written (those filed before it stay).
            RecordError: ``now`` is naive.
        """
        writer = self.writer
        stamp = writer.clock(now)
        with writer.writing():
            report = consolidate(
                writer.store,
                now=stamp,
                exposed=self.gate.view().is_exposed,
                salience=self.salience,
                config=config,
                refused=Refusals(writer.log).refusal,
                home_signer=writer.catalog.signers.home,
                trusted=writer.catalog.signers.trusted,
            )
            if dry_run:
                return report
            report.branch, problem = self._file(report.proposals, stamp, branch=branch)
            if problem:
                report.rejections.append(Rejection("branch", problem))
            writer.log.append(
                "consolidate",
                actor=writer.actor,
                record_ids=tuple(sorted({i for p in report.proposals for i in p.record_ids})),
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
        home, writer = self.home, self.writer
        if home is None:
            raise ConfigError(
                "distill reads a Home's archive/; this Memory has none", hint="open a Home (--home PATH)"
            )
        chosen = operator_named(operator, home) if isinstance(operator, str) else operator
        stamp = writer.clock(now)

        def lines() -> Selection:
            return select_lines(home, writer.log, self.gate.view().check, namespace=namespace, now=stamp)

        first = lines()
        extraction = chosen.extract(first.eligible)

        def build(item: InboxItem, candidate: Candidate) -> MemoryRecord:
            from agent_memory.governance.secrets import policy_of
            from agent_memory.write.screen import screen

            screened = screen(candidate.text, field="text", policy=policy_of(home), tags=candidate.tags)
            shown = dataclasses.replace(candidate, text=screened.text, tags=screened.tags)
            record = record_for(
                item, shown, namespace=namespace, now=stamp, zone=self.zone, agent=writer.address()
            )
            return writer.sign(record)

        with writer.writing():
            selection = lines()
            still = {item.anchor for item in selection.eligible}
            extraction.candidates = [c for c in extraction.candidates if c.anchor in still]
            extraction.skipped = {a: why for a, why in extraction.skipped.items() if a in still}
            selection.eligible = [
                i for i in selection.eligible if i.anchor in {x.anchor for x in first.eligible}
            ]
            report = plan_candidates(
                writer.store,
                selection,
                extraction,
                build=build,
                operator=chosen,
                now=stamp,
                home_signer=writer.catalog.signers.home,
                trusted=writer.catalog.signers.trusted,
            )
            if dry_run:
                return report
            report.branch, problem = self._file(report.proposals, stamp, branch=branch)
            if problem:
                report.selection.problems.append(problem)
            entry = writer.log.append(
                "distill",
                actor=writer.actor,
                record_ids=tuple(sorted(i for p in report.proposals for i in p.record_ids)),
                details=report.ledger_details(),
                now=stamp,
            )
            report.log_seq = entry.seq
        return report

    def _file(
        self, proposals: list[PendingProposal], stamp: datetime, *, branch: bool
    ) -> tuple[str | None, str | None]:
        """File ``proposals`` on the shelf, then commit them on a maintenance branch of a git Home.

        Returns ``(branch, None)``, or ``(None, why not)`` when git failed: the live files are
        the review's input either way and the branch only the audit copy, so that is reported,
        not raised. No branch when ``branch`` is false, nothing was proposed or there is no Home.

        Raises:
            OSError: A proposal file cannot be written (those filed before it stay).
        """
        from agent_memory.jobs.branches import commit_maintenance_branch

        for pending in proposals:
            self.shelf.file(pending)
        if self.home is None or not branch or not proposals:
            return None, None
        try:
            name = commit_maintenance_branch(
                self.home.root, self.writer.store, proposals, now=stamp, next_free=True
            )
        except ConfigError as exc:
            return None, f"no maintenance branch: {exc}"
        return name, None

"""`Withdrawals` (``memory.withdrawals``): ``withdraw``, ``reinstate``, ``controls`` and ``forget``.

A service built on the Memory's :class:`~agent_memory.write.writer.Writer`. Every verb runs
under the writer lock (one writer per Home, so date-ordinal ``memwd-`` ids never collide) and
checks the actor's ``withdraw`` grant first (:mod:`.actors`); a refused call writes nothing.
Controls are appended to the operation log only: no record version is written, so a withdrawn
record keeps its state and confidence (seed 000 §12.2: withdrawal "does not declare the
withdrawn content false"). ``forget`` (seed 000 §12.1) withdraws what entered Memory, never
erases, and reports every surface (:mod:`.forget`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from agent_memory.governance.controls import (
    WithdrawalControl,
    WithdrawalScope,
    plan_reinstatement,
    plan_withdrawal,
)
from agent_memory.governance.forget import ForgetReceipt, forget_receipt, promoted_in
from agent_memory.governance.gate import GateView
from agent_memory.governance.portability import append_control
from agent_memory.stores.verified import verified_get

if TYPE_CHECKING:
    from agent_memory.governance.gate import Gate
    from agent_memory.home import Home
    from agent_memory.write.held import PendingRecords
    from agent_memory.write.writer import Writer

__all__ = ["Withdrawals"]


@dataclass(eq=False)
class Withdrawals:
    """The withdrawal verbs over one Memory's parts (seed 000 §12.1, §12.2; DESIGN.md §9).

    ``Memory.withdraw``, ``reinstate`` and ``controls`` delegate here.

    Args:
        writer: The Memory's Writer: lock, clock, store, log and who acts.
        gate: The withdrawal gate the controls are planned against.
        pending: Records waiting for review (a withdrawal may name one).
        zone: The Home's time zone (the local day of ``memwd-`` ids).
        home: The Home whose views are brought in line after each control, or ``None``.

    Attributes:
        views_note: Set by the last withdraw or reinstate when views edited by hand were
            kept: what was done to them (``None`` otherwise).
    """

    writer: Writer
    _: KW_ONLY
    gate: Gate
    pending: PendingRecords
    zone: tzinfo
    home: Home | None
    views_note: str | None = field(default=None, init=False)

    def withdraw(
        self,
        *,
        memory_item_ids: Iterable[str] = (),
        archive_refs: Iterable[str] = (),
        source_or_run_refs: Iterable[str] = (),
        namespaces: Iterable[str] = (),
        reason: str,
        now: datetime | None = None,
    ) -> WithdrawalControl:
        """Withdraw a scope from recall, export and every other exposure until reinstated (seed 000 §12.2).

        Appends a ``withdrawal-control-v1`` record to the log; nothing else changes (withdrawn
        content is not false: states and confidences stay). The scope is the union of the
        selectors (DESIGN.md §9: archive refs cover their anchors; what derives from a
        withdrawn record is withdrawn too). Needs the ``withdraw`` grant.

        Returns:
            The control record (``withdrawal_id`` ``memwd-YYYY-MM-DD-NNN``, local day).

        Raises:
            AuthorityError: The actor holds no ``withdraw`` grant.
            RecordError: No selector, a malformed one, or an empty reason.
            RecordNotFound: A record id this Home does not hold (nor waits for review).
            LifecycleError: This exact scope is already withdrawn.
        """
        writer = self.writer
        stamp = writer.clock(now)
        writer.actors.require(writer.actor, "withdraw", action="withdraw a scope")
        scope = WithdrawalScope(
            tuple(memory_item_ids), tuple(archive_refs), tuple(source_or_run_refs), tuple(namespaces)
        )
        with writer.writing():
            pending = {record.id for record in self.pending.list()}
            for record_id in scope.memory_item_ids:
                if record_id not in pending:
                    writer.store.get(record_id)
            control = plan_withdrawal(
                self.gate.state(), scope, reason=reason, actor=writer.actor, now=stamp, zone=self.zone
            )
            append_control(writer.log, control, actor=writer.actor, now=stamp)
        self._refresh_views(control.withdrawal_id)
        return control

    def reinstate(
        self,
        withdrawal_id: str,
        reason: str,
        *,
        scope: WithdrawalScope | None = None,
        now: datetime | None = None,
    ) -> WithdrawalControl:
        """Lift the withdrawal ``withdrawal_id``: a reinstatement of its exact scope that supersedes it.

        Other withdrawals in force still apply: a scope two unordered withdrawals cover stays
        excluded until both are lifted (fail closed). Needs the ``withdraw`` grant.

        Args:
            withdrawal_id: The withdrawal to lift (``memwd-…``), the latest of its chain.
            reason: Why.
            scope: The scope the caller means to lift; must equal the withdrawal's exactly.
            now: The clock.

        Raises:
            AuthorityError: The actor holds no ``withdraw`` grant.
            LifecycleError: Unknown id, not a withdrawal, already lifted or superseded, or a
                different scope; nothing is written.
            RecordError: An empty reason.
        """
        writer = self.writer
        stamp = writer.clock(now)
        writer.actors.require(writer.actor, "withdraw", action=f"reinstate {withdrawal_id}")
        with writer.writing():
            control = plan_reinstatement(
                self.gate.state(),
                withdrawal_id,
                reason=reason,
                actor=writer.actor,
                now=stamp,
                zone=self.zone,
                scope=scope,
            )
            append_control(writer.log, control, actor=writer.actor, now=stamp)
        self._refresh_views(control.withdrawal_id)
        return control

    def _refresh_views(self, control_id: str) -> None:
        """Bring a Home's views in line with the gate after a control changed it (DESIGN.md §4, §7, §9).

        Fails closed through :func:`~agent_memory.jobs.view_scrub.refresh_views`: views not
        edited by hand are rendered again (only in a Home rendered before, i.e. ``index.md``
        exists); in a view edited by hand every line carrying a withdrawn record's id or text
        is removed and the person's other lines are kept. :attr:`views_note` says what was
        done to views edited by hand (``None`` when there were none).

        Raises:
            StoreError: The views could not be brought in line (a note, view or the log
                unreadable, a write failed); the message names the control already in force
                and how to finish (``agent-memory render``).
        """
        from agent_memory.errors import AgentMemoryError, StoreError
        from agent_memory.jobs.view_scrub import refresh_views

        self.views_note = None
        home = self.home
        if home is None:
            return
        try:
            done = refresh_views(home, render_views=(home.root / "index.md").exists())
        except AgentMemoryError as exc:
            raise StoreError(
                f"{control_id} is in force for recall and export, but the views could not be updated: {exc}",
                path=str(home.root),
                hint="fix the cause, then run `agent-memory render` (views may still show the scope)",
            ) from exc
        self.views_note = done.describe()

    def controls(self) -> list[WithdrawalControl]:
        """Return every withdrawal and reinstatement in log (causal) order; ``gate.state()`` resolves them."""
        with self.writer.lock:
            return self.gate.controls()

    def forget(
        self,
        *,
        memory_item_ids: Iterable[str] = (),
        archive_refs: Iterable[str] = (),
        source_or_run_refs: Iterable[str] = (),
        namespaces: Iterable[str] = (),
        reason: str = "forget-request",
        now: datetime | None = None,
    ) -> ForgetReceipt:
        """Route a forget request: withdraw what entered Memory and report every surface (seed 000 §12.1).

        The scope is exactly the selectors given (a ``namespaces`` selector covers only
        records of those namespaces, and what derives from them); when nothing exposed in it
        entered Memory, nothing is written (*non-admission*). See :mod:`.forget`.

        Args:
            memory_item_ids: Record ids (``mem:…``).
            archive_refs: Archive files or anchors.
            source_or_run_refs: Source or run refs.
            namespaces: Namespaces (``user:u1``); only their records are covered.
            reason: Why (not a verdict on truth).
            now: The clock.

        Returns:
            The surface receipt. Nothing is erased on any path.

        Raises:
            AuthorityError: The actor holds no ``withdraw`` grant (nothing written).
            RecordError: No selector or a malformed one.
            RecordNotFound: A record id the Home does not hold.
            LifecycleError: This exact scope is already withdrawn.
        """
        writer = self.writer
        scope = WithdrawalScope(
            tuple(memory_item_ids), tuple(archive_refs), tuple(source_or_run_refs), tuple(namespaces)
        )
        writer.actors.require(writer.actor, "withdraw", action="forget a scope")
        stamp = writer.clock(now)
        for record_id in scope.memory_item_ids:
            verified_get(writer.store, record_id, home_signer=writer.address())
        candidate = plan_withdrawal(
            self.gate.state(), scope, reason=reason, actor=writer.actor, now=stamp, zone=self.zone
        )
        current, hypothetical = self.gate.view(), GateView([candidate], writer.store.get)
        covered = tuple(
            sorted(
                r.id
                for r in writer.store.list()
                if not r.redacted and current.is_exposed(r) and not hypothetical.is_exposed(r)
            )
        )
        promoted = promoted_in(self.home, covered)
        if not covered:
            return forget_receipt(covered, promoted)
        control = self.withdraw(
            memory_item_ids=scope.memory_item_ids,
            archive_refs=scope.archive_refs,
            source_or_run_refs=scope.source_or_run_refs,
            namespaces=scope.namespaces,
            reason=reason,
            now=stamp,
        )
        return forget_receipt(covered, promoted, control.withdrawal_id, self.views_note)

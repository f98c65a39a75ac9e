"""Withdrawal verbs of the porcelain: ``withdraw``, ``reinstate`` and ``controls`` of Memory.

A mixin of :class:`agent_memory.memory.Memory`, kept here so the porcelain module stays one
concept long. Every method runs under the Memory's writer lock (one writer per Home, so
date-ordinal ``memwd-`` ids never collide) and checks the actor's ``withdraw`` grant first
(:mod:`.actors`); a refused call writes nothing. Controls are appended to the operation
log only: no record version is written, so a withdrawn record keeps its state and
confidence (seed 000 §12.2: withdrawal "does not declare the withdrawn content false").
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from agent_memory.governance.controls import (
    WithdrawalControl,
    WithdrawalScope,
    plan_reinstatement,
    plan_withdrawal,
)
from agent_memory.governance.portability import append_control

if TYPE_CHECKING:
    import threading

    from agent_memory.governance.actors import Actors
    from agent_memory.governance.gate import Gate
    from agent_memory.home import Home
    from agent_memory.log.base import OperationLog
    from agent_memory.stores.base import RecordStore
    from agent_memory.write.held import PendingRecords

__all__ = ["WithdrawalMethods"]


class WithdrawalMethods:
    """The withdrawal verbs of :class:`~agent_memory.memory.Memory` (seed 000 §12.2; DESIGN.md §9)."""

    views_note: str | None = None
    """Set by the last withdraw or reinstate when views edited by hand were kept: what was done to them."""

    if TYPE_CHECKING:
        store: RecordStore
        log: OperationLog
        pending: PendingRecords
        actor: str
        actors: Actors
        zone: tzinfo
        gate: Gate
        home: Home | None
        _lock: threading.RLock

        def _clock(self, now: datetime | None) -> datetime: ...

        def _writing(self) -> AbstractContextManager[None]: ...

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
        stamp = self._clock(now)
        self.actors.require(self.actor, "withdraw", action="withdraw a scope")
        scope = WithdrawalScope(
            tuple(memory_item_ids), tuple(archive_refs), tuple(source_or_run_refs), tuple(namespaces)
        )
        with self._writing():
            pending = {record.id for record in self.pending.list()}
            for record_id in scope.memory_item_ids:
                if record_id not in pending:
                    self.store.get(record_id)
            control = plan_withdrawal(
                self.gate.state(), scope, reason=reason, actor=self.actor, now=stamp, zone=self.zone
            )
            append_control(self.log, control, actor=self.actor, now=stamp)
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
        stamp = self._clock(now)
        self.actors.require(self.actor, "withdraw", action=f"reinstate {withdrawal_id}")
        with self._writing():
            control = plan_reinstatement(
                self.gate.state(),
                withdrawal_id,
                reason=reason,
                actor=self.actor,
                now=stamp,
                zone=self.zone,
                scope=scope,
            )
            append_control(self.log, control, actor=self.actor, now=stamp)
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
        with self._lock:
            return self.gate.controls()

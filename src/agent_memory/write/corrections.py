"""``Memory.supersede``, ``resolve`` and ``archive``: the corrections a person or agent makes by id.

Each is one logged write under the Home's writer lock; a supersede goes through the same
plan and intent as ``remember`` (:func:`agent_memory.write.plan.execute`), so a crash in between
is rolled forward on the next open. Invariant: a tainted correction never replaces a record
on its own; it disputes it (DESIGN.md §9).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agent_memory.errors import ProposalError, RecordError
from agent_memory.governance.secrets import screen_text
from agent_memory.records.lifecycle import archive as archive_record
from agent_memory.records.lifecycle import resolve_transition
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.write.plan import Plan, PlanKind, RememberResult, execute, normalize_text

if TYPE_CHECKING:
    from agent_memory.log.base import OperationLog
    from agent_memory.stores.base import RecordStore

DEFAULT_CONFIDENCE = 0.9
"""Confidence of a record written without one (``remember`` and ``supersede``)."""


class CorrectionMethods:
    """``supersede``, ``resolve`` and ``archive`` of :class:`~agent_memory.memory.Memory`."""

    if TYPE_CHECKING:
        store: RecordStore
        log: OperationLog
        actor: str
        taint: tuple[str, ...]

        def _clock(self, now: datetime | None) -> datetime: ...

        def _writing(self) -> AbstractContextManager[None]: ...

        def _address(self) -> str | None: ...

        def _signed(self, record: MemoryRecord) -> MemoryRecord: ...

        def _write(
            self,
            versions: list[MemoryRecord],
            stamp: datetime,
            *,
            action: str,
            details: dict[str, Any] | None = None,
        ) -> None: ...

        def _after_write(self, versions: Sequence[MemoryRecord]) -> None: ...

    def resolve(self, winner_id: str, loser_id: str, reason: str, *, now: datetime | None = None) -> None:
        """Settle a dispute: the winner returns to active, the loser is superseded by it.

        Raises:
            RecordNotFound: Either id is unknown.
            LifecycleError: The two are not the two sides of one open transition, or no reason.
        """
        stamp = self._clock(now)
        with self._writing():
            won, lost = resolve_transition(
                self.store.get(winner_id), self.store.get(loser_id), reason, now=stamp
            )
            self._write([won, lost], stamp, action="resolve", details={"reason": reason, "winner": winner_id})

    def archive(self, record_id: str, reason: str, *, now: datetime | None = None) -> MemoryRecord:
        """Retire a record (terminal; its content is kept). Returns the archived version.

        Raises:
            RecordNotFound: Unknown id.
            LifecycleError: Already archived, or no reason.
        """
        stamp = self._clock(now)
        with self._writing():
            retired = archive_record(self.store.get(record_id), reason, now=stamp)
            self._write([retired], stamp, action="archive", details={"reason": reason})
            return retired

    def supersede(
        self,
        old_id: str,
        text: str,
        *,
        source: str | None,
        reason: str,
        expected_version: int | None = None,
        now: datetime | None = None,
        **fields: Any,
    ) -> RememberResult:
        """Replace record ``old_id`` with a new record of ``text`` (same kind, subject and namespace).

        Args:
            old_id: The active record to replace.
            text: The new text.
            source: Where the correction came from (required).
            reason: Why (stored as the old record's ``state_reason``).
            expected_version: If given, the number of versions ``old_id`` must have now;
                another writer's change in between is a conflict and nothing is written.
            now: The clock.
            **fields: Other ``remember`` fields for the new record (type, tags, confidence…).

        Raises:
            ProposalError: ``expected_version`` does not match (a concurrent edit).
            LifecycleError: The old record is not active.
            RecordError: As for :meth:`remember`.
        """
        stamp = self._clock(now)
        text, fields["tags"] = screen_text(text, field="text", policy=self, tags=fields.pop("tags", ()))
        with self._writing():
            history = self.store.history(old_id)
            old = history[-1]
            if expected_version is not None and expected_version != len(history):
                raise ProposalError(
                    f"conflict: expected version {expected_version}, the record has {len(history)}; "
                    "re-read it and try again",
                    record_id=old_id,
                    field="expected_version",
                )
            if normalize_text(text) == old.body:
                raise RecordError(
                    "is identical to the record's current text: nothing to supersede, nothing was changed",
                    record_id=old_id,
                    field="text",
                    hint="give the corrected text",
                )
            fields.setdefault("type", old.type.value)
            record = MemoryRecord.create(
                body=normalize_text(text),
                created_at=stamp,
                supersedes=old_id,
                provenance=Provenance(
                    kind="correction", ref=(source or "").strip() or None, agent=self._address()
                ),
                kind=old.effective_kind,
                subject=old.subject,
                namespace=old.effective_namespace,
                scope=old.scope,
                taint=tuple(sorted({*self.taint, *(fields.pop("taint", ()) or ())})) or None,
                confidence=fields.pop("confidence", DEFAULT_CONFIDENCE),
                **fields,
            )
            if not record.provenance.ref:
                raise RecordError("a correction needs a source (seed 000 §9)", field="source")
            if record.taint:
                # A tainted correction never replaces a record on its own: it disputes it (DESIGN.md §9).
                disputing = record.evolve(supersedes=None)
                plan = Plan(
                    PlanKind.DISPUTE,
                    self._signed(disputing),
                    old,
                    f"a tainted correction disputes it: {reason}",
                )
                self._after_write(
                    execute(plan, self.store, self.log, actor=self.actor, now=stamp, sign=self._signed)
                )
                return RememberResult(disputing.id, disputed_with=old_id, quarantined=True)
            plan = Plan(PlanKind.SUPERSEDE, self._signed(record), old, reason)
            self._after_write(
                execute(plan, self.store, self.log, actor=self.actor, now=stamp, sign=self._signed)
            )
            return RememberResult(record.id, superseded=old_id, quarantined=False)

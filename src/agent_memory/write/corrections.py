"""`Corrections`: ``supersede``, ``resolve`` and ``archive``, the corrections a person or agent makes by id.

Each is one logged write under the Home's writer lock; a supersede goes through the same
plan and intent as ``remember`` (:func:`agent_memory.write.plan.execute`), so a crash in between
is rolled forward on the next open. Invariant: a tainted correction never replaces a record
on its own; it disputes it (DESIGN.md §9).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agent_memory.errors import ProposalError, RecordError
from agent_memory.records.fields import screen_plain
from agent_memory.records.lifecycle import archive as archive_record
from agent_memory.records.lifecycle import resolve_transition
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.write.plan import Plan, PlanKind, RememberResult
from agent_memory.write.screen import screen

if TYPE_CHECKING:
    from agent_memory.governance.secrets import SecretsSettings
    from agent_memory.write.writer import Writer

__all__ = ["Corrections", "carried_fields"]


def carried_fields(record: MemoryRecord) -> dict[str, Any]:
    """Return the fields a correction of ``record`` keeps unless the caller changes them.

    As ``MemoryRecord.create`` keyword arguments: ``type``, ``tags``, ``confidence``,
    ``slots``, ``epistemic_status``, ``sources``, ``evidence`` and the unknown extension
    fields (``extra``). ``kind``, ``subject``, ``namespace`` and ``scope`` never change after
    birth and are carried by :meth:`Corrections.supersede` itself; record and valid time
    (``occurred_at``, ``valid_from``) are the caller's to carry (``edit`` and ``sync`` do: a
    correction of wording held all along; ``supersede`` of a new value holds from now).
    """
    return {
        "type": record.type.value,
        "tags": record.tags,
        "confidence": record.confidence,
        "slots": dict(record.slots),
        "epistemic_status": record.epistemic_status,
        "sources": record.sources,
        "evidence": record.evidence,
        "extra": dict(record.extra),
    }


@dataclass(eq=False)
class Corrections:
    """The corrections by id over one Memory's parts (``Memory.supersede``, ``resolve``, ``archive``).

    Args:
        writer: The Memory's Writer: lock, clock, signing key and who acts.
        secrets: The Home's ``[secrets]`` policy (refuse, or redact), for a correction's text.
    """

    writer: Writer
    _: KW_ONLY
    secrets: SecretsSettings

    def resolve(
        self, winner_id: str, loser_id: str, reason: str, *, now: datetime | None = None
    ) -> tuple[MemoryRecord, MemoryRecord]:
        """Settle a dispute: the winner returns to active, the loser is superseded by it.

        Returns:
            The new versions of the winner and the loser.

        Raises:
            RecordNotFound: Either id is unknown.
            LifecycleError: The two are not the two sides of one open transition, or no reason.
        """
        stamp = self.writer.clock(now)
        with self.writer.writing():
            won, lost = resolve_transition(
                self.writer.store.get(winner_id), self.writer.store.get(loser_id), reason, now=stamp
            )
            self.writer.write(
                [won, lost], stamp, action="resolve", details={"reason": reason, "winner": winner_id}
            )
            return won, lost

    def archive(self, record_id: str, reason: str, *, now: datetime | None = None) -> MemoryRecord:
        """Retire a record (terminal; its content is kept). Returns the archived version.

        Raises:
            RecordNotFound: Unknown id.
            LifecycleError: Already archived, or no reason.
        """
        stamp = self.writer.clock(now)
        with self.writer.writing():
            retired = archive_record(self.writer.store.get(record_id), reason, now=stamp)
            self.writer.write([retired], stamp, action="archive", details={"reason": reason})
            return retired

    def supersede(
        self,
        /,
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
            **fields: The fields the caller changes (``type``, ``tags``, ``confidence``,
                ``epistemic_status``, ``occurred_at``, ``valid_from``…); every other field is
                carried from the old record (:func:`carried_fields`): one correction routine
                for supersede (Python, CLI, MCP), edit and sync (issue 18 case 7).

        Raises:
            ProposalError: ``expected_version`` does not match (a concurrent edit).
            LifecycleError: The old record is not active.
            ScreenError: The text fails the screen (:func:`~agent_memory.write.screen.screen`).
            RecordError: As for :meth:`.Remember.remember`.
        """
        stamp = self.writer.clock(now)
        screen_plain(source=source, tags=fields.get("tags"))
        given_tags = fields.pop("tags", None)
        screened = screen(text, field="text", policy=self.secrets)  # its tags: what the screen adds
        with self.writer.writing():
            history = self.writer.store.history(old_id)
            old = history[-1]
            if expected_version is not None and expected_version != len(history):
                raise ProposalError(
                    f"conflict: expected version {expected_version}, the record has {len(history)}; "
                    "re-read it and try again",
                    record_id=old_id,
                    field="expected_version",
                )
            if screened.text == old.body:
                raise RecordError(
                    "is identical to the record's current text: nothing to supersede, nothing was changed",
                    record_id=old_id,
                    field="text",
                    hint="give the corrected text",
                )
            carried = {**carried_fields(old), **fields}
            tags = old.tags if given_tags is None else tuple(given_tags)
            carried["tags"] = tuple(dict.fromkeys([*tags, *screened.tags]))
            record = MemoryRecord.create(
                body=screened.text,
                created_at=stamp,
                supersedes=old_id,
                provenance=Provenance(
                    kind="correction", ref=(source or "").strip() or None, agent=self.writer.address()
                ),
                kind=old.effective_kind,
                subject=old.subject,
                namespace=old.effective_namespace,
                scope=old.scope,
                taint=tuple(sorted({*self.writer.taint, *(carried.pop("taint", ()) or ())})) or None,
                **carried,
            )
            if not record.provenance.ref:
                raise RecordError("a correction needs a source (seed 000 §9)", field="source")
            if record.taint:
                # A tainted correction never replaces a record on its own: it disputes it (DESIGN.md §9).
                disputing = record.evolve(supersedes=None)
                why = f"a tainted correction disputes it: {reason}"
                self.writer.execute(Plan(PlanKind.DISPUTE, disputing, old, why), stamp)
                return RememberResult(disputing.id, disputed_with=old_id, quarantined=True)
            self.writer.execute(Plan(PlanKind.SUPERSEDE, record, old, reason), stamp)
            return RememberResult(record.id, superseded=old_id, quarantined=False)

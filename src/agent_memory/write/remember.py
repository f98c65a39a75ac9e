"""`Remember`: the ``remember`` verb behind ``Memory.remember`` — text in, one planned write out.

The text and every plain field pass the screen before the writer lock is taken
(:func:`~agent_memory.write.screen.screen`, :func:`~agent_memory.records.fields.screen_plain`),
so a refusal writes nothing; under the lock the dedup and subject lookup finds the live record
it meets, :func:`~agent_memory.write.plan.plan_write` decides (create, dedup, supersede,
dispute, pending; DESIGN.md §9 "Write-time supersede") and :meth:`Remember.apply_plan` carries
the plan out through the Writer. Invariant: every record it writes is signed by the Home's key
and inherits the session's taint; a record is only ever created, never overwritten.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import KW_ONLY, dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from agent_memory.errors import RecordError
from agent_memory.records.fields import screen_plain
from agent_memory.records.record import EpistemicStatus, Kind, MemoryRecord, Provenance, Scope
from agent_memory.write.plan import Plan, PlanKind, RememberResult, plan_write
from agent_memory.write.screen import screen

if TYPE_CHECKING:
    from agent_memory.governance.secrets import SecretsSettings
    from agent_memory.recall.salience import Salience
    from agent_memory.write.held import PendingRecords
    from agent_memory.write.writer import Writer

__all__ = ["DEFAULT_CONFIDENCE", "Remember"]

DEFAULT_CONFIDENCE = 0.9
"""Confidence of a record written without one (``remember`` and ``supersede``)."""


@dataclass(eq=False)
class Remember:
    """The remember verb over one Memory's parts (``Memory.remember`` delegates to :meth:`remember`).

    Args:
        writer: The Memory's Writer: lock, clock, signing key, who acts and the lookup.
        salience: Touch counts (a duplicate is touched).
        pending: Where a record waits while its subject is disputed.
        secrets: The Home's ``[secrets]`` policy (refuse, or redact).
    """

    writer: Writer
    _: KW_ONLY
    salience: Salience
    pending: PendingRecords
    secrets: SecretsSettings

    def remember(
        self,
        text: str,
        *,
        source: str | None,
        type: str = "fact",
        kind: Kind | str | None = None,
        subject: str | None = None,
        tags: Sequence[str] = (),
        occurred_at: datetime | None = None,
        valid_from: datetime | None = None,
        confidence: float = DEFAULT_CONFIDENCE,
        namespace: str = "default",
        scope: Scope | str | None = None,
        taint: Iterable[str] = (),
        epistemic_status: EpistemicStatus | str | None = None,
        clean: bool = False,
        evidence: Sequence[str] = (),
        now: datetime | None = None,
    ) -> RememberResult:
        """Remember ``text`` as a new record, or recognise it as one already held.

        Args:
            text: The memory, as a reusable sentence; NFC-normalised and stripped.
            source: Where it came from (seed 000 §9 ``Source``): an archive anchor, a file
                and line, a session id. Required.
            type: ``fact``, ``episode``, ``procedure``, ``rule`` or seed 003's words.
            kind: ``state`` (one current value per ``subject``) or ``knowledge`` (default).
            subject: The exact key of a state record, e.g. ``host:staging``.
            tags: Labels, merged into an existing record on dedup.
            occurred_at: When the event happened (event time), if known.
            valid_from: When the fact starts to hold (valid time); defaults to ``occurred_at``
                or now.
            confidence: In [0, 1], four decimals on the wire.
            namespace: Tenancy key (``user:…``, ``agent:…``, ``project:…``).
            scope: Seed 000's Scope word.
            taint: Extra taint labels, added to the session's.
            epistemic_status: ``confirmed``, ``observed-once``, ``inferred`` or ``unknown``.
            clean: An importer of someone's existing data: control characters are replaced
                (and said in the result's ``cleaned``) instead of refused
                (:func:`~agent_memory.write.screen.screen`).
            evidence: Ids (``mem:…``) of records this Home holds that support it; a ``rule``
                needs at least one (seed 001).
            now: The clock (aware).

        Raises:
            ScreenError: The text fails the screen (a control character, a secret, a git
                conflict marker, a foreign frontmatter block, over 1 MiB); nothing is written.
            RecordError: Empty text, no source, a subject without ``kind=state`` (or the
                reverse), a naive datetime, a rule without evidence, an evidence id this
                Home does not hold, or any invalid field — nothing is written.
        """
        writer = self.writer
        stamp = writer.clock(now)
        screen_plain(subject=subject, tags=tags, source=source)
        screened = screen(text, field="text", policy=self.secrets, tags=tags, clean=clean)
        if not isinstance(source, str) or not source.strip():
            raise RecordError(
                "a memory needs a source (seed 000 §9)",
                field="source",
                hint="pass --source naming the session, file or conversation it came from",
            )
        labels = tuple(sorted({*writer.taint, *taint}))
        record = MemoryRecord.create(
            type=type,
            body=screened.text,
            created_at=stamp,
            tags=tuple(dict.fromkeys(screened.tags)),
            provenance=Provenance(kind=writer.source_kind, ref=source.strip(), agent=writer.address()),
            occurred_at=occurred_at,
            valid_from=valid_from,
            confidence=confidence,
            kind=Kind(kind) if kind is not None else Kind.KNOWLEDGE,
            subject=subject,
            namespace=namespace,
            scope=scope,
            taint=labels or None,
            epistemic_status=epistemic_status,
            evidence=self._evidence(evidence, type),
        )
        with writer.writing():
            duplicate, live_subject = writer.write_keys.lookup(record, writer.head())
            result = self.apply_plan(plan_write(record, duplicate, live_subject), stamp)
            return dataclasses.replace(result, cleaned=screened.cleaned) if screened.cleaned else result

    def apply_plan(self, plan: Plan, stamp: datetime) -> RememberResult:
        """Carry out ``plan`` (:func:`~agent_memory.write.plan.plan_write`'s) at ``stamp`` in ``writing``.

        A duplicate gets the new tags merged (a ``put`` of its next version) and a touch, and
        a new source is logged; a pending record is kept for review (a ``review`` event,
        verdict ``pending``); a create, supersede or dispute is executed with its intent.

        Raises:
            ProposalError, LifecycleError: The gate refuses the plan; nothing is written.
        """
        writer = self.writer
        record, other = plan.record, plan.other
        if plan.kind is PlanKind.DEDUP and other is not None:
            merged = tuple(dict.fromkeys([*other.tags, *record.tags]))
            if merged != other.tags:
                writer.write(
                    [other.evolve(tags=merged, updated_at=stamp)],
                    stamp,
                    action="put",
                    details={"reason": "tags merged"},
                )
            self.salience.touch([other.id], now=stamp)
            if record.provenance.ref != other.provenance.ref:
                # The record cannot change its sources after birth; the log keeps the new one.
                writer.log.append(
                    "put",
                    actor=writer.actor,
                    record_ids=(other.id,),
                    details={"reason": "deduped: seen again", "source": record.provenance.ref},
                    now=stamp,
                )
            return RememberResult(other.id, deduped=True, quarantined=bool(other.taint))
        if plan.kind is PlanKind.PENDING and other is not None:
            self.pending.add(writer.sign(record))
            writer.log.append(
                "review",
                actor=writer.actor,
                record_ids=(record.id, other.id),
                details={"verdict": "pending", "reason": plan.reason},
                now=stamp,
            )
            return RememberResult(record.id, pending=True, quarantined=bool(record.taint))
        writer.execute(plan, stamp)
        return RememberResult(
            record.id,
            superseded=other.id if plan.kind is PlanKind.SUPERSEDE and other else None,
            disputed_with=other.id if plan.kind is PlanKind.DISPUTE and other else None,
            quarantined=bool(record.taint),
        )

    def _evidence(self, evidence: Sequence[str], type: str) -> tuple[str, ...]:
        """Return the evidence ids, each checked to be a record of this Home (issue 24 item 5).

        Raises:
            RecordError: A rule without evidence, or an id that is malformed or not held here.
        """
        ids = tuple(dict.fromkeys(e.strip() if isinstance(e, str) else e for e in evidence))
        if type == "rule" and not ids:
            raise RecordError(
                "a rule needs at least one evidence record id",
                field="evidence",
                hint="name the records it rests on: --evidence mem:… (CLI), evidence=[…] (MCP, Python)",
            )
        for i, record_id in enumerate(ids):
            if not isinstance(record_id, str):
                raise RecordError("must be a record id (mem:…)", field=f"evidence[{i}]")
            try:
                self.writer.store.get(record_id)
            except KeyError:
                raise RecordError(
                    f"evidence {record_id} is not in this Home",
                    field=f"evidence[{i}]",
                    hint="agent-memory list shows the record ids this Home holds",
                ) from None
        return ids

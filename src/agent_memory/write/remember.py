"""`Remember`: the ``remember`` verb behind ``Memory.remember`` — text in, one planned write out.

The text and every plain field pass the screen before the writer lock is taken
(:func:`~agent_memory.write.screen.screen`, :func:`~agent_memory.records.fields.screen_plain`),
so a refusal writes nothing; under the lock the dedup and subject lookup finds the live record
it meets, :func:`~agent_memory.write.plan.plan_write` decides (create, dedup, supersede,
dispute, pending; DESIGN.md §9 "Write-time supersede") and :meth:`Remember.apply_plan` carries
the plan out through the Writer. Invariant: every record it writes is signed by the Home's key
and inherits the session's taint; a record is only ever created, never overwritten.

:meth:`Remember.remember_many` is the same verb for many texts (importers, issue 23): each
text gets exactly what ``remember`` would give it, in order, but the new records of a chunk
are written under one hold of the writer lock, as one ``put`` event, one store transaction
where the store has :class:`~agent_memory.stores.base.BatchPut`, one index and lookup update
and one checkpoint of the log, instead of one of each per record.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agent_memory.errors import AgentMemoryError, RecordError
from agent_memory.records.fields import screen_plain
from agent_memory.records.record import EpistemicStatus, Kind, MemoryRecord, Provenance, Scope
from agent_memory.stores.base import batch_get
from agent_memory.write.plan import Plan, PlanKind, RememberResult, live_key, plan_write, subject_key
from agent_memory.write.proposals import Proposal, ProposalKind, validate_proposals
from agent_memory.write.screen import screen

if TYPE_CHECKING:
    from agent_memory.governance.secrets import SecretsSettings
    from agent_memory.recall.salience import Salience
    from agent_memory.write.held import PendingRecords
    from agent_memory.write.writer import Writer

__all__ = ["BATCH", "DEFAULT_CONFIDENCE", "Remember"]

DEFAULT_CONFIDENCE = 0.9
"""Confidence of a record written without one (``remember`` and ``supersede``)."""
BATCH = 500
"""Texts :meth:`Remember.remember_many` writes per hold of the writer lock."""


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
        record, cleaned = self._prepare(
            text,
            source=source,
            type=type,
            kind=kind,
            subject=subject,
            tags=tags,
            occurred_at=occurred_at,
            valid_from=valid_from,
            confidence=confidence,
            namespace=namespace,
            scope=scope,
            taint=taint,
            epistemic_status=epistemic_status,
            clean=clean,
            evidence=evidence,
            stamp=stamp,
        )
        with writer.writing():
            duplicate, live_subject = writer.write_keys.lookup(record, writer.head())
            result = self.apply_plan(plan_write(record, duplicate, live_subject), stamp)
            return dataclasses.replace(result, cleaned=cleaned) if cleaned else result

    def remember_many(
        self,
        items: Iterable[Mapping[str, Any]],
        *,
        clean: bool = False,
        now: datetime | None = None,
        batch: int = BATCH,
    ) -> list[RememberResult | AgentMemoryError]:
        """Remember many texts, each exactly as :meth:`remember` would, writing them in batches.

        Every item is screened and planned as ``remember`` does it, in order, so a text met
        twice (in the Home or earlier in ``items``) is deduped and a state record supersedes
        or disputes the live one of its subject. The new records of up to ``batch`` items are
        written together under one hold of the writer lock: one ``put`` event naming them all,
        one store transaction where the store can (SQLite, PostgreSQL), one update of each index
        and of the lookup, one checkpoint of the log (module docstring). A crash loses at most the
        chunk being written, which was never acknowledged, as a crash inside ``remember`` does.

        Args:
            items: The keyword arguments of :meth:`remember` for each text, ``text`` and
                ``source`` required (``clean`` and ``now`` are given once, for all).
            clean: As for :meth:`remember` (an importer's column of the screen).
            now: The clock (aware): the record time of every new record.
            batch: Texts per hold of the writer lock, at least 1.

        Returns:
            One entry per item, in order: its :class:`RememberResult`, or the error that refused
            it (a :class:`ScreenError`, :class:`RecordError`, ``ProposalError``…); a refused
            item writes nothing and never stops the others. An evidence id must name a record
            written before the item's batch.

        Raises:
            ValueError: ``batch`` is below 1.
            StoreError, LogError: The store or the log failed; the batches before stay written.
        """
        if batch < 1:
            raise ValueError(f"batch must be at least 1, got {batch}")
        stamp = self.writer.clock(now)
        results: list[RememberResult | AgentMemoryError | None] = []
        todo: list[tuple[int, MemoryRecord, tuple[str, ...]]] = []
        for index, item in enumerate(items):
            try:
                record, cleaned = self._prepare_item(item, clean=clean, stamp=stamp)
            except AgentMemoryError as exc:
                results.append(exc)
                continue
            results.append(None)
            todo.append((index, record, cleaned))
            if len(todo) >= batch:
                self._write_batch(todo, stamp, results)
                todo = []
        if todo:
            self._write_batch(todo, stamp, results)
        return [r for r in results if r is not None]

    def _write_batch(
        self,
        todo: Sequence[tuple[int, MemoryRecord, tuple[str, ...]]],
        stamp: datetime,
        results: list[RememberResult | AgentMemoryError | None],
    ) -> None:
        """Plan each record against the Home and the batch, then write the new ones together.

        A record whose dedup or subject key meets a new record of the batch not written yet
        first has those written, so its lookup sees them exactly as a later ``remember`` would.
        """
        writer = self.writer
        new: dict[int, tuple[MemoryRecord, tuple[str, ...]]] = {}
        keys: set[object] = set()
        head = ""  # the log's head, read again only after a write (a batch's put names many ids)

        def flush() -> None:
            nonlocal head
            creates = []
            get = batch_get(writer.store, [record.id for record, _ in new.values()])
            for index, (record, cleaned) in new.items():
                proposal = Proposal(ProposalKind.CREATE, record=record)
                try:  # the gate, per record: one refusal never stops the others
                    validate_proposals(writer.store, [proposal], now=stamp, get=get)
                except AgentMemoryError as exc:
                    results[index] = exc
                    continue
                creates.append(record)
                results[index] = RememberResult(record.id, quarantined=bool(record.taint), cleaned=cleaned)
            if creates:
                writer.write(creates, stamp, action="put", details={"reason": "remembered in a batch"})
                head = writer.head()
            new.clear()
            keys.clear()

        with writer.writing():
            head = writer.head()
            for index, record, cleaned in todo:
                subject = subject_key(record)
                if live_key(record) in keys or (subject is not None and subject in keys):
                    flush()
                try:
                    duplicate, live_subject = writer.write_keys.lookup(record, head)
                    plan = plan_write(record, duplicate, live_subject)
                    if plan.kind is PlanKind.CREATE:
                        new[index] = (record, cleaned)
                        keys.update(k for k in (live_key(record), subject) if k is not None)
                        continue
                    flush()
                    try:
                        result = self.apply_plan(plan, stamp)
                    finally:
                        head = writer.head()
                except AgentMemoryError as exc:
                    results[index] = exc
                    continue
                results[index] = dataclasses.replace(result, cleaned=cleaned) if cleaned else result
            flush()

    def _prepare_item(
        self, item: Mapping[str, Any], *, clean: bool, stamp: datetime
    ) -> tuple[MemoryRecord, tuple[str, ...]]:
        """Return :meth:`_prepare` of one ``remember_many`` item.

        Raises:
            RecordError: Not a mapping, no ``text``, or a key ``remember`` does not take.
            ScreenError: As for :meth:`remember`.
        """
        if not isinstance(item, Mapping):
            raise RecordError(f"each item must be a mapping of remember's arguments, not {item!r:.60}")
        unknown = sorted(set(item) - _FIELDS)
        if unknown:
            raise RecordError(f"remember takes no argument {unknown[0]!r}", field=str(unknown[0]))
        if "text" not in item:
            raise RecordError("is required", field="text")
        fields = dict(item)
        return self._prepare(fields.pop("text"), **fields, clean=clean, stamp=stamp)

    def _prepare(
        self,
        text: str,
        *,
        source: str | None = None,
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
        clean: bool,
        evidence: Sequence[str] = (),
        stamp: datetime,
    ) -> tuple[MemoryRecord, tuple[str, ...]]:
        """Screen the text and fields and build the unsigned record; return it and what was cleaned.

        Raises:
            ScreenError, RecordError: As for :meth:`remember`; nothing is written.
        """
        writer = self.writer
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
        return record, screened.cleaned

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
                    details={
                        "reason": "deduped: seen again",
                        "source": record.provenance.ref,
                        "versions": [],
                    },
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


_FIELDS = frozenset(inspect.signature(Remember.remember).parameters) - {"self", "clean", "now"}
"""The keys an item of :meth:`Remember.remember_many` may have: ``remember``'s own arguments."""

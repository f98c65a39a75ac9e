"""`Memory`: the one porcelain that the CLI, the MCP server and Python users call.

A single composition root (:meth:`Memory.open` for a Home, :meth:`Memory.in_memory` for
tests) builds the store, the operation log, the search indexes, the salience sidecar and
the identity. Every operation takes an injectable clock (``now=``). All public operations
run under one re-entrant lock; writes to a Home also hold the Home's writer lock file, so
several processes may share a Home one write at a time (DESIGN.md §9 "Actors").
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from fg_agent_id import KeyPair

from agent_memory.errors import RecordError
from agent_memory.governance.actors import Actors
from agent_memory.governance.erasure.erase import ErasureMethods
from agent_memory.governance.erasure.receipt import ErasureReceipt
from agent_memory.governance.gate import Gate
from agent_memory.governance.porcelain import WithdrawalMethods
from agent_memory.governance.promotion import PromotionProposal, Promotions
from agent_memory.governance.review_book import ReviewBook
from agent_memory.governance.reviewing import ReviewMethods
from agent_memory.jobs.maintenance import Maintenance
from agent_memory.jobs.verdicts import review_stats
from agent_memory.log.base import OperationLog
from agent_memory.metamemory.service import MetamemoryService
from agent_memory.recall.salience import Salience
from agent_memory.recall.select import RecallResult
from agent_memory.recall.service import Recall
from agent_memory.records.fields import screen_plain
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.record import EpistemicStatus, Kind, MemoryRecord, Provenance, Scope
from agent_memory.records.signing import address_of
from agent_memory.search.catalog import IndexCatalog
from agent_memory.settings import RecallSettings
from agent_memory.stores.base import RecordStore
from agent_memory.stores.verified import verified_get
from agent_memory.transfer.exchange import ImportReport
from agent_memory.write.corrections import DEFAULT_CONFIDENCE, CorrectionMethods
from agent_memory.write.dedup import WriteKeys
from agent_memory.write.held import PendingRecords
from agent_memory.write.plan import (
    LIVE_STATES,
    Plan,
    PlanKind,
    RememberResult,
    execute,
    plan_write,
)
from agent_memory.write.plan import roll_forward as roll_intents_forward
from agent_memory.write.screen import screen
from agent_memory.write.writer import Writer

if TYPE_CHECKING:
    from agent_memory.home import Home

__all__ = ["Memory", "PendingRecords", "RememberResult"]

T = TypeVar("T")


class _OnWriter(Generic[T]):
    """A Memory attribute kept on its Writer (who acts), so a change reaches every service."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, memory: Memory, owner: type | None = None) -> T:
        return getattr(memory.writer, self.name)  # type: ignore[no-any-return]

    def __set__(self, memory: Memory, value: T) -> None:
        setattr(memory.writer, self.name, value)


class Memory(
    CorrectionMethods,
    WithdrawalMethods,
    ReviewMethods,
    ErasureMethods,
):
    """Remember, recall, supersede, dispute and resolve over one store, log and index catalog.

    ``recall`` delegates to :class:`~agent_memory.recall.service.Recall`;
    ``supersede``, ``resolve`` and ``archive`` from
    :class:`~agent_memory.write.corrections.CorrectionMethods`; withdrawal and
    reinstatement (``withdraw``, ``reinstate``, ``controls``) from
    :class:`~agent_memory.governance.porcelain.WithdrawalMethods`, ``review`` from
    :class:`~agent_memory.governance.reviewing.ReviewMethods`.

    Prefer :meth:`open` and :meth:`in_memory` to building one by hand.

    Args:
        store: Where record versions live.
        log: The operation log every write is recorded in.
        catalog: The search indexes (kept in step with the store).
        identity: Key pair that signs new records, or ``None`` for unsigned records.
        actor: Who acts (``owner`` for the CLI, ``agent:<name>`` for an MCP session).
        taint: Labels of the session (e.g. ``external``), inherited by every record it writes.
        source_kind: ``provenance.kind`` of records this session writes.
        salience: Touch sidecar; in memory when omitted.
        pending: Where records that wait for review are kept.
        writer_lock: Context manager factory held around every write (the Home's lock file).
        actors: Who holds which grants (``memory.toml`` ``[actors]``); by default the actor
            ``owner`` holds all and every other actor none.
        timezone: The Home's time zone (the local day of withdrawal ids); UTC by default.
        write_keys: Where ``remember`` finds duplicates and subjects' live records, and the
            log head left with no open intent is kept; in memory (filled by the first write)
            when omitted. :meth:`open` keeps a Home's in ``.cache/write-keys.sqlite``.
        recall_settings: How recall weighs age (``memory.toml`` ``[recall]``); by default a
            mild recency from valid time (:class:`~agent_memory.settings.RecallSettings`).
            :meth:`open` reads the Home's.
        home: The Home this Memory is over (:meth:`open` passes it), or ``None``: Home-only
            capabilities (maintenance proposals, views, git) are then unavailable.

    Attributes:
        writer: The :class:`~agent_memory.write.writer.Writer` every service writes through.
        home: The Home, or ``None`` for a Memory built without one.
        actor, actors, taint, source_kind: Who acts, kept on the Writer: setting one here
            changes it for every service.
        opened_at: When this Memory was made (``time.time()`` seconds): the files of its Home
            changed from then on are the ones :meth:`close` commits.
    """

    actor = _OnWriter[str]()
    actors = _OnWriter[Actors]()
    taint = _OnWriter[tuple[str, ...]]()
    source_kind = _OnWriter[str]()

    def __init__(
        self,
        store: RecordStore,
        log: OperationLog,
        catalog: IndexCatalog,
        *,
        identity: KeyPair | None = None,
        actor: str = "owner",
        taint: Iterable[str] = (),
        source_kind: str = "conversation",
        salience: Salience | None = None,
        pending: PendingRecords | None = None,
        writer_lock: Any = None,
        actors: Actors | None = None,
        timezone: tzinfo | None = None,
        write_keys: WriteKeys | None = None,
        recall_settings: RecallSettings | None = None,
        home: Home | None = None,
    ) -> None:
        self.opened_at = time.time()
        self.write_keys = write_keys or WriteKeys(store, read_all=catalog.readable_records)
        self.writer = Writer(
            store,
            log,
            catalog,
            self.write_keys,
            identity=identity,
            actor=actor,
            actors=actors,
            taint=taint,
            source_kind=source_kind,
            writer_lock=writer_lock,
        )
        self.store = store
        self.log = log
        self.catalog = catalog
        self.identity = identity
        catalog.sign_as(address_of(identity) if identity is not None else None)  # verified reads
        self.home: Home | None = home
        self.salience = salience or Salience()
        self.pending = pending or PendingRecords()
        self._lock = self.writer.lock
        self.review_book = ReviewBook(log)
        self._reviews = self.review_book  # the mixins' name until they become services
        self.zone = timezone or UTC
        self.gate = Gate(log, store)
        self._opened_seq = 0
        self.recall_settings = recall_settings or RecallSettings()
        self._recall = Recall(
            self.writer,
            gate=self.gate,
            reviews=self.review_book,
            salience=self.salience,
            settings=self.recall_settings,
            zone=self.zone,
        )
        self.metamemory = MetamemoryService(self.writer)
        self.maintenance = Maintenance(
            self.writer, gate=self.gate, salience=self.salience, home=home, zone=self.zone
        )
        self.promotions = Promotions(
            self.writer,
            gate=self.gate,
            reviews=self.review_book,
            home=home,
            zone=self.zone,
        )

    # ------------------------------------------------------------------ construction

    @classmethod
    def in_memory(cls, *, identity: KeyPair | None = None, **options: Any) -> Memory:
        """Return a Memory whose store, log and indexes live in memory (for tests and notebooks)."""
        from agent_memory.log.inmemory import MemoryLog
        from agent_memory.stores.inmemory import InMemoryStore

        store = InMemoryStore()
        return cls(store, MemoryLog(), IndexCatalog.in_memory(store), identity=identity, **options)

    @classmethod
    def open(cls, path: Any, **options: Any) -> Memory:
        """Open the Home at ``path`` (see :class:`agent_memory.home.Home`), finishing any interrupted write.

        Raises:
            ConfigError: ``path`` is not a Home.
        """
        from agent_memory.home import Home

        home = Home.open(path)
        options.setdefault("actor", home.settings.owner)
        options.setdefault("actors", home.settings.actors)
        options.setdefault("timezone", home.settings.zone)
        options.setdefault("recall_settings", home.settings.recall)
        store = home.store()
        catalog = IndexCatalog.for_home(home.cache_dir, store, search=home.settings.search)
        if options.get("write_keys") is None:
            options["write_keys"] = WriteKeys.for_home(
                home.cache_dir, store, read_all=catalog.readable_records
            )
        memory = cls(
            store,
            home.log(),
            catalog,
            identity=home.identity(),
            salience=Salience(home.salience_file()),
            pending=PendingRecords(home.root / "proposals" / "pending"),
            writer_lock=home.writer_lock,
            home=home,
            **options,
        )
        head = memory.log.last()
        memory._opened_seq = head.seq if head else 0
        memory.roll_forward()
        memory.finish_erasures()  # an erase killed before its receipt (issue 20 item 2)
        return memory

    # ------------------------------------------------------------------ writes

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
        stamp = self._clock(now)
        screen_plain(subject=subject, tags=tags, source=source)
        screened = screen(text, field="text", policy=self, tags=tags, clean=clean)
        body, tags = screened.text, screened.tags
        if not isinstance(source, str) or not source.strip():
            raise RecordError(
                "a memory needs a source (seed 000 §9)",
                field="source",
                hint="pass --source naming the session, file or conversation it came from",
            )
        labels = tuple(sorted({*self.taint, *taint}))
        kind_value = Kind(kind) if kind is not None else Kind.KNOWLEDGE
        supporting = self._evidence(evidence, type)
        record = MemoryRecord.create(
            type=type,
            body=body,
            created_at=stamp,
            tags=tuple(dict.fromkeys(tags)),
            provenance=Provenance(kind=self.source_kind, ref=source.strip(), agent=self._address()),
            occurred_at=occurred_at,
            valid_from=valid_from,
            confidence=confidence,
            kind=kind_value,
            subject=subject,
            namespace=namespace,
            scope=scope,
            taint=labels or None,
            epistemic_status=epistemic_status,
            evidence=supporting,
        )
        with self._writing():
            duplicate, live_subject = self.write_keys.lookup(record, self._head())
            plan = plan_write(record, duplicate, live_subject)
            result = self._apply_plan(plan, stamp)
            return dataclasses.replace(result, cleaned=screened.cleaned) if screened.cleaned else result

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
                self.store.get(record_id)
            except KeyError:
                raise RecordError(
                    f"evidence {record_id} is not in this Home",
                    field=f"evidence[{i}]",
                    hint="agent-memory list shows the record ids this Home holds",
                ) from None
        return ids

    def _apply_plan(self, plan: Plan, stamp: datetime) -> RememberResult:
        record, other = plan.record, plan.other
        quarantined = bool(record.taint)
        if plan.kind is PlanKind.DEDUP and other is not None:
            merged = tuple(dict.fromkeys([*other.tags, *record.tags]))
            if merged != other.tags:
                self._write(
                    [other.evolve(tags=merged, updated_at=stamp)],
                    stamp,
                    action="put",
                    details={"reason": "tags merged"},
                )
            self.salience.touch([other.id], now=stamp)
            if record.provenance.ref != other.provenance.ref:
                # The record cannot change its sources after birth; the log keeps the new one.
                self.log.append(
                    "put",
                    actor=self.actor,
                    record_ids=(other.id,),
                    details={"reason": "deduped: seen again", "source": record.provenance.ref},
                    now=stamp,
                )
            return RememberResult(other.id, deduped=True, quarantined=bool(other.taint))
        if plan.kind is PlanKind.PENDING and other is not None:
            self.pending.add(self._signed(record))
            self.log.append(
                "review",
                actor=self.actor,
                record_ids=(record.id, other.id),
                details={"verdict": "pending", "reason": plan.reason},
                now=stamp,
            )
            return RememberResult(record.id, pending=True, quarantined=quarantined)
        signed = Plan(plan.kind, self._signed(record), other, plan.reason)
        written = execute(signed, self.store, self.log, actor=self.actor, now=stamp, sign=self._signed)
        self._after_write(written)
        return RememberResult(
            record.id,
            superseded=other.id if plan.kind is PlanKind.SUPERSEDE and other else None,
            disputed_with=other.id if plan.kind is PlanKind.DISPUTE and other else None,
            quarantined=quarantined,
        )

    def import_file(
        self,
        memory_file: MemoryFile,
        *,
        verify: bool = True,
        trusted_signers: Iterable[str] = (),
        path: str | None = None,
        now: datetime | None = None,
    ) -> ImportReport:
        """Import a MemoryFile under the writer lock, log it, and keep the caches in step.

        See :func:`~agent_memory.transfer.exchange.import_memory_file` (put what the Home
        lacks, tombstones included; erased ids stay erased). The Home's own key and its
        ``memory.toml [trust]`` signers are trusted besides ``trusted_signers``. One
        ``import`` event names what was added and erased.

        Raises:
            SignatureError, RecordError, ScreenError, LogError: As for
                ``import_memory_file``; nothing is written.
        """
        from agent_memory.governance.secrets import policy_of
        from agent_memory.transfer.exchange import import_memory_file

        stamp = self._clock(now)
        home = getattr(self, "home", None)
        trusted = {
            *trusted_signers,
            *(home.settings.trusted_signers if home is not None else ()),
            *([self._address()] if self.identity is not None else []),
        }
        with self._writing():
            report = import_memory_file(
                self.store,
                memory_file,
                verify=verify,
                trusted_signers=trusted,
                path=path,
                log=self.log,
                actor=self.actor,
                secrets=policy_of(self),
                sign=self.writer.sign,
                now=stamp,
            )
            if report.erased:
                self.catalog.erased(report.erased)
            touched = [
                *report.added,
                *report.superseded.values(),
                *report.disputed.values(),
                *report.tombstones,
            ]
            self._after_write([self.store.get(record_id) for record_id in dict.fromkeys(touched)])
            if report.erased:
                self.write_keys.refresh(report.erased)
            self.log.append(
                "import",
                actor=self.actor,
                record_ids=tuple([*report.added, *report.tombstones, *report.erased]),
                details={
                    "path": path,
                    "format": "memory-file",
                    "verified": report.verified,
                    "skipped": report.skipped,
                    "tainted": report.tainted,
                    "digests": report.digests,
                    "controls": report.controls_added,
                    "controls_refused": report.controls_refused,
                    "tombstones": report.tombstones,
                    "erased": report.erased,
                    "erased_here": report.erased_here,
                },
                now=stamp,
            )
            return report

    def erase(self, record_ids: Iterable[str], **options: Any) -> ErasureReceipt:
        """Erase records irreversibly; see :meth:`.governance.erasing.ErasureMethods.erase`.

        A successful erase reads the write keys of its records again for its receipt; when it
        fails part way, they are read again here, so no digest of an erased body stays in
        ``.cache/write-keys.sqlite``.
        """
        named = [*record_ids]
        try:
            return super().erase(named, **options)
        except BaseException:
            self.write_keys.refresh([*named, *options.get("cascade", ())])
            raise

    def roll_forward(self, *, now: datetime | None = None) -> int:
        """Finish writes a crash interrupted (logged intents); return how many were closed.

        The log is read only when the write keys do not record its head as settled, and
        then only after the last head they recorded as settled, when that entry is still in
        the log with the same digest (the log is hash-chained, so it pins what came before).
        """
        with self._writing():
            if self.write_keys.settled(self._head()):
                return 0  # nothing was left open: the log need not be read (see write_keys)
            since = self.write_keys.settled_seq(self.log)
            closed = roll_intents_forward(
                self.store,
                self.log,
                actor=self.actor,
                now=self._clock(now),
                since_seq=since,
                sign=self.writer.sign,
            )
            self.write_keys.settle(self._head())
            if closed:
                self.catalog.refresh(force=True)
            return closed

    def close(self) -> None:
        """Persist derived state (index bookkeeping), close the indexes, and commit the Home's writes.

        When this Memory is over a Home that is a git repository and its log moved since
        :meth:`open`, the files it wrote are committed, and only those: no file changed by
        another hand before it opened (issue 18 case 5). The message names the actions
        logged, e.g. ``agent-memory: put x3, supersede``; see :meth:`Home.autocommit
        <agent_memory.home.Home.autocommit>`, which never fails a write that was made.
        """
        with self._lock:
            self.salience.flush()
            self.catalog.close()
            home = self.home
            head = self.log.last() if home is not None else None
            moved = head is not None and head.seq > self._opened_seq
            # Only a Memory that logged something, in a git repository, reads the log for the
            # commit message (a long log costs seconds) and takes the writer lock to commit.
            if home is not None and moved and (home.root / ".git").is_dir():
                from agent_memory.home import commit_message

                with self._writing():
                    message = commit_message(self.log, since_seq=self._opened_seq)
                    if message:
                        home.autocommit(message, since=self.opened_at)
            self.write_keys.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ promotion (old names, one release)

    def propose_promotion(
        self,
        record_id: str,
        *,
        target: str = "conventions",
        rule_text: str | None = None,
        reason: str,
        now: datetime | None = None,
    ) -> PromotionProposal:
        """Old spelling of :meth:`memory.promotions.propose <.Promotions.propose>`, kept one release."""
        return self.promotions.propose(record_id, target=target, rule_text=rule_text, reason=reason, now=now)

    def accept_promotion(
        self, proposal_id: str, *, reason: str, now: datetime | None = None
    ) -> PromotionProposal:
        """Old spelling of :meth:`memory.promotions.accept <.Promotions.accept>`, kept one release."""
        return self.promotions.accept(proposal_id, reason=reason, now=now)

    def reject_promotion(
        self, proposal_id: str, *, reason: str, now: datetime | None = None
    ) -> PromotionProposal:
        """Old spelling of :meth:`memory.promotions.reject <.Promotions.reject>`, kept one release."""
        return self.promotions.reject(proposal_id, reason=reason, now=now)

    # ------------------------------------------------------------------ reads

    def recall(
        self,
        query: str,
        *,
        budget_tokens: int = 2000,
        include_history: bool = False,
        include_archived: bool = False,
        as_of: datetime | None = None,
        valid_at: datetime | None = None,
        namespace: str | None = None,
        k: int | None = None,
        now: datetime | None = None,
        touch: bool = True,
    ) -> RecallResult:
        """Return the records that best answer ``query`` within ``budget_tokens``; see :meth:`.Recall.recall`.

        Raises:
            RecordError: A budget below 1, ``k`` below 1, or a naive datetime.
        """
        return self._recall.recall(
            query,
            budget_tokens=budget_tokens,
            include_history=include_history,
            include_archived=include_archived,
            as_of=as_of,
            valid_at=valid_at,
            namespace=namespace,
            k=k,
            now=now,
            touch=touch,
        )

    def get(self, record_id: str) -> MemoryRecord:
        """Return the latest version of a record, once it verifies (the one verified read path).

        Raises:
            RecordNotFound: No such record.
            StoreError: Its note cannot be read, or its id does not match its content.
            SignatureError: Its signature does not verify, or was removed
                (:func:`~agent_memory.stores.verified.check_version`).
        """
        return verified_get(self.store, record_id, home_signer=self._address())

    def history(self, record_id: str) -> list[MemoryRecord]:
        """Return every version of a record, oldest first."""
        return self.store.history(record_id)

    def status(self) -> dict[str, Any]:
        """Return counts by state, type and kind, open disputes, pending records and index status."""
        with self._lock:
            records = self.catalog.readable_records()
            disputes = {tuple(sorted(r.transition.sides)) for r in records if r.transition is not None}
            return {
                "records": len(records),
                "by_state": _count(r.state.value for r in records),
                "by_type": _count(r.type.value for r in records),
                "by_kind": _count(r.effective_kind.value for r in records),
                "open_disputes": len(disputes),
                "pending": len(self.pending.list()),
                "quarantined": sum(
                    1
                    for r in records
                    if r.state in LIVE_STATES and self._reviews.state_of(r) == "quarantined"
                ),
                "agent": self._address(),
                "maintenance": review_stats(self.log),
                "search": self.catalog.describe(),
                "indexes": self.catalog.status(),
                "unreadable": [str(problem) for problem in self.catalog.problems()],
            }

    # ------------------------------------------------------------------ internals

    # Shims for the mixins not yet turned into services (issue 17 item 2); new code uses ``writer``.

    def _clock(self, now: datetime | None) -> datetime:
        return self.writer.clock(now)

    def _address(self) -> str | None:
        return self.writer.address()

    def _signed(self, record: MemoryRecord) -> MemoryRecord:
        return self.writer.sign(record)

    def _writing(self) -> AbstractContextManager[None]:
        return self.writer.writing()

    def _write(
        self,
        versions: list[MemoryRecord],
        stamp: datetime,
        *,
        action: str,
        details: dict[str, Any] | None = None,
    ) -> None:
        self.writer.write(versions, stamp, action=action, details=details)

    def _after_write(self, versions: Sequence[MemoryRecord]) -> None:
        self.writer.after_write(versions)

    def _head(self) -> str:
        return self.writer.head()


def _count(values: Iterable[str]) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))

"""`Memory`: the one facade that the CLI, the MCP server and Python users call.

A single composition root (:meth:`Memory.open` for a Home, :meth:`Memory.in_memory` for
tests; :func:`agent_memory.connect.connect` for a store URL) builds the store, the operation
log, the search indexes, the salience sidecar and the identity, and one
:class:`~agent_memory.write.writer.Writer` over them. Every verb lives in a service that takes
the Writer and the parts it needs in its constructor (built on first use, under the Writer's
lock); ``Memory`` composes them: the core verbs are one-line delegations with the service
method's full signature and docstring (:func:`~agent_memory.services.delegate`), the other
families are attributes (``memory.maintenance``, ``memory.promotions``, ``memory.metamemory``).
Every operation takes an injectable clock (``now=``). All public operations run under one
re-entrant lock; writes to a Home also hold the Home's writer lock file, so several processes
may share a Home one write at a time (DESIGN.md §9 "Actors").
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, tzinfo
from typing import TYPE_CHECKING, Any

from fg_agent_id import KeyPair

from agent_memory.governance.actors import Actors
from agent_memory.governance.erasure.journal import JOURNAL_FOLDER
from agent_memory.governance.gate import Gate
from agent_memory.governance.promotion import Promotions
from agent_memory.governance.review_book import ReviewBook
from agent_memory.governance.reviewing import Reviews
from agent_memory.governance.secrets import SecretsSettings
from agent_memory.governance.withdrawals import Withdrawals
from agent_memory.log.base import OperationLog
from agent_memory.recall.salience import Salience
from agent_memory.recall.service import Recall
from agent_memory.records.record import MemoryRecord
from agent_memory.search.catalog import IndexCatalog
from agent_memory.services import Lazy, OnWriter, Service, delegate
from agent_memory.settings import RecallSettings
from agent_memory.stores.base import RecordStore
from agent_memory.stores.verified import Signers, verified_history
from agent_memory.write.corrections import Corrections
from agent_memory.write.dedup import WriteKeys
from agent_memory.write.held import PendingRecords
from agent_memory.write.journal import JOURNAL_FOLDER as BATCH_FOLDER
from agent_memory.write.plan import LIVE_STATES, RememberResult
from agent_memory.write.remember import Remember
from agent_memory.write.writer import Writer

if TYPE_CHECKING:
    from agent_memory.governance.erasure.erase import Erasure
    from agent_memory.home import Home
    from agent_memory.jobs.maintenance import Maintenance
    from agent_memory.jobs.review_flow import ProposalReview
    from agent_memory.metamemory.service import MetamemoryService
    from agent_memory.transfer.imports import Imports

__all__ = ["Memory", "PendingRecords", "RememberResult"]


def _build_maintenance(m: Memory) -> Maintenance:
    from agent_memory.jobs.maintenance import Maintenance

    return Maintenance(m.writer, gate=m.gate, salience=m.salience, home=m.home, zone=m.zone)


def _build_proposals(m: Memory) -> ProposalReview:
    from agent_memory.jobs.review_flow import ProposalReview

    return ProposalReview(m.writer, gate=m.gate, book=m.review_book, shelf=m.maintenance.shelf, home=m.home)


def _build_metamemory(m: Memory) -> MetamemoryService:
    from agent_memory.metamemory.service import MetamemoryService

    return MetamemoryService(m.writer)


def _build_erasure(m: Memory) -> Erasure:
    from agent_memory.governance.erasure.erase import Erasure

    return Erasure(
        m.writer, pending=m.pending, salience=m.salience, zone=m.zone, home=m.home, secrets=m.secrets
    )


def _build_imports(m: Memory) -> Imports:
    from agent_memory.transfer.imports import Imports

    return Imports(m.writer, erasure=m.erasure, secrets=m.secrets)


class Memory:
    """Remember, recall, supersede, dispute and resolve over one store, log and index catalog.

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
        write_keys: The dedup and subject lookup (:class:`~agent_memory.write.dedup.WriteKeys`);
            in memory when omitted; :meth:`open` keeps a Home's in ``.cache/write-keys.sqlite``.
        recall_settings: How recall weighs age (``memory.toml`` ``[recall]``); by default a mild
            recency from valid time (:class:`~agent_memory.settings.RecallSettings`).
        home: The Home this Memory is over (:meth:`open` passes it), or ``None``: Home-only
            capabilities (maintenance branches, views, git, distill) are then unavailable.
        trusted_signers: ``amp:key:`` addresses besides ``identity`` and ``memory.toml [trust]``
            whose records every reader takes; with an ``identity``, a record signed by any
            other key, or unsigned, is refused (:func:`~agent_memory.stores.verified.check_version`).

    Attributes:
        writer: The :class:`~agent_memory.write.writer.Writer` every service writes through.
        home: The Home, or ``None`` for a Memory built without one.
        actor, actors, taint, source_kind: Who acts, kept on the Writer (a change reaches every service).
        opened_at: When this Memory was made (``time.time()``); :meth:`close` commits what changed since.
        gate, review_book: The withdrawal gate and the review states, both folded from the log.
        reviews, withdrawals, erasure, maintenance, proposals, promotions, metamemory: Each
            family's service (``memory.reviews.accept_pending(…)``, ``memory.withdrawals.forget(…)``,
            ``memory.maintenance.consolidate()``, ``memory.proposals.accept(…)``; docs/architecture.md).
    """

    actor = OnWriter[str]()
    actors = OnWriter[Actors]()
    taint = OnWriter[tuple[str, ...]]()
    source_kind = OnWriter[str]()

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
        trusted_signers: Iterable[str] = (),
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
        trusted = {*trusted_signers, *(home.settings.trusted_signers if home is not None else ())}
        # Verified reads: the Home's key and the signers memory.toml trusts.
        catalog.sign_as(Signers(self.writer.address(), frozenset(trusted)))
        self.home: Home | None = home
        self.salience = salience or Salience()
        self.pending = pending or PendingRecords()
        self._lock = self.writer.lock
        self.zone = timezone or UTC
        self._opened_seq = 0
        self.recall_settings = recall_settings or RecallSettings()
        self.secrets = home.settings.secrets if home is not None else SecretsSettings()

    # ------------------------------------------------------------------ services

    # The Home's checkpoint file: nothing is exposed while the log is cut below it (issue 19).
    gate = Service(
        lambda m: Gate(m.log, m.store, witness=m.home.witness(m.identity) if m.home is not None else None)
    )
    review_book = Service(lambda m: ReviewBook(m.log))
    _remember = Service(
        lambda m: Remember(m.writer, salience=m.salience, pending=m.pending, secrets=m.secrets)
    )
    _corrections = Service(lambda m: Corrections(m.writer, secrets=m.secrets))
    _recall = Service(
        lambda m: Recall(
            m.writer,
            gate=m.gate,
            reviews=m.review_book,
            salience=m.salience,
            settings=m.recall_settings,
            zone=m.zone,
        )
    )
    reviews = Service(
        lambda m: Reviews(m.writer, book=m.review_book, pending=m.pending, remember=m._remember, gate=m.gate)
    )
    withdrawals = Service(
        lambda m: Withdrawals(m.writer, gate=m.gate, pending=m.pending, zone=m.zone, home=m.home)
    )
    maintenance = Service(_build_maintenance)
    proposals = Service(_build_proposals)
    promotions = Service(
        lambda m: Promotions(m.writer, gate=m.gate, reviews=m.review_book, home=m.home, zone=m.zone)
    )
    metamemory = Service(_build_metamemory)
    erasure = Service(_build_erasure)
    _imports = Service(_build_imports)

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
        if any((home.cache_dir / BATCH_FOLDER).glob("*.json")):
            memory.writer.finish_batches(home.cache_dir / BATCH_FOLDER)  # an accept or revert killed mid-way
        if any((home.cache_dir / JOURNAL_FOLDER).glob("*.json")):
            memory.erasure.finish_erasures()  # an erase killed before its receipt (issue 20 item 2)
        return memory

    # ------------------------------------------------------------------ the core verbs

    remember = delegate(Remember.remember, "_remember")
    remember_many = delegate(Remember.remember_many, "_remember")
    supersede = delegate(Corrections.supersede, "_corrections")
    resolve = delegate(Corrections.resolve, "_corrections")
    archive = delegate(Corrections.archive, "_corrections")
    recall = delegate(Recall.recall, "_recall")
    withdraw = delegate(Withdrawals.withdraw, "withdrawals")
    reinstate = delegate(Withdrawals.reinstate, "withdrawals")
    controls = delegate(Withdrawals.controls, "withdrawals")
    review = delegate(Reviews.review, "reviews")
    if TYPE_CHECKING:
        erase = delegate(Erasure.erase, "erasure")
        import_file = delegate(Imports.import_file, "_imports")
    else:
        erase = Lazy("agent_memory.governance.erasure.erase:Erasure.erase", "erasure")
        import_file = Lazy("agent_memory.transfer.imports:Imports.import_file", "_imports")
    roll_forward = delegate(Writer.roll_forward, "writer")
    get = delegate(Writer.get, "writer")

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
                from agent_memory.sync.commits import commit_message

                with self.writer.writing():
                    message = commit_message(self.log, since_seq=self._opened_seq)
                    if message:
                        home.autocommit(message, since=self.opened_at)
            self.write_keys.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reads

    def history(self, record_id: str) -> list[MemoryRecord]:
        """Return every version of a record, oldest first, once each verifies (the verified read path).

        Raises:
            RecordNotFound: No such record.
            StoreError: A note cannot be read, or its id does not match its content.
            SignatureError: A version does not verify, lost its signature or is signed by a key
                this Home does not trust (the message names the version;
                :func:`~agent_memory.stores.verified.verified_history`).
        """
        signers = self.catalog.signers
        return verified_history(self.store, record_id, home_signer=signers.home, trusted=signers.trusted)

    def status(self) -> dict[str, Any]:
        """Return counts by state, type and kind, open disputes, pending records and index status."""
        with self._lock:
            # One pass that keeps no record: a Home of 100,000 records is never held at once.
            states: Counter[str] = Counter()
            types: Counter[str] = Counter()
            kinds: Counter[str] = Counter()
            disputes: set[tuple[str, ...]] = set()
            quarantined = 0
            for r in self.catalog.each_readable():
                states[r.state.value] += 1
                types[r.type.value] += 1
                kinds[r.effective_kind.value] += 1
                if r.transition is not None:
                    disputes.add(tuple(sorted(r.transition.sides)))
                if r.state in LIVE_STATES and self.review_book.state_of(r) == "quarantined":
                    quarantined += 1
            return {
                "records": sum(states.values()),
                "by_state": _count(states),
                "by_type": _count(types),
                "by_kind": _count(kinds),
                "open_disputes": len(disputes),
                "pending": len(self.pending.list()),
                "quarantined": quarantined,
                "agent": self.writer.address(),
                "maintenance": _review_stats(self.log),
                "search": self.catalog.describe(),
                "indexes": self.catalog.status(),
                "unreadable": [str(problem) for problem in self.catalog.problems()],
            }


def _count(counts: Counter[str]) -> dict[str, int]:
    return dict(sorted(counts.items()))


def _review_stats(log: OperationLog) -> dict[str, Any]:
    from agent_memory.jobs.verdicts import review_stats

    return review_stats(log)

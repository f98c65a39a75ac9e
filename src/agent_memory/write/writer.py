"""`Writer`: the one way a service changes what a memory holds (DESIGN.md §9 "Actors", "Writes").

Every write of every service goes through one Writer: it holds the lock (the Memory's
re-entrant lock and, over a Home, the Home's writer lock file), reads the clock, signs what
it writes with the Home's key, puts the versions and appends their log event, and keeps the
derived caches (the search indexes and the dedup/subject lookup) in step with the store. It
also holds who acts (the actor, their grants, the session's taint and source kind), the one
place every service reads them from, so ``memory.actor = …`` reaches every service.

Invariant: a version is put only inside :meth:`Writer.writing`, and every put is followed, in
the same held lock, by its log event and the caches' update (:meth:`Writer.write`, or
:meth:`Writer.after_write` for a caller that appends its own event).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import Any

from fg_agent_id import KeyPair

from agent_memory.errors import RecordError
from agent_memory.governance.actors import Actors
from agent_memory.log.base import OperationLog
from agent_memory.records.record import MemoryRecord
from agent_memory.records.signing import address_of, sign_record
from agent_memory.records.wire import truncate_ms, utc_now
from agent_memory.search.catalog import IndexCatalog
from agent_memory.stores.base import BatchPut, RecordStore
from agent_memory.write.dedup import WriteKeys
from agent_memory.write.plan import Plan, execute, roll_forward

__all__ = ["Writer"]


class Writer:
    """Lock · clock · sign · put + log · caches in step, over one store, log and index catalog.

    Args:
        store: Where record versions live.
        log: The operation log every write is recorded in.
        catalog: The search indexes, told of every version written.
        write_keys: The dedup and subject lookup, told of every version written.
        identity: Key pair that signs new versions, or ``None`` for unsigned ones.
        actor: Who acts; named in every event this Writer appends.
        actors: Who holds which grants (``memory.toml`` ``[actors]``); by default the actor
            ``owner`` holds all and every other actor none.
        taint: Labels of the session (e.g. ``external``), inherited by every record it writes.
        source_kind: ``provenance.kind`` of the records this session remembers.
        writer_lock: Factory of the context manager held around every write (a Home's lock
            file), or ``None`` for none.

    Attributes:
        lock: The re-entrant lock every public operation of the Memory holds (reads too).
        actor, actors, taint, source_kind: As given; services read them at each call.
    """

    def __init__(
        self,
        store: RecordStore,
        log: OperationLog,
        catalog: IndexCatalog,
        write_keys: WriteKeys,
        *,
        identity: KeyPair | None = None,
        actor: str = "owner",
        actors: Actors | None = None,
        taint: Iterable[str] = (),
        source_kind: str = "conversation",
        writer_lock: Callable[[], AbstractContextManager[Any]] | None = None,
    ) -> None:
        self.store = store
        self.log = log
        self.catalog = catalog
        self.write_keys = write_keys
        self.identity = identity
        self.actor = actor
        self.actors = actors or Actors()
        self.taint = tuple(sorted(set(taint)))
        self.source_kind = source_kind
        self.lock = threading.RLock()
        self._writer_lock = writer_lock

    def clock(self, now: datetime | None) -> datetime:
        """Return ``now`` truncated to milliseconds, or the current UTC time when ``None``.

        Raises:
            RecordError: ``now`` is naive (field ``now``).
        """
        if now is None:
            return utc_now()
        if now.tzinfo is None or now.utcoffset() is None:
            raise RecordError("naive datetime: a time zone is required", field="now")
        return truncate_ms(now)

    def address(self) -> str | None:
        """Return the agent address of the signing identity (``None`` without one)."""
        return address_of(self.identity) if self.identity is not None else None

    def sign(self, record: MemoryRecord) -> MemoryRecord:
        """Return ``record`` signed with the identity (unchanged without one)."""
        return sign_record(record, self.identity) if self.identity is not None else record

    def sign_unsigned(self, versions: Sequence[MemoryRecord]) -> list[MemoryRecord]:
        """Sign every version not signed yet; a version signed already (by any signer) keeps its signature."""
        return [v if v.signature else self.sign(v) for v in versions]

    def get(self, record_id: str) -> MemoryRecord:
        """Return the latest version of ``record_id`` through the verified read path (``Memory.get``).

        Raises:
            RecordNotFound: No such record.
            StoreError: Its note cannot be read, or its id does not match its content.
            SignatureError: It does not verify (:func:`~agent_memory.stores.verified.check_version`).
        """
        from agent_memory.stores.verified import verified_get

        catalog = self.catalog
        return verified_get(
            self.store, record_id, home_signer=catalog.signers.home, trusted=catalog.signers.trusted
        )

    def check(self, record: MemoryRecord, *, path: str | None = None) -> None:
        """Check a version against the verified read path's rules for this Home (its key and trust).

        Raises:
            SignatureError: As :func:`~agent_memory.stores.verified.check_version`.
        """
        self.catalog.signers.check(record, path=path)

    def admit(
        self, versions: Sequence[MemoryRecord], *, path: str | None = None, copies: Iterable[str] = ()
    ) -> None:
        """Pass the gate for versions a door read from outside the write path (a proposal, a revert).

        ``accept`` and ``revert`` of maintenance proposals and ``accept`` of a pending record
        write versions the write path did not build from a caller's words, and sign them with
        the Home's key; so before any is put (DESIGN.md §5 "One gate in"; issue 18): the held
        version of every record they move must verify (a note edited by hand is never moved,
        and so never signed again by the Home), and the body of every record new to the store
        passes the screen of a person's write (:func:`~agent_memory.write.screen.screen`),
        but for ``copies``: new records a revert makes to restore, word for word, a record
        read through the verified read path, whose text passed the gate when it came in.
        Call it inside :meth:`writing`, before the first put.

        Raises:
            SignatureError, StoreError: A held record does not verify or cannot be read.
            ScreenError: A new record's body holds a hazard (field ``body``, the record named).
        """
        from agent_memory.errors import RecordNotFound
        from agent_memory.write.screen import screen

        restoring = set(copies)
        for version in versions:
            if version.redacted:
                continue
            try:
                held = self.store.get(version.id)
            except RecordNotFound:
                if version.id not in restoring:
                    screen(version.body, field="body", record_id=version.id, path=path)
                continue
            self.check(held, path=path)

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the lock, the Home's writer lock and the lookup's settling of the log head for one write."""
        locked = self._writer_lock() if self._writer_lock else nullcontext()
        with self.lock, locked, self.write_keys.settling(self.head):
            yield

    def write(
        self,
        versions: Sequence[MemoryRecord],
        stamp: datetime,
        *,
        action: str,
        details: dict[str, Any] | None = None,
    ) -> list[int]:
        """Sign, put and log ``versions`` as one ``action`` event, then bring the caches in step.

        The event's details are ``details`` plus ``"versions"``: the version number of each put.
        Call inside :meth:`writing`. Returns those version numbers.
        """
        signed = self.sign_unsigned(versions)
        if len(signed) > 1 and isinstance(self.store, BatchPut):
            numbers = list(self.store.put_many(signed))  # one transaction for all (issue 23)
        else:
            numbers = [self.store.put(version) for version in signed]
        self.log.append(
            action,
            actor=self.actor,
            record_ids=tuple(v.id for v in signed),
            details={**(details or {}), "versions": numbers},
            now=stamp,
        )
        self.after_write(signed)
        return numbers

    def execute(self, plan: Plan, stamp: datetime) -> list[MemoryRecord]:
        """Sign ``plan``'s record, carry the plan out with its intent, then bring the caches in step.

        Call inside :meth:`writing`. Returns the versions written (see
        :func:`~agent_memory.write.plan.execute`, whose refusals it raises before any write).
        """
        signed = Plan(plan.kind, self.sign(plan.record), plan.other, plan.reason)
        written = execute(signed, self.store, self.log, actor=self.actor, now=stamp, sign=self.sign)
        self.after_write(written)
        return written

    def after_write(self, versions: Sequence[MemoryRecord]) -> None:
        """Tell the indexes and the dedup lookup of versions just put (the latest of each id wins)."""
        latest = {v.id: v for v in versions}
        self.catalog.written(latest.values())
        self.write_keys.wrote(latest.values(), self.head())

    def head(self) -> str:
        """Return the log head as ``"seq:digest"`` (``"0"`` for an empty log)."""
        head = self.log.last()
        return f"{head.seq}:{head.digest}" if head else "0"

    def finish_batches(self, folder: Path, *, now: datetime | None = None) -> list[str]:
        """Finish the journaled batches a killed process left in ``folder``; return their keys.

        See :func:`~agent_memory.write.journal.finish_batches` (an accept or revert of a
        maintenance proposal, finished on the next open, never rolled back).

        Raises:
            StoreError: A journal is unreadable, or a put fails (the journal stays).
        """
        from agent_memory.write.journal import finish_batches

        if not folder.is_dir() or not any(folder.glob("*.json")):
            return []
        with self.writing():
            finished = finish_batches(
                folder, self.store, self.log, actor=self.actor, now=self.clock(now), written=self.after_write
            )
            if finished:
                self.catalog.refresh(force=True)
            return finished

    def roll_forward(self, *, now: datetime | None = None) -> int:
        """Finish writes a crash interrupted (logged intents); return how many were closed.

        The log is read only when the write keys do not record its head as settled, and
        then only after the last head they recorded as settled, when that entry is still in
        the log with the same digest (the log is hash-chained, so it pins what came before).
        See :func:`~agent_memory.write.plan.roll_forward`.
        """
        with self.writing():
            if self.write_keys.settled(self.head()):
                return 0  # nothing was left open: the log need not be read (see write_keys)
            closed = roll_forward(
                self.store,
                self.log,
                actor=self.actor,
                now=self.clock(now),
                since_seq=self.write_keys.settled_seq(self.log),
                sign=self.sign,
            )
            self.write_keys.settle(self.head())
            if closed:
                self.catalog.refresh(force=True)
            return closed

"""`Freshness`: keeps a Home's holdings in step with its store, cheaply (DESIGN.md §9 "Freshness").

The store gives a cheap *version token* per record (for a file store the latest note file's
name, size and change time: a ``stat``, not a read). :meth:`Freshness.refresh` compares the
tokens with what each :class:`~.holdings.Holding` holds and reads only the records whose
token moved, once each, whatever the number of indexes. A record that no longer parses or
verifies is removed from every index (it stops matching by its old text) and reported; a
record gone from the store is removed; an erasure tombstone is held as "not indexed".

Between full comparisons a *signal*
(:func:`~agent_memory.stores.file_tokens.change_signal`: the notes folder's change time and
the log files' sizes and change times) lets a refresh return at once: a new or removed note
folder, or a write by any process that logs, moves it. An edit in place moves neither, so a full
comparison also runs every :data:`FULL_CHECK_SECONDS`, and in every new process at its
first refresh. Where a full comparison takes long (a ``stat`` per note: seconds at 100,000
notes on a busy disk), the next one waits until the checks take at most
:data:`FULL_CHECK_SHARE` of the time, so recall never spends most of its time walking notes.
A write of this process moves the signal too; :meth:`Freshness.written` takes its new
value as quiet.

A store that numbers its writes (a :class:`~agent_memory.stores.base.ChangeFeed`: SQLite,
PostgreSQL, in-memory) needs neither: each refresh asks it for the records written after
the mark it last saw (one indexed query; nothing when nothing changed) and reads only those.
Its counter moves with every write of every process, so another process's write is seen at
the next refresh, and no periodic full comparison is needed; a deletion made outside the
library (``removals`` moved) brings one.

**Deferred.** A write leaves a *cold* holding alone (a vector index whose embedding model is
not loaded in this process: :attr:`~.holdings.Holding.cold`): loading MiniLM takes longer
than the rest of a CLI ``remember``, and only a query needs it. The holding's ledger then
lacks the new token, which is all any later reader needs: the next refresh of this process
reads :attr:`Freshness.deferred` first, whatever the signal says, and every other process
finds the token missing at its first full comparison (or in the change feed). So a record
remembered by one command is found by the vector side of the next ``recall``, which embeds
it with the model it loads for the question. A process whose model is loaded embeds on
write, unless it sets :attr:`Freshness.defer_embedding` (the MCP server does, issue 21 item
5): then every write leaves every embedding holding behind the same way, so ``remember``
returns before its vector is computed, and the next query embeds all that waits in one batch
(and finds the new notes by BM25 meanwhile, had it not). The versions written are kept
beside their tokens (up to :data:`KEPT_WAITING` of them): when the store's token is still the
one written, that query indexes the kept version, verified as any read is, instead of reading
it back (a CLI import's notes are too new for the file store's parse cache).

Invariant: an index is updated before the ledger records it, so a crash only makes work
look undone (it is redone), never done; a deferred record is merely one the ledger does not
hold yet.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable

from agent_memory.errors import RecordNotFound, SignatureError, StoreError
from agent_memory.records.record import MemoryRecord
from agent_memory.search.base import version_digest
from agent_memory.search.holdings import Holding, Ledger
from agent_memory.stores.base import ChangeFeed, RecordStore
from agent_memory.stores.verified import Signers

__all__ = ["FULL_CHECK_SECONDS", "FULL_CHECK_SHARE", "Freshness", "Progress"]

FULL_CHECK_SECONDS = 5.0
FULL_CHECK_SHARE = 0.1
"""At most this share of the time goes to full comparisons: the wait after one is at least 9× its cost."""
Progress = Callable[[int, int], None]
"""Called with (records read, records to read) while indexes catch up."""
_CHUNK = 256
KEPT_WAITING = 4096
"""Deferred versions kept in memory until the next query indexes them; past this they are read back."""
_log = logging.getLogger(__name__)


class Freshness:
    """The bookkeeping that brings holdings up to date with a store.

    Args:
        store: The store the indexes derive from.
        ledger: Where what each index holds is recorded.
        holdings: The indexes that hold data, by name (shared with the catalog, which adds to it).
        signal: See the module docstring; ``None`` compares every token on every refresh.
        clock: Monotonic seconds (injectable for tests).

    Attributes:
        problems: Records that could not be read, or whose signature does not verify, by id,
            as last seen; they are left out of every index.
        due: A full comparison must run at the next refresh (an index is new or was emptied).
        signers: Whose signatures a version read here must carry
            (:class:`~agent_memory.stores.verified.Signers`; none for a store with no key).
        deferred: Ids this process wrote that a cold holding has not indexed yet (module
            docstring, "Deferred"); :meth:`settle` indexes them.
        defer_embedding: Leave every holding that embeds (not only the cold ones) to the next
            query when this process writes (module docstring, "Deferred"). Off by default.
    """

    def __init__(
        self,
        store: RecordStore,
        ledger: Ledger,
        holdings: dict[str, Holding],
        *,
        signal: Callable[[], object] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store, self.ledger, self.holdings = store, ledger, holdings
        self.problems: dict[str, StoreError | SignatureError] = {}
        self.due = True
        self.signers = Signers()
        self.deferred: set[str] = set()
        self._kept: dict[str, tuple[str, MemoryRecord]] = {}  # deferred id -> (token written, version)
        self.defer_embedding = False
        self._signal, self._clock = signal, clock
        self._last_signal: object = None
        self._last_full = -math.inf
        self._full_wait = FULL_CHECK_SECONDS
        self._feed = store if isinstance(store, ChangeFeed) else None
        self._mark = -1
        self._removals = -1

    def refresh(self, *, force: bool = False, progress: Progress | None = None) -> int:
        """Bring every holding up to date; return how many records were added, changed or removed.

        Returns at once when the signal has not moved, a full comparison ended less than
        :data:`FULL_CHECK_SECONDS` ago (longer after a slow one, see the module docstring)
        and nothing is ``due``, unless ``force``. Over a
        :class:`~agent_memory.stores.base.ChangeFeed`, reads only what was written since the
        last refresh (module docstring). Versions this process wrote while a holding was
        cold are read first, always (:meth:`settle`).
        """
        settled = self.settle(progress)
        if self._feed is not None:
            return settled + self._follow(self._feed, force=force, progress=progress)
        signal = self._signal() if self._signal is not None else None
        started = self._clock()
        quiet = signal == self._last_signal and started - self._last_full < self._full_wait
        if self._signal is not None and quiet and not (force or self.due):
            return settled
        self._last_signal, self.due = signal, False
        current = self.tokens()
        self._last_full = self._clock()
        cost = self._last_full - started
        self._full_wait = max(FULL_CHECK_SECONDS, cost * (1 - FULL_CHECK_SHARE) / FULL_CHECK_SHARE)
        return settled + self.catch_up(current, progress)

    def defers(self, holding: Holding) -> bool:
        """Whether a write of this process leaves ``holding`` to the next query (module docstring)."""
        return holding.cold or (self.defer_embedding and holding.embeds)

    def settle(self, progress: Progress | None = None) -> int:
        """Index the versions this process wrote while a holding was cold; return how many were read.

        Cheap when nothing waits. A cold holding loads its model here (the caller is about
        to query it, or asked for the refresh).
        """
        if not self.deferred:
            return 0
        waiting, self.deferred = sorted(self.deferred), set()
        try:
            return self.catch_up(self.tokens(only=waiting), progress, partial=True)
        finally:
            self._kept.clear()

    def catch_up(
        self, current: dict[str, str], progress: Progress | None = None, *, partial: bool = False
    ) -> int:
        """Read the records whose token moved (once each) and update every holding; return the count.

        Args:
            current: The store's token per record: all of them, or with ``partial`` only
                those written lately (then no record counts as gone).
            progress: Called as records are read.
            partial: ``current`` is a part of the store.
        """
        holdings = list(self.holdings.values())
        plans = {h.name: h.changes(current, partial=partial) for h in holdings}
        wanted = sorted({rid for changed, _ in plans.values() for rid in changed})
        vanished = {rid for _, gone in plans.values() for rid in gone}
        for holding in holdings:
            gone = plans[holding.name][1]
            if gone:
                holding.apply(self.ledger, {}, {}, set(gone))
                for rid in gone:
                    self.problems.pop(rid, None)
        if progress is not None:
            progress(0, len(wanted))
        changed = {h.name: set(plans[h.name][0]) for h in holdings}  # once: a set per chunk was quadratic
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            batch, missing = self._read(chunk, current)
            for holding in holdings:
                mine = changed[holding.name]
                tokens = {rid: current[rid] for rid in chunk if rid in mine}
                holding.apply(
                    self.ledger, {r: v for r, v in batch.items() if r in mine}, tokens, missing & mine
                )
            if progress is not None:
                progress(start + len(chunk), len(wanted))
        for holding in holdings:
            if holding.suspect:
                holding.suspect = False
                if not holding.agrees(self.ledger):
                    _log.warning("index %s holds records the store does not: rebuilding it", holding.name)
                    holding.wipe(self.ledger)
                    return self.catch_up(current, progress)
        return len(wanted) + len(vanished - set(wanted))

    def written(self, records: Iterable[MemoryRecord]) -> None:
        """Update every holding but the deferring ones with versions this process just wrote.

        A cold holding (and with :attr:`defer_embedding` every one that embeds) is left
        behind and the ids kept in :attr:`deferred` (module docstring, "Deferred").

        The signal moved because of this write, so its new value is taken as quiet and the
        next refresh need not compare every token. The cost: a write another process made
        since the last check is seen by the next full check, at most
        :data:`FULL_CHECK_SECONDS` later, instead of at once. A change feed has no such cost:
        its mark stays, so the next refresh sees this write (its token already held: not
        read again) beside any other process's.
        """
        batch = {record.id: record for record in records}
        if batch:
            tokens = self.tokens(only=list(batch))
            deferring = False
            for holding in self.holdings.values():
                if self.defers(holding):
                    deferring = True
                else:
                    holding.apply(self.ledger, batch, tokens, set(batch) - set(tokens))
            if deferring:  # once for every deferring holding: they read the same versions later
                self.deferred.update(batch)
                room = max(KEPT_WAITING - len(self._kept), 0)
                self._kept.update(
                    (rid, (tokens[rid], batch[rid])) for rid in list(batch)[:room] if rid in tokens
                )
            if self._signal is not None and self._last_signal is not None:
                self._last_signal = self._signal()

    def erased(self, record_ids: Iterable[str]) -> None:
        """Remove erased records from every holding and purge what each index can purge."""
        ids = list(record_ids)
        for rid in ids:
            self._kept.pop(rid, None)
        tokens = self.tokens(only=ids)
        for holding in self.holdings.values():
            holding.apply(self.ledger, {}, tokens, set(ids) - set(tokens))
            purge = getattr(holding.index, "purge", None)
            if callable(purge):
                purge()

    def tokens(self, only: list[str] | None = None) -> dict[str, str]:
        """Return the store's version token per record (of ``only``, if given; absent ids left out).

        A store without ``version_tokens`` is read whole, its version digests standing in.
        """
        tokens = getattr(self.store, "version_tokens", None)
        if callable(tokens):
            result: dict[str, str] = tokens(only) if only is not None else tokens()
            return result
        if only is None:
            return {r.id: version_digest(r) for r in self.store.list()}
        found = {}
        for rid in only:
            try:
                found[rid] = version_digest(self.store.get(rid))
            except RecordNotFound:
                continue
        return found

    def _follow(self, feed: ChangeFeed, *, force: bool, progress: Progress | None) -> int:
        """Refresh from a change feed: every token when due, forced or after a removal, else the news."""
        full = force or self.due or any(h.suspect for h in self.holdings.values())
        changes = feed.changes_since(-1 if full else self._mark)
        if not full and (changes.removals != self._removals or changes.mark < self._mark):
            # Deleted outside the library, or the database was put back to an older copy.
            full, changes = True, feed.changes_since(-1)
        self._mark, self._removals, self.due = changes.mark, changes.removals, False
        if full:
            return self.catch_up(changes.tokens, progress)
        return self.catch_up(changes.tokens, progress, partial=True) if changes.tokens else 0

    def _read(self, ids: list[str], current: dict[str, str]) -> tuple[dict[str, MemoryRecord], set[str]]:
        """Read ``ids`` from the store; a kept deferred version whose token is ``current``'s stands in."""
        batch: dict[str, MemoryRecord] = {}
        missing: set[str] = set()
        for record_id in ids:
            try:
                kept = self._kept.pop(record_id, None)
                if kept is not None and kept[0] == current.get(record_id):
                    record = kept[1]  # the very version this process wrote, still the store's
                else:
                    record = self.store.get(record_id)
                # DESIGN.md §9: only records that verify are indexed (the one verified read path)
                self.signers.check(record)
                batch[record_id] = record
                self.problems.pop(record_id, None)
            except RecordNotFound:
                missing.add(record_id)
            except (StoreError, SignatureError) as exc:  # stops matching by its old text, is reported
                self.problems[record_id] = exc
        return batch, missing

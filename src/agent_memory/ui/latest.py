"""The latest version of every record, held by the page between requests and kept in step cheaply.

Listing a 100k-record Home through the store reads 100k note files (seconds); the browse page
must answer in well under 200 ms (issue 22). :class:`LatestRecords` reads every record once,
then on each request reads only what changed since, found the cheapest way the store allows:

- a store that numbers its writes (:class:`~agent_memory.stores.base.ChangeFeed`: SQLite,
  PostgreSQL, in memory) is asked for the records written after the mark last seen, by any
  process; a deletion made outside the library (``removals`` moved) brings a full reading;
- a Home's note store: the Home's signal (the one recall's index freshness reads: the notes
  folder's change time and the log files' sizes and times) returns at once when nothing moved;
  when it moved, the records named by the log entries after the last one seen (every write of
  the library logs the ids it wrote, in any process) and the note folders that appeared are
  read again. A note edited in place by hand neither logs nor adds a folder: the page shows it
  once ``agent-memory sync`` has turned it into a record (which logs), as recall's indexes do
  between their periodic full checks. Until then :meth:`LatestRecords.stale` names it: the
  version token of each note (a ``stat``) is kept as it was when the note was read, and
  compared with the note's token now for the few records a page shows.

Invariants: what :meth:`LatestRecords.current` returns is the latest readable version of every
record as of the call (up to hand edits not yet synced), by ``(created_at, id)``;
a record that cannot be read or does not verify is left out, as :meth:`IndexCatalog.readable_records
<agent_memory.search.catalog.IndexCatalog.readable_records>` leaves it out (every read goes
through the verified read path, :mod:`agent_memory.stores.verified`).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from agent_memory.errors import RecordNotFound, SignatureError, StoreError
from agent_memory.stores.base import ChangeFeed
from agent_memory.stores.file_tokens import change_signal

if TYPE_CHECKING:
    from agent_memory.memory import Memory
    from agent_memory.records.record import MemoryRecord

__all__ = ["DERIVED_KEPT", "LatestRecords"]

DERIVED_KEPT = 16
"""At most this many derived values are kept (:meth:`LatestRecords.derived`)."""
T = TypeVar("T")


class LatestRecords:
    """The latest version of every record of one Memory (module docstring).

    Args:
        memory: The Memory whose store is followed.
    """

    def __init__(self, memory: Memory) -> None:
        self._memory = memory
        self._lock = threading.Lock()
        self._records: dict[str, MemoryRecord] = {}
        self._sorted: list[MemoryRecord] | None = None
        self._loaded = False
        self._mark = -1
        self._removals = 0
        self._seq = 0
        self._signal: object = None
        self._folders: set[str] = set()
        self._tokens: dict[str, str] = {}
        self.version = 0
        """Moves whenever the records held change (callers cache what they derive by it)."""
        self._derived: OrderedDict[Hashable, Any] = OrderedDict()
        home = getattr(memory, "home", None)
        self._home_signal: Callable[[], object] | None = None
        if home is not None and not isinstance(memory.store, ChangeFeed):
            self._home_signal = change_signal(home.root / "notes", home.root / "log")

    def current(self) -> list[MemoryRecord]:
        """Return the latest readable version of every record, by ``(created_at, id)``.

        Raises:
            LogError: The log cannot be read (a Home's changes are found through it).
        """
        with self._lock:
            if not self._loaded:
                self._load_all()
            elif isinstance(self._memory.store, ChangeFeed):
                self._follow_feed(self._memory.store)
            elif self._home_signal is not None:
                self._follow_home(self._home_signal)
            else:
                self._load_all()
            if self._sorted is None:
                self._sorted = sorted(self._records.values(), key=lambda r: (r.created_at, r.id))
            return self._sorted

    def stale(self, record_ids: Iterable[str]) -> set[str]:
        """Return which of ``record_ids`` the list holds from a note that changed since it was read.

        A Home's note edited in place (by hand, or by a tool that does not log) until
        ``agent-memory sync`` makes the edit a record; a note removed by hand. One ``stat``
        per id. A store that numbers its writes has none: :meth:`current` has read them all.
        """
        if self._home_signal is None:
            return set()
        wanted = sorted(set(record_ids))
        with self._lock:
            held = {rid: self._tokens.get(rid) for rid in wanted}
        now = self._tokens_of(wanted)
        return {rid for rid in wanted if held[rid] is not None and now.get(rid) != held[rid]}

    def derived(self, key: Hashable, build: Callable[[], T]) -> T:
        """Return ``build()``, worked out once until the records held change (kept per ``key``).

        What a page derives from every record (a filtered list, the filters' choices) is
        kept here, at most :data:`DERIVED_KEPT` keys, the least recently used dropped first;
        ``key`` must name everything else the value depends on (e.g. the log's head).
        """
        with self._lock:
            if key in self._derived:
                self._derived.move_to_end(key)
                return cast("T", self._derived[key])
        value = build()
        with self._lock:
            self._derived[key] = value
            while len(self._derived) > DERIVED_KEPT:
                self._derived.popitem(last=False)
        return value

    # ------------------------------------------------------------------ ways to follow

    def _load_all(self) -> None:
        store = self._memory.store
        if isinstance(store, ChangeFeed):
            changes = store.changes_since(-1)
            self._mark, self._removals = changes.mark, changes.removals
        head = self._memory.log.last()
        self._seq = head.seq if head is not None else 0
        if self._home_signal is not None:
            self._signal = self._home_signal()
            self._folders = self._note_folders()
            # Before the notes are read: a note changed meanwhile reads as stale, never as fresh.
            self._tokens = self._tokens_of(None)
        records = self._memory.catalog.readable_records()
        self._records = {r.id: r for r in records}
        self._loaded = True
        self._changed()

    def _follow_feed(self, store: ChangeFeed) -> None:
        changes = store.changes_since(self._mark)
        if changes.removals != self._removals:
            self._load_all()
            return
        self._mark = changes.mark
        self._reread(changes.tokens)

    def _follow_home(self, signal: Callable[[], object]) -> None:
        now_signal = signal()
        if now_signal == self._signal:
            return
        self._signal = now_signal
        named: set[str] = set()
        for entry in self._memory.log.entries(since_seq=self._seq):
            self._seq = entry.seq
            named.update(i for i in entry.record_ids if i.startswith("mem:"))
        folders = self._note_folders()
        named.update("mem:" + name for name in folders - self._folders)
        named.update("mem:" + name for name in self._folders - folders)
        self._folders = folders
        self._reread(named)

    # ------------------------------------------------------------------ helpers

    def _note_folders(self) -> set[str]:
        home = getattr(self._memory, "home", None)
        if home is None:
            return set()
        try:
            with os.scandir(home.root / "notes") as entries:
                return {e.name for e in entries if e.is_dir(follow_symlinks=False) and len(e.name) == 32}
        except OSError:
            return set()

    def _tokens_of(self, record_ids: list[str] | None) -> dict[str, str]:
        tokens = getattr(self._memory.store, "version_tokens", None)
        if not callable(tokens):
            return {}
        found: dict[str, str] = tokens(record_ids) if record_ids is not None else tokens()
        return found

    def _reread(self, record_ids: Iterable[str]) -> None:
        changed = False
        ids = sorted(record_ids)
        if self._home_signal is not None and ids:
            self._tokens.update(self._tokens_of(ids))
        for record_id in ids:
            try:
                record = self._memory.get(record_id)  # the verified read path (issue 20)
            except (RecordNotFound, StoreError, SignatureError):
                changed |= self._records.pop(record_id, None) is not None
                continue
            if self._records.get(record_id) is not record:
                self._records[record_id] = record
                changed = True
        if changed:
            self._changed()

    def _changed(self) -> None:
        self._sorted = None
        self._derived.clear()
        self.version += 1

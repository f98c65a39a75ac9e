"""`WriteKeys`: where ``remember`` finds the live exact duplicate and the live record of a subject.

Exact dedup and write-time supersede (DESIGN.md §9; rules in :mod:`agent_memory.write.plan`)
need, for a new record, the latest live record with the same :func:`~agent_memory.write.plan.live_key`
and the latest live state record with the same :func:`~agent_memory.write.plan.subject_key`
(latest by ``(created_at, id)``). Reading every record of the store to answer that made the
first write of every process cost a read of the whole Home (issue 10: 40 s at 100k records).
This module keeps the two keys of every record in a small SQLite table instead, in the Home's
``.cache/write-keys.sqlite`` (or in memory), and answers from it.

It is a cache, never truth:

- **Hits are checked.** Every record the table names is read from the store and used only if
  it is live (active or transitional, not erased) and has the very key asked for; a row found
  wrong is corrected from the store and the next candidate tried.
- **Completeness is checked cheaply before each answer**, how depends on the store:

  - a :class:`~agent_memory.stores.files.FileStore` (a Home's ``notes/``): the record folder
    names are listed (no file is read) and their XOR, which is order-free and kept up to date
    with every row added or dropped, is compared with the table's; records the table lacks
    are read, records gone from the store are dropped. Keys never change after birth (the id
    pins the body, ``kind``, ``subject``, ``namespace``) and a record never becomes live
    again, so new ids are the only thing that can make an answer wrong. Within a process the
    listing is skipped while the operation log's head has not moved, as the old maps did.
    A note edited by hand in place no longer matches its id, so it reads as unreadable (the
    full read skipped it too) until ``sync`` makes the edit a correction: a new record;
  - a store with a change feed (``changes_since`` and ``version_tokens``, see
    :class:`~agent_memory.stores.base.ChangeFeed`): the records written after the mark last
    seen are read again; a counter that went back or a removal means comparing every token;
  - any other store: every record is read again whenever the log's head moves (the old path).

- **Damage means rebuild** (:mod:`agent_memory.write.dedup_table`): a file that is not this format's
  database, or fails while in use, is made again from the store; a write that was made is
  never failed by this cache.
- **Erasure** leaves no key of an erased record here: its row keeps no digest.

The same file keeps the log head at which no write intent was left open (:meth:`WriteKeys.settled`),
so opening a Home need not read its whole log to roll interrupted writes forward
(:func:`agent_memory.write.plan.roll_forward`): the log is hash-chained, so a head equal in
sequence and digest pins every entry before it, and any other head means "read it all".

Only SHA-256 digests of the keys are kept, never a body.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import logging
import operator
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol, cast

from agent_memory.errors import RecordNotFound, StoreError
from agent_memory.log.base import OperationLog
from agent_memory.records.fields import RECORD_ID_PATTERN
from agent_memory.records.record import MemoryRecord
from agent_memory.stores.base import RecordStore
from agent_memory.stores.files import FileStore
from agent_memory.write.dedup_table import KeyTable, Row
from agent_memory.write.plan import LIVE_STATES, live_key, subject_key

__all__ = ["FILE_NAME", "WriteKeys", "body_digest", "is_live", "subject_digest"]

FILE_NAME = "write-keys.sqlite"
_RECORD_DIRS = re.compile(r"^[0-9a-f]{32}$", re.MULTILINE)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_CHUNK = 512
_log = logging.getLogger(__name__)


def is_live(record: MemoryRecord) -> bool:
    """Return whether ``record`` can be a dedup target or a subject's current value."""
    return record.state in LIVE_STATES and not record.redacted


def body_digest(record: MemoryRecord) -> str:
    """Return the SHA-256 hex digest of ``record``'s :func:`~agent_memory.write.plan.live_key`."""
    return _digest(["body", *live_key(record)])


def subject_digest(record: MemoryRecord) -> str | None:
    """Return the SHA-256 hex digest of ``record``'s subject key, or ``None`` if it has none."""
    key = subject_key(record)
    return _digest(["subject", *key]) if key is not None else None


class WriteKeys:
    """The dedup and subject keys of every record of one store (module docstring).

    Thread-safe (one re-entrant lock). Prefer :meth:`for_home`.

    Args:
        store: The store the keys derive from (the truth).
        path: The cache file, created if absent; ``None`` keeps the table in memory (filled
            by the first lookup of the process).
        read_all: Returns every readable record, for stores with neither a folder listing
            nor a change feed; ``store.list`` by default.
        scan: Read every record again whenever the log's head moves, whatever the store (the
            path before this cache; kept for baselines).

    Attributes:
        mode: ``listing`` (a file store), ``feed`` (a change-feed store) or ``scan``.
    """

    def __init__(
        self,
        store: RecordStore,
        path: Path | None = None,
        *,
        read_all: Callable[[], Sequence[MemoryRecord]] | None = None,
        scan: bool = False,
    ) -> None:
        self.store = store
        self._read_all = read_all or store.list
        self._root = store.root if isinstance(store, FileStore) else Path()
        feed = all(callable(getattr(store, name, None)) for name in ("changes_since", "version_tokens"))
        kind = "listing" if isinstance(store, FileStore) else "feed" if feed else "scan"
        self.mode = "scan" if scan else kind
        # A file store's rows hold wherever its notes are copied; a feed's marks hold for its store only.
        self.table = KeyTable(path, f"{self.mode}:{'' if self.mode == 'listing' else repr(store)}")
        self._lock = threading.RLock()
        self._seen_head: object = None
        self._synced = False

    @classmethod
    def for_home(
        cls,
        cache_dir: Path,
        store: RecordStore,
        *,
        read_all: Callable[[], Sequence[MemoryRecord]] | None = None,
    ) -> WriteKeys:
        """Return the keys of a Home's store, cached in ``cache_dir/write-keys.sqlite``."""
        cache_dir.mkdir(parents=True, exist_ok=True)
        return cls(store, cache_dir / FILE_NAME, read_all=read_all)

    # ------------------------------------------------------------------ the answers

    def lookup(self, record: MemoryRecord, head: object) -> tuple[MemoryRecord | None, MemoryRecord | None]:
        """Return the live exact duplicate of ``record`` and the live record of its subject.

        Each is the latest by ``(created_at, id)`` of the live records with that key, read
        from the store; ``None`` when there is none (the second always for a record with no
        subject key).

        Args:
            record: The new record (built, not yet written).
            head: The operation log's head now (any value that changes when the log grows).

        Raises:
            StoreError: The store's record folders cannot be listed, or the cache failed
                twice in a row (one bad record is skipped, as the full read skipped it).
        """
        with self._lock:
            for attempt in (1, 2):
                try:
                    self._sync(head)
                    return self._answer(record)
                except sqlite3.DatabaseError as exc:
                    if attempt == 2:
                        detail = f"the write-keys cache failed twice: {exc}"
                        raise StoreError(detail, path=str(self.table.path)) from exc
                    self._reset(exc)
        raise AssertionError("unreachable")  # pragma: no cover

    def wrote(self, versions: Iterable[MemoryRecord], head: object) -> None:
        """Take in versions this process just wrote (so the next lookup needs no listing).

        Never raises for the cache's sake: after a failure the table is checked again.

        Args:
            versions: The versions written (the latest per id counts).
            head: The log's head after the write (taken under the Home's writer lock).
        """
        latest = {version.id: version for version in versions}
        with self._lock:
            try:
                tokens = self._tokens(list(latest))
                self.table.store([_row(r, tokens.get(r.id)) for r in latest.values()])
                if self._synced:
                    self._seen_head = head
            except sqlite3.DatabaseError as exc:
                self._reset(exc)

    def refresh(self, record_ids: Iterable[str]) -> None:
        """Read ``record_ids`` again from the store and correct their rows (after an erasure)."""
        with self._lock:
            try:
                # Only well-formed ids can be stored (an erase may have refused the others).
                ids = {i for i in record_ids if isinstance(i, str) and RECORD_ID_PATTERN.match(i)}
                self.table.store(*self._read(sorted(ids)))
                self.table.checkpoint()
            except sqlite3.DatabaseError as exc:
                self._reset(exc)

    def settled(self, head: str) -> bool:
        """Return whether the log, whose head is ``head`` (``"<seq>:<digest>"``), has no open intent.

        True only when ``head`` is the head recorded by :meth:`settle`; a damaged cache says False.
        """
        with self._lock:
            try:
                return self.table.meta("settled") == head
            except sqlite3.DatabaseError as exc:
                self._reset(exc)
                return False

    def settled_seq(self, log: OperationLog) -> int:
        """Return the seq up to which ``log`` is known to hold no open write intent (0: none known).

        That is the seq of the head last recorded by :meth:`settle`, when ``log`` still holds
        that entry with the same digest (the log is hash-chained, so the entry pins all before
        it); 0 when nothing was recorded, the cache is damaged, or the entry differs.
        """
        with self._lock:
            try:
                recorded = self.table.meta("settled") or ""
            except sqlite3.DatabaseError as exc:
                self._reset(exc)
                return 0
        seq, _, digest = recorded.partition(":")
        if not seq.isdigit() or not digest:
            return 0
        entry = next(iter(log.entries(since_seq=int(seq) - 1)), None)
        return int(seq) if entry is not None and entry.seq == int(seq) and entry.digest == digest else 0

    def settle(self, head: str) -> None:
        """Record that no write intent is open in the log up to ``head`` (after a roll forward)."""
        with self._lock:
            try:
                self.table.set_meta({"settled": head})
            except sqlite3.DatabaseError as exc:
                self._reset(exc)

    @contextmanager
    def settling(self, head: Callable[[], str]) -> Iterator[None]:
        """Keep the log settled across one write made under the Home's writer lock.

        When the log was settled before the block, it is settled at its end: every write of
        this library closes the intents it opens before it returns. A block that raises may
        have left one open, so then nothing is recorded (the next open reads the log).

        Args:
            head: Returns the log's head as ``"<seq>:<digest>"``.
        """
        before = head()
        yield
        if self.settled(before):
            self.settle(head())

    def close(self) -> None:
        """Close the cache file."""
        with self._lock:
            self.table.close()

    # ------------------------------------------------------------------ keeping complete

    def _sync(self, head: object) -> None:
        moved = not (self._synced and head == self._seen_head)
        if self.mode == "feed":
            self._sync_feed(retry=moved)
        elif moved and self.mode == "listing":
            self._sync_listing()
        elif moved:
            self.table.replace(_row(record, None) for record in self._read_all())
        self._seen_head, self._synced = head, True

    def _sync_listing(self) -> None:
        names = _record_dirs(self._root)
        unread = self.table.ids(unread=True)
        if (
            not unread
            and functools.reduce(operator.xor, map(int, names, itertools.repeat(16)), 0) == self.table.xor()
        ):
            return
        listed = {f"mem:{name}" for name in names}
        known = self.table.ids()
        wanted, gone = sorted((listed - known) | (unread & listed)), sorted(known - listed)
        # A new table too: in chunks, so a first fill never holds every record at once (issue 23).
        self._catch_up(wanted, gone)

    def _sync_feed(self, *, retry: bool) -> None:
        feed = cast(_Feed, self.store)
        held_marks = {"mark": self.table.meta("mark"), "removals": self.table.meta("removals")}
        mark = int(held_marks["mark"] or -1)
        changes = feed.changes_since(mark)
        if mark < 0 or changes.mark < mark or str(changes.removals) != held_marks["removals"]:
            # A new table, a counter that went back (another store) or removals: compare every token.
            tokens = dict(changes.tokens) if mark < 0 else feed.version_tokens(None)
            held = self.table.tokens()
            stale = [rid for rid, token in tokens.items() if held.get(rid) != token]
            self._catch_up(sorted(stale), sorted(set(held) - set(tokens)))
        else:
            wanted = set(changes.tokens) | (self.table.ids(unread=True) if retry else set())
            self._catch_up(
                [rid for rid in sorted(wanted) if changes.tokens.get(rid, "") != self.table.token(rid)], []
            )
        marks = {"mark": str(changes.mark), "removals": str(changes.removals)}
        if marks != held_marks:  # a write transaction only when the feed moved
            self.table.set_meta(marks)

    def _catch_up(self, wanted: Sequence[str], gone: Sequence[str]) -> None:
        """Read ``wanted`` in chunks, each committed (a long first fill keeps its progress)."""
        self.table.store((), (), gone)
        if len(wanted) > _CHUNK:
            _log.info("write keys: reading %d records", len(wanted))
        for start in range(0, len(wanted), _CHUNK):
            self.table.store(*self._read(wanted[start : start + _CHUNK]))

    def _read(self, ids: Sequence[str]) -> tuple[list[Row], list[str], list[str]]:
        """Read ``ids``: rows of the records, ids unreadable now, ids the store does not hold."""
        tokens = self._tokens(ids)
        rows: list[Row] = []
        unread: list[str] = []
        missing: list[str] = []
        for record_id in ids:
            try:
                rows.append(_row(self.store.get(record_id), tokens.get(record_id)))
            except RecordNotFound:
                missing.append(record_id)
            except StoreError:  # unreadable now (the full read skipped it too); tried again later
                unread.append(record_id)
        return rows, unread, missing

    def _answer(self, record: MemoryRecord) -> tuple[MemoryRecord | None, MemoryRecord | None]:
        key, subject = live_key(record), subject_key(record)
        duplicate = self._find("body", body_digest(record), lambda r: live_key(r) == key)
        digest = subject_digest(record)
        if digest is None:
            return duplicate, None
        return duplicate, self._find("subject", digest, lambda r: subject_key(r) == subject)

    def _find(self, column: str, digest: str, matches: Callable[[MemoryRecord], bool]) -> MemoryRecord | None:
        for record_id in self.table.find(column, digest):
            try:
                record = self.store.get(record_id)
            except RecordNotFound:
                self.table.store((), (), [record_id])
                continue
            except StoreError:  # unreadable now: not a candidate, as the full read skipped it
                self.table.store((), [record_id])
                continue
            if is_live(record) and matches(record):
                return record
            # The row was wrong (a superseded record, a hand-edited note): correct it from the store.
            self.table.store([_row(record, self._tokens([record_id]).get(record_id))])
        return None

    def _tokens(self, ids: Sequence[str]) -> dict[str, str]:
        if self.mode != "feed" or not ids:
            return {}
        return cast(_Feed, self.store).version_tokens(list(ids))

    def _reset(self, exc: sqlite3.DatabaseError) -> None:
        self.table.reset(exc)
        self._synced = False


class _Feed(Protocol):
    """What this module uses of a :class:`~agent_memory.stores.base.ChangeFeed` store."""

    def version_tokens(self, record_ids: Iterable[str] | None = None) -> dict[str, str]: ...

    def changes_since(self, mark: int) -> Any: ...


def _row(record: MemoryRecord, token: str | None) -> Row:
    live = is_live(record)
    created = (record.created_at - _EPOCH) // timedelta(microseconds=1)
    return (
        record.id,
        body_digest(record) if live else None,
        subject_digest(record) if live else None,
        created,
        token,
        0,
    )


def _digest(parts: list[str]) -> str:
    data = json.dumps(parts, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def _record_dirs(root: Path) -> list[str]:
    """Return the record folder names (32 hex digits) under a file store's root; nothing is read."""
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StoreError(f"cannot list the record folders: {exc.strerror}", path=str(root)) from None
    # One regex pass over the joined names: ten times faster than a match per name at 100k.
    return _RECORD_DIRS.findall("\n".join(names))

"""The `OperationLog` port: an append-only, hash-chained record of what happened to a Home.

Seed 000 §7.1 capability 5 asks for a replayable operation log of lifecycle events with
timestamps, "sufficient for post-hoc audit"; §8 "Timeline" says it is "an operations trace,
not knowledge content". DESIGN.md §3 puts it in ``log/YYYY-MM.jsonl`` and §9 decides that
**the log never holds record content**: events name ids, versions, digests, actors and
reasons, so erasure (which must leave no erased byte anywhere) never has to rewrite the log.

An entry is one line, the canonical JSON (:func:`agent_memory.records.wire.canonical_json`) of::

    {"action": "put", "actor": "owner", "details": {"versions": [1]}, "prev": "<64 hex>",
     "record_ids": ["mem:…"], "seq": 7, "time": "2026-01-01T00:00:00.000Z"}

Invariants every adapter keeps (and :class:`~agent_memory.log.chain.ChainCheck` verifies):

- ``seq`` is 1-based and contiguous; ``time`` never goes backwards along the chain (an
  append whose clock reads earlier than the head is stamped with the head's time).
- ``prev`` is the SHA-256 of the previous line's bytes (:data:`GENESIS` for the first), so an
  edited line, a deleted line other than the last, an inserted line or two swapped lines
  break the chain at a position :meth:`OperationLog.verify` names.
- The chain cannot see a tail that was cut off, nor a last line that was edited: nothing
  follows them. Remember the head (``last().seq`` and ``last().digest``) somewhere else and
  pass it back as ``verify(expect_head=(seq, digest))`` to detect that too.
- ``details`` is a float-free JSON object, and no value in it may be a record wire object
  (a JSON object with a ``body`` key): :func:`check_details` refuses it.

A :class:`LogEntry` cannot be built invalid; :mod:`agent_memory.log.chain` builds the next
entry and checks a stored chain for the adapters. This module imports no adapter.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from agent_memory.errors import LogError, RecordError
from agent_memory.records.wire import (
    canonical_json,
    check_json_value,
    format_timestamp,
    loads_json,
    parse_timestamp,
)

__all__ = ["ACTIONS", "GENESIS", "Action", "LogEntry", "OperationLog", "check_details", "entries_from_time"]

GENESIS = "0" * 64
"""The ``prev`` of the first entry: there is no previous line to hash."""


class Action(StrEnum):
    """The vocabulary of log events (seed 000 §7.1 capability 5 and §8 "Timeline"; DESIGN.md §9)."""

    PUT = "put"  # record versions were appended (details: versions, their numbers; [] for none)
    SUPERSEDE = "supersede"  # old -> successor (record_ids: old, new; details: reason)
    TRANSITION = "transition"  # a transition pair was opened
    RESOLVE = "resolve"  # a transition pair was resolved
    ARCHIVE = "archive"  # a record was archived
    ERASE = "erase"  # authorized erasure: the content-free receipt only (seed 000 §12.3)
    ERASE_INTENT = "erase-intent"  # an erasure is about to tombstone (finished on the next open)
    WITHDRAW = "withdraw"  # a withdrawal control record (seed 000 §12.2)
    REINSTATE = "reinstate"  # a reinstatement naming a withdrawal
    REVIEW = "review"  # approve, reject or mark stale (DESIGN.md §9 "review marks are events")
    ARCHIVE_INBOX = "archive-inbox"  # the inbox was snapshotted into archive/ (seed 000 §13)
    DISTILL = "distill"  # archive lines were distilled into proposals
    CONSOLIDATE = "consolidate"  # a consolidation pass ran
    IMPORT = "import"
    EXPORT = "export"
    MIGRATE = "migrate"
    INIT = "init"  # the Home was created
    INTENT = "intent"  # a multi-step write is about to happen (rolled forward on open)
    INTENT_DONE = "intent-done"  # ... and finished
    BATCH_INTENT = "batch-intent"  # a journaled batch (an accept, a revert) is about to be put
    BATCH_DONE = "batch-done"  # ... and finished, or rolled forward on open (write.journal)
    REINDEX = "reindex"
    SYNC = "sync"
    RETRIEVAL = "retrieval"  # metamemory: a retrieval_record memret-… (seed 000 §23.2)
    OUTCOME = "outcome"  # metamemory: a task outcome memout-… (seed 000 §23.6)
    FEEDBACK = "feedback"  # metamemory: a feedback event memfb-… on retrieved records (§23.2)
    POLICY_PROPOSAL = "policy-proposal"  # metamemory: a pending mempolicy-… proposal (§23.5)


ACTIONS: frozenset[str] = frozenset(action.value for action in Action)
"""Every action :meth:`OperationLog.append` accepts.

To add an event kind, add an :class:`Action` member; this constant follows. Reading is
more lenient than writing: an entry whose action is not in this set still reads (as a
plain string) when it is spelled like one, so a log written by a newer version stays
readable and verifiable by an older one.
"""

_ACTION_SHAPE = re.compile(r"\A[a-z][a-z0-9]*(?:-[a-z0-9]+)*\Z")
_ACTOR_SHAPE = re.compile(r"\A\S{1,200}\Z")
_ID_SHAPE = re.compile(r"\A\S{1,1000}\Z")
_DIGEST_SHAPE = re.compile(r"\A[0-9a-f]{64}\Z")
_WIRE_FIELDS = frozenset({"seq", "time", "actor", "action", "record_ids", "details", "prev"})


@dataclass(frozen=True)
class LogEntry:
    """One event of the operation log; checked and normalised when built.

    Attributes:
        seq: Position in the log, 1-based and contiguous.
        time: When it was appended: aware, stored as UTC truncated to whole milliseconds.
        actor: Who did it, without whitespace: ``owner``, ``agent:claude``, ``cli``.
        action: An :class:`Action`, or a plain ``str`` spelled like one (a newer version's).
        record_ids: The records, inbox lines or anchors the event concerns, in order; no
            whitespace inside an id.
        details: Float-free JSON object: versions, digests, reasons, receipts; never record
            content (:func:`check_details`). Stored as a canonical private copy.
        prev: SHA-256 (64 lowercase hex) of the previous line, :data:`GENESIS` for seq 1.

    Raises:
        LogError: A field is malformed (the error names it).
    """

    seq: int
    time: datetime
    actor: str
    action: str
    record_ids: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    prev: str = GENESIS

    def __post_init__(self) -> None:
        if not isinstance(self.seq, int) or isinstance(self.seq, bool) or self.seq < 1:
            raise LogError(f"must be a positive integer, got {self.seq!r}", field="seq")
        try:
            object.__setattr__(self, "time", parse_timestamp(self.time, "time", strict=True))
        except RecordError as exc:
            raise LogError(exc.detail, field="time") from None
        if not isinstance(self.actor, str) or not _ACTOR_SHAPE.match(self.actor):
            raise LogError(
                f"must be a non-empty name without whitespace (owner, agent:claude), got {self.actor!r}",
                field="actor",
            )
        if not isinstance(self.action, str) or not _ACTION_SHAPE.match(self.action):
            raise LogError(
                f"must be a lower-case word like archive-inbox, got {self.action!r}", field="action"
            )
        object.__setattr__(
            self, "action", Action(self.action) if self.action in ACTIONS else str(self.action)
        )
        object.__setattr__(self, "record_ids", _check_record_ids(self.record_ids))
        object.__setattr__(self, "details", check_details(self.details))
        if not isinstance(self.prev, str) or not _DIGEST_SHAPE.match(self.prev):
            raise LogError("must be 64 lowercase hex digits", field="prev")

    def __hash__(self) -> int:
        # details is a dict; seq and prev already pin an entry within one log.
        return hash((self.seq, self.prev, self.time))

    def to_wire(self) -> dict[str, Any]:
        """Return the wire object whose canonical JSON is this entry's line."""
        return {
            "seq": self.seq,
            "time": format_timestamp(self.time),
            "actor": self.actor,
            "action": str(self.action),
            "record_ids": list(self.record_ids),
            "details": dict(self.details),
            "prev": self.prev,
        }

    @functools.cached_property
    def line(self) -> bytes:
        """The canonical JSON bytes stored for this entry (no trailing newline); made once per entry."""
        return canonical_json(self.to_wire())

    @functools.cached_property
    def digest(self) -> str:
        """SHA-256 of :attr:`line` as 64 lowercase hex: the next entry's ``prev``."""
        return hashlib.sha256(self.line).hexdigest()

    @classmethod
    def from_line(cls, line: bytes) -> LogEntry:
        """Parse one stored line strictly: UTF-8 JSON, exactly the seven fields, canonical bytes.

        Raises:
            LogError: Without a location (callers add it): not JSON, a missing, extra or
                malformed field, or bytes that differ from the entry's canonical form.
        """
        try:
            wire = loads_json(line)
        except RecordError as exc:
            raise LogError(exc.detail) from None
        if not isinstance(wire, dict):
            raise LogError(f"not a log entry: a JSON {type(wire).__name__}, not an object")
        missing, extra = sorted(_WIRE_FIELDS - wire.keys()), sorted(wire.keys() - _WIRE_FIELDS)
        if missing or extra:
            problems = [
                f"{word} {', '.join(names)}"
                for word, names in (("missing", missing), ("unknown", extra))
                if names
            ]
            raise LogError(f"not a log entry: {'; '.join(problems)}")
        if not isinstance(wire["time"], str):
            raise LogError("not a log entry: time: must be a timestamp string")
        if not isinstance(wire["record_ids"], list):
            raise LogError("not a log entry: record_ids: must be a list")
        try:
            entry = cls(**wire)
        except LogError as exc:
            raise LogError(f"not a log entry: {exc}") from None
        if entry.line != line:
            raise LogError("not in canonical form (a hand edit?): the bytes differ from the entry's JSON")
        return entry


@runtime_checkable
class OperationLog(Protocol):
    """An append-only, hash-chained event log (seed 000 §7.1 capability 5; DESIGN.md §3, §9).

    The log never holds record content (DESIGN.md §9): name ids, versions, digests, actors
    and reasons in an event, never a body or a quote from one; views that show "old value ->
    new value" join the log with the records. Adapters refuse what can be detected (a
    record wire object in ``details``); the rest is the caller's duty.
    """

    def append(
        self,
        action: str,
        *,
        actor: str,
        record_ids: Iterable[str] = (),
        details: Mapping[str, Any] | None = None,
        now: datetime | None = None,
    ) -> LogEntry:
        """Append one event after the current head and return it as it reads back.

        Args:
            action: One of :data:`ACTIONS`.
            actor: Who acts, without whitespace (``owner``, ``agent:claude``, ``cli``).
            record_ids: Ids the event concerns (``mem:…``, inbox ids, archive anchors).
            details: Float-free JSON object of ids, versions, digests and reasons.
            now: Injectable clock (aware); default the current UTC time. Stamped
                ``max(now, head time)`` so time never runs backwards along the chain.

        Raises:
            LogError: A malformed argument, record content in ``details``, a head line that
                cannot be read, or the write failed; nothing is appended.
        """
        ...

    def entries(self, *, since_seq: int = 0) -> Iterator[LogEntry]:
        """Yield the entries with ``seq > since_seq``, oldest first.

        Each line is parsed strictly and seqs are checked to be contiguous; the hash chain
        is :meth:`verify`'s job.

        Raises:
            LogError: A line is not an entry, or a seq is missing (naming file/table and line).
        """
        ...

    def last(self) -> LogEntry | None:
        """Return the head (the entry with the highest seq), or ``None`` for an empty log.

        Raises:
            LogError: The head line cannot be read.
        """
        ...

    def verify(self, *, expect_head: tuple[int, str] | None = None) -> int:
        """Check every line and the whole hash chain; return the number of entries checked.

        Args:
            expect_head: A ``(seq, digest)`` remembered earlier from :meth:`last`; the log
                must still hold that entry unchanged (detects a truncated tail or an edited
                last line, which the chain alone cannot).

        Raises:
            LogError: Naming the file or table, the line or seq, and what is wrong.
        """
        ...


def check_details(details: Any) -> dict[str, Any]:
    """Check an event's ``details`` and return a canonical private copy.

    Raises:
        LogError: Not a JSON object, a float or other non-JSON value anywhere, or a record
            wire object (a JSON object with a ``body`` key) anywhere inside: the log never
            holds record content (DESIGN.md §9).
    """
    if details is None:
        return {}
    if not isinstance(details, Mapping):
        raise LogError(f"must be a JSON object, got {type(details).__name__}", field="details")
    details = dict(details)
    try:
        check_json_value(details, "details")
    except RecordError as exc:
        raise LogError(exc.detail, field=exc.field) from None
    _refuse_record_content(details, "details")
    # The canonical round trip NFC-normalises text and turns tuples into lists, so the
    # entry an append returns equals the one read back from its line.
    copy: dict[str, Any] = json.loads(canonical_json(details))
    return copy


def entries_from_time(log: OperationLog, when: datetime) -> Iterator[LogEntry]:
    """Yield the entries whose ``time`` is ``when`` or later, oldest first, without reading earlier ones.

    Time never goes backwards along the chain, so those entries are a tail of the log: its
    first seq is found by bisecting seqs, each probe reading one entry through
    ``entries(since_seq=...)`` (about ``log2(head seq)`` probes; for a
    :class:`~agent_memory.log.jsonl.JsonlLog` each probe parses about ``log2(bytes)`` lines
    of one month file). Used where only recent events matter, e.g. the erasure ids of one day.

    Args:
        log: Any :class:`OperationLog`.
        when: An aware time.

    Raises:
        LogError: A line read is not an entry, or a seq is missing (see :meth:`OperationLog.entries`).
    """
    head = log.last()
    if head is None or head.time < when:
        return
    lo, hi = 0, head.seq - 1  # the answer: how many entries come before ``when``
    while lo < hi:
        mid = (lo + hi) // 2
        probe = next(iter(log.entries(since_seq=mid)), None)
        if probe is not None and probe.time < when:
            lo = mid + 1
        else:
            hi = mid
    yield from log.entries(since_seq=lo)


def _check_record_ids(record_ids: Any) -> tuple[str, ...]:
    if isinstance(record_ids, str) or not isinstance(record_ids, Iterable):
        raise LogError(f"must be a list of ids, got {type(record_ids).__name__}", field="record_ids")
    ids = tuple(record_ids)
    for i, record_id in enumerate(ids):
        if not isinstance(record_id, str) or not _ID_SHAPE.match(record_id):
            raise LogError(
                f"must be a non-empty id without whitespace, got {record_id!r}", field=f"record_ids[{i}]"
            )
    return ids


def _refuse_record_content(value: Any, field: str) -> None:
    if isinstance(value, dict):
        if "body" in value:
            raise LogError(
                "holds a record (an object with a body): the log never holds record content; "
                "name the id, version and digest instead (DESIGN.md §9)",
                field=field,
            )
        for key, item in value.items():
            _refuse_record_content(item, f"{field}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _refuse_record_content(item, f"{field}[{i}]")

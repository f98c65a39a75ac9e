"""Journaled batches: a write of several steps that a kill -9 leaves to be finished, never half done.

A revert of a maintenance proposal writes its correction records, the retired versions and a
verdict; a kill between two of them used to leave the proposal half reverted, and asking
again was refused ("the record changed since it was accepted"). Such a write is a
:class:`Batch` of :class:`Step` values — the signed versions to put, then the log event
that names them — carried out by :func:`run_batch` (issue 20 "Interrupted operations
finish"):

1. the whole batch is saved to ``.cache/write-journal/<key>.json`` (mode 0600, written
   whole: temp file, fsync, rename; it holds record content, which the log never does) and
   a ``batch-intent`` event naming the key is logged;
2. each step puts its versions, then appends its event, whose details carry
   ``{"batch": key, "step": n}``;
3. ``batch-done`` closes it and the file is removed.

:func:`finish_batches` (run by ``Memory.open``) replays every batch left open: it puts each
version the store does not hold yet (compared by canonical bytes), appends each step event
not logged after the intent, then ``batch-done``. Versions are signed before they are
journaled, so what is replayed verifies as what was planned. Never rolled back.

Invariant: a journal file exists exactly while its batch has an intent and no ``batch-done``;
a batch without a Home (no folder) is written step by step with no journal (nothing of an
in-memory store outlives the process).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_memory.errors import RecordError, StoreError
from agent_memory.log.base import LogEntry, OperationLog
from agent_memory.records.record import MemoryRecord
from agent_memory.records.wire import loads_json
from agent_memory.stores.base import RecordStore
from agent_memory.stores.file_io import write_bytes_atomic

__all__ = ["BATCH_DONE", "BATCH_INTENT", "JOURNAL_FOLDER", "Batch", "Step", "finish_batches", "run_batch"]

BATCH_INTENT = "batch-intent"
"""The log action written before a batch's first put."""
BATCH_DONE = "batch-done"
"""The log action that closes a batch."""
JOURNAL_FOLDER = "write-journal"
"""The folder of ``.cache/`` holding the batches in progress."""


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a batch: put ``versions`` (in order), then append one log event.

    Attributes:
        versions: Signed versions to put (may be empty: an event-only step, e.g. a verdict).
        action: The log event's action (``supersede``, ``archive``, ``put``, ``review``…).
        record_ids: The ids the event names.
        details: The event's details (content-free, as every log entry).
    """

    versions: tuple[MemoryRecord, ...]
    action: str
    record_ids: tuple[str, ...]
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Batch:
    """The steps of one multi-step write, under a key unique to it (``revert-cons-…``)."""

    key: str
    steps: tuple[Step, ...]

    def to_bytes(self) -> bytes:
        """Return the journal file's bytes (UTF-8 JSON, records in their wire form)."""
        steps = [
            {
                "versions": [v.to_wire() for v in step.versions],
                "action": step.action,
                "record_ids": list(step.record_ids),
                "details": step.details,
            }
            for step in self.steps
        ]
        return json.dumps({"key": self.key, "steps": steps}, sort_keys=True, ensure_ascii=False).encode(
            "utf-8"
        )

    @classmethod
    def load(cls, path: Path) -> Batch:
        """Read a batch :func:`run_batch` saved.

        Raises:
            StoreError: The file cannot be read or is not a batch.
        """
        try:
            raw = loads_json(path.read_bytes(), path=str(path))
            steps = tuple(
                Step(
                    versions=tuple(MemoryRecord.from_wire(v, path=str(path)) for v in step["versions"]),
                    action=str(step["action"]),
                    record_ids=tuple(str(i) for i in step["record_ids"]),
                    details=dict(step["details"]),
                )
                for step in raw["steps"]
            )
            return cls(key=str(raw["key"]), steps=steps)
        except (OSError, KeyError, TypeError, ValueError, RecordError) as exc:
            raise StoreError(f"unreadable write journal: {exc}", path=str(path)) from None


def run_batch(
    batch: Batch,
    store: RecordStore,
    log: OperationLog,
    *,
    folder: Path | None,
    actor: str,
    now: Any,
    written: Callable[[Sequence[MemoryRecord]], None],
) -> None:
    """Carry ``batch`` out with its journal (module docstring); call under the writer lock.

    Args:
        batch: What to write.
        store: Where the versions go.
        log: Where the intent, each step's event and ``batch-done`` go.
        folder: The journal folder (``.cache/write-journal`` of a Home), or ``None``: no journal.
        actor: Who acts (named in every event).
        now: The clock of the events.
        written: Told of the versions of each step once they are put (the caches).

    Raises:
        StoreError: The journal cannot be written (nothing was put), or a put fails (the
            journal stays: the next open finishes the batch).
    """
    if folder is None:
        for number, step in enumerate(batch.steps):
            _carry(step, number, batch.key, store, log, actor, now, written)
        return
    path = _save(batch, folder)
    intent = log.append(BATCH_INTENT, actor=actor, details={"batch": batch.key}, now=now)
    for number, step in enumerate(batch.steps):
        _carry(step, number, batch.key, store, log, actor, now, written)
    _close(log, intent, batch.key, actor, now)
    path.unlink(missing_ok=True)


def finish_batches(
    folder: Path,
    store: RecordStore,
    log: OperationLog,
    *,
    actor: str,
    now: Any,
    written: Callable[[Sequence[MemoryRecord]], None],
) -> list[str]:
    """Finish every batch a killed process left in ``folder``; return their keys.

    A version is put only when the store does not hold its canonical bytes already; a step's
    event only when no event after the batch's intent carries its step number. A journal
    whose batch is closed (``batch-done`` logged) is only removed.

    Raises:
        StoreError: A journal is unreadable, or a put fails (the journal stays).
    """
    if not folder.is_dir():
        return []
    paths = sorted(folder.glob("*.json"))
    if not paths:
        return []
    entries = list(log.entries())
    finished: list[str] = []
    for path in paths:
        batch = Batch.load(path)
        intent = next(
            (
                e
                for e in reversed(entries)
                if e.action == BATCH_INTENT and e.details.get("batch") == batch.key
            ),
            None,
        )
        closed = intent is not None and any(
            e.action == BATCH_DONE and e.details.get("intent") == intent.seq for e in entries
        )
        if intent is None or closed:
            path.unlink(missing_ok=True)  # killed before its intent (nothing put) or after it closed
            continue
        logged = {
            int(e.details.get("step", -1))
            for e in entries
            if e.seq > intent.seq and e.details.get("batch") == batch.key
        }
        for number, step in enumerate(batch.steps):
            missing = [v for v in step.versions if not _held(store, v)]
            for version in missing:
                store.put(version)
            if missing:
                written(step.versions)
            if number not in logged:
                _append(step, number, batch.key, log, actor, now)
        _close(log, intent, batch.key, actor, now, outcome="rolled-forward")
        path.unlink(missing_ok=True)
        finished.append(batch.key)
    return finished


def _carry(
    step: Step,
    number: int,
    key: str,
    store: RecordStore,
    log: OperationLog,
    actor: str,
    now: Any,
    written: Callable[[Sequence[MemoryRecord]], None],
) -> None:
    numbers = [store.put(version) for version in step.versions]
    if step.versions:
        written(step.versions)
    _append(step, number, key, log, actor, now, numbers)


def _append(
    step: Step,
    number: int,
    key: str,
    log: OperationLog,
    actor: str,
    now: Any,
    numbers: list[int] | None = None,
) -> None:
    details = {**step.details, "batch": key, "step": number}
    if numbers is not None and step.versions:
        details["versions"] = numbers
    log.append(step.action, actor=actor, record_ids=step.record_ids, details=details, now=now)


def _close(
    log: OperationLog, intent: LogEntry, key: str, actor: str, now: Any, outcome: str = "done"
) -> None:
    log.append(
        BATCH_DONE, actor=actor, details={"batch": key, "intent": intent.seq, "outcome": outcome}, now=now
    )


def _held(store: RecordStore, version: MemoryRecord) -> bool:
    if not store.contains(version.id):
        return False
    wanted = version.canonical_bytes()
    return any(held.canonical_bytes() == wanted for held in store.history(version.id))


def _save(batch: Batch, folder: Path) -> Path:
    path = folder / f"{batch.key}.json"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_bytes_atomic(path, batch.to_bytes(), mode=0o600)
    except OSError as exc:
        raise StoreError(f"cannot write the write journal: {exc.strerror or exc}", path=str(path)) from None
    return path

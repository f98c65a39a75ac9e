"""Signed checkpoints of a Home's log head, kept where the Home's own files cannot reach them (issue 19).

The hash chain (:mod:`agent_memory.log.chain`) proves order, not completeness: a cut tail,
or a line edited and every later ``prev`` recomputed, still verifies. A :class:`Checkpoint`
pins the head: ``(seq, head digest)`` and the first seq of each month file, signed with the
Home's Ed25519 key (domain ``fg-agent-memory/v1/log-checkpoint``, as records are signed,
:mod:`agent_memory.records.signing`). Two witnesses keep checkpoints:

- the **checkpoint file** beside the key, in the user's config folder, outside the Home
  (``<key stem>.<folder digest>.checkpoint.json``, one per Home folder): rewritten after
  every write batch, i.e. every time the Home's writer lock is released with a log head it
  does not hold yet (:func:`record_checkpoint`);
- every **git commit** the Home makes carries one as its ``Agent-Memory-Checkpoint`` trailer
  (:func:`trailer`), so a clone or a copy on another machine is still witnessed.

The read path consults the first witness too (:class:`HeadWitness`): the withdrawal gate
(:class:`~agent_memory.governance.gate.Gate`) exposes nothing while the log no longer holds
a checkpoint the file holds, so a cut log cannot bring back a record it had withdrawn,
erased or superseded.

Invariants:

- The write path costs one small file read and, when the head moved, one small atomic file
  write; it reads the log's last line and the first line of each month file, never the log.
- A checkpoint file whose newest checkpoint the log no longer holds is not overwritten
  silently: that checkpoint moves to ``kept`` (at most :data:`KEPT` of them), so the next
  write cannot launder a cut tail; :mod:`agent_memory.doctor.log_audit` reports it.
- Nothing here raises into a write: :func:`record_checkpoint` reports failure by returning
  ``None`` (the audit then names the entries no checkpoint covers).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from fg_agent_id import KeyPair

from agent_memory.errors import AgentMemoryError, LogError, RecordError, SignatureError
from agent_memory.log.base import LogEntry
from agent_memory.log.jsonl import JsonlLog
from agent_memory.log.month_file import first_seq
from agent_memory.records.signing import address_of, sign_payload, verify_payload
from agent_memory.records.wire import canonical_json, format_timestamp, loads_json, parse_timestamp

__all__ = [
    "CHECKPOINT_FORMAT",
    "CONTEXT",
    "KEPT",
    "TRAILER",
    "Checkpoint",
    "CheckpointFile",
    "HeadWitness",
    "checkpoint_path",
    "git_checkpoints",
    "make_checkpoint",
    "record_checkpoint",
    "trailer",
]

CHECKPOINT_FORMAT = "agent-memory-checkpoint/1"
FILE_FORMAT = "agent-memory-checkpoints/1"
CONTEXT = "log-checkpoint"
TRAILER = "Agent-Memory-Checkpoint"
KEPT = 20
"""At most this many checkpoints the log stopped matching stay in the checkpoint file."""

_FIELDS = frozenset({"format", "home", "seq", "head", "time", "months", "signed_by", "signature"})


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A signed statement "this Home's log held entry ``seq`` with digest ``head``".

    Attributes:
        home: The Home's ``home_id`` (``memory.toml``), so a checkpoint of another Home never counts.
        seq: The head's seq (≥ 1).
        head: SHA-256 (64 lowercase hex) of the head's stored line: the next entry's ``prev``.
        time: The head entry's time (aware, UTC).
        months: ``YYYY-MM`` → the first seq its month file held, for every month file up to the head.
        signed_by: The ``amp:key:`` address of the signing key.
        signature: Standard base64 of the Ed25519 signature over the other fields.
    """

    home: str
    seq: int
    head: str
    time: datetime
    months: Mapping[str, int] = field(default_factory=dict)
    signed_by: str = ""
    signature: str = ""

    def payload(self) -> dict[str, Any]:
        """Return the signed object: every field but ``signature``."""
        return {
            "format": CHECKPOINT_FORMAT,
            "home": self.home,
            "seq": self.seq,
            "head": self.head,
            "time": format_timestamp(self.time),
            "months": dict(sorted(self.months.items())),
            "signed_by": self.signed_by,
        }

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON object stored in the checkpoint file and in a git trailer."""
        return {**self.payload(), "signature": self.signature}

    def verify(self, address: str | None = None) -> None:
        """Check the signature, and that the signer is ``address`` when one is given.

        Raises:
            SignatureError: Signed by another key than ``address``, or the signature fails.
        """
        if address is not None and self.signed_by != address:
            raise SignatureError(f"signed by {self.signed_by}, not by this Home's key {address}")
        verify_payload(self.signed_by, CONTEXT, self.payload(), self.signature)

    @classmethod
    def from_wire(cls, wire: Any, *, where: str) -> Checkpoint:
        """Read a checkpoint object strictly (the signature is checked by :meth:`verify`).

        Raises:
            LogError: Not a checkpoint (a missing, extra or malformed field), naming ``where``.
        """
        if not isinstance(wire, dict) or set(wire) != _FIELDS or wire.get("format") != CHECKPOINT_FORMAT:
            raise LogError(f"not a {CHECKPOINT_FORMAT} object", path=where)
        months = wire["months"]
        ok = (
            isinstance(wire["seq"], int)
            and not isinstance(wire["seq"], bool)
            and wire["seq"] >= 1
            and all(isinstance(wire[k], str) for k in ("home", "head", "time", "signed_by", "signature"))
            and isinstance(months, dict)
            and all(isinstance(v, int) and not isinstance(v, bool) for v in months.values())
        )
        if not ok:
            raise LogError("a checkpoint field has the wrong type", path=where)
        try:
            time = parse_timestamp(wire["time"], "time", strict=True)
        except RecordError as exc:
            raise LogError(exc.detail, path=where, field="time") from None
        return cls(
            wire["home"], wire["seq"], wire["head"], time, months, wire["signed_by"], wire["signature"]
        )


def make_checkpoint(
    log: JsonlLog,
    keys: KeyPair,
    home_id: str,
    *,
    head: LogEntry | None = None,
    known_months: Mapping[str, int] | None = None,
) -> Checkpoint | None:
    """Sign a checkpoint of the log's current head (``None`` for an empty log); write nothing.

    Reads the last line and the first line of each month file not in ``known_months`` (the
    months of an earlier checkpoint the log still holds), never the whole log.

    Raises:
        LogError: The head or a month file's first line cannot be read.
    """
    head = head if head is not None else log.last()
    if head is None:
        return None
    months: dict[str, int] = {}
    for path in log.month_files():
        first = known_months.get(path.stem) if known_months else None
        first = first if first is not None else first_seq(path)
        if first is not None and first <= head.seq:
            months[path.stem] = first
    unsigned = Checkpoint(home_id, head.seq, head.digest, head.time, months, address_of(keys))
    signature = sign_payload(keys, CONTEXT, unsigned.payload())
    return Checkpoint(home_id, head.seq, head.digest, head.time, months, unsigned.signed_by, signature)


def checkpoint_path(key_file: Path, root: Path) -> Path:
    """Return where the checkpoint file of the Home at ``root`` with key ``key_file`` lives: beside the key.

    One file per Home folder (``<key stem>.<12 hex of the folder's path>.checkpoint.json``):
    a copy of the Home in another folder shares its key and id but not its log's future, so
    it is witnessed by its git trailers only, like a clone on another machine.
    """
    return _checkpoint_path(key_file, root, os.getcwd() if not root.is_absolute() else "")


@functools.lru_cache(maxsize=64)
def _checkpoint_path(key_file: Path, root: Path, cwd: str) -> Path:
    # Resolving the folder costs a system call per part of its path, on every write.
    digest = hashlib.sha256(str(root.resolve()).encode("utf-8")).hexdigest()[:12]
    return key_file.with_name(f"{key_file.stem}.{digest}.checkpoint.json")


@dataclass(frozen=True, slots=True)
class CheckpointFile:
    """The checkpoint file beside a Home's key: its newest checkpoint and the ones the log lost.

    Args:
        path: ``<config>/keys/<home_id>.<folder digest>.checkpoint.json`` by default
            (:func:`checkpoint_path`).
    """

    path: Path

    def read(self) -> tuple[Checkpoint | None, list[Checkpoint]]:
        """Return ``(newest, kept)``; ``(None, [])`` when the file does not exist.

        Raises:
            LogError: The file exists but cannot be read as a checkpoint file (naming it).
        """
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None, []
        except OSError as exc:
            raise LogError(f"cannot read the checkpoint file: {exc.strerror}", path=str(self.path)) from None
        read = _READ.get(str(self.path))
        if read is not None and read[0] == data:
            return read[1], list(read[2])  # the same bytes read the same way: the write path's file
        newest, kept = self._parse(data)
        _remember_read(self.path, data, newest, kept)
        return newest, kept

    def _parse(self, data: bytes) -> tuple[Checkpoint | None, list[Checkpoint]]:
        try:
            wire = loads_json(data)
        except RecordError as exc:
            raise LogError(exc.detail, path=str(self.path)) from None
        if (
            not isinstance(wire, dict)
            or wire.get("format") != FILE_FORMAT
            or not isinstance(wire.get("kept"), list)
        ):
            raise LogError(f"not a {FILE_FORMAT} file", path=str(self.path))
        where = str(self.path)
        return Checkpoint.from_wire(wire.get("newest"), where=where), [
            Checkpoint.from_wire(item, where=where) for item in wire["kept"]
        ]

    def write(self, newest: Checkpoint, kept: list[Checkpoint]) -> None:
        """Replace the file atomically (a temporary file, fsync, rename; mode 0600).

        Raises:
            OSError: The folder cannot be written.
        """
        wire = {
            "format": FILE_FORMAT,
            "newest": newest.to_wire(),
            "kept": [c.to_wire() for c in kept[-KEPT:]],
        }
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temp = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex}.tmp")
        data = canonical_json(wire) + b"\n"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, self.path)
        finally:
            temp.unlink(missing_ok=True)
        _remember_read(self.path, data, newest, kept[-KEPT:])


_READ: dict[str, tuple[bytes, Checkpoint | None, tuple[Checkpoint, ...]]] = {}
"""Checkpoint file path -> (bytes last read or written, what they hold): spares the parse per write."""
_READ_KEPT = 16


def _remember_read(path: Path, data: bytes, newest: Checkpoint | None, kept: list[Checkpoint]) -> None:
    if len(_READ) >= _READ_KEPT:
        _READ.clear()
    _READ[str(path)] = (data, newest, tuple(kept))


def record_checkpoint(
    log: JsonlLog, keys: KeyPair, home_id: str, path: Path, *, before: LogEntry | None = None
) -> Checkpoint | None:
    """Anchor the log's head in the checkpoint file after a write batch; return the newest checkpoint.

    Nothing is written when the file already holds the head. When the file's newest
    checkpoint is no longer in the log (a tail cut, a line rewritten since), it is kept in
    the file's ``kept`` list instead of being overwritten. Called under the Home's writer lock.

    Args:
        log: The Home's log.
        keys: The Home's key pair.
        home_id: The Home's id.
        path: The checkpoint file (:func:`checkpoint_path`).
        before: The head when the writer lock was taken: when the file's checkpoint is that
            entry, the batch only appended after it, so the log is not read to check it.

    Returns:
        The checkpoint the file now holds as newest, or ``None`` when the log is empty or the
        file could not be read or written (the write that came before is never failed by it).
    """
    try:
        head = log.last()
        if head is None:
            return None
        file = CheckpointFile(path)
        try:
            newest, kept = file.read()
        except LogError:
            newest, kept = None, []  # a damaged file is replaced; log --verify reported it
        if newest is not None and newest.home != home_id:
            newest = None
        if newest is not None and (newest.seq, newest.head) == (head.seq, head.digest):
            return newest
        known: Mapping[str, int] | None = None
        if newest is not None:
            same = before is not None and (newest.seq, newest.head) == (before.seq, before.digest)
            if same or _log_holds(log, newest, head):
                known = newest.months
            else:
                kept = [*kept, newest]
        made = make_checkpoint(log, keys, home_id, head=head, known_months=known)
        if made is None:
            return None
        file.write(made, kept)
        return made
    except (AgentMemoryError, OSError):
        return None


@dataclass(frozen=True, slots=True)
class HeadWitness:
    """The checkpoint file as the read path consults it: does the log still hold every checkpoint in it?

    Only checkpoints of this Home, signed by its key, that verify, count here: a file that
    cannot be read, or a checkpoint that does not verify, is a failure of ``log --verify`` and
    ``doctor`` (:mod:`agent_memory.doctor.log_audit`), not a reason to refuse a read. The git
    trailers are not read here (a subprocess per read); the audit compares them.

    Args:
        path: The checkpoint file (:func:`checkpoint_path`).
        home_id: The Home's id.
        address: The ``amp:key:`` address of the Home's key.
    """

    path: Path
    home_id: str
    address: str

    def stamp(self) -> tuple[int, int, int] | None:
        """Return the file's ``(inode, size, mtime ns)`` (``None`` when missing): what a cache keys on."""
        try:
            info = self.path.stat()
        except OSError:
            return None
        return (info.st_ino, info.st_size, info.st_mtime_ns)

    def cut(self, log: JsonlLog, head: LogEntry | None) -> str | None:
        """Return why ``log`` (whose head is ``head``) no longer holds a checkpoint of the file, or ``None``.

        Reads the file and, for a checkpoint older than the head, one entry of the log; the
        newest checkpoint first, then those the file kept after the log stopped holding them
        (a write after a cut does not launder it). Never raises: a log that cannot be read at
        the checkpoint's seq does not hold it.

        A writer of another process may append and sign a newer head between the caller's
        read of ``head`` and this read of the file; a writer signs only what its log already
        holds, so the head is read again, after the file, before anything counts as cut.
        """
        try:
            newest, kept = CheckpointFile(self.path).read()
        except LogError:
            return None
        fresh: list[LogEntry | None] = []

        def holds(checkpoint: Checkpoint) -> bool:
            if head is not None and _log_holds(log, checkpoint, head):
                return True
            if not fresh:
                try:
                    fresh.append(log.last())
                except LogError:
                    fresh.append(None)
            return fresh[0] is not None and _log_holds(log, checkpoint, fresh[0])

        for checkpoint, was_kept in [*([(newest, False)] if newest else []), *((c, True) for c in kept)]:
            if checkpoint.home != self.home_id or checkpoint.signed_by != self.address:
                continue
            try:
                checkpoint.verify()
            except SignatureError:
                continue
            if holds(checkpoint):
                continue
            head = fresh[0] if fresh else head
            signed = f"seq {checkpoint.seq} of {format_timestamp(checkpoint.time)}"
            where = f"the checkpoint file beside the Home's key holds {signed}"
            if was_kept:
                where += " (kept: the log had stopped holding it before a later write)"
            end = head.seq if head is not None else 0
            if end < checkpoint.seq:
                return f"the log ends at seq {end} but {where}: entries were cut from it"
            return (
                f"the log no longer holds seq {checkpoint.seq} as signed: {where}; "
                "a line was rewritten or removed"
            )
        return None


def _log_holds(log: JsonlLog, checkpoint: Checkpoint, head: LogEntry) -> bool:
    """Whether the log still holds the checkpointed entry unchanged (reads one entry at most)."""
    if checkpoint.seq > head.seq:
        return False
    if checkpoint.seq == head.seq:
        return checkpoint.head == head.digest
    try:
        entry = next(iter(log.entries(since_seq=checkpoint.seq - 1)), None)
    except LogError:
        return False
    return entry is not None and entry.seq == checkpoint.seq and entry.digest == checkpoint.head


def trailer(checkpoint: Checkpoint) -> str:
    """Return the git trailer line ``Agent-Memory-Checkpoint: <canonical JSON>`` for a commit message."""
    return f"{TRAILER}: {canonical_json(checkpoint.to_wire()).decode('utf-8')}"


def git_checkpoints(root: Path) -> tuple[list[tuple[str, Checkpoint]], list[str]]:
    """Return the checkpoints in the trailers of the commits reachable from ``HEAD``, and the unreadable ones.

    Returns:
        ``([(short commit id, checkpoint)], [problem])``: newest commit first; both empty when
        git is absent or ``root`` is not a repository with a commit.
    """
    git = shutil.which("git")
    if git is None or not (root / ".git").exists():
        return [], []
    result = subprocess.run(  # noqa: S603 - fixed git arguments, no shell
        [git, "log", "HEAD", f"--format=%h%x1f%(trailers:key={TRAILER},valueonly,unfold,separator=%x1d)%x1e"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    if result.returncode != 0:
        return [], []  # no commit yet
    found: list[tuple[str, Checkpoint]] = []
    problems: list[str] = []
    for record in result.stdout.decode("utf-8", "replace").split("\x1e"):
        commit, _, values = record.strip().partition("\x1f")
        for value in filter(None, (v.strip() for v in values.split("\x1d"))):
            where = f"git commit {commit}"
            try:
                found.append((commit, Checkpoint.from_wire(json.loads(value), where=where)))
            except (ValueError, LogError) as exc:
                problems.append(f"{where}: its {TRAILER} trailer is unreadable ({exc})")
    return found, problems

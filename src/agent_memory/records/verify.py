"""Check files in the wire formats: MemoryFiles, single JSON records and Markdown note files.

Each file yields one :class:`Finding` per record (and one for a MemoryFile itself), so a
caller can print one line per record. Nothing is written or repaired: a file that fails
is reported and left as it is (seed 001 verify-by-default; DESIGN.md §7 bad input).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from agent_memory.errors import AgentMemoryError, RecordError
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.record import MemoryRecord
from agent_memory.records.signing import verify_record
from agent_memory.records.wire import loads_json

__all__ = ["Finding", "verify_file", "verify_paths"]

_SUFFIXES = (".md", ".json")


@dataclass(frozen=True, slots=True)
class Finding:
    """The outcome of checking one record or one MemoryFile.

    Attributes:
        path: The file checked.
        what: ``record``, ``memory-file`` or ``file`` (the file could not be read as either).
        ok: True when every check passed.
        record_id: The record's id, when one could be read.
        signed_by: The signer's address, or ``None`` when unsigned.
        error: The failure, as the error's one-line message, when not ``ok``.
        field: The wire field at fault, when known.
    """

    path: str
    what: str
    ok: bool
    record_id: str | None = None
    signed_by: str | None = None
    error: str | None = None
    field: str | None = None

    def to_json(self) -> dict[str, object]:
        """Return the finding as a JSON object (for ``verify --json``)."""
        return {
            "path": self.path,
            "what": self.what,
            "ok": self.ok,
            "record_id": self.record_id,
            "signed_by": self.signed_by,
            "error": self.error,
            "field": self.field,
        }


def verify_paths(paths: Iterable[str | Path]) -> Iterator[Finding]:
    """Check every file named, walking directories for ``*.md`` and ``*.json`` files (sorted).

    A folder that is a Home (it holds ``memory.toml``) is checked through its ``notes/``;
    hidden files and folders (``.cache``, temp files) are skipped.

    A path that does not exist yields a failed finding rather than raising.
    """
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            # A Home holds generated views and caches beside its notes: check only notes/.
            root = path / "notes" if (path / "memory.toml").is_file() else path
            files = (p for p in root.rglob("*") if p.is_file() and p.suffix in _SUFFIXES)
            for child in sorted(
                p for p in files if not any(part.startswith(".") for part in p.relative_to(root).parts)
            ):
                yield from verify_file(child)
        else:
            yield from verify_file(path)


def verify_file(path: Path) -> Iterator[Finding]:
    """Check one file: parse it, check ids and invariants, and verify every signature present.

    ``.md`` files are note files; other files are JSON, either a MemoryFile (an object with
    ``records``) or a single record. A MemoryFile must be signed by its agent.
    """
    name = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        yield Finding(name, "file", False, error=f"{name}: cannot read: {exc.strerror or exc}")
        return
    if path.suffix == ".md":
        yield _check_record(name, lambda: _load_note(data, name))
        return
    try:
        wire = loads_json(data, path=name)
    except RecordError as exc:
        yield _failed(name, "file", exc)
        return
    if isinstance(wire, dict) and "records" in wire:
        yield from _check_memory_file(name, wire)
    else:
        yield _check_record(name, lambda: MemoryRecord.from_wire(wire, path=name))


def _load_note(data: bytes, name: str) -> MemoryRecord:
    from agent_memory.records.note import load_note

    return load_note(data, path=name)


def _check_record(name: str, load: Callable[[], MemoryRecord]) -> Finding:
    try:
        record = load()
    except AgentMemoryError as exc:
        return _failed(name, "record", exc)
    try:
        if record.signed_by or record.signature:
            verify_record(record, path=name)
    except AgentMemoryError as exc:
        return _failed(name, "record", exc, record_id=record.id)
    return Finding(name, "record", True, record_id=record.id, signed_by=record.signed_by)


def _check_memory_file(name: str, wire: dict[str, object]) -> Iterator[Finding]:
    try:
        memory_file = MemoryFile.from_wire(wire, path=name)
    except AgentMemoryError as exc:
        yield _failed(name, "memory-file", exc)
        return
    try:
        memory_file.verify_file_signature(path=name)
        yield Finding(name, "memory-file", True, signed_by=memory_file.agent)
    except AgentMemoryError as exc:
        yield _failed(name, "memory-file", exc)
    for record in memory_file.records:
        yield _check_record(name, functools.partial(_same, record))


def _same(record: MemoryRecord) -> MemoryRecord:
    return record


def _failed(name: str, what: str, exc: AgentMemoryError, *, record_id: str | None = None) -> Finding:
    return Finding(name, what, False, record_id=exc.record_id or record_id, error=str(exc), field=exc.field)

"""`MemoryFile`: the portable, signed export of a memory (origin-notes §1.7).

A MemoryFile is one canonical-JSON object ``{format, agent, created_at, records, signature}``
plus any unknown fields (kept in ``extra``, re-emitted and signed). Its signature is by the
owning agent (``agent``) under the ``memory-file`` context, over the object without
``signature``. Verification is strict: a missing signature or agent is a failure, never a
skip, and every record that names a signer is verified too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fg_agent_id import KeyPair

from agent_memory.errors import AgentMemoryError, RecordError, SignatureError
from agent_memory.records.record import MemoryRecord
from agent_memory.records.signing import (
    CONTEXT_MEMORY_FILE,
    address_of,
    sign_payload,
    verify_payload,
    verify_record,
)
from agent_memory.records.wire import (
    FORMAT_VERSION,
    canonical_json,
    format_timestamp,
    loads_json,
    parse_timestamp,
)

__all__ = ["MemoryFile"]

_FILE_FIELDS = ("format", "agent", "created_at", "records", "signature")


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryFile:
    """A set of records exported by one agent, optionally signed by it.

    Attributes:
        created_at: When the file was written (aware UTC, milliseconds).
        records: The latest version of every exported record, in export order.
        agent: The owning agent's ``amp:key:`` address; required to sign.
        format: The wire format tag, ``fg-agent-memory/0.1``.
        signature: Base64 Ed25519 signature, ``""`` when unsigned.
        extra: Unknown top-level fields, kept and signed.
    """

    created_at: datetime
    records: tuple[MemoryRecord, ...] = ()
    agent: str | None = None
    format: str = FORMAT_VERSION
    signature: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "created_at", parse_timestamp(self.created_at, "created_at"))
        object.__setattr__(self, "records", tuple(self.records))
        if not isinstance(self.format, str) or not self.format.startswith("fg-agent-memory/"):
            raise RecordError(f"unsupported format {self.format!r}", field="format")
        if self.agent is not None and not isinstance(self.agent, str):
            raise RecordError("must be an amp:key address or null", field="agent")
        if not isinstance(self.signature, str):
            raise RecordError("must be a string", field="signature")
        shadowed = sorted(set(self.extra) & set(_FILE_FIELDS))
        if shadowed:
            raise RecordError(f"extra fields shadow file fields: {shadowed}", field="extra")

    # ------------------------------------------------------------------ wire

    def to_wire(self) -> dict[str, Any]:
        """Return the wire object: format, agent, created_at, records, signature, then extra."""
        return {
            "format": self.format,
            "agent": self.agent,
            "created_at": format_timestamp(self.created_at),
            "records": [record.to_wire() for record in self.records],
            "signature": self.signature,
            **self.extra,
        }

    def canonical_bytes(self) -> bytes:
        """Return the canonical JSON of the file without its signature (the signed payload)."""
        return canonical_json(self._payload())

    def dumps(self) -> bytes:
        """Return the bytes of the file on disk: canonical JSON of the full object."""
        return canonical_json(self.to_wire())

    @classmethod
    def loads(cls, data: bytes | str, *, path: str | None = None) -> MemoryFile:
        """Parse a MemoryFile from JSON text (strict JSON: UTF-8, no duplicate keys).

        Raises:
            RecordError: Naming ``path``, and the record and field where one is at fault.
        """
        return cls.from_wire(loads_json(data, path=path), path=path)

    @classmethod
    def from_wire(cls, data: Any, *, path: str | None = None) -> MemoryFile:
        """Parse a MemoryFile wire object; each record is parsed by :meth:`MemoryRecord.from_wire`.

        Raises:
            RecordError: Not an object, no ``records`` array, or a bad file or record field.
        """
        try:
            if not isinstance(data, Mapping):
                raise RecordError(f"a MemoryFile must be an object, got {type(data).__name__}")
            if "created_at" not in data:
                raise RecordError("required field is missing", field="created_at")
            raw_records = data.get("records", [])
            if not isinstance(raw_records, list):
                raise RecordError("must be an array of records", field="records")
            records = []
            for i, raw in enumerate(raw_records):
                try:
                    records.append(MemoryRecord.from_wire(raw))
                except RecordError as exc:
                    exc.field = f"records[{i}].{exc.field}" if exc.field else f"records[{i}]"
                    raise exc.located() from None
            return cls(
                format=data.get("format", FORMAT_VERSION),
                agent=data.get("agent"),
                created_at=data["created_at"],
                records=tuple(records),
                signature=data.get("signature", ""),
                extra={k: v for k, v in data.items() if k not in _FILE_FIELDS},
            )
        except AgentMemoryError as exc:
            raise exc.located(path=path) from None

    # ------------------------------------------------------------------ signatures

    def sign(self, keys: KeyPair) -> MemoryFile:
        """Return this file with ``agent`` set to the key's address and signed by it."""
        unsigned = dataclasses.replace(self, agent=address_of(keys), signature="")
        return dataclasses.replace(
            unsigned, signature=sign_payload(keys, CONTEXT_MEMORY_FILE, unsigned._payload())
        )

    def verify(self, *, path: str | None = None) -> None:
        """Verify the file signature by ``agent`` and every record that names a signer.

        Raises:
            SignatureError: The file is unsigned, has no agent, or a signature fails; the
                record at fault is named.
        """
        self.verify_file_signature(path=path)
        for record in self.signed_records():
            verify_record(record, path=path)

    def verify_file_signature(self, *, path: str | None = None) -> None:
        """Verify only the file-level signature by ``agent`` (not the records' own signatures).

        Raises:
            SignatureError: The file is unsigned, names no agent, or the signature fails.
        """
        try:
            if not self.agent:
                raise SignatureError("the file names no agent, so it cannot be verified", field="agent")
            if not self.signature:
                raise SignatureError("the file is not signed", field="signature")
            verify_payload(self.agent, CONTEXT_MEMORY_FILE, self._payload(), self.signature)
        except SignatureError as exc:
            raise exc.located(path=path) from None

    def signed_records(self) -> Iterable[MemoryRecord]:
        """Yield the records that carry ``signed_by`` or a signature (those verify checks)."""
        return (r for r in self.records if r.signed_by or r.signature)

    def _payload(self) -> dict[str, Any]:
        payload = self.to_wire()
        del payload["signature"]
        return payload

"""`MemoryRecord`: one versioned memory item in the fg-agent-memory 0.1 wire format.

Invariants kept here (seed 001, origin-notes §1.3-§1.5, DESIGN.md §2 and §9):

- ``id = "mem:" + sha256(canonical_json(birth))[:32]`` where the birth is
  ``{type, body, slots, provenance, created_at}``; a given id must match, an empty one is filled in.
- The wire field set, defaults and order are the origin's; ``occurred_at`` and the redaction
  fields appear only when set; the extension fields of DESIGN.md §9 are plain top-level
  fields (an origin reader keeps them in its ``extra``) and appear only when set; unknown
  fields are kept in ``extra`` and re-emitted, so signatures cover them.
- The construction invariants (rule needs evidence, transitional iff a transition block, …)
  hold for every instance; a violation is a :class:`RecordError` naming the field.

Lifecycle moves live in :mod:`agent_memory.records.lifecycle`; signing in :mod:`agent_memory.records.signing`.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import operator
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from agent_memory.errors import RecordError
from agent_memory.records.fields import (
    DIGEST_PATTERN,
    EXTENSION_FIELDS,
    KNOWN_FIELDS,
    OPTIONAL_FIELDS,
    RECORD_ID_PATTERN,
    WIRE_FIELDS,
    EpistemicStatus,
    Kind,
    Provenance,
    RecordType,
    Scope,
    State,
    Transition,
    check_plain_text,
    parse_record_type,
    require_optional_str,
    require_str,
    string_tuple,
)
from agent_memory.records.wire import (
    canonical_json,
    check_json_value,
    confidence_from_wire,
    confidence_to_wire,
    format_timestamp,
    parse_timestamp,
)

__all__ = [
    "EXTENSION_FIELDS",
    "RECORD_ID_PATTERN",
    "WIRE_FIELDS",
    "EpistemicStatus",
    "Kind",
    "MemoryRecord",
    "Provenance",
    "RecordType",
    "Scope",
    "State",
    "Transition",
    "check_plain_text",
    "compute_record_id",
    "copy_record",
    "parse_record_type",
]


_CANONICAL: dict[int, tuple[MemoryRecord, bytes]] = {}
"""``id(record)`` -> (the record, its canonical bytes), oldest first; see ``canonical_bytes``."""
_CANONICAL_KEPT = 2048  # above a batch of remember_many (500 records, each read by 4 holders)
_CANONICAL_LOCK = threading.Lock()


def compute_record_id(birth: Mapping[str, Any], *, checked: bool = False) -> str:
    """Return the content address ``mem:<32 hex>`` of a birth object (origin-notes §1.4).

    ``checked``: every value of ``birth`` has passed ``check_json_value`` (see ``canonical_json``).

    Raises:
        RecordError: ``birth`` is not canonical JSON.
    """
    return "mem:" + hashlib.sha256(canonical_json(dict(birth), checked=checked)).hexdigest()[:32]


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryRecord:
    """One version of a memory record; immutable, validated on construction.

    Build a new record with :meth:`create`, read one with :meth:`from_wire`, derive the next
    version with :meth:`evolve` (lifecycle helpers do this). Timestamps are aware UTC
    datetimes truncated to milliseconds; ``confidence`` is a float in [0, 1] carried as a
    4-decimal string on the wire. Extension fields are ``None`` when absent from the wire;
    the ``effective_*`` properties give their defaults.

    Raises:
        RecordError: On construction, for any field of the wrong type or value, a broken
            invariant, or an ``id`` that does not match the birth content.
    """

    id: str = ""
    type: RecordType
    body: str
    slots: dict[str, Any] = field(default_factory=dict)
    state: State = State.ACTIVE
    confidence: float = 1.0
    created_at: datetime
    updated_at: datetime | None = None
    provenance: Provenance
    evidence: tuple[str, ...] = ()
    supersedes: str | None = None
    superseded_by: str | None = None
    transition: Transition | None = None
    state_reason: str | None = None
    tags: tuple[str, ...] = ()
    flagged: bool = False
    flag_reason: str | None = None
    signed_by: str | None = None
    signature: str = ""
    occurred_at: datetime | None = None
    redacted: bool = False
    redaction_reason: str | None = None
    birth_digest: str | None = None
    # DESIGN.md §9 extension fields.
    kind: Kind | None = None
    subject: str | None = None
    namespace: str | None = None
    scope: Scope | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    taint: tuple[str, ...] | None = None
    sources: tuple[str, ...] | None = None
    epistemic_status: EpistemicStatus | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ construction

    def __post_init__(self) -> None:
        try:
            self._normalise()
            self._check_invariants()
        except RecordError as exc:
            raise exc.located(record_id=self.id or None) from None

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    def _normalise(self) -> None:
        for name, enum in (
            ("type", RecordType),
            ("state", State),
            ("kind", Kind),
            ("scope", Scope),
            ("epistemic_status", EpistemicStatus),
        ):
            value = getattr(self, name)
            if value is None and name in ("kind", "scope", "epistemic_status"):
                continue
            try:
                self._set(name, enum(value))
            except ValueError:
                allowed = ", ".join(enum)
                raise RecordError(f"unknown value {value!r} (one of: {allowed})", field=name) from None
        for name in ("created_at", "updated_at", "occurred_at"):
            value = getattr(self, name)
            if value is not None:
                self._set(name, parse_timestamp(value, name))
        for name in ("valid_from", "valid_to"):
            value = getattr(self, name)
            if value is not None:
                self._set(name, parse_timestamp(value, name, strict=isinstance(value, str)))
        if self.updated_at is None:
            self._set("updated_at", self.created_at)
        if isinstance(self.confidence, str):
            self._set("confidence", confidence_from_wire(self.confidence))
        else:
            self._set("confidence", float(confidence_to_wire(self.confidence)))
        if isinstance(self.provenance, Mapping):
            self._set("provenance", Provenance.from_wire(self.provenance))
        if isinstance(self.transition, Mapping):
            self._set("transition", Transition.from_wire(self.transition))
        for name in ("evidence", "tags"):
            self._set(name, string_tuple(getattr(self, name), name))
        for name in ("taint", "sources"):
            value = getattr(self, name)
            if value is not None:
                self._set(name, string_tuple(value, name, non_empty=True))
        for name in ("slots", "extra"):
            value = getattr(self, name)
            if not isinstance(value, Mapping):
                raise RecordError(f"must be an object, got {type(value).__name__}", field=name)
            self._set(name, dict(value))

    def _check_invariants(self) -> None:
        require_str(self.body, "body")
        for name in (
            "supersedes",
            "superseded_by",
            "state_reason",
            "flag_reason",
            "signed_by",
            "redaction_reason",
            "birth_digest",
            "subject",
            "namespace",
        ):
            require_optional_str(getattr(self, name), name)
        require_str(self.signature, "signature")
        if not isinstance(self.provenance, Provenance):
            raise RecordError("must be a Provenance or an object", field="provenance")
        if self.transition is not None and not isinstance(self.transition, Transition):
            raise RecordError("must be a Transition, an object or null", field="transition")
        for name in ("flagged", "redacted"):
            if not isinstance(getattr(self, name), bool):
                raise RecordError("must be true or false", field=name)
        shadowed = sorted(set(self.extra) & KNOWN_FIELDS)
        if shadowed:
            raise RecordError(f"extra fields shadow wire fields: {shadowed}", field="extra")
        # Extra field names are object keys of the wire object: strings, in NFC (canonical JSON).
        check_json_value(dict.fromkeys(self.extra), "extra")
        for name, value in self._wire_items(include_extra=True):
            check_json_value(value, name)

        if self.type is RecordType.RULE and not self.evidence:
            raise RecordError("a rule needs at least one evidence record id", field="evidence")
        if (self.state is State.TRANSITIONAL) != (self.transition is not None):
            raise RecordError(
                "a transition block is present exactly when the state is transitional", field="transition"
            )
        if self.state is State.SUPERSEDED and not self.superseded_by:
            raise RecordError("a superseded record must name its successor", field="superseded_by")
        if self.superseded_by is not None and self.state not in (State.SUPERSEDED, State.ARCHIVED):
            raise RecordError("only a superseded or archived record names a successor", field="superseded_by")
        if self.flagged and self.type is not RecordType.RULE:
            raise RecordError("only rules can be flagged", field="flagged")
        self._check_extensions()
        if self.redacted:
            self._check_tombstone()
        else:
            for name in ("redaction_reason", "birth_digest"):
                if getattr(self, name) is not None:
                    raise RecordError("only a redacted record carries redaction fields", field=name)
            expected = compute_record_id(self.birth(), checked=True)  # its parts were checked above
            if not self.id:
                self._set("id", expected)
            elif self.id != expected:
                raise RecordError(f"does not match the birth content (expected {expected})", field="id")

    def _check_extensions(self) -> None:
        if self.kind is Kind.STATE and not self.subject:
            raise RecordError("a state record needs a subject", field="subject")
        if self.subject is not None and self.kind is not Kind.STATE:
            raise RecordError("only a record of kind 'state' has a subject", field="subject")
        if self.namespace is not None and (
            not self.namespace
            or self.namespace != self.namespace.strip()
            or any(ord(c) < 32 for c in self.namespace)
        ):
            raise RecordError(f"not a usable namespace: {self.namespace!r}", field="namespace")

    def _check_tombstone(self) -> None:
        if self.state is not State.ARCHIVED:
            raise RecordError("a redacted record must be archived", field="state")
        if not self.redaction_reason:
            raise RecordError("a redacted record needs a reason", field="redaction_reason")
        if not self.birth_digest or not DIGEST_PATTERN.match(self.birth_digest):
            raise RecordError("must be 64 lowercase hex characters", field="birth_digest")
        if self.id != "mem:" + self.birth_digest[:32]:
            raise RecordError("the id must be the prefix of birth_digest", field="id")

    # ------------------------------------------------------------------ public API

    @classmethod
    def create(
        cls,
        *,
        type: RecordType | str,
        body: str,
        provenance: Provenance,
        created_at: datetime,
        **fields: Any,
    ) -> MemoryRecord:
        """Build a new record born now, its id computed from the birth content.

        ``type`` accepts both vocabularies (:func:`parse_record_type`); a seed 003
        ``preference`` adds the tag ``preference``. Other keyword arguments are fields
        of the class.

        Raises:
            RecordError: As for the constructor.
        """
        record_type, implied_tags = parse_record_type(str(type))
        tags = tuple(fields.pop("tags", ()))
        tags += tuple(t for t in implied_tags if t not in tags)
        return cls(
            type=record_type, body=body, provenance=provenance, created_at=created_at, tags=tags, **fields
        )

    @classmethod
    def from_wire(cls, data: Any, *, path: str | None = None) -> MemoryRecord:
        """Parse a wire object (as loaded from JSON or a note's frontmatter).

        Missing optional fields take the origin's defaults; unknown fields go to ``extra``.

        Raises:
            RecordError: Naming ``path`` (if given), the record id and the field.
        """
        try:
            return cls(**_fields_from_wire(data))
        except RecordError as exc:
            record_id = (
                data.get("id") if isinstance(data, Mapping) and isinstance(data.get("id"), str) else None
            )
            raise exc.located(path=path, record_id=record_id) from None

    def to_wire(self) -> dict[str, Any]:
        """Return the wire object in emission order (origin fields, optional tail, extensions, extra)."""
        return dict(self._wire_items(include_extra=True))

    def canonical_bytes(self) -> bytes:
        """Return the canonical JSON of the full wire object (signature included).

        The bytes of the last few thousand record objects asked about are kept (a record is
        frozen), so the store, the search ledger and each index of one write, or of a batch
        of ``remember_many``, serialise a version once (issue 23).
        """
        key = id(self)
        with _CANONICAL_LOCK:
            held = _CANONICAL.get(key)
        if held is not None and held[0] is self:
            return held[1]
        data = canonical_json(self.to_wire(), checked=True)  # checked when the record was built
        with _CANONICAL_LOCK:
            if len(_CANONICAL) >= _CANONICAL_KEPT:
                del _CANONICAL[next(iter(_CANONICAL))]
            _CANONICAL[key] = (self, data)  # the record is kept alive, so its id is not reused meanwhile
        return data

    def birth(self) -> dict[str, Any]:
        """Return the birth content the id is computed from (origin-notes §1.4)."""
        return {
            "type": self.type.value,
            "body": self.body,
            "slots": self.slots,
            "provenance": self.provenance.to_wire(),
            "created_at": format_timestamp(self.created_at),
        }

    def birth_sha256(self) -> str:
        """Return the full 64-hex sha256 of the canonical birth; the id is its first 32 hex."""
        if self.redacted and self.birth_digest:
            return self.birth_digest
        return hashlib.sha256(canonical_json(self.birth(), checked=True)).hexdigest()

    def evolve(self, **changes: Any) -> MemoryRecord:
        """Return the next version with ``changes`` applied; a signature is cleared.

        A changed record is a new, unsigned version: the signed birth version stays
        verifiable in history (origin-notes §1.6).

        Raises:
            RecordError: The result breaks an invariant.
        """
        if self.signature or self.signed_by:
            changes.setdefault("signed_by", None)
            changes.setdefault("signature", "")
        return dataclasses.replace(self, **changes)

    def with_signature(self, signed_by: str, signature: str) -> MemoryRecord:
        """Return this version with ``signed_by`` and ``signature`` set and nothing else changed.

        The signing path's copy (:func:`~agent_memory.records.signing.sign_record`): neither
        field takes part in the id or any other invariant, so only their types are checked
        and the record is not validated again (issue 23: a third of a write's record work).

        Raises:
            RecordError: ``signed_by`` or ``signature`` is not a string.
        """
        require_str(signed_by, "signed_by")
        require_str(signature, "signature")
        signed = copy_record(self)
        object.__setattr__(signed, "signed_by", signed_by)
        object.__setattr__(signed, "signature", signature)
        return signed

    def tombstone(self, reason: str, *, now: datetime | None = None) -> MemoryRecord:
        """Return the redaction tombstone that replaces every version (origin-notes §1.15).

        Keeps id, type, created_at, evidence, supersedes and superseded_by; body becomes
        ``[redacted]``; every other content field, the extension fields and ``extra`` go.

        Raises:
            RecordError: The record is already a tombstone, or ``reason`` is empty.
        """
        if self.redacted:
            raise RecordError("already redacted", record_id=self.id, field="redacted")
        if not reason:
            raise RecordError("erasure needs a reason", record_id=self.id, field="redaction_reason")
        return MemoryRecord(
            id=self.id,
            type=self.type,
            body="[redacted]",
            state=State.ARCHIVED,
            confidence=0.0,
            created_at=self.created_at,
            updated_at=now if now is not None else self.updated_at,
            provenance=Provenance(kind="redaction"),
            evidence=self.evidence,
            supersedes=self.supersedes,
            superseded_by=self.superseded_by,
            redacted=True,
            redaction_reason=reason,
            birth_digest=self.birth_sha256(),
        )

    @property
    def effective_kind(self) -> Kind:
        """The epistemic kind, ``knowledge`` when the field is absent (DESIGN.md §2)."""
        return self.kind or Kind.KNOWLEDGE

    @property
    def kind_label(self) -> str:
        """Both axes in a few words, as listings and views show them (issue 24 item 6).

        The kind (``state`` with its subject, or ``knowledge``), then the type when it is
        not the default ``fact``: ``knowledge``, ``knowledge, procedure``,
        ``state host:staging``, ``state deploy:day, rule``.
        """
        label = self.effective_kind.value + (f" {self.subject}" if self.subject else "")
        return label if self.type.value == "fact" else f"{label}, {self.type.value}"

    @property
    def effective_namespace(self) -> str:
        """The namespace, ``default`` when the field is absent."""
        return self.namespace or "default"

    @property
    def effective_valid_from(self) -> datetime:
        """Start of valid time: ``valid_from``, else ``occurred_at``, else ``created_at``."""
        return self.valid_from or self.occurred_at or self.created_at

    # ------------------------------------------------------------------ wire helpers

    def _wire_items(self, *, include_extra: bool) -> Iterable[tuple[str, Any]]:
        assert self.updated_at is not None  # noqa: S101 - set in _normalise
        yield "id", self.id
        yield "type", self.type.value
        yield "body", self.body
        yield "slots", self.slots
        yield "state", self.state.value
        yield "confidence", confidence_to_wire(self.confidence)
        yield "created_at", format_timestamp(self.created_at)
        yield "updated_at", format_timestamp(self.updated_at)
        yield "provenance", self.provenance.to_wire()
        yield "evidence", list(self.evidence)
        yield "supersedes", self.supersedes
        yield "superseded_by", self.superseded_by
        yield "transition", self.transition.to_wire() if self.transition else None
        yield "state_reason", self.state_reason
        yield "tags", list(self.tags)
        yield "flagged", self.flagged
        yield "flag_reason", self.flag_reason
        yield "signed_by", self.signed_by
        yield "signature", self.signature
        if self.occurred_at is not None:
            yield "occurred_at", format_timestamp(self.occurred_at)
        if self.redacted:
            yield "redacted", True
            yield "redaction_reason", self.redaction_reason
            yield "birth_digest", self.birth_digest
        for name in EXTENSION_FIELDS:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, datetime):
                value = format_timestamp(value)
            elif isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, StrEnum):
                value = value.value
            yield name, value
        if include_extra:
            yield from self.extra.items()


_PLAIN_FIELDS = tuple(name for name in MemoryRecord.__slots__ if name not in ("slots", "extra"))
_PLAIN_VALUES = operator.attrgetter(*_PLAIN_FIELDS)


def copy_record(record: MemoryRecord, *, own_maps: bool = False) -> MemoryRecord:
    """Return a copy of a frozen ``record``, field by field, its checks not run again.

    ``copy.copy`` of a slotted dataclass goes through ``__reduce_ex__`` and
    ``dataclasses.fields``, several times slower (issue 23: a store cache's copy was a third
    of a cached read; the signing path's copy 45 µs of a batched write's 1.3 ms, profiled).
    Every field but ``slots`` and ``extra`` is immutable and shared.

    Args:
        record: The record to copy.
        own_maps: Give the copy deep copies of ``slots`` and ``extra`` (a cache handing out
            records its callers may change); otherwise they are shared, as ``copy.copy`` does.
    """
    clone = object.__new__(MemoryRecord)
    for name, value in zip(_PLAIN_FIELDS, _PLAIN_VALUES(record), strict=True):
        object.__setattr__(clone, name, value)
    slots, extra = record.slots, record.extra
    if own_maps:
        slots, extra = (copy.deepcopy(slots) if slots else {}), (copy.deepcopy(extra) if extra else {})
    object.__setattr__(clone, "slots", slots)
    object.__setattr__(clone, "extra", extra)
    return clone


def _fields_from_wire(data: Any) -> dict[str, Any]:
    if not isinstance(data, Mapping):
        raise RecordError(f"a record must be an object, got {type(data).__name__}")
    for key in data:
        if not isinstance(key, str):
            raise RecordError(f"field names must be strings, got {key!r}")
    missing = [name for name in ("type", "body", "created_at", "provenance") if name not in data]
    if missing:
        raise RecordError("required field is missing", field=missing[0])
    fields = {name: data[name] for name in data if name in KNOWN_FIELDS and name != "signature"}
    fields["extra"] = {name: data[name] for name in data if name not in KNOWN_FIELDS}
    if "signature" in data:
        fields["signature"] = data["signature"]
    if "id" in data:
        require_str(data["id"], "id")
    if "confidence" in data:
        fields["confidence"] = confidence_from_wire(data["confidence"])
    if "redacted" in data and data["redacted"] is not True:
        raise RecordError("when present, must be true", field="redacted")
    for name in (*OPTIONAL_FIELDS, *EXTENSION_FIELDS):
        # These are emitted only when set: a null would vanish on re-emission and change the bytes.
        if name in data and data[name] is None:
            raise RecordError("must not be null: leave the field out instead", field=name)
    for name in ("type", "state", "kind", "scope", "epistemic_status"):
        if name in data and not isinstance(data[name], str):
            raise RecordError(f"must be a string, got {type(data[name]).__name__}", field=name)
    for name in ("created_at", "updated_at", "occurred_at", "valid_from", "valid_to"):
        if name in data:
            if not isinstance(data[name], str):
                raise RecordError(f"must be a timestamp string, got {type(data[name]).__name__}", field=name)
            fields[name] = parse_timestamp(data[name], name, strict=name in ("valid_from", "valid_to"))
    for name in ("evidence", "tags", "taint", "sources"):
        if name in data and not isinstance(data[name], list):
            raise RecordError(f"must be an array of strings, got {type(data[name]).__name__}", field=name)
    fields["provenance"] = Provenance.from_wire(data["provenance"])
    if "transition" in data:
        fields["transition"] = Transition.from_wire(data["transition"])
    return fields

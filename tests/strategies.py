"""Hypothesis strategies for valid `MemoryRecord`s across the whole wire field space.

`records()` is the public strategy: every type and state with its invariants satisfied,
optional and extension fields present or absent, nested `slots`/`extra` values, tombstones,
and records signed by `KEYS`. Strings mix arbitrary Unicode (no lone surrogates) with text
that is hostile to YAML and to line-based parsing: `no`, `1.0`, dates, `---` lines, CRLF,
U+2028, NEL, BOMs, C0/C1 controls and keys longer than YAML's implicit-key limit.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from fg_agent_id import KeyPair
from hypothesis import strategies as st

from agent_memory.records import (
    EXTENSION_FIELDS,
    WIRE_FIELDS,
    EpistemicStatus,
    Kind,
    MemoryRecord,
    Provenance,
    RecordType,
    Scope,
    State,
    Transition,
)
from agent_memory.signing import sign_record

__all__ = ["HOSTILE_STRINGS", "KEYS", "TRICKY_CHARACTERS", "json_values", "records", "texts", "timestamps"]

# The golden vectors' key pair: Ed25519 seed bytes 0..31, agreement seed 96..127.
KEYS = KeyPair.from_bytes(bytes(range(32)) + bytes(range(96, 128)))

HOSTILE_STRINGS = (
    *("no", "yes", "NO", "Yes", "on", "off", "y", "n", "true", "False", "null", "Null", "~", ""),
    *("1.0", "0.9", "-1", "012", "0x1F", "1e5", ".inf", ".nan", "12:30", "1_000", "+1"),
    *("2026-01-01", "2026-01-01T00:00:00Z", "2026-01-01 00:00:00"),
    *(":", "a: b", "a:b", "#", "# comment", " #x", "&a", "!tag", "!!str", "*x", "- x", "-", "? x", "?"),
    *("[", "]", "{", "}", ",", "%", "%YAML 1.1", "@", "`", "'", '"', "\\", "|", ">", "<<", "="),
    *("---", "...", "--- x", " ", "\t", "mem:0123456789abcdef0123456789abcdef", "body"),
)
TRICKY_CHARACTERS = (
    "\x00\t\n\r\x0b\x0c\x1b\x1f\x7f\x80\x85\x9f\xa0\u2028\u2029\ufeff\ufffe\uffff\ufffd"
    "\u0301\u200b\u200d\ud7ff\ue000\U0001f9e0\U0001fffe\U0010ffff"
)
_LINE_BREAKS = ("\n", "\r\n", "\r", "\u2028", "\u0085", "\n---\n", "\n\n", "---\n", "\n---")
# Written longer than YAML's 1024-character implicit-key limit (NEL is written as \u0085).
LONG_KEYS = ("k" * 1100, "\x85" * 200, "é" * 1001)

_atoms = st.one_of(
    st.sampled_from(HOSTILE_STRINGS),
    st.text(st.characters(codec="utf-8"), max_size=8),
    st.text(st.sampled_from(TRICKY_CHARACTERS), min_size=1, max_size=3),
    st.sampled_from(_LINE_BREAKS),
)
texts = st.one_of(_atoms, st.lists(_atoms, min_size=2, max_size=4).map("".join))
_nonempty = texts.filter(bool)
_optional_texts = st.none() | texts
_ids = st.binary(min_size=16, max_size=16).map(lambda b: "mem:" + b.hex())
_refs = _ids | _nonempty
_namespaces = texts.map(lambda s: "".join(c for c in s if ord(c) >= 32).strip()).filter(bool)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_zones = st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-11))])
# Microseconds from 1970 to 2200 in a few time zones: one draw each, unlike st.datetimes().
timestamps = st.builds(
    lambda us, zone: (_EPOCH + timedelta(microseconds=us)).astimezone(zone),
    st.integers(0, 7_258_118_400_000_000),
    _zones,
)

_keys = st.one_of(texts, st.sampled_from(LONG_KEYS))
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | texts,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_keys, children, max_size=3),
    max_leaves=6,
)
_slots = st.dictionaries(_keys, json_values, max_size=3)

_KNOWN = {*WIRE_FIELDS, *EXTENSION_FIELDS, "occurred_at", "redacted", "redaction_reason", "birth_digest"}
_extra_keys = st.one_of(
    st.from_regex(r"\A[a-z_][a-z0-9_]{0,12}\Z"),
    st.sampled_from(["yes", "no", "on", "off", "y", "n", "true", "null", "Key", "x-custom", "a b", ""]),
    _keys,
).filter(lambda key: key not in _KNOWN)
_extras = st.dictionaries(_extra_keys, json_values, max_size=3)


def _optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


@st.composite
def records(draw: st.DrawFn) -> MemoryRecord:
    """Draw a valid record: any type, state, optional and extension fields, maybe erased or signed."""
    record_type = draw(st.sampled_from(RecordType))
    state = draw(st.sampled_from(State))
    kind = draw(st.sampled_from([None, Kind.KNOWLEDGE, Kind.STATE]))
    if state is State.SUPERSEDED:
        superseded_by = draw(_ids)
    else:
        superseded_by = draw(_optional(_ids)) if state is State.ARCHIVED else None
    transition = None
    if state is State.TRANSITIONAL:
        sides = draw(st.lists(_refs, min_size=2, max_size=2, unique=True))
        transition = Transition(sides=(sides[0], sides[1]), reason=draw(_nonempty))
    is_rule = record_type is RecordType.RULE
    record = MemoryRecord(
        type=record_type,
        body=draw(texts),
        slots=draw(_slots),
        state=state,
        confidence=draw(st.integers(0, 10_000)) / 10_000,
        created_at=draw(timestamps),
        updated_at=draw(_optional(timestamps)),
        provenance=Provenance(kind=draw(_nonempty), ref=draw(_optional_texts), agent=draw(_optional_texts)),
        evidence=tuple(draw(st.lists(_refs, min_size=1 if is_rule else 0, max_size=3))),
        supersedes=draw(_optional(_ids)),
        superseded_by=superseded_by,
        transition=transition,
        state_reason=draw(_optional_texts),
        tags=tuple(draw(st.lists(texts, max_size=3))),
        flagged=draw(st.booleans()) if is_rule else False,
        flag_reason=draw(_optional_texts),
        occurred_at=draw(_optional(timestamps)),
        kind=kind,
        subject=draw(_nonempty) if kind is Kind.STATE else None,
        namespace=draw(_optional(_namespaces)),
        scope=draw(_optional(st.sampled_from(Scope))),
        valid_from=draw(_optional(timestamps)),
        valid_to=draw(_optional(timestamps)),
        taint=draw(_optional(st.lists(_nonempty, max_size=2).map(tuple))),
        sources=draw(_optional(st.lists(_nonempty, max_size=2).map(tuple))),
        epistemic_status=draw(_optional(st.sampled_from(EpistemicStatus))),
        extra=draw(_extras),
    )
    if draw(st.integers(0, 7)) == 7:
        record = record.tombstone(draw(_nonempty), now=draw(_optional(timestamps)))
    signing = draw(st.sampled_from(["unsigned", "signed", "foreign"]))
    if signing == "signed":
        record = sign_record(record, KEYS)
    elif signing == "foreign":
        # Imported records may carry any signer and signature; they stay valid records.
        record = record.evolve(signed_by=draw(_optional_texts), signature=draw(texts))
    return record

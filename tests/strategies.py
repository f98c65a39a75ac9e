"""Hypothesis strategies for valid `MemoryRecord`s across the whole wire field space.

`records()` is the public strategy: every type and state with its invariants satisfied,
optional and extension fields present or absent, nested `slots`/`extra` values, tombstones,
and records signed by `KEYS`. Strings mix arbitrary Unicode (no lone surrogates) with text
that is hostile to YAML and to line-based parsing: `no`, `1.0`, dates, `---` lines, CRLF,
U+2028, NEL, BOMs, C0/C1 controls and keys longer than YAML's implicit-key limit. Object
keys are NFC, as the wire requires; string values need not be.

Each Hypothesis draw costs tens of microseconds, so the strategies draw little: a string is
one pick from the hostile pool plus one Unicode text, and a single integer says which
optional fields a record has. That keeps 2,000 examples to a few seconds.
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from fg_agent_id import KeyPair
from hypothesis import strategies as st

from agent_memory.records.record import (
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
from agent_memory.records.signing import sign_record

__all__ = [
    "HOSTILE_STRINGS",
    "KEYS",
    "LINE_BREAKS",
    "LONG_KEYS",
    "TRICKY_CHARACTERS",
    "json_values",
    "records",
    "texts",
    "timestamps",
]

# The golden vectors' key pair: Ed25519 seed bytes 0..31, agreement seed 96..127.
KEYS = KeyPair.from_bytes(bytes(range(32)) + bytes(range(96, 128)))

HOSTILE_STRINGS = (
    *("no", "yes", "NO", "Yes", "on", "off", "y", "n", "true", "False", "null", "Null", "~"),
    *("1.0", "0.9", "-1", "012", "0x1F", "1e5", ".inf", ".nan", "12:30", "1_000", "+1"),
    *("2026-01-01", "2026-01-01T00:00:00Z", "2026-01-01 00:00:00"),
    *(":", "a: b", "a:b", "#", "# comment", " #x", "&a", "!tag", "!!str", "*x", "- x", "-", "? x", "?"),
    *("[", "]", "{", "}", ",", "%", "%YAML 1.1", "@", "`", "'", '"', "\\", "|", ">", "<<", "="),
    *("---", "...", "--- x", " ", "\t", "mem:0123456789abcdef0123456789abcdef", "body", "e\u0301", "🧠"),
)
TRICKY_CHARACTERS = (
    "\x00\t\n\r\x0b\x0c\x1b\x1f\x7f\x80\x85\x9f\xa0\u2028\u2029\ufeff\ufffe\uffff\ufffd"
    "\u0301\u200b\u200d\ud7ff\ue000\U0001f9e0\U0001fffe\U0010ffff"
)
LINE_BREAKS = ("\n", "\r\n", "\r", "\u2028", "\u0085", "\n---\n", "\n\n", "---\n", "\n---")
# Written longer than YAML's 1024-character implicit-key limit (NEL is written as \u0085).
LONG_KEYS = ("k" * 1100, "\x85" * 200, "é" * 1001)

_HEADS = ("", *HOSTILE_STRINGS, *TRICKY_CHARACTERS, *LINE_BREAKS, *LONG_KEYS)
_TAILS = ("", "", "", " ", *LINE_BREAKS)
_KNOWN = {*WIRE_FIELDS, *EXTENSION_FIELDS, "occurred_at", "redacted", "redaction_reason", "birth_digest"}
_EXTRA_WORDS = ("custom", "x_note", "_private", "yes", "no", "on", "y", "null", "Key", "x-custom", "a b", "")
# One bit each of a single drawn integer: which optional fields a record carries.
_OPTIONAL = (
    *("updated_at", "ref", "agent", "supersedes", "state_reason", "flag_reason", "occurred_at", "namespace"),
    *("scope", "valid_from", "valid_to", "taint", "sources", "epistemic_status", "superseded_by"),
)
_ZONES = (UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-11)))
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# Strategies are built once: building one per draw costs as much as the draw.
_head_and_tail = st.integers(0, len(_HEADS) * len(_TAILS) - 1)
_unicode = st.text(st.characters(codec="utf-8"), max_size=8)
_ids = st.binary(min_size=16, max_size=16).map(lambda b: "mem:" + b.hex())
_booleans = st.booleans()
_integers = st.integers(-(2**70), 2**70)
_up_to_two = st.integers(0, 2)
_up_to_three = (st.integers(0, 3), st.integers(1, 3))
_one_in_eight = st.integers(0, 7)
_confidences = st.integers(0, 10_000)
_json_kinds = (st.integers(0, 4), st.integers(0, 6))  # null, false, true, integer, string | array, object
_extra_words = st.integers(0, len(_EXTRA_WORDS))
_present = st.integers(0, 2 ** len(_OPTIONAL) - 1)
_types = st.sampled_from(RecordType)
_states = st.sampled_from(State)
_kinds = st.sampled_from([None, Kind.KNOWLEDGE, Kind.STATE])
_scopes = st.sampled_from(Scope)
_statuses = st.sampled_from(EpistemicStatus)


@st.composite
def texts(draw: st.DrawFn) -> str:
    """Draw a string: a hostile or tricky piece, arbitrary Unicode, then maybe a line break."""
    head, tail = divmod(draw(_head_and_tail), len(_TAILS))
    return _writable(_HEADS[head] + draw(_unicode) + _TAILS[tail])


def _writable(text: str) -> str:
    # Canonical JSON cannot write a control character directly followed by a combining mark
    # (NFC would merge the mark into its escape): records refuse such text, so drop the marks.
    kept: list[str] = []
    for char in text:
        if not (kept and ord(kept[-1]) < 32 and unicodedata.combining(char)):
            kept.append(char)
    return "".join(kept)


_texts = texts()
_labels = _texts.map(lambda s: s or "?")  # non-empty, where a field requires it
_namespaces = _texts.map(lambda s: "".join(c for c in s if ord(c) >= 32).strip() or "default")
# Instants from 1970 to 2200 with microseconds, in a few time zones.
timestamps = st.builds(
    lambda us, zone: (_EPOCH + timedelta(microseconds=us)).astimezone(zone),
    st.integers(0, 7_258_118_400_000_000),
    st.sampled_from(_ZONES),
)


def _nfc(key: str) -> str:
    # Object keys must be NFC (canonical JSON sorts them before it normalises the text).
    return unicodedata.normalize("NFC", key)


@st.composite
def _json_value(draw: st.DrawFn, depth: int) -> Any:
    kind = draw(_json_kinds[depth > 0])
    if kind < 3:
        return (None, False, True)[kind]
    if kind == 3:
        return draw(_integers)
    if kind == 4:
        return draw(_texts)
    size = draw(_up_to_two)
    if kind == 5:
        return [draw(_json_by_depth[depth - 1]) for _ in range(size)]
    return {_nfc(draw(_texts)): draw(_json_by_depth[depth - 1]) for _ in range(size)}


_json_by_depth = [_json_value(depth) for depth in range(3)]
# Any float-free JSON value nested up to two levels, empty containers included.
json_values = _json_by_depth[2]


@st.composite
def _extra_key(draw: st.DrawFn) -> str:
    pick = draw(_extra_words)
    key = _EXTRA_WORDS[pick] if pick < len(_EXTRA_WORDS) else draw(_texts)
    return f"x_{key}" if key in _KNOWN else key


_extra_keys = _extra_key()


@st.composite
def records(draw: st.DrawFn) -> MemoryRecord:
    """Draw a valid record: any type, state, optional and extension fields, maybe erased or signed."""
    record_type = draw(_types)
    state = draw(_states)
    kind = draw(_kinds)
    present = draw(_present)

    def has(name: str) -> bool:
        return bool(present >> _OPTIONAL.index(name) & 1)

    def maybe(name: str, strategy: st.SearchStrategy[Any]) -> Any:
        return draw(strategy) if has(name) else None

    def some(strategy: st.SearchStrategy[Any], at_least: int = 0) -> tuple[Any, ...]:
        return tuple(draw(strategy) for _ in range(draw(_up_to_three[at_least])))

    def mapping(keys: st.SearchStrategy[str]) -> dict[str, Any]:
        return {_nfc(draw(keys)): draw(json_values) for _ in range(draw(_up_to_two))}

    superseded_by = maybe("superseded_by", _labels) if state is State.ARCHIVED else None
    if state is State.SUPERSEDED:
        superseded_by = draw(_labels)
    transition = None
    if state is State.TRANSITIONAL:
        first, second = draw(_ids), draw(_labels)
        transition = Transition(sides=(first, second + "'" * (second == first)), reason=draw(_labels))
    record = MemoryRecord(
        type=record_type,
        body=draw(_texts),
        slots=mapping(_texts),
        state=state,
        confidence=draw(_confidences) / 10_000,
        created_at=draw(timestamps),
        updated_at=maybe("updated_at", timestamps),
        provenance=Provenance(kind=draw(_labels), ref=maybe("ref", _texts), agent=maybe("agent", _texts)),
        evidence=some(_texts, at_least=1 if record_type is RecordType.RULE else 0),
        supersedes=maybe("supersedes", _texts),
        superseded_by=superseded_by,
        transition=transition,
        state_reason=maybe("state_reason", _texts),
        tags=some(_texts),
        flagged=record_type is RecordType.RULE and draw(_booleans),
        flag_reason=maybe("flag_reason", _texts),
        occurred_at=maybe("occurred_at", timestamps),
        kind=kind,
        subject=draw(_labels) if kind is Kind.STATE else None,
        namespace=maybe("namespace", _namespaces),
        scope=maybe("scope", _scopes),
        valid_from=maybe("valid_from", timestamps),
        valid_to=maybe("valid_to", timestamps),
        taint=some(_labels) if has("taint") else None,
        sources=some(_labels) if has("sources") else None,
        epistemic_status=maybe("epistemic_status", _statuses),
        extra=mapping(_extra_keys),
    )
    if draw(_one_in_eight) == 7:
        record = record.tombstone(draw(_labels), now=draw(timestamps))
    signing = draw(_up_to_two)
    if signing == 1:
        record = sign_record(record, KEYS)
    elif signing == 2:
        # Imported records may carry any signer and signature; they stay valid records.
        record = record.evolve(signed_by=draw(_texts) or None, signature=draw(_texts))
    return record

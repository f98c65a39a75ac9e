"""Write ``spec/vectors.json``: agent-memory's golden vectors beyond the origin's 0.1 set.

The origin's vectors (fg-agent-memory 0.1) pin one plain record, two signing inputs, one
signed record and one MemoryFile. These vectors pin what they leave open and this project
adds (spec/SPEC.md): records with every extension field, unknown fields kept and signed,
tombstones, Unicode handling, a MemoryFile of extension records, Markdown note files, and
inputs that must be refused with the field named.

Every value derives from fixed inputs: the Ed25519 seed bytes 0..31 with the agreement seed
96..127, and the clock 2026-01-01T00:00:00.000Z. Ed25519 signatures are deterministic, so
two runs write the same bytes. Before writing, the script checks that each refusal case
really is refused by the library with the field it names.

Usage::

    python spec/generate_vectors.py          # write spec/vectors.json
    python spec/generate_vectors.py --check  # exit 1 if the file on disk is not what it would write
    python spec/generate_vectors.py --check --output PATH  # the same for another copy
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fg_agent_id import KeyPair

from agent_memory.errors import AgentMemoryError, RecordError, SignatureError
from agent_memory.records.lifecycle import begin_transition, supersede
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.note import dump_note, load_note
from agent_memory.records.record import MemoryRecord, Provenance, compute_record_id, parse_record_type
from agent_memory.records.signing import (
    CONTEXT_MEMORY_FILE,
    CONTEXT_RECORD,
    address_of,
    sign_record,
    signing_input,
)
from agent_memory.records.wire import canonical_json, format_timestamp

VECTORS_PATH = Path(__file__).resolve().with_name("vectors.json")
SIGNING_SEED = bytes(range(32))
AGREEMENT_SEED = bytes(range(96, 128))
FIXED_TIME = datetime(2026, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)

Json = dict[str, Any]


def seed_keys() -> KeyPair:
    """Return the fixed key pair every signature in the vectors is made with."""
    return KeyPair.from_bytes(SIGNING_SEED + AGREEMENT_SEED)


# ---------------------------------------------------------------------- records


class _Records:
    """The records the vectors are built from, made once so later cases can refer to them."""

    def __init__(self, keys: KeyPair) -> None:
        self.keys = keys
        address = address_of(keys)
        observed = Provenance(
            kind="observation", ref="archive/2026-01-01.md#mem-2026-01-01-001", agent=address
        )
        self.state_v1 = MemoryRecord.create(
            type="fact",
            body="The staging database listens on port 5433.",
            slots={"port": 5433, "service": "postgres"},
            provenance=observed,
            created_at=FIXED_TIME,
            confidence=0.9,
            tags=("database",),
            kind="state",
            subject="db:staging:port",
            namespace="project:atlas",
            scope="environment",
            valid_from=FIXED_TIME,
            taint=("external",),
            sources=("archive/2025-12-31.md#mem-2025-12-31-004", "https://wiki.example/atlas/db"),
            epistemic_status="observed-once",
        )
        self.state_v2 = MemoryRecord.create(
            type="fact",
            body="The staging database listens on port 5434.",
            slots={"port": 5434, "service": "postgres"},
            provenance=Provenance(
                kind="observation", ref="archive/2026-01-02.md#mem-2026-01-02-001", agent=address
            ),
            created_at=FIXED_TIME + DAY,
            confidence=0.9,
            tags=("database",),
            supersedes=self.state_v1.id,
            kind="state",
            subject="db:staging:port",
            namespace="project:atlas",
            scope="environment",
            valid_from=FIXED_TIME + DAY,
            epistemic_status="confirmed",
        )
        self.state_v1_signed = sign_record(self.state_v1, keys)
        self.state_v1_superseded = supersede(
            self.state_v1_signed,
            self.state_v2,
            "newer value for subject db:staging:port",
            now=FIXED_TIME + DAY,
        )
        self.preference = MemoryRecord.create(
            type="preference",
            body="Alice wants answers in British English.",
            provenance=Provenance(kind="conversation", ref="session-0042", agent=address),
            created_at=FIXED_TIME,
            confidence=0.75,
            occurred_at=FIXED_TIME - timedelta(hours=5, minutes=30),
            kind="knowledge",
            namespace="user:alice",
            scope="user-preference",
            epistemic_status="confirmed",
        )
        self.with_extra = MemoryRecord.create(
            type="episodic",
            body="Ran the nightly export; three files were skipped.",
            provenance=Provenance(kind="tool", ref="run:nightly-export/7", agent=address),
            created_at=FIXED_TIME,
            confidence=0.5,
            namespace="agent:cleo",
            extra={
                "x_origin": {"tool": "exporter", "run": 7, "ok": True, "note": None},
                "zz_later_field": ["kept", "re-emitted", "signed"],
            },
        )
        left = MemoryRecord.create(
            type="fact",
            body="The deploy script needs root.",
            provenance=Provenance(kind="conversation", ref="session-0043", agent=address),
            created_at=FIXED_TIME,
        )
        right = MemoryRecord.create(
            type="fact",
            body="The deploy script does not need root.",
            provenance=Provenance(kind="conversation", ref="session-0044", agent=address),
            created_at=FIXED_TIME,
        )
        self.disputed, _ = begin_transition(left, right, "one side negates the other", now=FIXED_TIME + DAY)


def _record_case(
    name: str, about: str, record: MemoryRecord, keys: KeyPair, *, with_bytes: bool = False
) -> Json:
    unsigned = record.evolve(signed_by=None, signature="") if record.signature else record
    signed = sign_record(unsigned, keys)
    payload = signed.to_wire()
    del payload["signature"]
    case: Json = {"name": name, "about": about}
    if with_bytes:
        case["body_utf8_hex"] = record.body.encode("utf-8").hex()
    case.update(
        {
            "record": unsigned.to_wire(),
            "id": unsigned.id,
            "birth_hex": canonical_json(unsigned.birth()).hex(),
            "canonical_hex": unsigned.canonical_bytes().hex(),
            "signed": {
                "signing_input_hex": signing_input(CONTEXT_RECORD, payload).hex(),
                "signature": signed.signature,
                "record": signed.to_wire(),
            },
        }
    )
    return case


def record_cases(rec: _Records) -> list[Json]:
    """Return the record cases: extension fields, ``extra``, the optional tail, a dispute."""
    return [
        _record_case(
            "state_record_every_extension",
            "A state record carrying every extension field that exists at birth; extension fields "
            "follow the origin's fields in sorted order and are signed but not part of the id.",
            rec.state_v1,
            rec.keys,
        ),
        _record_case(
            "state_record_superseded",
            "The first record retired by apply-time supersede: superseded_by, state_reason, "
            "updated_at and valid_to set; evolving the signed version cleared its signature.",
            rec.state_v1_superseded,
            rec.keys,
        ),
        _record_case(
            "state_record_successor",
            "The successor: same namespace and subject, names the old record in supersedes.",
            rec.state_v2,
            rec.keys,
        ),
        _record_case(
            "knowledge_preference_with_occurred_at",
            "Created from seed 003's type word 'preference' (wire type fact, tag preference); "
            "occurred_at sits in the optional tail, before the extension fields.",
            rec.preference,
            rec.keys,
        ),
        _record_case(
            "extra_fields_kept_and_signed",
            "Unknown top-level fields are kept in extra, emitted last in their own order, and signed.",
            rec.with_extra,
            rec.keys,
        ),
        _record_case(
            "transitional_record",
            "One side of a dispute: state transitional with the shared transition block.",
            rec.disputed,
            rec.keys,
        ),
    ]


def unicode_cases(rec: _Records) -> list[Json]:
    """Return the Unicode cases: NFC, non-BMP key order, JSON escaping of control characters."""
    provenance = Provenance(kind="conversation", ref="session-0100", agent=address_of(rec.keys))
    non_nfc = MemoryRecord.create(
        type="fact",
        body="Meet at the cafe\u0301 on Zu\u0308rich\u2019s Limmatquai.",
        provenance=provenance,
        created_at=FIXED_TIME,
    )
    nfc_twin = MemoryRecord.create(
        type="fact",
        body="Meet at the caf\u00e9 on Z\u00fcrich\u2019s Limmatquai.",
        provenance=provenance,
        created_at=FIXED_TIME,
    )
    non_nfc_case = _record_case(
        "non_nfc_body",
        "The body is decomposed (e + U+0301, u + U+0308). It is kept as given, but the canonical "
        "bytes are NFC, so the id and the signature equal those of the precomposed twin.",
        non_nfc,
        rec.keys,
        with_bytes=True,
    )
    non_nfc_case["nfc_twin_id"] = nfc_twin.id
    emoji = MemoryRecord.create(
        type="episode",
        body="Deploy went fine \U0001f680 (release \U0001f3f7\ufe0f v2).",
        slots={"a": "ascii", "\uff61": "halfwidth full stop", "\U0001f600": "grinning face"},
        provenance=provenance,
        created_at=FIXED_TIME,
    )
    controls = MemoryRecord.create(
        type="fact",
        body=(
            'tab\there, CRLF\r\n, "quotes", back\\slash, \b\f, nul\u0000, unit sep\u001f, '
            "del\u007f, nel\u0085, ls\u2028, ps\u2029, bom\ufeff, nonchars\ufffe\uffff."
        ),
        provenance=provenance,
        created_at=FIXED_TIME,
    )
    return [
        non_nfc_case,
        _record_case(
            "emoji_and_non_bmp_keys",
            "Non-ASCII is raw UTF-8. Keys sort by code point: 'a' < U+FF61 < U+1F600 (RFC 8785 "
            "would put U+1F600 first, sorting by UTF-16 code units).",
            emoji,
            rec.keys,
            with_bytes=True,
        ),
        _record_case(
            "control_characters",
            "Escaped as Python's json does: short escapes for \\b \\t \\n \\f \\r, \\u00XX for other "
            "C0 controls; DEL, NEL, U+2028/2029, U+FEFF, U+FFFE/FFFF stay raw.",
            controls,
            rec.keys,
            with_bytes=True,
        ),
    ]


def type_word_cases() -> list[Json]:
    """Return how each creation-time type word maps to a wire type and implied tags (DESIGN.md §2)."""
    words = ["fact", "episode", "procedure", "rule", "episodic", "semantic", "procedural", "preference"]
    cases = []
    for word in [*words, " Semantic "]:
        record_type, tags = parse_record_type(word)
        cases.append({"word": word, "type": record_type.value, "tags": list(tags)})
    return cases


def tombstone_cases(rec: _Records) -> list[Json]:
    """Return tombstones of a signed record and of a superseded version with links."""
    cases = []
    for name, about, original, reason in (
        (
            "tombstone_of_signed_record",
            "Erasure of a signed state record: id kept, birth_digest is the full sha256 of its "
            "canonical birth, signature, extension fields and content gone.",
            rec.state_v1_signed,
            "contained a customer's personal data",
        ),
        (
            "tombstone_keeps_links",
            "Erasure of a superseded version: supersedes, superseded_by and evidence are kept.",
            rec.state_v1_superseded,
            "erased on request of the data owner",
        ),
        (
            "tombstone_of_successor",
            "Erasure of a record that names its predecessor in supersedes.",
            rec.state_v2,
            "erased on request of the data owner",
        ),
    ):
        tombstone = original.tombstone(reason, now=FIXED_TIME + 2 * DAY)
        cases.append(
            {
                "name": name,
                "about": about,
                "original": original.to_wire(),
                "reason": reason,
                "now": format_timestamp(FIXED_TIME + 2 * DAY),
                "tombstone": tombstone.to_wire(),
                "id": tombstone.id,
                "birth_digest": tombstone.birth_digest,
                "canonical_hex": tombstone.canonical_bytes().hex(),
            }
        )
    return cases


def memory_file_case(rec: _Records) -> Json:
    """Return a signed MemoryFile of extension records, one unsigned version and a file-level extra."""
    records = (
        rec.state_v1_superseded,
        sign_record(rec.state_v2, rec.keys),
        sign_record(rec.preference, rec.keys),
        sign_record(rec.with_extra, rec.keys),
        rec.disputed,
    )
    unsigned = MemoryFile(
        created_at=FIXED_TIME + 3 * DAY,
        records=records,
        extra={"x_exported_from": "spec/generate_vectors.py"},
    )
    signed = unsigned.sign(rec.keys)
    payload = signed.to_wire()
    del payload["signature"]
    return {
        "about": "Latest versions of several records (signed and unsigned) with an unknown top-level "
        "field; the file signature covers the whole object but its signature.",
        "file": signed.to_wire(),
        "canonical_bytes_hex": signed.canonical_bytes().hex(),
        "signing_input_hex": signing_input(CONTEXT_MEMORY_FILE, payload).hex(),
        "signature": signed.signature,
    }


# ---------------------------------------------------------------------- notes


def note_cases(rec: _Records) -> list[Json]:
    """Return Markdown note cases: the exact bytes the writer produces for several records."""
    provenance = Provenance(kind="conversation", ref="session-0200", agent=address_of(rec.keys))
    hostile = MemoryRecord.create(
        type="fact",
        body="no",
        slots={
            "answer": "yes",
            "when": "2026-01-01",
            "version": "1.10",
            "octal": "012345",
            "null_word": "null",
            "tilde": "~",
            "colon": "key: value",
            "hash": "# not a comment",
            "Upper": "On",
            "with space": "leading and trailing ",
            "quote": 'it\'s "quoted"',
            "dash": "- item",
            "empty": "",
        },
        provenance=provenance,
        created_at=FIXED_TIME,
        tags=("yes", "off", "1.0", "@at", "*star", "&anchor", "!tag", "%pct", "`tick", "|pipe", ">gt"),
        extra={"on": True, "Yes": "capital key", "null": None, "x-dash": 1, "9lives": "digit first"},
    )
    markdown = MemoryRecord.create(
        type="procedure",
        body=(
            "# Release checklist\n\n---\n\n1. Tag the release.\n\n\n2. Push the tag.\n---\n"
            "Trailing spaces   \n\tindented with a tab\r\nafter a CRLF\n"
        ),
        provenance=provenance,
        created_at=FIXED_TIME,
    )
    escapes = MemoryRecord.create(
        type="fact",
        body="Controls in the body stay raw: del\u007f nel\u0085 ls\u2028 bom\ufeff.",
        slots={
            "controls": "nul\u0000 bell\u0007 del\u007f nel\u0085 c1\u009f",
            "separators": "ls\u2028 ps\u2029",
            "specials": "bom\ufeff nonchars\ufffe\uffff",
            "text": "tab\there, newline\nthere, CRLF\r\n, back\\slash",
        },
        provenance=provenance,
        created_at=FIXED_TIME,
    )
    fences = MemoryRecord.create(type="fact", body="---\n---", provenance=provenance, created_at=FIXED_TIME)
    empty = MemoryRecord.create(type="fact", body="", provenance=provenance, created_at=FIXED_TIME)
    unicode = MemoryRecord.create(
        type="episode",
        body="Cafe\u0301 opening went fine \U0001f680",
        slots={"\U0001f600": "grinning face", "caf\u00e9": "precomposed key"},
        provenance=provenance,
        created_at=FIXED_TIME,
    )
    cases = []
    for name, about, record in (
        (
            "plain_fact_signed",
            "The origin's conformance fact, signed: every 0.1 field in order.",
            _origin_fact(rec.keys),
        ),
        (
            "every_extension_field",
            "Extension fields after the origin fields and optional tail, in sorted order.",
            sign_record(rec.state_v1, rec.keys),
        ),
        (
            "superseded_with_valid_to",
            "A later version: superseded_by, state_reason and valid_to present.",
            rec.state_v1_superseded,
        ),
        ("extra_fields", "Unknown fields written after the extension fields.", rec.with_extra),
        ("transitional", "A transition block as a compact JSON flow mapping.", rec.disputed),
        ("yaml_hostile_strings", "Scalars YAML 1.1 would retype or misread stay quoted.", hostile),
        (
            "markdown_body",
            "A body with '---' lines, blank lines, trailing spaces, a CRLF and a final newline.",
            markdown,
        ),
        (
            "characters_yaml_cannot_carry_raw",
            "DEL, C1 controls (NEL), U+2028/2029, U+FEFF, U+FFFE/FFFF are escaped in frontmatter.",
            escapes,
        ),
        (
            "body_of_fences",
            "A body made only of '---' lines: the first closing line ends the frontmatter.",
            fences,
        ),
        ("empty_body", "An empty body is one empty line after the closing '---'.", empty),
        ("unicode", "Non-ASCII stays raw UTF-8; a decomposed body is kept as written (not NFC).", unicode),
        (
            "tombstone",
            "A tombstone: redacted, redaction_reason, birth_digest in the optional tail.",
            rec.state_v1_signed.tombstone("contained a secret", now=FIXED_TIME + 2 * DAY),
        ),
    ):
        data = dump_note(record)
        cases.append(
            {
                "name": name,
                "about": about,
                "record": record.to_wire(),
                "canonical_hex": record.canonical_bytes().hex(),
                "note": data.decode("utf-8"),
                "note_hex": data.hex(),
            }
        )
    return cases


def note_rejection_cases(valid: str) -> list[Json]:
    """Return note files a reader must refuse, each with the field named (``None``: the file layout)."""

    def bad(name: str, field: str | None, about: str, old: str, new: str) -> Json:
        assert old in valid, name
        note = valid.replace(old, new, 1)
        return {"name": name, "about": about, "note": note, "error": "RecordError", "field": field}

    body = "The conformance suite runs on fixed seeds.\n"
    return [
        bad("crlf_line_endings", None, "Notes use LF only.", valid, valid.replace("\n", "\r\n")),
        bad("unclosed_frontmatter", None, "No closing '---' line.", "---\n" + body, body),
        bad("no_final_newline", None, "The body is followed by one newline.", body, body[:-1]),
        bad("unquoted_confidence", "confidence", "A YAML float is refused.", '"0.9000"', "0.9000"),
        bad(
            "yes_is_not_a_boolean",
            "flagged",
            "Only true and false are booleans.",
            "flagged: false",
            "flagged: yes",
        ),
        bad(
            "unquoted_date",
            "created_at",
            "No date resolution: a bare date is naive.",
            '"2026-01-01T00:00:00.000Z"\nupdated',
            "2026-01-01\nupdated",
        ),
        bad(
            "octal_looking_integer",
            "tags[0]",
            "Number-like plain scalars are refused.",
            '["conformance"]',
            "[012]",
        ),
        bad("body_in_frontmatter", "body", "The body is the Markdown.", "tags:", 'body: "x"\ntags:'),
        bad(
            "duplicate_key",
            "state",
            "Keys are unique.",
            'state: "active"\n',
            'state: "active"\nstate: "active"\n',
        ),
        bad(
            "alias",
            "supersedes",
            "Anchors and aliases are refused.",
            "evidence: []\nsupersedes: null",
            "evidence: &e []\nsupersedes: *e",
        ),
        bad("non_string_key", None, "Keys are strings.", "flag_reason: null", "1: null\nflag_reason: null"),
    ]


def _origin_fact(keys: KeyPair) -> MemoryRecord:
    record = MemoryRecord.create(
        type="fact",
        body="The conformance suite runs on fixed seeds.",
        slots={"subject": "conformance suite", "predicate": "runs on fixed seeds"},
        provenance=Provenance(kind="conversation", ref="session-0001", agent=address_of(keys)),
        created_at=FIXED_TIME,
        confidence=0.9,
        tags=("conformance",),
    )
    return sign_record(record, keys)


# ---------------------------------------------------------------------- refusals


_DROP = object()  # as a change: remove the field


def _changed(base: Json, changes: Mapping[str, Any]) -> Json:
    data = copy.deepcopy(base)
    for key, value in changes.items():
        if value is _DROP:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def _cases(key: str, error: str, table: list[tuple[str, str, str, Json]]) -> list[Json]:
    return [
        {"name": name, "about": about, key: data, "error": error, "field": field}
        for name, field, about, data in table
    ]


def rejection_cases(rec: _Records) -> list[Json]:
    """Return wire records ``MemoryRecord.from_wire`` must refuse, each with the field named."""
    base = rec.preference.to_wire()
    state = rec.state_v1.to_wire()

    def on_base(**changes: Any) -> Json:
        return _changed(base, changes)

    def on_state(**changes: Any) -> Json:
        return _changed(state, changes)

    upper_id = "mem:" + base["id"][4:].upper()
    other_provenance = {**base["provenance"], "via": "x"}
    table = [
        ("float_in_slots", "slots.weight", "No floats anywhere.", on_base(slots={"weight": 0.5})),
        ("float_in_extra", "x_score", "Unknown fields obey the value rules.", on_base(x_score=0.25)),
        ("confidence_number", "confidence", "A string on the wire.", on_base(confidence=0.75)),
        ("confidence_short", "confidence", "Exactly four decimals.", on_base(confidence="0.75")),
        ("confidence_long", "confidence", "Exactly four decimals.", on_base(confidence="0.75000")),
        ("confidence_above_one", "confidence", "At most 1.", on_base(confidence="1.0001")),
        ("naive_created_at", "created_at", "A zone is required.", on_base(created_at="2026-01-01T00:00:00")),
        ("naive_updated_at", "updated_at", "A zone is required.", on_base(updated_at="2026-01-01T00:00")),
        ("valid_from_not_canonical", "valid_from", "Milliseconds required.", on_state(valid_from=_NO_MS)),
        ("valid_to_with_offset", "valid_to", "Z, not +00:00.", on_state(valid_to=_OFFSET)),
        ("wrong_id", "id", "The id is the birth's content address.", on_base(id="mem:" + "0" * 32)),
        ("uppercase_id", "id", "The id is lowercase hex.", on_base(id=upper_id)),
        ("unknown_type", "type", "Four wire types.", on_base(type="opinion")),
        ("seed_003_word_on_the_wire", "type", "Mapped on creation only.", on_base(type="semantic")),
        ("subject_without_kind", "subject", "Needs kind state.", on_base(kind=_DROP, subject="h:x")),
        ("subject_with_kind_knowledge", "subject", "Needs kind state.", on_base(subject="h:x")),
        ("state_kind_without_subject", "subject", "State needs a subject.", on_state(subject=_DROP)),
        ("state_kind_empty_subject", "subject", "State needs a subject.", on_state(subject="")),
        ("unknown_kind", "kind", "state or knowledge.", on_base(kind="fact")),
        ("bad_scope", "scope", "Seed 000's five words.", on_base(scope="team")),
        ("scope_with_space", "scope", "The wire word is user-preference.", on_base(scope="user preference")),
        ("bad_epistemic_status", "epistemic_status", "Four words.", on_base(epistemic_status="likely")),
        ("empty_taint_label", "taint[0]", "Non-empty labels.", on_base(taint=[""])),
        ("taint_not_a_list", "taint", "An array of strings.", on_base(taint="external")),
        ("namespace_padded", "namespace", "No surrounding whitespace.", on_base(namespace=" user:alice")),
        ("rule_without_evidence", "evidence", "A rule needs evidence.", on_base(type="rule", id=_DROP)),
        ("transitional_without_block", "transition", "Iff a block.", on_base(state="transitional")),
        ("superseded_without_successor", "superseded_by", "Names it.", on_base(state="superseded")),
        ("flagged_fact", "flagged", "Only rules can be flagged.", on_base(flagged=True)),
        ("flagged_not_boolean", "flagged", "A JSON boolean.", on_base(flagged="false")),
        ("redacted_false", "redacted", "Present only as true.", on_base(redacted=False)),
        (
            "redaction_reason_on_live_record",
            "redaction_reason",
            "Tombstones only.",
            on_base(redaction_reason="x"),
        ),
        ("missing_provenance", "provenance", "Required.", on_base(provenance=_DROP)),
        (
            "slot_key_not_nfc",
            "slots",
            "Keys must be NFC: canonical JSON sorts keys before it normalises the text.",
            on_base(slots={"cafe\u0301": "decomposed"}),
        ),
        (
            "slot_keys_equal_after_nfc",
            "slots",
            "Two keys that NFC makes one would collide in the canonical bytes.",
            on_base(slots={"caf\u00e9": 1, "cafe\u0301": 2}),
        ),
        (
            "confidence_arabic_digits",
            "confidence",
            "ASCII digits only.",
            on_base(confidence="0.\u0669\u0660\u0660\u0660"),
        ),
        (
            "null_namespace",
            "namespace",
            "Leave an unset field out; null would vanish.",
            on_base(namespace=None),
        ),
        ("null_birth_digest", "birth_digest", "Leave an unset field out.", on_base(birth_digest=None)),
        (
            "provenance_unknown_key",
            "provenance",
            "kind, ref, agent only.",
            on_base(provenance=other_provenance),
        ),
    ]
    return _cases("input", "RecordError", table)


_NO_MS = "2026-01-01T00:00:00Z"
_OFFSET = "2026-01-02T00:00:00.000+00:00"


def verification_failure_cases(rec: _Records) -> list[Json]:
    """Return signed records that parse but must fail verification, with the field named."""
    signed = sign_record(rec.state_v1, rec.keys).to_wire()
    other = address_of(KeyPair.from_bytes(bytes(range(1, 33)) + AGREEMENT_SEED))
    # The last base64 character of a 64-byte signature carries 4 unused bits: set one of them.
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    sig = signed["signature"].rstrip("=")
    loose = sig[:-1] + alphabet[alphabet.index(sig[-1]) | 1] + "=="

    def on_signed(**changes: Any) -> Json:
        return _changed(signed, changes)

    table = [
        ("tampered_confidence", "signature", "Changed after signing.", on_signed(confidence="0.9100")),
        ("tampered_extension_field", "signature", "Extension fields are signed.", on_signed(taint=_DROP)),
        ("tampered_added_extra", "signature", "Unknown fields are signed.", on_signed(x_added=True)),
        ("other_signer", "signature", "signed_by is in the payload.", on_signed(signed_by=other)),
        ("signer_not_an_address", "signed_by", "An amp:key address.", on_signed(signed_by="alice")),
        ("signature_without_signer", "signed_by", "Nothing to check against.", on_signed(signed_by=None)),
        ("non_canonical_base64", "signature", "Non-zero unused bits.", on_signed(signature=loose)),
        ("signature_not_base64", "signature", "Not base64 at all.", on_signed(signature="not base64!")),
    ]
    return _cases("record", "SignatureError", table)


def file_verification_failure_cases(rec: _Records, file_case: Mapping[str, Any]) -> list[Json]:
    """Return MemoryFiles that parse but must fail ``verify()``, with the field named."""
    signed: Json = file_case["file"]
    inner = copy.deepcopy(signed)
    inner["records"][1]["confidence"] = "0.1000"
    # Re-signed after the record was changed: the file signature holds, the record's does not.
    resigned = MemoryFile.from_wire(inner).sign(rec.keys).to_wire()

    def on_file(**changes: Any) -> Json:
        return _changed(signed, changes)

    later = "2026-01-04T00:00:00.001Z"
    table = [
        ("unsigned_file", "signature", "A missing signature is a failure.", on_file(signature="")),
        ("file_without_agent", "agent", "Nothing to verify against.", on_file(agent=None)),
        ("tampered_created_at", "signature", "Every field is signed.", on_file(created_at=later)),
        ("dropped_extra", "signature", "Unknown fields are signed.", on_file(x_exported_from=_DROP)),
        (
            "dropped_record",
            "signature",
            "The record list is signed.",
            on_file(records=signed["records"][:-1]),
        ),
        ("record_changed_then_file_resigned", "signature", "The file does not vouch for records.", resigned),
    ]
    return _cases("file", "SignatureError", table)


def _check_refusals(vectors: Mapping[str, Any]) -> None:
    from agent_memory.records.signing import verify_record

    for case in vectors["rejections"]:
        _expect(case, lambda c: MemoryRecord.from_wire(c["input"]), RecordError)
    for case in vectors["verification_failures"]:
        _expect(case, lambda c: verify_record(MemoryRecord.from_wire(c["record"])), SignatureError)
    for case in vectors["file_verification_failures"]:
        _expect(case, lambda c: MemoryFile.from_wire(c["file"]).verify(), SignatureError)
    for case in vectors["note_rejections"]:
        _expect(case, lambda c: load_note(c["note"].encode("utf-8")), RecordError)


def _expect(
    case: Mapping[str, Any], action: Callable[[Mapping[str, Any]], object], error: type[Exception]
) -> None:
    try:
        action(case)
    except AgentMemoryError as exc:
        if not isinstance(exc, error) or exc.field != case["field"]:
            raise SystemExit(
                f"{case['name']}: expected {error.__name__} on {case['field']}, got {exc!r}"
            ) from exc
        return
    raise SystemExit(f"{case['name']}: the library accepted an input the vectors say it refuses")


# ---------------------------------------------------------------------- assembly


def build() -> Json:
    """Return the vectors as a JSON object, in the order they are written."""
    keys = seed_keys()
    rec = _Records(keys)
    vectors: Json = {
        "_": "Golden vectors of agent-memory (spec/SPEC.md) beyond the fg-agent-memory 0.1 set. "
        "Generated by spec/generate_vectors.py from fixed seeds; do not edit by hand.",
        "keys": {
            "signing_seed_hex": SIGNING_SEED.hex(),
            "agreement_seed_hex": AGREEMENT_SEED.hex(),
            "address": address_of(keys),
        },
        "time": format_timestamp(FIXED_TIME),
        "records": record_cases(rec),
        "unicode": unicode_cases(rec),
        "type_words": type_word_cases(),
        "tombstones": tombstone_cases(rec),
        "memory_file": memory_file_case(rec),
    }
    vectors["notes"] = note_cases(rec)
    vectors["note_rejections"] = note_rejection_cases(vectors["notes"][0]["note"])
    vectors["rejections"] = rejection_cases(rec)
    vectors["verification_failures"] = verification_failure_cases(rec)
    vectors["file_verification_failures"] = file_verification_failure_cases(rec, vectors["memory_file"])
    _check_refusals(vectors)
    _check_ids(vectors)
    return vectors


def _check_ids(vectors: Mapping[str, Any]) -> None:
    for case in [*vectors["records"], *vectors["unicode"]]:
        birth = {k: case["record"][k] for k in ("type", "body", "slots", "provenance", "created_at")}
        if compute_record_id(birth) != case["id"]:
            raise SystemExit(f"{case['name']}: the id is not the content address of the birth")
        digest = hashlib.sha256(bytes.fromhex(case["birth_hex"])).hexdigest()
        if case["id"] != "mem:" + digest[:32]:
            raise SystemExit(f"{case['name']}: birth_hex does not hash to the id")


def render(vectors: Json) -> str:
    """Return the file text: two-space indented JSON, raw UTF-8, and a final newline."""
    return json.dumps(vectors, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write or check ``spec/vectors.json``; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="compare with the file on disk, write nothing")
    parser.add_argument(
        "--output", type=Path, default=VECTORS_PATH, help="the vectors file (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    path: Path = args.output
    data = render(build()).encode("utf-8")
    if args.check:
        if not path.exists() or path.read_bytes() != data:
            print(f"{path} is out of date: run python spec/generate_vectors.py", file=sys.stderr)
            return 1
        return 0
    path.write_bytes(data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

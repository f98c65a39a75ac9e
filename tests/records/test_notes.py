from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.errors import RecordError, SignatureError
from agent_memory.records.note import MAX_DEPTH, dump_note, load_note
from agent_memory.records.record import MemoryRecord
from agent_memory.records.signing import address_of, sign_record, verify_record
from strategies import KEYS, records

PATH = "notes/a2ba09c33f5389fd45f6a2104b694d77/000001.md"
GOLDEN_ID = "mem:a2ba09c33f5389fd45f6a2104b694d77"
AGENT = "amp:key:FAe4sisG95oZ42w7buUn5qEE4TAnfTTFPiguZUHmhiF"
# The origin's canonical_record vector (fg-agent-memory 0.1), embedded so the test runs without ../shared.
GOLDEN_WIRE: dict[str, Any] = {
    "id": GOLDEN_ID,
    "type": "fact",
    "body": "The conformance suite runs on fixed seeds.",
    "slots": {"subject": "conformance suite", "predicate": "runs on fixed seeds"},
    "state": "active",
    "confidence": "0.9000",
    "created_at": "2026-01-01T00:00:00.000Z",
    "updated_at": "2026-01-01T00:00:00.000Z",
    "provenance": {"kind": "conversation", "ref": "session-0001", "agent": AGENT},
    "evidence": [],
    "supersedes": None,
    "superseded_by": None,
    "transition": None,
    "state_reason": None,
    "tags": ["conformance"],
    "flagged": False,
    "flag_reason": None,
    "signed_by": None,
    "signature": "",
}
GOLDEN_NOTE = (
    b"---\n"
    b'id: "mem:a2ba09c33f5389fd45f6a2104b694d77"\n'
    b'type: "fact"\n'
    b'slots: {"subject":"conformance suite","predicate":"runs on fixed seeds"}\n'
    b'state: "active"\n'
    b'confidence: "0.9000"\n'
    b'created_at: "2026-01-01T00:00:00.000Z"\n'
    b'updated_at: "2026-01-01T00:00:00.000Z"\n'
    b'provenance: {"kind":"conversation","ref":"session-0001",'
    b'"agent":"amp:key:FAe4sisG95oZ42w7buUn5qEE4TAnfTTFPiguZUHmhiF"}\n'
    b"evidence: []\n"
    b"supersedes: null\n"
    b"superseded_by: null\n"
    b"transition: null\n"
    b"state_reason: null\n"
    b'tags: ["conformance"]\n'
    b"flagged: false\n"
    b"flag_reason: null\n"
    b"signed_by: null\n"
    b'signature: ""\n'
    b"---\n"
    b"The conformance suite runs on fixed seeds.\n"
)


def golden() -> MemoryRecord:
    return MemoryRecord.from_wire(GOLDEN_WIRE)


def frontmatter(note: bytes) -> str:
    text = note.decode("utf-8")
    return text[4 : text.index("\n---\n", 3) + 1]


def edited(old: bytes, new: bytes) -> bytes:
    assert GOLDEN_NOTE.count(old) == 1, old
    return GOLDEN_NOTE.replace(old, new)


# ---------------------------------------------------------------------- properties


@settings(max_examples=2000, deadline=None)
@given(records())
def test_any_record_survives_a_note_with_its_canonical_bytes_and_file_bytes(record: MemoryRecord) -> None:
    note = dump_note(record)
    loaded = load_note(note, path=PATH)

    assert loaded.canonical_bytes() == record.canonical_bytes()
    assert dump_note(loaded) == note
    # Readable without the library: a stock YAML 1.1 loader sees exactly the wire fields.
    wire = record.to_wire()
    del wire["body"]
    assert yaml.load(frontmatter(note), Loader=yaml.CSafeLoader) == wire
    if record.signed_by == address_of(KEYS):
        verify_record(loaded, path=PATH)


_JUNK = [b"[", b"{", b"]", b"&a ", b"*a", b"!!", b"\n- ", b": ", b"? ", b"'", b'"', b"\t", b"\xff", b"\r"]
_JUNK += [b"---\n", b"...\n", b"%YAML 1.1\n", b"<<: ", b"\n", b"#", b"0.5", b"\\u00", b"\xc3", b"\x7f", b""]


def load_or_refuse(note: bytes) -> MemoryRecord | RecordError:
    try:
        return load_note(note, path=PATH)
    except RecordError as error:
        return error


@settings(max_examples=500, deadline=None)
@given(st.integers(0, len(GOLDEN_NOTE)), st.integers(0, 12), st.lists(st.sampled_from(_JUNK) | st.binary()))
def test_a_damaged_note_loads_or_is_refused_with_a_record_error(at: int, cut: int, junk: list[bytes]) -> None:
    result = load_or_refuse(GOLDEN_NOTE[:at] + b"".join(junk) + GOLDEN_NOTE[at + cut :])

    if isinstance(result, RecordError):
        assert result.path == PATH
    else:
        assert dump_note(load_note(dump_note(result))) == dump_note(result)


# ---------------------------------------------------------------------- the writer


def test_the_origin_canonical_record_is_written_as_these_exact_bytes() -> None:
    assert dump_note(golden()) == GOLDEN_NOTE
    assert load_note(GOLDEN_NOTE, path=PATH).to_wire() == GOLDEN_WIRE


def test_the_embedded_golden_record_is_the_origin_vector(origin_vectors: dict[str, Any]) -> None:
    vector = origin_vectors["canonical_record"]
    assert vector["record"] == GOLDEN_WIRE
    assert load_note(GOLDEN_NOTE).canonical_bytes().hex() == vector["canonical_hex"]


def test_a_signed_note_verifies_from_the_file_alone_and_a_changed_field_does_not() -> None:
    note = dump_note(sign_record(golden(), KEYS))
    verify_record(load_note(note, path=PATH), path=PATH)

    # Tags are not part of the id, so the edited file still loads but no longer verifies.
    tampered = note.replace(b'tags: ["conformance"]', b'tags: ["conformance","trusted"]')
    with pytest.raises(SignatureError, match="does not verify"):
        verify_record(load_note(tampered, path=PATH), path=PATH)


@pytest.mark.parametrize(
    "char",
    ["\x7f", "\x80", "\x85", "\x9f", "\u2028", "\u2029", "\ufeff", "\ufffe", "\uffff", "\x00", "\x1b"],
)
def test_characters_yaml_cannot_carry_raw_are_escaped_in_values_and_keys(char: str) -> None:
    text = f"a {char} b{char}"
    record = golden().evolve(tags=(text,), extra={text: text, "x": {text: [text]}})
    note = dump_note(record)
    escape = f"\\u{ord(char):04x}"

    assert char not in frontmatter(note)
    assert f'\n"a {escape} b{escape}": "a {escape} b{escape}"\n' in frontmatter(note)
    wire = record.to_wire()
    del wire["body"]
    assert yaml.safe_load(frontmatter(note)) == wire
    assert yaml.load(frontmatter(note), Loader=yaml.CSafeLoader) == wire
    assert load_note(note).canonical_bytes() == record.canonical_bytes()


@pytest.mark.parametrize(
    ("key", "written"),
    [
        ("custom_field", "custom_field: "),
        ("_private2", "_private2: "),
        ("yes", '"yes": '),
        ("n", '"n": '),
        ("off", '"off": '),
        ("null", '"null": '),
        ("true", '"true": '),
        ("Upper", '"Upper": '),
        ("x-custom", '"x-custom": '),
        ("2fa", '"2fa": '),
        ("", '"": '),
    ],
)
def test_a_key_is_plain_only_when_no_yaml_1_1_reader_can_misread_it(key: str, written: str) -> None:
    note = dump_note(golden().evolve(extra={key: 1}))

    assert f"\n{written}1\n" in note.decode("utf-8")
    assert load_note(note).extra == {key: 1}


def test_keys_longer_than_yaml_allows_inline_are_written_as_explicit_keys() -> None:
    long_key = "k" * 1001
    record = golden().evolve(extra={long_key: {"\x85" * 200: 1, "short": 2}})
    text = dump_note(record).decode("utf-8")

    assert f"\n? {long_key}\n: {{? " in text
    assert ',"short":2}\n' in text
    assert load_note(text.encode("utf-8")).canonical_bytes() == record.canonical_bytes()


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def test_values_nest_up_to_the_depth_limit_and_no_further_either_way() -> None:
    deepest = golden().evolve(extra={"deep": nested(MAX_DEPTH)})
    assert load_note(dump_note(deepest)).canonical_bytes() == deepest.canonical_bytes()

    too_deep = golden().evolve(extra={"deep": nested(MAX_DEPTH + 1)})
    with pytest.raises(RecordError, match="nested deeper than") as written:
        dump_note(too_deep)
    assert written.value.field == "deep"
    assert written.value.record_id == GOLDEN_ID

    hand_written = edited(
        b"flagged:", b"deep: " + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1) + b"\nflagged:"
    )
    with pytest.raises(RecordError, match="nested deeper than") as read:
        load_note(hand_written, path=PATH)
    assert read.value.path == PATH
    assert read.value.field is not None
    assert read.value.field.startswith("deep[0]")


@pytest.mark.parametrize(
    "body",
    [
        "",
        "\n",
        "\n\nleading and trailing\n\n",
        "---",
        "---\nnot frontmatter\n---\n",
        "a\r\nb\rc\u2028d\x85e\x7f",
    ],
)
def test_the_body_is_kept_byte_for_byte(body: str) -> None:
    note = dump_note(golden().evolve(body=body, id=""))

    assert note.endswith(b"\n---\n" + body.encode("utf-8") + b"\n")
    assert load_note(note).body == body


# ---------------------------------------------------------------------- hand-written notes

HAND_WRITTEN = b"""---
id: mem:a2ba09c33f5389fd45f6a2104b694d77
type: fact
slots:
  subject: conformance suite
  predicate: runs on fixed seeds
state: active
confidence: '0.9000'
created_at: 2026-01-01T00:00:00.000Z
provenance:
  kind: conversation
  ref: session-0001
  agent: amp:key:FAe4sisG95oZ42w7buUn5qEE4TAnfTTFPiguZUHmhiF
evidence: []
supersedes:
tags:
  - conformance
flagged: false
---
The conformance suite runs on fixed seeds.
"""


def test_a_hand_written_note_in_plain_yaml_reads_as_the_same_record() -> None:
    assert load_note(HAND_WRITTEN).canonical_bytes() == golden().canonical_bytes()


def test_plain_yaml_values_that_yaml_1_1_would_retype_stay_strings() -> None:
    note = HAND_WRITTEN.replace(b"  - conformance\n", b"  - 2026-01-01\n  - no\n  - on\n  - ~x\n")

    assert load_note(note).tags == ("2026-01-01", "no", "on", "~x")


# ---------------------------------------------------------------------- bad notes

BAD_NOTES = [
    ("not UTF-8", edited(b"seeds.\n", b"seeds.\xff\n"), None, "not UTF-8: invalid byte 0xff at byte offset"),
    ("no opening fence", GOLDEN_NOTE[4:], None, "must start with a '---' line"),
    ("CRLF line endings", GOLDEN_NOTE.replace(b"\n", b"\r\n"), None, "must start with a '---' line"),
    ("unclosed frontmatter", edited(b"---\nThe", b"The"), None, "never closed"),
    ("no final newline", GOLDEN_NOTE[:-1], None, "must end with a newline"),
    ("no body line", GOLDEN_NOTE[: GOLDEN_NOTE.index(b"The conformance")], None, "must end with a newline"),
    ("YAML syntax", edited(b'tags: ["conformance"]', b'tags: ["conformance"'), None, "YAML error at line 16"),
    ("raw control character", edited(b'signature: ""', b'signature: "\x7f"'), None, "U+007F at line 19"),
    ("empty frontmatter", b"---\n---\nbody\n", None, "frontmatter is empty"),
    ("not a mapping", b"---\n- a\n- b\n---\nbody\n", None, "must be a mapping"),
    (
        "duplicate key",
        edited(b'state: "active"\n', b'state: "active"\nstate: "active"\n'),
        "state",
        "duplicate",
    ),
    ("body in frontmatter", edited(b"flagged:", b'body: "x"\nflagged:'), "body", "not a field"),
    ("non-string key", edited(b"flagged:", b"1: x\nflagged:"), None, "the key '1' is not a string"),
    ("float", edited(b'seeds"}', b'seeds","weight":0.5}'), "slots.weight", "number 0.5 is not allowed"),
    ("unquoted confidence", edited(b'"0.9000"', b"0.9"), "confidence", "quote it as a 4-decimal string"),
    ("alias", edited(b"flagged:", b"copy: *t\nflagged:").replace(b"tags: [", b"tags: &t ["), "copy", "alias"),
    ("YAML tag", edited(b'tags: ["conformance"]', b"tags: !!binary aGk="), "tags", "unsupported YAML value"),
    ("wrong id", edited(GOLDEN_ID.encode(), b"mem:" + b"0" * 32), "id", "does not match the birth content"),
    ("unknown type", edited(b'type: "fact"', b'type: "fable"'), "type", "unknown value 'fable'"),
    ("unknown state", edited(b'state: "active"', b'state: "deleted"'), "state", "unknown value 'deleted'"),
    ("yes/no boolean", edited(b"flagged: false", b"flagged: no"), "flagged", "must be true or false"),
    ("naive timestamp", edited(b'00.000Z"\nupdated', b'00"\nupdated'), "created_at", "naive timestamp"),
    (
        "date",
        edited(b'created_at: "2026-01-01T00:00:00.000Z"', b"created_at: 2026-01-01"),
        "created_at",
        "naive",
    ),
    (
        "unquoted time",
        edited(b"flagged:", b"valid_from: 2026-01-01T00:00:00Z\nflagged:"),
        "valid_from",
        "canonical",
    ),
    ("octal-looking number", edited(b'["conformance"]', b"[012]"), "tags[0]", "number 012 is not allowed"),
    ("string for a list", edited(b'["conformance"]', b"conformance"), "tags", "must be an array of strings"),
]


@pytest.mark.parametrize(
    ("note", "field", "detail"), [case[1:] for case in BAD_NOTES], ids=[c[0] for c in BAD_NOTES]
)
def test_a_bad_note_is_refused_naming_the_file_the_record_and_the_field(
    note: bytes, field: str | None, detail: str
) -> None:
    with pytest.raises(RecordError) as caught:
        load_note(note, path=PATH)

    error = caught.value
    assert type(error) is RecordError
    assert error.path == PATH
    assert error.field == field
    assert detail in error.detail
    assert str(error).startswith(PATH + ": ")
    if field is not None:
        assert f": {field}: " in str(error)
    if b"\nid: " in note:
        named = note.split(b"\nid: ")[1].split(b"\n")[0].strip(b'"\r').decode()
        assert error.record_id == named
        assert f": {named}: " in str(error)


def test_crlf_line_endings_get_a_hint() -> None:
    with pytest.raises(RecordError) as caught:
        load_note(GOLDEN_NOTE.replace(b"\n", b"\r\n"), path=PATH)

    assert caught.value.hint is not None
    assert "CRLF" in caught.value.hint


def test_a_recursive_alias_is_refused_rather_than_expanded() -> None:
    with pytest.raises(RecordError, match="aliases are not supported"):
        load_note(edited(b"flagged:", b"loop: &a [*a]\nflagged:"), path=PATH)

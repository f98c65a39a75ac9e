"""spec/vectors.json against the library, byte for byte (spec/SPEC.md §14).

Every case in the committed vector file is checked here: ids, canonical bytes, signing
inputs, signatures (verify, and re-sign to the same bytes), tombstones, the MemoryFile,
note files (parse and re-serialise to the same bytes) and the inputs that must be refused
with the field named. The last tests run the generator's ``--check`` mode, so the committed
file is what the generator writes today.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from fg_agent_id import KeyPair

from agent_memory.errors import AgentMemoryError, RecordError, SignatureError
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.note import dump_note, load_note
from agent_memory.records.record import EXTENSION_FIELDS, MemoryRecord, compute_record_id, parse_record_type
from agent_memory.records.signing import (
    CONTEXT_MEMORY_FILE,
    CONTEXT_RECORD,
    address_of,
    sign_record,
    signing_input,
    verify_record,
)
from agent_memory.records.wire import canonical_json, parse_timestamp

SPEC = Path(__file__).resolve().parents[2] / "spec"
VECTORS: dict[str, Any] = json.loads((SPEC / "vectors.json").read_text(encoding="utf-8"))
RECORD_CASES = [*VECTORS["records"], *VECTORS["unicode"]]
ERRORS: dict[str, type[AgentMemoryError]] = {"RecordError": RecordError, "SignatureError": SignatureError}


def by_name(cases: list[dict[str, Any]]) -> Any:
    return pytest.mark.parametrize("case", cases, ids=[case["name"] for case in cases])


def test_the_vectors_are_made_with_the_seed_keys(seed_keys: KeyPair) -> None:
    keys = VECTORS["keys"]
    assert bytes.fromhex(keys["signing_seed_hex"]) + bytes.fromhex(keys["agreement_seed_hex"]) == (
        seed_keys.to_bytes()
    )
    assert address_of(seed_keys) == keys["address"]


def test_the_record_cases_cover_every_extension_field_and_extra() -> None:
    fields = {name for case in VECTORS["records"] for name in case["record"]}
    assert set(EXTENSION_FIELDS) <= fields
    assert {"occurred_at", "x_origin"} <= fields


# ---------------------------------------------------------------------- records


@by_name(RECORD_CASES)
def test_a_record_re_emits_the_same_wire_object_in_the_same_order(case: dict[str, Any]) -> None:
    record = MemoryRecord.from_wire(case["record"])
    assert record.to_wire() == case["record"]
    assert list(record.to_wire()) == list(case["record"])


@by_name(RECORD_CASES)
def test_a_record_id_is_the_content_address_of_its_birth(case: dict[str, Any]) -> None:
    record = MemoryRecord.from_wire(case["record"])
    birth = bytes.fromhex(case["birth_hex"])
    assert canonical_json(record.birth()) == birth
    assert record.id == case["id"] == "mem:" + hashlib.sha256(birth).hexdigest()[:32]
    assert compute_record_id(record.birth()) == case["id"]
    assert MemoryRecord.from_wire({k: v for k, v in case["record"].items() if k != "id"}).id == case["id"]


@by_name(RECORD_CASES)
def test_a_record_has_the_canonical_bytes_of_the_vector(case: dict[str, Any]) -> None:
    assert MemoryRecord.from_wire(case["record"]).canonical_bytes().hex() == case["canonical_hex"]


@by_name(RECORD_CASES)
def test_signing_a_record_with_the_seed_keys_gives_the_vector_signature(
    case: dict[str, Any], seed_keys: KeyPair
) -> None:
    signed = sign_record(MemoryRecord.from_wire(case["record"]), seed_keys)
    assert signed.signature == case["signed"]["signature"]
    assert signed.to_wire() == case["signed"]["record"]
    payload = {k: v for k, v in case["signed"]["record"].items() if k != "signature"}
    assert signing_input(CONTEXT_RECORD, payload).hex() == case["signed"]["signing_input_hex"]


@by_name(RECORD_CASES)
def test_a_signed_vector_verifies_by_address_and_re_emits_identically(case: dict[str, Any]) -> None:
    record = MemoryRecord.from_wire(case["signed"]["record"])
    verify_record(record)
    assert record.to_wire() == case["signed"]["record"]
    assert list(record.to_wire()) == list(case["signed"]["record"])


@by_name(VECTORS["records"][:1])
def test_evolving_a_signed_vector_clears_the_signature(case: dict[str, Any]) -> None:
    signed = MemoryRecord.from_wire(case["signed"]["record"])
    evolved = signed.evolve(state_reason="reviewed")
    assert (evolved.signed_by, evolved.signature) == (None, "")
    assert evolved.id == signed.id


# ---------------------------------------------------------------------- unicode


@by_name(VECTORS["unicode"])
def test_a_unicode_body_is_read_exactly_as_written(case: dict[str, Any]) -> None:
    # Guards the vector file itself: an editor that normalised it would change these bytes.
    assert MemoryRecord.from_wire(case["record"]).body.encode("utf-8").hex() == case["body_utf8_hex"]


def test_a_non_nfc_body_is_kept_but_hashed_and_signed_as_nfc(seed_keys: KeyPair) -> None:
    (case,) = [c for c in VECTORS["unicode"] if c["name"] == "non_nfc_body"]
    record = MemoryRecord.from_wire(case["record"])
    assert not unicodedata.is_normalized("NFC", record.body)
    nfc_body = unicodedata.normalize("NFC", record.body)
    assert nfc_body.encode("utf-8") in record.canonical_bytes()
    assert record.body.encode("utf-8") not in record.canonical_bytes()

    twin = MemoryRecord.from_wire({**case["record"], "id": "", "body": nfc_body})
    assert twin.id == record.id == case["nfc_twin_id"]
    assert twin.canonical_bytes() == record.canonical_bytes()
    assert sign_record(twin, seed_keys).signature == case["signed"]["signature"]


def test_non_bmp_keys_sort_by_code_point() -> None:
    (case,) = [c for c in VECTORS["unicode"] if c["name"] == "emoji_and_non_bmp_keys"]
    text = bytes.fromhex(case["canonical_hex"]).decode("utf-8")
    assert text.index('"a":') < text.index('"\uff61":') < text.index('"\U0001f600":')
    assert "\U0001f680".encode() in bytes.fromhex(case["canonical_hex"])


def test_control_characters_are_escaped_as_pythons_json_does() -> None:
    (case,) = [c for c in VECTORS["unicode"] if c["name"] == "control_characters"]
    canonical = bytes.fromhex(case["canonical_hex"])
    for escaped in (rb"\t", rb"\r\n", rb"\"quotes\"", rb"back\\slash", rb"\b\f", rb"\u0000", rb"\u001f"):
        assert escaped in canonical
    for raw in ("\u007f", "\u0085", "\u2028", "\u2029", "\ufeff", "\ufffe\uffff"):
        assert raw.encode("utf-8") in canonical


# ---------------------------------------------------------------------- type words


@pytest.mark.parametrize("case", VECTORS["type_words"], ids=[c["word"] for c in VECTORS["type_words"]])
def test_type_words_map_to_the_wire_type_and_tags(case: dict[str, Any]) -> None:
    record_type, tags = parse_record_type(case["word"])
    assert (record_type.value, list(tags)) == (case["type"], case["tags"])
    (record_case,) = [c for c in VECTORS["records"] if c["name"] == "knowledge_preference_with_occurred_at"]
    wire = record_case["record"]
    created = MemoryRecord.create(
        type=case["word"],
        body=wire["body"],
        provenance=wire["provenance"],
        created_at=parse_timestamp(wire["created_at"], "created_at"),
        evidence=(wire["id"],),  # a rule needs evidence; the other types accept it
    )
    assert created.type.value == case["type"]
    assert list(created.tags) == case["tags"]


# ---------------------------------------------------------------------- tombstones


@by_name(VECTORS["tombstones"])
def test_a_tombstone_matches_the_vector(case: dict[str, Any]) -> None:
    original = MemoryRecord.from_wire(case["original"])
    tombstone = original.tombstone(case["reason"], now=parse_timestamp(case["now"], "now"))
    assert tombstone.to_wire() == case["tombstone"]
    assert list(tombstone.to_wire()) == list(case["tombstone"])
    assert tombstone.canonical_bytes().hex() == case["canonical_hex"]
    assert tombstone.id == original.id == case["id"]
    assert case["birth_digest"] == hashlib.sha256(canonical_json(original.birth())).hexdigest()
    assert case["id"] == "mem:" + case["birth_digest"][:32]


@by_name(VECTORS["tombstones"])
def test_a_tombstone_vector_reads_back_identically_and_cannot_be_erased_again(case: dict[str, Any]) -> None:
    tombstone = MemoryRecord.from_wire(case["tombstone"])
    assert tombstone.canonical_bytes().hex() == case["canonical_hex"]
    assert not set(EXTENSION_FIELDS) & set(case["tombstone"])
    with pytest.raises(RecordError) as info:
        tombstone.tombstone("again")
    assert info.value.field == "redacted"


def test_a_tombstone_with_a_foreign_birth_digest_is_refused() -> None:
    wire = dict(VECTORS["tombstones"][0]["tombstone"])
    wire["birth_digest"] = "0" * 64
    with pytest.raises(RecordError) as info:
        MemoryRecord.from_wire(wire)
    assert info.value.field == "id"


# ---------------------------------------------------------------------- MemoryFile


def test_the_memory_file_vector_verifies_and_re_serialises_identically() -> None:
    case = VECTORS["memory_file"]
    file = MemoryFile.from_wire(case["file"])
    file.verify()
    assert file.to_wire() == case["file"]
    assert list(file.to_wire()) == list(case["file"])
    assert file.canonical_bytes().hex() == case["canonical_bytes_hex"]
    assert MemoryFile.loads(file.dumps()).to_wire() == case["file"]
    payload = {k: v for k, v in case["file"].items() if k != "signature"}
    assert signing_input(CONTEXT_MEMORY_FILE, payload).hex() == case["signing_input_hex"]
    assert {r.id for r in file.signed_records()} < {r.id for r in file.records}


def test_signing_the_memory_file_with_the_seed_keys_gives_the_vector_signature(seed_keys: KeyPair) -> None:
    case = VECTORS["memory_file"]
    file = MemoryFile.from_wire({**case["file"], "agent": None, "signature": ""})
    signed = file.sign(seed_keys)
    assert signed.signature == case["signature"]
    assert signed.to_wire() == case["file"]


# ---------------------------------------------------------------------- notes


@by_name(VECTORS["notes"])
def test_a_note_vector_parses_to_its_record(case: dict[str, Any]) -> None:
    data = bytes.fromhex(case["note_hex"])
    assert data == case["note"].encode("utf-8")
    record = load_note(data, path="note.md")
    assert record.to_wire() == case["record"]
    assert record.canonical_bytes().hex() == case["canonical_hex"]
    if record.signature:
        verify_record(record)


@by_name(VECTORS["notes"])
def test_a_note_vector_is_what_the_writer_writes(case: dict[str, Any]) -> None:
    record = MemoryRecord.from_wire(case["record"])
    assert dump_note(record).hex() == case["note_hex"]
    assert dump_note(load_note(dump_note(record))).hex() == case["note_hex"]


@by_name(VECTORS["note_rejections"])
def test_a_refused_note_raises_a_record_error_naming_the_file_and_field(case: dict[str, Any]) -> None:
    with pytest.raises(RecordError) as info:
        load_note(case["note"].encode("utf-8"), path="notes/x/000001.md")
    assert type(info.value) is ERRORS[case["error"]]
    assert info.value.field == case["field"]
    assert info.value.path == "notes/x/000001.md"


# ---------------------------------------------------------------------- refusals


@by_name(VECTORS["rejections"])
def test_a_refused_record_raises_a_record_error_naming_the_field(case: dict[str, Any]) -> None:
    with pytest.raises(RecordError) as info:
        MemoryRecord.from_wire(case["input"])
    assert type(info.value) is ERRORS[case["error"]]
    assert info.value.field == case["field"]


@by_name(VECTORS["rejections"])
def test_a_refused_record_inside_a_file_is_named_by_position(case: dict[str, Any]) -> None:
    file = {"format": "fg-agent-memory/0.1", "agent": None, "created_at": VECTORS["time"]}
    with pytest.raises(RecordError) as info:
        MemoryFile.from_wire({**file, "records": [VECTORS["records"][0]["record"], case["input"]]})
    assert info.value.field == f"records[1].{case['field']}"


@by_name(VECTORS["verification_failures"])
def test_a_tampered_signed_record_parses_but_fails_verification(case: dict[str, Any]) -> None:
    record = MemoryRecord.from_wire(case["record"])
    with pytest.raises(SignatureError) as info:
        verify_record(record)
    assert type(info.value) is ERRORS[case["error"]]
    assert info.value.field == case["field"]
    assert info.value.record_id == record.id


@by_name(VECTORS["file_verification_failures"])
def test_a_tampered_memory_file_parses_but_fails_verification(case: dict[str, Any]) -> None:
    file = MemoryFile.from_wire(case["file"])
    with pytest.raises(SignatureError) as info:
        file.verify(path="export.json")
    assert info.value.field == case["field"]
    assert info.value.path == "export.json"


# ---------------------------------------------------------------------- the generator


def _run_check(*extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SPEC / "generate_vectors.py"), "--check", *extra],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_committed_vectors_are_what_the_generator_writes() -> None:
    result = _run_check()
    assert result.returncode == 0, result.stderr


def test_the_check_mode_fails_when_the_file_differs(tmp_path: Path) -> None:
    copy = tmp_path / "vectors.json"
    shutil.copyfile(SPEC / "vectors.json", copy)
    assert _run_check("--output", str(copy)).returncode == 0
    copy.write_bytes(copy.read_bytes().replace(b'"time": "2026-01-01T', b'"time": "2026-01-02T'))
    result = _run_check("--output", str(copy))
    assert result.returncode == 1
    assert "out of date" in result.stderr

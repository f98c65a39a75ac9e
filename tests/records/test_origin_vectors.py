"""The fg-agent-memory 0.1 golden vectors, byte for byte (seed 001; origin-notes §1.19; spec/SPEC.md §14).

Two layers. Tests that take the ``origin_vectors`` fixture read the saved vector file from
``../shared`` and check every case in it (they skip where that folder is absent). The rest
pin the origin's expected values as literals in this file, so the core compatibility checks
run on any checkout; one fixture test checks that the literals equal the saved file.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from fg_agent_id import KeyPair, PublicKeys, signing_key_from_address
from fg_agent_id import canonical_json as fg_canonical_json
from fg_agent_id.signing import decode_signature

from agent_memory.errors import RecordError, SignatureError
from agent_memory.records.lifecycle import LEGAL_TRANSITIONS, is_legal
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.record import WIRE_FIELDS, MemoryRecord, Provenance, State, compute_record_id
from agent_memory.records.signing import (
    CONTEXT_MEMORY_FILE,
    CONTEXT_RECORD,
    address_of,
    sign_record,
    signing_input,
    verify_record,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)

# ---------------------------------------------------------------------- the origin's values

ADDRESS = "amp:key:FAe4sisG95oZ42w7buUn5qEE4TAnfTTFPiguZUHmhiF"
FACT_ID = "mem:a2ba09c33f5389fd45f6a2104b694d77"
EPISODE_ID = "mem:9e3ca918de8c6a4fa86761a313a1c356"
RULE_ID = "mem:6de15d17ea95c840822c5ef72e86d7e9"
FACT_CANONICAL = (
    b'{"body":"The conformance suite runs on fixed seeds.","confidence":"0.9000",'
    b'"created_at":"2026-01-01T00:00:00.000Z","evidence":[],"flag_reason":null,"flagged":false,'
    b'"id":"mem:a2ba09c33f5389fd45f6a2104b694d77","provenance":{"agent":'
    b'"amp:key:FAe4sisG95oZ42w7buUn5qEE4TAnfTTFPiguZUHmhiF","kind":"conversation","ref":"session-0001"},'
    b'"signature":"","signed_by":null,"slots":{"predicate":"runs on fixed seeds","subject":'
    b'"conformance suite"},"state":"active","state_reason":null,"superseded_by":null,"supersedes":null,'
    b'"tags":["conformance"],"transition":null,"type":"fact","updated_at":"2026-01-01T00:00:00.000Z"}'
)
SIGNING_INPUTS = [
    ("record", {"a": 1}, "001966672d6167656e742d6d656d6f72792f76312f7265636f72647b2261223a317d"),
    (
        "memory-file",
        {"b": "two"},
        "001e66672d6167656e742d6d656d6f72792f76312f6d656d6f72792d66696c657b2262223a2274776f227d",
    ),
]
FACT_SIGNATURE = "nEnImvt3WAlQrYRh7vrIXkDFtgNqEDl8VUIcy6haPHXB/gAOdYjuPP5jnW4Ef6gxNUQAh8gj0kiqz/5cF7mcBw=="
FILE_SIGNATURE = "MvTAoIyxvbFt/EsbxvxvDz2AN8rsetQN3+UmDbOWOw0lffk6KGB8xSQ6rcU1atJyehpvM4giGJ0La5wh4k42Dg=="


def _unsigned_record_bytes(
    record_id: str, record_type: str, body: str, confidence: str, evidence: str
) -> bytes:
    # The canonical bytes of an unsigned origin record with empty slots and tags.
    return (
        f'{{"body":"{body}","confidence":"{confidence}","created_at":"2026-01-01T00:00:00.000Z",'
        f'"evidence":[{evidence}],"flag_reason":null,"flagged":false,"id":"{record_id}",'
        f'"provenance":{{"agent":"{ADDRESS}","kind":"conversation","ref":"session-0001"}},'
        f'"signature":"","signed_by":null,"slots":{{}},"state":"active","state_reason":null,'
        f'"superseded_by":null,"supersedes":null,"tags":[],"transition":null,"type":"{record_type}",'
        f'"updated_at":"2026-01-01T00:00:00.000Z"}}'
    ).encode()


# The origin file's canonical bytes: its three unsigned records differ only in these fields.
FILE_CANONICAL = (
    f'{{"agent":"{ADDRESS}","created_at":"2026-01-01T00:00:00.000Z","format":"fg-agent-memory/0.1",'
    f'"records":['.encode()
    + FACT_CANONICAL
    + b","
    + _unsigned_record_bytes(
        EPISODE_ID, "episode", "Ran the vector generator and reviewed the diff.", "0.7500", ""
    )
    + b","
    + _unsigned_record_bytes(
        RULE_ID,
        "rule",
        "Always review the vector diff after a wire-format change.",
        "0.8000",
        f'"{FACT_ID}","{EPISODE_ID}"',
    )
    + b"]}"
)


def origin_fact() -> MemoryRecord:
    return MemoryRecord.create(
        type="fact",
        body="The conformance suite runs on fixed seeds.",
        slots={"subject": "conformance suite", "predicate": "runs on fixed seeds"},
        provenance=Provenance(kind="conversation", ref="session-0001", agent=ADDRESS),
        created_at=T0,
        confidence=0.9,
        tags=("conformance",),
    )


def origin_records() -> tuple[MemoryRecord, MemoryRecord, MemoryRecord]:
    provenance = Provenance(kind="conversation", ref="session-0001", agent=ADDRESS)
    episode = MemoryRecord.create(
        type="episode",
        body="Ran the vector generator and reviewed the diff.",
        provenance=provenance,
        created_at=T0,
        confidence=0.75,
    )
    fact = origin_fact()
    rule = MemoryRecord.create(
        type="rule",
        body="Always review the vector diff after a wire-format change.",
        provenance=provenance,
        created_at=T0,
        confidence=0.8,
        evidence=(fact.id, episode.id),
    )
    return fact, episode, rule


def origin_verify(address: str, context: str, payload: Any, signature: str) -> None:
    """Verify by the origin's rules, built here from fg-agent-id primitives, not from our signing module.

    The message is ``uint16be(len(tag)) || tag || canonical_json(payload)`` with the tag
    ``fg-agent-memory/v1/<context>``; the key comes from the address alone.
    """
    tag = f"fg-agent-memory/v1/{context}".encode()
    message = len(tag).to_bytes(2, "big") + tag + fg_canonical_json(payload)
    public = PublicKeys(signing=signing_key_from_address(address), agreement=bytes(32))
    public.verify(decode_signature(signature), message)


# ---------------------------------------------------------------------- pinned literals


def test_the_seed_keys_have_the_origin_address(seed_keys: KeyPair) -> None:
    assert address_of(seed_keys) == ADDRESS


def test_the_conformance_fact_has_the_origin_content_address() -> None:
    birth = {
        "type": "fact",
        "body": "The conformance suite runs on fixed seeds.",
        "slots": {"subject": "conformance suite", "predicate": "runs on fixed seeds"},
        "provenance": {"kind": "conversation", "ref": "session-0001", "agent": ADDRESS},
        "created_at": "2026-01-01T00:00:00.000Z",
    }
    assert compute_record_id(birth) == FACT_ID
    assert origin_fact().id == FACT_ID
    assert [r.id for r in origin_records()] == [FACT_ID, EPISODE_ID, RULE_ID]


def test_the_conformance_fact_has_the_origin_canonical_bytes() -> None:
    assert origin_fact().canonical_bytes() == FACT_CANONICAL


@pytest.mark.parametrize(("context", "payload", "expected"), SIGNING_INPUTS, ids=["record", "memory-file"])
def test_signing_inputs_match_the_origin(context: str, payload: dict[str, Any], expected: str) -> None:
    assert signing_input(context, payload).hex() == expected


def test_signing_the_fact_with_the_seed_keys_gives_the_origin_signature(seed_keys: KeyPair) -> None:
    signed = sign_record(origin_fact(), seed_keys)
    assert signed.signature == FACT_SIGNATURE
    assert signed.signed_by == ADDRESS
    payload = signed.to_wire()
    del payload["signature"]
    expected_message = b"\x00\x19fg-agent-memory/v1/record" + fg_canonical_json(payload)
    assert signing_input(CONTEXT_RECORD, payload) == expected_message


def test_the_origin_signed_fact_verifies_by_address_alone() -> None:
    wire = {**origin_fact().to_wire(), "signed_by": ADDRESS, "signature": FACT_SIGNATURE}
    record = MemoryRecord.from_wire(wire)
    verify_record(record)
    assert record.to_wire() == wire
    assert list(record.to_wire()) == list(wire)


def test_the_origin_memory_file_has_the_origin_canonical_bytes_and_signature(seed_keys: KeyPair) -> None:
    signed = MemoryFile(created_at=T0, records=origin_records()).sign(seed_keys)
    assert signed.canonical_bytes() == FILE_CANONICAL
    assert signed.signature == FILE_SIGNATURE
    assert signed.dumps() == FILE_CANONICAL[:-1] + f',"signature":"{FILE_SIGNATURE}"}}'.encode()


def test_the_origin_memory_file_verifies_and_re_serialises_identically() -> None:
    file = MemoryFile(created_at=T0, records=origin_records(), agent=ADDRESS, signature=FILE_SIGNATURE)
    reread = MemoryFile.loads(file.dumps())
    reread.verify()
    assert reread.to_wire() == file.to_wire()
    assert reread.canonical_bytes() == FILE_CANONICAL


def test_a_signed_file_written_here_verifies_under_the_origin_rules(seed_keys: KeyPair) -> None:
    provenance = Provenance(kind="observation", ref="archive/2026-01-01.md#mem-2026-01-01-001")
    ours = MemoryRecord.create(
        type="semantic",
        body="Staging listens on port 5433.",
        provenance=provenance,
        created_at=T0,
        kind="state",
        subject="db:staging:port",
        namespace="project:atlas",
        scope="environment",
        valid_from=T0,
        taint=("external",),
        sources=("https://wiki.example/db",),
        epistemic_status="observed-once",
        extra={"x_unknown": {"kept": True}},
    )
    records = (sign_record(ours, seed_keys), *origin_records())
    data = json.loads(MemoryFile(created_at=T0, records=records).sign(seed_keys).dumps())

    signature = data.pop("signature")
    origin_verify(data["agent"], CONTEXT_MEMORY_FILE, data, signature)
    signed_records = [r for r in data["records"] if r["signed_by"]]
    assert len(signed_records) == 1
    for record in signed_records:
        payload = {k: v for k, v in record.items() if k != "signature"}
        origin_verify(record["signed_by"], CONTEXT_RECORD, payload, record["signature"])


# ---------------------------------------------------------------------- tampering

OTHER_ADDRESS = address_of(KeyPair.from_bytes(bytes(range(1, 33)) + bytes(range(96, 128))))
DISPUTE = {"sides": [FACT_ID, EPISODE_ID], "reason": "one side negates the other"}
# (changes to the signed wire object, whether they change the birth so the id is recomputed)
RECORD_TAMPERING: dict[str, tuple[dict[str, Any], bool]] = {
    "type": ({"type": "episode"}, True),
    "body": ({"body": "The conformance suite runs on fixed seeds!"}, True),
    "slots": ({"slots": {"subject": "conformance suite"}}, True),
    "provenance": ({"provenance": {"kind": "conversation", "ref": "session-0002", "agent": ADDRESS}}, True),
    "created_at": ({"created_at": "2026-01-01T00:00:00.001Z"}, True),
    "state": ({"state": "archived"}, False),
    "confidence": ({"confidence": "0.9001"}, False),
    "updated_at": ({"updated_at": "2026-01-01T00:00:00.001Z"}, False),
    "evidence": ({"evidence": [EPISODE_ID]}, False),
    "supersedes": ({"supersedes": EPISODE_ID}, False),
    "superseded_by": ({"state": "superseded", "superseded_by": EPISODE_ID}, False),
    "transition": ({"state": "transitional", "transition": DISPUTE}, False),
    "state_reason": ({"state_reason": "edited"}, False),
    "tags": ({"tags": []}, False),
    "flagged": ({"type": "rule", "evidence": [EPISODE_ID], "flagged": True}, True),
    "flag_reason": ({"flag_reason": "edited"}, False),
    "signed_by": ({"signed_by": OTHER_ADDRESS}, False),
    "signature": ({"signature": FILE_SIGNATURE}, False),
    "occurred_at (added)": ({"occurred_at": "2025-12-31T00:00:00.000Z"}, False),
    "kind (added)": ({"kind": "knowledge"}, False),
    "extra (added)": ({"x_added": 1}, False),
}  # fmt: skip


def signed_fact_wire() -> dict[str, Any]:
    return {**origin_fact().to_wire(), "signed_by": ADDRESS, "signature": FACT_SIGNATURE}


def test_the_tampering_cases_cover_every_origin_record_field() -> None:
    assert {name.split(" ")[0] for name in RECORD_TAMPERING} >= set(WIRE_FIELDS) - {"id"}


@pytest.mark.parametrize("field", list(RECORD_TAMPERING))
def test_tampering_with_any_field_of_a_signed_record_fails_verification(field: str) -> None:
    changes, changes_birth = RECORD_TAMPERING[field]
    wire = {**signed_fact_wire(), **changes}
    if changes_birth:
        del wire["id"]  # the forger's best move: let the id follow the new birth
    tampered = MemoryRecord.from_wire(wire)
    with pytest.raises(SignatureError):
        verify_record(tampered)


def test_a_changed_id_is_refused_before_any_signature_check() -> None:
    with pytest.raises(RecordError) as info:
        MemoryRecord.from_wire({**signed_fact_wire(), "id": EPISODE_ID})
    assert info.value.field == "id"


def signed_file_wire() -> dict[str, Any]:
    file = MemoryFile(created_at=T0, records=origin_records(), agent=ADDRESS, signature=FILE_SIGNATURE)
    return file.to_wire()


def _swap_records(data: dict[str, Any]) -> None:
    data["records"][0], data["records"][1] = data["records"][1], data["records"][0]


def _edit_record(data: dict[str, Any]) -> None:
    data["records"][1]["confidence"] = "0.7600"


FILE_TAMPERING = {
    "format": lambda d: d.update(format="fg-agent-memory/0.2"),
    "agent": lambda d: d.update(agent=OTHER_ADDRESS),
    "created_at": lambda d: d.update(created_at="2026-01-01T00:00:00.001Z"),
    "records (dropped)": lambda d: d["records"].pop(),
    "records (reordered)": _swap_records,
    "records (edited)": _edit_record,
    "signature": lambda d: d.update(signature=FACT_SIGNATURE),
    "extra (added)": lambda d: d.update(x_added=True),
}


@pytest.mark.parametrize("field", list(FILE_TAMPERING))
def test_tampering_with_any_field_of_a_signed_file_fails_verification(field: str) -> None:
    data = copy.deepcopy(signed_file_wire())
    MemoryFile.from_wire(data).verify()
    FILE_TAMPERING[field](data)
    with pytest.raises(SignatureError):
        MemoryFile.from_wire(data).verify()


# ---------------------------------------------------------------------- the saved vector file


def test_the_literals_here_are_the_saved_vectors(origin_vectors: dict[str, Any]) -> None:
    assert origin_vectors["keys"]["address_a"] == ADDRESS
    assert origin_vectors["record_id"]["expected"] == FACT_ID
    assert bytes.fromhex(origin_vectors["canonical_record"]["canonical_hex"]) == FACT_CANONICAL
    assert [(c["context"], c["payload"], c["expected_hex"]) for c in origin_vectors["signing_input"]] == (
        SIGNING_INPUTS
    )
    artifacts = origin_vectors["artifacts"]
    assert artifacts["signed_record"]["signature_b64"] == FACT_SIGNATURE
    assert artifacts["memory_file"]["signature_b64"] == FILE_SIGNATURE
    assert bytes.fromhex(artifacts["memory_file"]["canonical_bytes_hex"]) == FILE_CANONICAL


def test_the_vector_keys_derive_from_the_seed(origin_vectors: dict[str, Any], seed_keys: KeyPair) -> None:
    keys = origin_vectors["keys"]
    assert bytes.fromhex(keys["seed_a_hex"]) == bytes(range(32))
    assert address_of(seed_keys) == keys["address_a"]


def test_the_record_id_vector_recomputes(origin_vectors: dict[str, Any]) -> None:
    case = origin_vectors["record_id"]
    assert compute_record_id(case["birth"]) == case["expected"]


def test_the_canonical_record_vector_round_trips_byte_for_byte(origin_vectors: dict[str, Any]) -> None:
    case = origin_vectors["canonical_record"]
    record = MemoryRecord.from_wire(case["record"])
    assert record.canonical_bytes().hex() == case["canonical_hex"]
    assert record.to_wire() == case["record"]
    assert list(record.to_wire()) == list(case["record"])
    assert record.id == case["record"]["id"]


def test_the_signing_input_vectors_match(origin_vectors: dict[str, Any]) -> None:
    for case in origin_vectors["signing_input"]:
        assert signing_input(case["context"], case["payload"]).hex() == case["expected_hex"]


def test_the_signed_record_vector(origin_vectors: dict[str, Any], seed_keys: KeyPair) -> None:
    case = origin_vectors["artifacts"]["signed_record"]
    assert signing_input(case["context"], case["payload"]).hex() == case["signing_input_hex"]
    origin_verify(case["payload"]["signed_by"], case["context"], case["payload"], case["signature_b64"])

    record = MemoryRecord.from_wire(case["record"])
    verify_record(record)
    assert record.to_wire() == case["record"]
    assert list(record.to_wire()) == list(case["record"])
    payload = record.to_wire()
    del payload["signature"]
    assert payload == case["payload"]

    unsigned = MemoryRecord.from_wire(origin_vectors["canonical_record"]["record"])
    resigned = sign_record(unsigned, seed_keys)
    assert resigned.signature == case["signature_b64"]
    assert resigned.to_wire() == case["record"]


def test_the_memory_file_vector(origin_vectors: dict[str, Any], seed_keys: KeyPair) -> None:
    case = origin_vectors["artifacts"]["memory_file"]
    assert signing_input(case["context"], case["payload"]).hex() == case["signing_input_hex"]
    origin_verify(case["payload"]["agent"], case["context"], case["payload"], case["signature_b64"])

    file = MemoryFile.from_wire(case["file"])
    file.verify()
    assert file.canonical_bytes().hex() == case["canonical_bytes_hex"]
    assert file.to_wire() == case["file"]
    assert list(file.to_wire()) == list(case["file"])
    assert [list(r.to_wire()) for r in file.records] == [list(r) for r in case["file"]["records"]]
    assert MemoryFile.loads(file.dumps()).to_wire() == case["file"]

    resigned = MemoryFile(created_at=file.created_at, records=file.records).sign(seed_keys)
    assert resigned.signature == case["signature_b64"]
    assert resigned.to_wire() == case["file"]


def test_the_lifecycle_legality_vectors(origin_vectors: dict[str, Any]) -> None:
    table = origin_vectors["lifecycle"]["legality"]
    assert len(table) == 16
    assert [(c["from"], c["to"]) for c in table] == [(a.value, b.value) for a in State for b in State]
    for case in table:
        assert is_legal(State(case["from"]), State(case["to"])) is case["legal"], case
    assert {(State(c["from"]), State(c["to"])) for c in table if c["legal"]} == LEGAL_TRANSITIONS

import json
from datetime import UTC, datetime

import pytest
from fg_agent_id import KeyPair

from agent_memory.errors import RecordError, SignatureError
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.signing import address_of, sign_record

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def records() -> tuple[MemoryRecord, ...]:
    source = Provenance(kind="conversation", ref="s-1")
    return (
        MemoryRecord.create(type="fact", body="Uses Python 3.11.", provenance=source, created_at=T0),
        MemoryRecord.create(
            type="episode",
            body="Ran the suite.",
            provenance=source,
            created_at=T0,
            kind="state",
            subject="suite",
        ),
    )


def test_a_signed_file_round_trips_to_identical_bytes_and_verifies(seed_keys: KeyPair) -> None:
    signed = MemoryFile(created_at=T0, records=records(), extra={"x-exporter": "test"}).sign(seed_keys)
    assert signed.agent == address_of(seed_keys)
    loaded = MemoryFile.loads(signed.dumps(), path="export.json")
    loaded.verify()
    assert loaded.dumps() == signed.dumps()
    assert loaded.extra == {"x-exporter": "test"}
    assert json.loads(signed.dumps())["records"][1]["subject"] == "suite"


def test_an_unsigned_file_fails_verification_instead_of_being_skipped() -> None:
    with pytest.raises(SignatureError) as info:
        MemoryFile(created_at=T0, records=records()).verify(path="x.json")
    assert info.value.field == "agent" and info.value.path == "x.json"
    with pytest.raises(SignatureError) as info:
        MemoryFile(created_at=T0, agent="amp:key:abc").verify()
    assert info.value.field == "signature"


def test_tampering_with_any_record_breaks_the_file_signature(seed_keys: KeyPair) -> None:
    wire = MemoryFile(created_at=T0, records=records()).sign(seed_keys).to_wire()
    wire["records"][0]["tags"] = ["added"]
    with pytest.raises(SignatureError):
        MemoryFile.from_wire(wire).verify()


def test_a_record_signature_that_fails_names_the_record(seed_keys: KeyPair) -> None:
    other = KeyPair.generate()
    good = sign_record(records()[0], other)
    forged = good.evolve(signed_by=good.signed_by, signature=sign_record(records()[1], other).signature)
    signed = MemoryFile(created_at=T0, records=(forged,)).sign(seed_keys)
    signed.verify_file_signature()
    with pytest.raises(SignatureError) as info:
        signed.verify(path="x.json")
    assert info.value.record_id == forged.id and info.value.path == "x.json"


def test_a_bad_record_inside_a_file_is_named_by_position_and_field() -> None:
    wire = MemoryFile(created_at=T0, records=records()).to_wire()
    wire["records"][1]["slots"] = {"weight": 0.5}
    with pytest.raises(RecordError) as info:
        MemoryFile.loads(json.dumps(wire), path="in.json")
    assert info.value.field == "records[1].slots.weight"
    assert info.value.path == "in.json"
    assert info.value.record_id == records()[1].id


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[]", "object"),
        ('{"format": "fg-agent-memory/0.1", "records": []}', "created_at"),
        ('{"created_at": "2026-01-01T00:00:00.000Z", "records": {}}', "records"),
        ('{"created_at": "2026-01-01T00:00:00.000Z", "format": "other/1"}', "format"),
        ('{"created_at": "2026-01-01T00:00:00.000Z", "records": [], "records": []}', "duplicate"),
    ],
)
def test_malformed_files_are_refused_with_the_path(text: str, match: str) -> None:
    with pytest.raises(RecordError, match=match) as info:
        MemoryFile.loads(text, path="in.json")
    assert info.value.path == "in.json"

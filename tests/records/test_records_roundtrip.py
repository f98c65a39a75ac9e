from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings

from agent_memory.errors import RecordError
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.wire import canonical_json, loads_json
from strategies import records


@settings(max_examples=2000, deadline=None)
@given(records())
def test_any_record_survives_its_wire_object_and_its_canonical_json_text(record: MemoryRecord) -> None:
    expected = record.canonical_bytes()

    assert MemoryRecord.from_wire(record.to_wire()).canonical_bytes() == expected
    as_text = loads_json(canonical_json(record.to_wire()))
    assert MemoryRecord.from_wire(as_text).canonical_bytes() == expected


def test_a_key_that_is_not_nfc_is_refused_because_it_would_not_survive_canonical_json() -> None:
    # fg-agent-id sorts keys before it NFC-normalises the text, so such a key would sort
    # differently once re-read and the id would no longer match: refuse it up front.
    with pytest.raises(RecordError, match="NFC") as info:
        MemoryRecord(
            type="fact",
            body="x",
            slots={"e\u0301": 1, "f": 2},
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
            provenance=Provenance(kind="conversation"),
        )
    assert info.value.field == "slots"


@settings(max_examples=500, deadline=None)
@given(records())
def test_a_built_record_serialises_alike_with_and_without_the_walk_it_already_passed(
    record: MemoryRecord,
) -> None:
    # Issue 23: a record's own wire object, birth and signing payload skip check_json_value.
    wire = record.to_wire()
    assert canonical_json(wire, checked=True) == canonical_json(wire)
    assert canonical_json(record.birth(), checked=True) == canonical_json(record.birth())


def test_skipping_the_walk_still_refuses_a_float_and_an_unencodable_text() -> None:
    with pytest.raises(RecordError, match="not canonical JSON"):
        canonical_json({"weight": 0.5}, checked=True)
    with pytest.raises(RecordError, match="not canonical JSON"):
        canonical_json({"text": "\ud800"}, checked=True)

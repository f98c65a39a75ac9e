from datetime import UTC, datetime
from typing import Any

import pytest

from agent_memory.errors import RecordError
from agent_memory.records.record import (
    EXTENSION_FIELDS,
    Kind,
    MemoryRecord,
    Provenance,
    RecordType,
    Scope,
    State,
    Transition,
    parse_record_type,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SOURCE = Provenance(kind="conversation", ref="session-0001", agent=None)


def fact(body: str = "The staging host is db-2.", **fields: Any) -> MemoryRecord:
    return MemoryRecord.create(type="fact", body=body, provenance=SOURCE, created_at=T0, **fields)


def wire(**changes: Any) -> dict[str, Any]:
    data = fact().to_wire()
    data.update(changes)
    return data


def test_a_new_record_gets_its_content_address_from_the_birth_only() -> None:
    record = fact(tags=("x",), confidence=0.5)
    same_birth = fact(tags=("y",), confidence=0.9, occurred_at=T0)
    assert record.id == same_birth.id
    assert record.id.startswith("mem:") and len(record.id) == 36
    assert fact("another body").id != record.id


def test_the_wire_object_has_the_origin_field_order_and_optional_fields_only_when_set() -> None:
    keys = list(fact().to_wire())
    assert keys[:3] == ["id", "type", "body"]
    assert keys[-2:] == ["signed_by", "signature"]
    assert "occurred_at" not in keys and not set(EXTENSION_FIELDS) & set(keys)
    with_tail = fact(occurred_at=T0, kind=Kind.STATE, subject="host:staging", namespace="project:x").to_wire()
    assert list(with_tail)[19:] == ["occurred_at", "kind", "namespace", "subject"]


def test_absent_fields_take_the_origin_defaults() -> None:
    minimal = {
        k: v
        for k, v in wire().items()
        if k in ("id", "type", "body", "created_at", "updated_at", "provenance")
    }
    record = MemoryRecord.from_wire(minimal)
    assert record.state is State.ACTIVE
    assert record.confidence == 1.0
    assert record.slots == {} and record.tags == () and record.evidence == ()
    assert record.signature == "" and record.flagged is False


def test_unknown_fields_are_kept_in_extra_and_re_emitted_in_order() -> None:
    record = MemoryRecord.from_wire(wire(zeta={"nested": [1, None, True]}, alpha=""))
    assert record.extra == {"zeta": {"nested": [1, None, True]}, "alpha": ""}
    assert list(record.to_wire())[-2:] == ["zeta", "alpha"]
    assert MemoryRecord.from_wire(record.to_wire()).canonical_bytes() == record.canonical_bytes()


def test_extra_may_not_shadow_a_wire_field() -> None:
    with pytest.raises(RecordError) as info:
        fact(extra={"kind": "state"})
    assert info.value.field == "extra"


def test_an_empty_id_is_filled_in_and_a_wrong_one_refused() -> None:
    assert MemoryRecord.from_wire(wire(id="")).id == fact().id
    with pytest.raises(RecordError) as info:
        MemoryRecord.from_wire(wire(id="mem:" + "0" * 32), path="notes/x.md")
    assert info.value.field == "id"
    assert "notes/x.md" in str(info.value) and "expected" in str(info.value)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"type": "opinion"}, "type"),
        ({"state": "deleted"}, "state"),
        ({"body": 5}, "body"),
        ({"confidence": 0.9}, "confidence"),
        ({"confidence": "0.9"}, "confidence"),
        ({"created_at": "2026-01-01T00:00:00"}, "created_at"),
        ({"slots": {"weight": 0.5}}, "slots.weight"),
        ({"tags": "a,b"}, "tags"),
        ({"tags": ["a", 1]}, "tags[1]"),
        ({"provenance": {"kind": ""}}, "provenance.kind"),
        ({"provenance": {"kind": "x", "ref": None, "agent": None, "url": "u"}}, "provenance"),
        ({"flagged": "no"}, "flagged"),
        ({"redacted": False}, "redacted"),
        ({"kind": "episodic"}, "kind"),
        ({"scope": "planet"}, "scope"),
        ({"epistemic_status": "sure"}, "epistemic_status"),
        ({"valid_from": "2026-01-01T00:00:00Z"}, "valid_from"),
        ({"taint": [""]}, "taint[0]"),
        ({"namespace": " padded"}, "namespace"),
        ({"extra_float": 1.5}, "extra_float"),
    ],
)
def test_bad_wire_values_raise_a_record_error_naming_the_field(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(RecordError) as info:
        MemoryRecord.from_wire(wire(**changes), path="in.json")
    assert info.value.field == field
    assert info.value.path == "in.json"
    assert field in str(info.value)


@pytest.mark.parametrize("missing", ["type", "body", "created_at", "provenance"])
def test_a_missing_required_field_is_named(missing: str) -> None:
    data = wire()
    del data[missing]
    with pytest.raises(RecordError) as info:
        MemoryRecord.from_wire(data)
    assert info.value.field == missing


def test_a_record_must_be_an_object() -> None:
    with pytest.raises(RecordError, match="object"):
        MemoryRecord.from_wire(["not", "a", "record"])


def test_construction_invariants_of_the_origin_hold() -> None:
    other = fact("other").id
    with pytest.raises(RecordError, match="evidence"):
        MemoryRecord.create(type="rule", body="Always test.", provenance=SOURCE, created_at=T0)
    with pytest.raises(RecordError, match="transition"):
        fact(state=State.TRANSITIONAL)
    with pytest.raises(RecordError, match="transition"):
        fact(transition=Transition(sides=(fact().id, other), reason="r"))
    with pytest.raises(RecordError, match="successor"):
        fact(state=State.SUPERSEDED)
    with pytest.raises(RecordError, match="superseded_by"):
        fact(superseded_by=other)
    with pytest.raises(RecordError, match="rules"):
        fact(flagged=True)
    with pytest.raises(RecordError, match="redaction"):
        fact(redaction_reason="secret")
    assert fact(state=State.ARCHIVED, superseded_by=other).superseded_by == other


def test_a_transition_needs_two_distinct_sides_and_a_reason() -> None:
    with pytest.raises(RecordError) as info:
        Transition(sides=("mem:a", "mem:a"), reason="r")
    assert info.value.field == "transition.sides"
    with pytest.raises(RecordError) as info:
        Transition(sides=("mem:a", "mem:b"), reason="")
    assert info.value.field == "transition.reason"


def test_a_state_record_needs_a_subject_and_only_state_records_have_one() -> None:
    with pytest.raises(RecordError) as info:
        fact(kind=Kind.STATE)
    assert info.value.field == "subject"
    with pytest.raises(RecordError) as info:
        fact(kind=Kind.KNOWLEDGE, subject="host:staging")
    assert info.value.field == "subject"
    record = fact(kind="state", subject="host:staging", scope="environment")
    assert record.kind is Kind.STATE and record.scope is Scope.ENVIRONMENT


def test_effective_defaults_of_the_extension_fields() -> None:
    plain = fact(occurred_at=datetime(2025, 6, 1, tzinfo=UTC))
    assert plain.effective_kind is Kind.KNOWLEDGE
    assert plain.effective_namespace == "default"
    assert plain.effective_valid_from == datetime(2025, 6, 1, tzinfo=UTC)
    assert fact().effective_valid_from == T0


def test_extension_fields_are_signed_wire_fields_but_not_part_of_the_id() -> None:
    plain = fact()
    extended = fact(kind="state", subject="host:staging", taint=("external",), sources=("archive/a.md#x",))
    assert extended.id == plain.id
    assert extended.canonical_bytes() != plain.canonical_bytes()
    assert extended.to_wire()["taint"] == ["external"]


@pytest.mark.parametrize(
    ("word", "record_type", "tags"),
    [
        ("fact", RecordType.FACT, ()),
        ("episodic", RecordType.EPISODE, ()),
        ("semantic", RecordType.FACT, ()),
        ("procedural", RecordType.PROCEDURE, ()),
        ("preference", RecordType.FACT, ("preference",)),
        (" Rule ", RecordType.RULE, ()),
    ],
)
def test_seed_003_type_words_map_onto_the_four_wire_types(
    word: str, record_type: RecordType, tags: tuple[str, ...]
) -> None:
    assert parse_record_type(word) == (record_type, tags)


def test_creating_a_preference_tags_it() -> None:
    record = MemoryRecord.create(type="preference", body="Prefers tabs.", provenance=SOURCE, created_at=T0)
    assert record.type is RecordType.FACT and record.tags == ("preference",)
    with pytest.raises(RecordError) as info:
        parse_record_type("opinion")
    assert info.value.field == "type"


def test_evolve_clears_a_signature_and_keeps_the_id() -> None:
    signed = fact(signed_by="amp:key:x", signature="c2ln")
    evolved = signed.evolve(tags=("t",))
    assert evolved.id == signed.id
    assert evolved.signed_by is None and evolved.signature == ""


def test_a_tombstone_keeps_the_id_and_links_and_drops_all_content() -> None:
    other = fact("other").id
    record = fact(
        "The password is hunter2.", tags=("secret",), kind="state", subject="pw", extra={"note": "hunter2"},
        evidence=(other,), occurred_at=T0,
    )  # fmt: skip
    tomb = record.tombstone("leaked secret", now=datetime(2026, 2, 1, tzinfo=UTC))
    assert tomb.id == record.id and tomb.redacted and tomb.state is State.ARCHIVED
    assert tomb.birth_digest is not None and tomb.birth_digest.startswith(record.id[4:])
    assert tomb.evidence == (other,) and tomb.confidence == 0.0
    assert b"hunter2" not in tomb.canonical_bytes()
    assert tomb.kind is None and tomb.extra == {} and tomb.tags == ()
    assert MemoryRecord.from_wire(tomb.to_wire()).canonical_bytes() == tomb.canonical_bytes()
    with pytest.raises(RecordError, match="already"):
        tomb.tombstone("again")
    with pytest.raises(RecordError, match="reason"):
        record.tombstone("")


def test_a_tombstone_with_a_foreign_digest_is_refused() -> None:
    tomb = fact().tombstone("r").to_wire()
    tomb["birth_digest"] = "f" * 64
    with pytest.raises(RecordError) as info:
        MemoryRecord.from_wire(tomb)
    assert info.value.field == "id"

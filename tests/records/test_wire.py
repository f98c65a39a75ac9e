from datetime import UTC, datetime, timedelta, timezone

import pytest

from agent_memory.errors import RecordError
from agent_memory.records.wire import (
    canonical_json,
    check_json_value,
    confidence_from_wire,
    confidence_to_wire,
    format_timestamp,
    loads_json,
    parse_timestamp,
)


@pytest.mark.parametrize(
    ("text", "value"), [("0.0000", 0.0), ("1.0000", 1.0), ("0.9000", 0.9), ("0.1235", 0.1235)]
)
def test_confidence_parses_exactly_four_decimals(text: str, value: float) -> None:
    assert confidence_from_wire(text) == value
    assert confidence_to_wire(confidence_from_wire(text)) == text


@pytest.mark.parametrize(
    "bad", ["0.5", "1", "0.90000", "1.0001", "2.0000", "-0.1000", " 0.5000", "0,5000", 0.5, 1, None]
)
def test_confidence_refuses_anything_but_a_four_decimal_string_in_range(bad: object) -> None:
    with pytest.raises(RecordError) as info:
        confidence_from_wire(bad)
    assert info.value.field == "confidence"


@pytest.mark.parametrize("bad", [True, -0.01, 1.01, float("nan"), "0.5"])
def test_confidence_to_wire_refuses_non_numbers_and_out_of_range(bad: object) -> None:
    with pytest.raises(RecordError):
        confidence_to_wire(bad)  # type: ignore[arg-type]


def test_confidence_rounds_to_four_decimals_like_the_origin() -> None:
    assert confidence_to_wire(0.75) == "0.7500"
    assert confidence_to_wire(1) == "1.0000"


def test_timestamps_are_utc_with_truncated_milliseconds() -> None:
    moment = datetime(2026, 3, 4, 5, 6, 7, 999_999, tzinfo=timezone(timedelta(hours=2)))
    assert format_timestamp(parse_timestamp(moment, "t")) == "2026-03-04T03:06:07.999Z"
    assert (
        format_timestamp(parse_timestamp("2026-03-04T05:06:07.1239+02:00", "t")) == "2026-03-04T03:06:07.123Z"
    )


@pytest.mark.parametrize("bad", ["2026-01-01T00:00:00", datetime(2026, 1, 1)])
def test_naive_timestamps_are_refused_with_the_field_named(bad: object) -> None:
    with pytest.raises(RecordError, match="created_at") as info:
        parse_timestamp(bad, "created_at")
    assert info.value.field == "created_at"


def test_strict_timestamps_accept_only_the_canonical_spelling() -> None:
    assert parse_timestamp("2026-01-01T00:00:00.000Z", "valid_from", strict=True) == datetime(
        2026, 1, 1, tzinfo=UTC
    )
    with pytest.raises(RecordError, match="canonical"):
        parse_timestamp("2026-01-01T00:00:00Z", "valid_from", strict=True)


def test_a_float_anywhere_is_refused_and_its_position_named() -> None:
    with pytest.raises(RecordError) as info:
        check_json_value({"a": [1, {"b": 0.5}]}, "slots")
    assert info.value.field == "slots.a[1].b"


def test_a_lone_surrogate_is_refused() -> None:
    with pytest.raises(RecordError, match="surrogate"):
        check_json_value({"k": "\ud800"}, "extra")


def test_canonical_json_is_sorted_compact_raw_utf8_and_nfc() -> None:
    assert canonical_json({"b": 1, "a": "ü", "c": [3, 2, 1]}) == '{"a":"ü","b":1,"c":[3,2,1]}'.encode()
    assert canonical_json({"a": "e\u0301"}) == '{"a":"é"}'.encode()
    assert canonical_json({"a": "\n\x01\x7f"}) == b'{"a":"\\n\\u0001\x7f"}'


def test_strict_json_refuses_duplicate_keys_nan_and_non_utf8() -> None:
    with pytest.raises(RecordError, match="duplicate"):
        loads_json('{"a": 1, "a": 2}', path="f.json")
    with pytest.raises(RecordError, match="NaN"):
        loads_json('{"a": NaN}')
    with pytest.raises(RecordError, match="UTF-8") as info:
        loads_json(b'{"a": "\xff"}', path="f.json")
    assert info.value.path == "f.json"
    with pytest.raises(RecordError, match="line 1"):
        loads_json("{", path="f.json")

"""The note reader's fast path reads exactly what the YAML reader reads, or leaves the note to it.

``notes._parse_written`` takes a frontmatter line only when it is byte for byte what the
writer makes of the value JSON reads from it; everything else returns ``None`` and goes to
``notes._parse_yaml`` (the reader before the fast path), so results and errors stay the same.
These tests compare the two on written notes, on written notes with one character changed,
and on hand-written frontmatter the YAML reader refuses or reads differently from JSON.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from fg_agent_id.serde import canonical_timestamp
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.errors import RecordError
from agent_memory.records.note import _parse_written, _parse_yaml, _split, dump_note
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.wire import format_timestamp
from strategies import records

# Characters that YAML and JSON read differently, or that end a token, a line or a document.
_TRICKY = [
    *" \t\r\n#&*!?:,[]{}\"'\\-~.|>%@`",
    *"udDeE089nNyY",
    "\x7f",
    "\x85",
    "\u2028",
    "\ufeff",
    "\u0301",
    "é",
    "\U0001f600",
    "\\ud83d\\ude00",
    "\\ud800",
    "1.5",
    "NaN",
    "null",
]


def _yaml_or_error(frontmatter: str) -> dict[str, Any] | str:
    try:
        return _parse_yaml(frontmatter)
    except RecordError as exc:
        return f"error: {exc}"


def _frontmatter(record: MemoryRecord) -> str:
    return _split(dump_note(record).decode("utf-8"))[0]


def _agrees(frontmatter: str) -> None:
    fast = _parse_written(frontmatter)
    if fast is not None:
        assert fast == _yaml_or_error(frontmatter)
        # Same types all the way down (True is not 1, [] is not {}).
        assert repr(fast) == repr(_parse_yaml(frontmatter))


@settings(max_examples=300, deadline=None)
@given(records())
def test_a_written_note_reads_the_same_through_the_fast_path_as_through_yaml(record: MemoryRecord) -> None:
    _agrees(_frontmatter(record))


@settings(max_examples=300, deadline=None)
@given(
    records(),
    st.integers(0, 10**9),
    st.sampled_from(_TRICKY),
    st.sampled_from(["insert", "replace", "delete"]),
)
def test_a_changed_note_is_read_the_same_or_left_to_yaml(
    record: MemoryRecord, where: int, text: str, how: str
) -> None:
    frontmatter = _frontmatter(record)
    at = where % len(frontmatter)
    if how == "insert":
        changed = frontmatter[:at] + text + frontmatter[at:]
    elif how == "replace":
        changed = frontmatter[:at] + text + frontmatter[at + 1 :]
    else:
        changed = frontmatter[:at] + frontmatter[at + 1 :]
    _agrees(changed)


def test_a_plain_note_takes_the_fast_path() -> None:
    record = MemoryRecord.create(
        type="fact",
        body="The deploy runs on Fridays.",
        provenance=Provenance(kind="conversation", ref="session-1"),
        created_at=datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC),
        slots={"subject": "deploy", "count": 3, "nested": {"a": [1, None, True]}},
        tags=("ops",),
    )
    frontmatter = _frontmatter(record)
    assert _parse_written(frontmatter) == _parse_yaml(frontmatter)


@pytest.mark.parametrize(
    "line",
    [
        'slots: {"a":1,"a":2}',  # a repeated key: an error
        "confidence: 0.9",  # a float: an error
        'slots: {"a":NaN}',  # JSON's NaN is YAML's string
        'slots: {"a":1.5e3}',
        'body: "x"',  # the body is not a field
        'signature: "\\ud83d\\ude00"',  # JSON joins a surrogate pair, YAML refuses it
        'signature: "\\ud800"',
        'signature: "a\x7fb"',  # JSON takes DEL raw, YAML does not
        'signature: "a\x85b"',  # NEL: a line break to YAML
        'signature: "a\u2028b"',
        'signature: "\\u0085"',  # written so, but re-encoding gives the raw character: left to YAML
        "null: 1",  # a key YAML reads as null
        "yes: 1",
        "signature: x",  # plain YAML text, not JSON
        'signature: "x" # a comment',
        'signature:  "x"',
        'signature: "x" ',
        'slots: { "a": 1 }',
        "slots: [1,2,]",
        'slots: {"' + "k" * 300 + '":1}',  # a long key may be written `? key`
        "k" * 1100 + ": 1",  # beyond YAML's implicit-key limit
        "slots: " + "[" * 120 + "]" * 120,  # deeper than a note holds
        "slots: " + "9" * 5000,  # longer than Python reads an integer
        "slots: &a [1]",
        "slots: !!str x",
        "? slots\n: {}",
        "",
        "slots:",
        "slots: {}\n",
        "Slots: {}",
    ],
)
def test_frontmatter_the_writer_never_makes_is_left_to_yaml(line: str) -> None:
    frontmatter = f'id: "mem:00000000000000000000000000000000"\n{line}\n'
    assert _parse_written(frontmatter) is None


def test_format_timestamp_gives_the_origin_text_with_the_year_padded() -> None:
    rng = random.Random(7)  # noqa: S311 - reproducible inputs, not a secret
    zones = [UTC, None, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-11))]
    for number in range(3000):
        year = (
            rng.choice([1, 9, 10, 99, 100, 999, 1000, 1970, 2026, 9998])
            if number % 2
            else rng.randint(2, 9998)
        )
        value = datetime(
            year,
            rng.randint(1, 12),
            rng.randint(1, 28),
            rng.randint(0, 23),
            rng.randint(0, 59),
            rng.randint(0, 59),
            rng.randint(0, 999_999),
            tzinfo=rng.choice(zones),
        )
        origin = str(canonical_timestamp(value))
        year_text, dash, rest = origin.partition("-")
        assert format_timestamp(value) == f"{int(year_text):04d}{dash}{rest}"

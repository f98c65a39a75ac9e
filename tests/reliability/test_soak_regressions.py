"""Regressions for the failures the full-size soak found (issue 11; ``python bench/soak.py``).

Each test pins the kind of failure, not the one input the fuzzer met:

- Canonical JSON (fg-agent-id's scheme) normalises the JSON *text* to NFC, so a combining
  mark right after a control character's escape composed with the escape's letter (a
  newline then U+0303 became a backslash then ``ñ``): the bytes of a record, a log line or
  a MemoryFile were no longer JSON, and an export could not be read back (MemoryFile fuzzer,
  input 15,287 of the soak). Such a value is now refused with a ``RecordError``, before
  anything is written.
- ``memory.toml`` was written with strings put between quotes as they were (``home_id``,
  ``trusted_signers``, a recipe's ``model``) or as JSON (``[llm]``, whose escapes of
  characters beyond the BMP are surrogates TOML refuses): a ``home_id`` holding a quote made a
  ``memory.toml`` no reader takes (``memory.toml`` fuzzer). Every ``to_toml`` now writes
  strings with :func:`agent_memory.records.wire.toml_string`.
- Timestamps before the year 1000 were written with an unpadded year (``90-01-17T...``, the
  origin's ``strftime``), which no ISO-8601 reader takes back: a note whose ``occurred_at``
  was in the year 90 parsed, but what was written from it did not (note fuzzer, input
  94,876). :func:`agent_memory.records.wire.format_timestamp` now writes four digits.
"""

from __future__ import annotations

import json
import re
import tomllib
import unicodedata
from datetime import UTC, datetime
from itertools import product
from pathlib import Path

import pytest
from reliability_kit import T0, make_home, snapshot

from agent_memory.errors import RecordError
from agent_memory.memory import Memory
from agent_memory.records.memory_file import MemoryFile
from agent_memory.records.note import dump_note, load_note
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.wire import canonical_json, format_timestamp, parse_timestamp, toml_string
from agent_memory.settings import Settings

# Every character JSON writes as an escape, then marks that compose with an escape's letters
# (n, t, r, b, f and the hex digits a-f of \u00XX) or with nothing at all.
CONTROLS = [chr(c) for c in range(0x20)] + ['"', "\\"]
MARKS = ["\u0303", "\u0307", "\u0301", "\u0300", "\u0308", "\u030c", "\u0323", "\u20d7"]


def test_canonical_bytes_are_json_that_reads_back_as_the_value_or_the_value_is_refused() -> None:
    refused = 0
    for control, mark, around in product(CONTROLS, MARKS, ("", "x", "é")):
        value = {"body": f"{around}{control}{mark}{around}", "evidence": [f"{control}{mark}"]}
        try:
            data = canonical_json(value)
        except RecordError:
            refused += 1
            continue
        assert json.loads(data) == json.loads(unicodedata.normalize("NFC", json.dumps(value))), value
    # Only the escapes ending in a letter that composes are refused; a quote or backslash never.
    assert 0 < refused < len(CONTROLS) * len(MARKS) * 3


# A control character, then a mark that composes with the last letter of its escape.
COMPOSING = [
    ("\n", "\u0303"),  # \n + tilde: ñ
    ("\t", "\u0308"),  # ẗ
    ("\r", "\u0301"),  # ŕ
    ("\b", "\u0307"),  # ḃ
    ("\f", "\u0307"),  # ḟ
    ("\x1a", "\u0301"),  # \u001a + acute: á
    ("\x0e", "\u0323\u0301"),  # \u000e + dot below + acute: ẹ́ (a mark further on)
]


@pytest.mark.parametrize(("control", "marks"), COMPOSING)
def test_a_record_with_a_control_character_then_a_combining_mark_is_refused_at_creation(
    control: str, marks: str
) -> None:
    with pytest.raises(RecordError, match="combining mark"):
        MemoryRecord.create(
            type="fact",
            body="ok",
            evidence=(f"line one{control}{marks}",),
            provenance=Provenance("conversation", "s-1"),
            created_at=T0,
        )


def test_remembering_such_text_writes_nothing_to_the_home(tmp_path: Path) -> None:
    root = make_home(tmp_path / "home")
    with Memory.open(root) as memory:
        memory.remember("The staging host is db-2.", source="s-1", now=T0)
        before = snapshot(root)
        with pytest.raises(RecordError, match="combining mark"):
            memory.remember("first line\n\u0303second line", source="s-2", now=T0)
        assert snapshot(root) == before


def test_every_memory_file_that_can_be_made_reads_back_whole() -> None:
    made = MemoryFile(
        created_at="2026-11-29T16:00:00.123Z",
        records=tuple(
            MemoryRecord.create(
                type="fact",
                body=f"{control}{mark} ok",
                provenance=Provenance("conversation", "s-1"),
                created_at=T0,
            )
            for control, mark in product(['"', "\\", "\x19", "\x10"], MARKS)
        ),
    )
    again = MemoryFile.loads(made.dumps(), path="export.json")
    assert [r.canonical_bytes() for r in again.records] == [r.canonical_bytes() for r in made.records]


# ---------------------------------------------------------------------- memory.toml strings

TRIPLE_QUOTES = ("'" * 3, '"' * 3)
AWKWARD = [
    'a"b',
    "a\\b",
    "a\x7fb",
    "a\x01b",
    "a\x08b",
    "tab\there",
    "a\U0001f600b",
    "a\u2028b",
    *TRIPLE_QUOTES,
]


def test_toml_string_reads_back_as_the_same_text_for_every_awkward_character() -> None:
    for text in [chr(c) for c in range(0x80)] + AWKWARD + ["\ud7ff\ue000\U0010ffff"]:
        assert tomllib.loads(f"x = {toml_string(text)}")["x"] == text, repr(text)


def _by_hand(text: str) -> str:
    # How a person would write the value: a basic string with escapes.
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\u{ord(m.group()):04x}", escaped) + '"'


@pytest.mark.parametrize("awkward", AWKWARD)
def test_any_string_memory_toml_holds_is_written_back_so_it_reads_the_same(
    tmp_path: Path, awkward: str
) -> None:
    root = make_home(tmp_path / "home")
    path = root / "memory.toml"
    text = re.sub(r'home_id = ".*"', lambda _: f"home_id = {_by_hand(awkward)}", path.read_text("utf-8"))
    text = text.replace("trusted_signers = []", f"trusted_signers = [{_by_hand('amp:key:' + awkward)}]")
    url = '"http://localhost:8080/v1"'
    text += (
        f'\n[search.recipe.mine]\nkind = "vector"\nembedder = "openai"\nbase_url = {url}\n'
        f'model = {_by_hand(awkward)}\napi_key_env = "X"\n'
        f"\n[llm]\nbase_url = {url}\nmodel = {_by_hand(awkward)}\n"
    )
    path.write_text(text, "utf-8")
    settings = Settings.load(path)
    assert settings.home_id == awkward
    path.write_text(settings.to_toml(), "utf-8")
    assert Settings.load(path) == settings


# ---------------------------------------------------------------------- early years


@pytest.mark.parametrize("year", [1, 90, 999, 1000])
def test_a_timestamp_of_any_year_is_written_with_four_digits_and_reads_back(year: int) -> None:
    when = datetime(year, 1, 17, 22, 42, 50, 520000, tzinfo=UTC)
    stamp = format_timestamp(when)
    assert stamp == f"{year:04d}-01-17T22:42:50.520Z"
    assert parse_timestamp(stamp, "occurred_at", strict=True) == when
    record = MemoryRecord.create(
        type="fact",
        body="An old event.",
        provenance=Provenance("conversation", "s-1"),
        created_at=T0,
        occurred_at=when,
        valid_from=when,
    )
    again = load_note(dump_note(record), path="note.md")
    assert again.canonical_bytes() == record.canonical_bytes()
    assert again.occurred_at == when

"""``--from basic-memory``: observations and relations become records, prose is kept by section."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from folderkit import BASIC_MEMORY, BERLIN, cited, read, write_tree

from agent_memory.importers import import_path
from agent_memory.importers.basic_memory import parse_observation, parse_relation
from agent_memory.memory import Memory

NOTE = "coffee/Coffee Brewing Methods.md"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "bm", BASIC_MEMORY)


def test_an_observation_becomes_a_record_keeping_its_category_tags_and_context(folder: Path) -> None:
    items, problems = read("basic-memory", folder)
    assert problems == []
    water = items[f"{NOTE}#L14-L14"]
    assert water.text == (
        "Coffee Brewing Methods: [technique] Water temperature at 205°F extracts optimal compounds #brewing"
    )
    assert water.type == "fact"
    assert water.tags == (
        "basic-memory",
        "observation",
        "category:technique",
        "brewing",
        "coffee",
        "permalink:coffee-brewing-methods",
        "entity:note",
    )
    beans = items[f"{NOTE}#L15-L15"]
    assert beans.text.endswith("lighter roasts (personal experience)")
    assert {"category:preference", "preference"} <= set(beans.tags)
    untagged = items[f"{NOTE}#L18-L18"]
    assert "maintenance" in untagged.tags and not any(t.startswith("category:") for t in untagged.tags)
    assert water.occurred_at == datetime(2024, 5, 2, tzinfo=BERLIN)


def test_a_relation_becomes_a_record_naming_both_ends_and_its_type(folder: Path) -> None:
    items, _ = read("basic-memory", folder)
    origins = items[f"{NOTE}#L21-L21"]
    assert origins.text == "Coffee Brewing Methods relates_to [[Coffee Bean Origins]]"
    assert {"relation", "relation:relates_to"} <= set(origins.tags)
    pastries = items[f"{NOTE}#L22-L22"]
    assert pastries.text.endswith('"pairs well with" [[Breakfast Pastries]] (weekend only)')
    assert "relation:pairs well with" in pastries.tags


def test_prose_tasks_and_fenced_or_quoted_lines_stay_in_the_prose_records(folder: Path) -> None:
    items, _ = read("basic-memory", folder)
    prose = [item for item in items.values() if not {"observation", "relation"} & set(item.tags)]
    text = "\n".join(item.text for item in prose)
    assert "A comparison of the methods" in text
    kept = ("[ ] buy a new grinder", "[00:01:12] said", "see also [[Tea Brewing", "[fenced]", "[callout]")
    for words in kept:
        assert words in text, words
    assert "Pour over provides" not in text and "relates_to" not in text
    assert all(item.text.startswith("# Coffee Brewing Methods") for item in prose)
    for source in items:
        assert cited(folder, source), source


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("[method] Pour over is clearer #coffee (tasting)", ("method", ["coffee"])),
        ("Descale monthly #maintenance#machine", (None, ["maintenance", "machine"])),
        ("[x] done already", None),
        ("[X] done too", None),
        ("[?] a question", None),
        ("[1:02:03.500] transcript line", None),
        ("[link](https://example.org)", None),
        ("[[Just A Link]]", None),
        ("plain bullet without tags", None),
    ],
)
def test_observation_syntax_follows_basic_memory(content: str, expected: object) -> None:
    assert parse_observation(content) == expected


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("implements [[Search Design]]", ("implements", "Search Design", None)),
        ("depends_on [[DB]] (since v2)", ("depends_on", "DB", "since v2")),
        ("'part of' [[Kitchen]]", ("part of", "Kitchen", None)),
        ("some other thing [[Target]]", None),
        ("implements [[A]] and [[B]]", None),
        ("[[Only A Link]]", None),
    ],
)
def test_relation_syntax_follows_basic_memory(content: str, expected: object) -> None:
    assert parse_relation(content) == expected


def test_a_note_with_a_bad_date_is_reported_and_the_other_notes_import(folder: Path) -> None:
    write_tree(folder, {"bad.md": "---\ntitle: Bad\ndate: last tuesday\n---\n- [fact] never imported\n"})
    with Memory.in_memory(timezone=BERLIN, source_kind="import") as memory:
        report = import_path(memory, "basic-memory", str(folder))
        bodies = [r.body for r in memory.store.list()]
    assert report.errors == [
        "bad.md: date: unreadable date 'last tuesday' (write YYYY-MM-DD or an ISO 8601 time)"
    ]
    assert not any("never imported" in body for body in bodies)
    assert len(report.added) == report.read > 0


def test_importing_a_basic_memory_folder_twice_adds_nothing(folder: Path) -> None:
    with Memory.in_memory(source_kind="import") as memory:
        first = import_path(memory, "basic-memory", str(folder))
        again = import_path(memory, "basic-memory", str(folder))
        assert len(memory.store.list()) == len(first.added)
    assert again.added == [] and again.present == again.read == first.read

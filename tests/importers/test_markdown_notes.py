"""``--from markdown``: a plain folder of notes, one record per short file or per section."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from folderkit import BERLIN, NOTES, cited, read, write_tree

from agent_memory.importers import import_path
from agent_memory.importers.frontmatter import split_frontmatter
from agent_memory.importers.markdown import MAX_CHUNK_CHARS
from agent_memory.memory import Memory


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "notes", NOTES)


def test_a_short_note_is_one_record_and_its_file_name_is_never_made_its_title(notes: Path) -> None:
    items, problems = read("markdown", notes)
    assert problems == []
    grout = items["grout.md#L1-L1"]
    # The file name is presentation, named by the source anchor: the body is the note's own
    # text, so the same note under another name is one record (issue 18 case 9).
    assert grout.text == "Use sanded grout for joints wider than 3 mm."
    assert grout.type == "fact" and grout.tags == ("markdown",)
    assert grout.occurred_at is None  # no frontmatter date: no event time, never the file's mtime


def test_frontmatter_gives_title_tags_and_date_and_its_yaml_stays_text(notes: Path) -> None:
    items, _ = read("markdown", notes)
    kickoff = items["journal/2024-01-15 kickoff.md#L8-L8"]
    assert kickoff.text == "# Kickoff\n\nWe agreed on a greedy layout engine."
    assert kickoff.tags == ("markdown", "meeting", "tiles")
    assert kickoff.occurred_at == datetime(2024, 1, 15, tzinfo=BERLIN)
    meta, lines = split_frontmatter((notes / "journal/2024-01-15 kickoff.md").read_text("utf-8"), "k.md")
    assert meta["version"] == "1.10" and meta["draft"] == "no" and meta["date"] == "2024-01-15"
    assert lines == 7


def test_hidden_folders_and_dependencies_are_not_read(notes: Path) -> None:
    items, _ = read("markdown", notes)
    assert {source.split("#")[0] for source in items} == {"grout.md", "journal/2024-01-15 kickoff.md"}


def test_a_long_note_is_one_record_per_section_citing_its_lines(tmp_path: Path) -> None:
    paragraph = "Tiles are squares of glazed ceramic laid in a greedy pattern. " * 8
    text = "# Tiles\n\nIntro.\n\n## Install\n\n" + "\n\n".join([paragraph] * 4) + "\n\n## Design\n\nGreedy.\n"
    root = write_tree(tmp_path / "n", {"tiles.md": text})
    items, _ = read("markdown", root)
    assert len(items) > 3
    for source, item in items.items():
        assert len(item.text) <= MAX_CHUNK_CHARS + 200, source
        assert item.text.startswith("# Tiles"), source
        assert cited(root, source)[-1].strip() in item.text, source
    install = [item for item in items.values() if "## Install" in item.text]
    assert len(install) >= 2  # the long section is cut, its heading repeated on each part
    assert sum(item.text.count(paragraph.strip()) for item in items.values()) == 4


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("---\ntitle: x\nno closing\n", "the frontmatter opened on line 1 is never closed by a '---' line"),
        ("---\ntitle: [unclosed\n---\nbody\n", "frontmatter YAML error at line 3"),
        ("---\na: &x [1]\nb: *x\n---\nbody\n", "frontmatter line 2: anchors and aliases are not supported"),
        ("---\ntitle: a\ntitle: b\n---\nbody\n", "frontmatter line 3: duplicate key 'title'"),
        ("---\n- a list\n---\nbody\n", "the frontmatter must be a mapping of fields (line 2)"),
        ("---\ntitle: [a, b]\n---\nbody\n", "title: must be text, not a list or mapping"),
        ("---\ntags: {a: b}\n---\nbody\n", "tags: must be a list of words or one comma-separated string"),
    ],
)
def test_a_bad_frontmatter_is_reported_with_the_file_and_nothing_of_it_is_written(
    tmp_path: Path, text: str, reason: str
) -> None:
    root = write_tree(tmp_path / "n", {"bad.md": text, "good.md": "A good note.\n"})
    with Memory.in_memory(source_kind="import") as memory:
        report = import_path(memory, "markdown", str(root))
        bodies = [record.body for record in memory.store.list()]
    assert len(report.errors) == 1 and report.errors[0].startswith("bad.md: ")
    assert reason in report.errors[0]
    assert bodies == ["A good note."]


def test_a_single_note_is_anchored_as_it_was_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path / "n", NOTES)
    monkeypatch.chdir(tmp_path)
    items, _ = read("markdown", Path("n") / "grout.md")
    assert list(items) == ["n/grout.md#L1-L1"]


def test_importing_a_notes_folder_twice_adds_nothing(notes: Path) -> None:
    with Memory.in_memory(source_kind="import") as memory:
        first = import_path(memory, "markdown", str(notes))
        again = import_path(memory, "markdown", str(notes))
        assert len(memory.store.list()) == len(first.added) == 2
    assert again.added == [] and again.present == 2

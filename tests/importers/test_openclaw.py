"""``--from openclaw``: MEMORY.md as long-term facts, memory/YYYY-MM-DD.md as dated episodes."""

from __future__ import annotations

from datetime import datetime, time
from pathlib import Path

import pytest
from folderkit import BERLIN, OPENCLAW, cited, read, write_tree

from agent_memory.importers import import_path
from agent_memory.importers.openclaw import section_time
from agent_memory.memory import Memory


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "workspace", OPENCLAW)


def test_memory_md_bullets_become_long_term_facts_headed_by_their_section(workspace: Path) -> None:
    items, problems = read("openclaw", workspace)
    assert problems == []
    name = items["MEMORY.md#L4-L4"]
    assert name.text == "About the User: Name: Max"
    assert name.type == "fact" and name.tags == ("openclaw", "long-term")
    assert name.occurred_at is None
    project = items["MEMORY.md#L8-L10"]
    assert project.text.splitlines()[0] == "Current Projects: **Tiles library** (active)"
    assert "- Status: writing the docs" in project.text
    assert items["MEMORY.md#L12-L12"].text == "Current Projects: Max prefers short answers."


def test_daily_log_sections_are_episodes_dated_by_the_file_name_in_the_home_zone(workspace: Path) -> None:
    items, _ = read("openclaw", workspace)
    deploy = items["memory/2026-03-18.md#L3-L5"]
    assert deploy.type == "episode" and deploy.tags == ("openclaw", "daily-log")
    assert deploy.text.startswith("## 09:12 — Fixed the flaky deploy\n- Root cause")
    assert deploy.occurred_at == datetime(2026, 3, 18, 9, 12, tzinfo=BERLIN)
    assert items["memory/2026-03-18.md#L7-L8"].occurred_at == datetime(2026, 3, 18, 14, 5, tzinfo=BERLIN)
    untimed = items["memory/2026-03-18.md#L10-L11"]
    assert untimed.occurred_at == datetime(2026, 3, 18, 0, 0, tzinfo=BERLIN)
    slugged = items["memory/2026-03-19-standup.md#L1-L2"]
    assert slugged.occurred_at == datetime(2026, 3, 19, 8, 30, tzinfo=BERLIN)


def test_every_anchor_cites_the_lines_its_text_came_from(workspace: Path) -> None:
    items, _ = read("openclaw", workspace)
    for source, item in items.items():
        lines = cited(workspace, source)
        assert lines, source
        assert lines[-1].strip().lstrip("- ") in item.text, source


def test_other_memory_notes_are_facts_and_bootstrap_files_are_left_out(workspace: Path) -> None:
    items, _ = read("openclaw", workspace)
    note = items["memory/projects/tiles.md#L1-L3"]
    assert note.type == "fact" and "memory-note" in note.tags
    assert not any(s.startswith(("AGENTS.md", "DREAMS.md")) for s in items)


def test_a_daily_log_named_after_an_impossible_date_is_reported_and_the_rest_imports(workspace: Path) -> None:
    write_tree(workspace, {"memory/2026-02-30.md": "## 10:00 Something\nhappened\n"})
    items, problems = read("openclaw", workspace)
    assert [str(p) for p in problems] == ["memory/2026-02-30.md: the name is not a real date (2026-02-30)"]
    assert not problems[0].skipped
    assert not any(s.startswith("memory/2026-02-30.md") for s in items)
    assert "MEMORY.md#L4-L4" in items


def test_the_limit_keeps_only_the_latest_daily_logs(workspace: Path) -> None:
    items, _ = read("openclaw", workspace, limit=1)
    files = {source.split("#")[0] for source in items}
    assert files == {"MEMORY.md", "memory/2026-03-19-standup.md", "memory/projects/tiles.md"}


def test_a_folder_without_memory_is_not_an_openclaw_workspace(tmp_path: Path) -> None:
    write_tree(tmp_path / "w", {"AGENTS.md": "# hi\n"})
    with Memory.in_memory(source_kind="import") as memory:
        report = import_path(memory, "openclaw", str(tmp_path / "w"))
        assert memory.store.list() == []
    assert report.error is not None and "not an OpenClaw workspace" in report.error
    assert str(tmp_path / "w") in report.error


def test_importing_a_workspace_twice_adds_nothing(workspace: Path) -> None:
    with Memory.in_memory(timezone=BERLIN, source_kind="import") as memory:
        first = import_path(memory, "openclaw", str(workspace))
        count = len(memory.store.list())
        again = import_path(memory, "openclaw", str(workspace))
        assert len(memory.store.list()) == count
    assert len(first.added) == first.read == count > 0
    assert again.added == [] and again.present == again.read == first.read
    assert again.held == first.held


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("09:12 — Fixed it", time(9, 12)),
        ("[08:30] Standup", time(8, 30)),
        ("2:05 PM Standup", time(14, 5)),
        ("12:15 am late fix", time(0, 15)),
        ("23:59:30", time(23, 59, 30)),
        ("25:00 not a time", None),
        ("Notes from 10:00", None),
        ("2026 plans", None),
    ],
)
def test_a_section_time_is_read_only_from_the_start_of_a_heading(heading: str, expected: time | None) -> None:
    assert section_time(heading) == expected

"""``--from claude-code``: CLAUDE.md files and rules as procedures, an auto-memory folder as facts."""

from __future__ import annotations

from pathlib import Path

import pytest
from folderkit import CLAUDE_MEMORY, CLAUDE_PROJECT, cited, read, write_tree

from agent_memory.importers import import_path
from agent_memory.importers.claude_code import includes
from agent_memory.memory import Memory


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "project", CLAUDE_PROJECT)


def test_claude_md_bullets_and_paragraphs_become_procedures_citing_their_lines(project: Path) -> None:
    items, problems = read("claude-code", project)
    assert problems == []
    indent = items["CLAUDE.md#L6-L6"]
    assert indent.text == "Code style: Use 2-space indentation"
    assert indent.type == "procedure" and indent.tags == ("claude-code", "claude-md")
    commands = items["CLAUDE.md#L10-L14"]
    assert commands.text.startswith("Commands: Run the tests with:\n\n```sh\nmake test")
    for source, item in items.items():
        assert cited(project, source)[-1].strip().lstrip("- ") in item.text, source


def test_nested_claude_md_rules_and_local_files_are_found(project: Path) -> None:
    items, _ = read("claude-code", project)
    assert items["packages/web/CLAUDE.md#L2-L2"].text == "Web: Use pnpm, not npm"
    rule = items[".claude/rules/testing.md#L6-L6"]
    assert rule.text == "Plain test functions, no classes" and "rules" in rule.tags
    assert "CLAUDE.local.md#L1-L1" in items
    assert not any(s.startswith(("README", "docs/")) for s in items)


def test_at_imports_are_kept_as_references_never_inlined(project: Path) -> None:
    items, _ = read("claude-code", project)
    overview = items["CLAUDE.md#L3-L3"]
    assert "@docs/git-instructions.md" in overview.text
    assert overview.tags == ("claude-code", "claude-md", "include:README", "include:docs/git-instructions.md")
    assert not any("INLINE-MARKER" in item.text for item in items.values())
    # Code spans, fenced blocks and e-mail addresses hold no import.
    assert not any(t.startswith("include:") for t in items["CLAUDE.md#L7-L7"].tags)
    assert not any(t.startswith("include:") for t in items["CLAUDE.md#L10-L14"].tags)


def test_an_at_word_is_an_import_only_when_it_looks_like_a_path_or_names_a_file(tmp_path: Path) -> None:
    (tmp_path / "NOTES").write_text("x", encoding="utf-8")
    assert includes("Ask @alice, read @NOTES and @~/.claude/extra.md.", str(tmp_path)) == [
        "NOTES",
        "~/.claude/extra.md",
    ]


def test_an_auto_memory_folder_gives_topic_files_typed_by_their_frontmatter(tmp_path: Path) -> None:
    folder = write_tree(tmp_path / "projects" / "-home-ada-tiles" / "memory", CLAUDE_MEMORY)
    items, problems = read("claude-code", folder)
    assert problems == []
    style = items["feedback_style.md#L6-L6"]
    assert style.text == (
        "# Response style\n\nHow Ada wants answers written\n\nLead with the answer; no summary at the end."
    )
    assert style.type == "procedure" and "memory-type:feedback" in style.tags
    role = items["user_role.md#L7-L7"]
    assert role.type == "fact" and "memory-type:user" in role.tags
    # The index's pointers are the topic files themselves; its own facts are kept.
    index = {s: i for s, i in items.items() if s.startswith("MEMORY.md")}
    assert [i.text for i in index.values()] == ["The staging database is read-only on Fridays"]


def test_a_project_folder_finds_its_memory_folder_but_not_a_memory_md_of_its_own(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "proj", {"MEMORY.md": "- a Home's view\n", "notes.md": "- not memory\n"})
    with Memory.in_memory(source_kind="import") as memory:
        assert "no Claude Code memory" in (import_path(memory, "claude-code", str(root)).error or "")
    write_tree(root / "memory", CLAUDE_MEMORY)
    items, _ = read("claude-code", root)
    files = {s.split("#")[0] for s in items}
    assert files == {"memory/MEMORY.md", "memory/feedback_style.md", "memory/user_role.md"}


def test_a_users_claude_md_given_as_a_file_is_anchored_from_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    write_tree(tmp_path / ".claude", {"CLAUDE.md": "# Me\n\n- Answer in British English\n"})
    items, _ = read("claude-code", tmp_path / ".claude" / "CLAUDE.md")
    assert list(items) == ["~/.claude/CLAUDE.md#L3-L3"]
    assert items["~/.claude/CLAUDE.md#L3-L3"].type == "procedure"


def test_importing_claude_code_memory_twice_adds_nothing(project: Path) -> None:
    with Memory.in_memory(source_kind="import") as memory:
        first = import_path(memory, "claude-code", str(project))
        again = import_path(memory, "claude-code", str(project))
        assert len(memory.store.list()) == len(first.added) > 0
    assert again.added == [] and again.present == again.read

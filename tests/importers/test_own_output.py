"""Folder imports leave out agent-memory's own output: a Home in the folder, the bind block, view footers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from folderkit import CLAUDE_PROJECT, read, write_tree
from importkit import run
from test_import_folders_cli import make_home

from agent_memory.bindings.block import BEGIN, END, render_block, upsert_block
from agent_memory.home import Home
from agent_memory.importers.files import HOME_SKIPPED, strip_own_blocks
from agent_memory.jobs.views import seal

USER_RULE = "Always run the linter before committing."


def _project(tmp_path: Path) -> Path:
    """A project holding CLAUDE.md with a bind block, and an agent-memory Home in ``memory/``."""
    project = write_tree(tmp_path / "project", CLAUDE_PROJECT)
    claude = project / "CLAUDE.md"
    text = upsert_block(
        f"# Project rules\n\n{USER_RULE}\n", render_block("memory", mcp=False), path="CLAUDE.md"
    )
    claude.write_text(text + "\nMore user text after the block.\n", encoding="utf-8")
    Home.init(project / "memory", git=False)
    return project


def test_strip_own_blocks_blanks_the_bind_block_and_digest_footers_and_keeps_line_numbers() -> None:
    block = render_block("memory", mcp=True)
    text = seal("# Index\n\n- a topic\n") + "tail\n"
    mixed = f"keep 1\n{block}keep 2\n{text}"
    stripped = strip_own_blocks(mixed)
    lines = stripped.split("\n")
    assert len(lines) == len(mixed.split("\n"))
    assert [line for line in lines if line] == ["keep 1", "keep 2", "# Index", "- a topic", "tail"]
    assert lines.index("keep 2") == mixed.split("\n").index("keep 2")
    assert BEGIN not in stripped and END not in stripped and "sha256=" not in stripped
    unclosed = f"a\n{BEGIN}\nrest of the file\n"
    assert strip_own_blocks(unclosed) == "a\n\n\n"
    assert strip_own_blocks("plain\ntext\n") == "plain\ntext\n"


@pytest.mark.parametrize("fmt", ["markdown", "claude-code", "basic-memory"])
def test_a_home_inside_the_folder_is_skipped_and_the_bind_block_never_imported(
    tmp_path: Path, fmt: str
) -> None:
    project = _project(tmp_path)
    make_home(tmp_path)
    remembered = run(tmp_path, "remember", "Ship on Fridays.", "--source", "s", "--home", "project/memory")
    rendered = run(tmp_path, "render", "--home", "project/memory")
    assert remembered.returncode == 0 and rendered.returncode == 0, remembered.stderr + rendered.stderr
    assert any((project / "memory" / "notes").rglob("*.md")) and (project / "memory" / "index.md").exists()

    items, problems = read(fmt, project)
    assert [(p.path, p.reason, p.skipped) for p in problems] == [("memory", HOME_SKIPPED, True)]
    assert not any(source.startswith("memory/") for source in items), sorted(items)
    bodies = "\n".join(item.text for item in items.values())
    assert "Memory protocol" not in bodies and "agent-memory:" not in bodies
    if fmt != "basic-memory":  # basic-memory reads observations and relations, not every line
        assert USER_RULE in bodies

    done = run(tmp_path, "import", "--home", "h", "--from", fmt, "project", "--json")
    assert done.returncode == 0, done.stderr
    assert f"memory: {HOME_SKIPPED}" in json.loads(done.stdout)[0]["skipped"]


def test_importing_a_home_itself_reads_nothing_and_says_why(tmp_path: Path) -> None:
    make_home(tmp_path)
    Home.init(tmp_path / "other", git=False)
    done = run(tmp_path, "import", "--home", "h", "--from", "markdown", "other")
    assert done.returncode == 1, done.stderr  # nothing was taken in (docs/cli.md)
    assert "other: read 0, added 0, 0 already present, 0 refused, 1 files skipped" in done.stdout
    assert f"skipped .: {HOME_SKIPPED}" in done.stderr


@pytest.mark.parametrize(
    ("fmt", "message"),
    [
        ("markdown", "no Markdown notes here: no .md or .markdown file"),
        ("basic-memory", "not a basic-memory folder: no .md note"),
    ],
)
def test_a_folder_without_notes_is_an_error_and_writes_nothing(
    tmp_path: Path, fmt: str, message: str
) -> None:
    make_home(tmp_path)
    write_tree(tmp_path / "empty", {"readme.txt": "not a note\n"})
    before = sorted(p.name for p in (tmp_path / "h").rglob("*") if ".cache" not in p.parts)
    done = run(tmp_path, "import", "--home", "h", "--from", fmt, "empty")
    assert done.returncode == 1, done
    assert f"FAIL empty: {message}" in done.stderr
    after = sorted(p.name for p in (tmp_path / "h").rglob("*") if ".cache" not in p.parts)
    assert after == before

"""``agent-memory import --from openclaw|claude-code|basic-memory|markdown`` run as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path

from folderkit import BASIC_MEMORY, CLAUDE_PROJECT, NOTES, OPENCLAW, write_tree
from importkit import run

from agent_memory.home import Home
from agent_memory.search.recipes import BUILTIN_RECIPES, splice_search


def make_home(tmp_path: Path) -> str:
    """A Home searched by BM25 alone, so that each command does not load an embedding model."""
    home = Home.init(tmp_path / "h", git=False)
    toml = tmp_path / "h" / "memory.toml"
    bm25 = home.settings.search.activating(BUILTIN_RECIPES["bm25"])
    toml.write_text(splice_search(toml.read_text(encoding="utf-8"), bm25), encoding="utf-8")
    return "h"


def test_importing_notes_twice_adds_nothing_and_names_the_skipped_files(tmp_path: Path) -> None:
    notes = write_tree(tmp_path / "notes", NOTES)
    (notes / "photo.md").write_bytes(b"\x89PNG\x00\x00")
    make_home(tmp_path)
    first = run(tmp_path, "import", "--home", "h", "--from", "markdown", "notes", "--json")
    again = run(tmp_path, "import", "--home", "h", "--from", "markdown", "notes")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)[0]
    assert len(report["added"]) == 2 and report["errors"] == []
    assert report["skipped"] == ["photo.md: a binary file (it holds NUL bytes)"]
    assert again.returncode == 0, again.stderr
    assert "notes: read 2, added 0, 2 already present, 0 refused, 1 files skipped" in again.stdout
    assert "skipped photo.md: a binary file" in again.stderr


def test_a_binary_file_given_by_name_takes_nothing_in_and_says_so_in_the_exit_status(tmp_path: Path) -> None:
    (tmp_path / "photo.md").write_bytes(b"\x89PNG\x00\x00")
    make_home(tmp_path)
    done = run(tmp_path, "import", "--home", "h", "--from", "markdown", "photo.md")
    assert done.returncode == 1, done.stderr  # nothing was written (docs/cli.md)
    assert "read 0, added 0" in done.stdout and "a binary file" in done.stderr


def test_a_malformed_file_fails_the_command_and_the_other_files_still_import(tmp_path: Path) -> None:
    workspace = write_tree(tmp_path / "ws", {**OPENCLAW, "memory/2026-02-30.md": "- lost\n"})
    make_home(tmp_path)
    done = run(tmp_path, "import", "--home", "h", "--from", "openclaw", str(workspace))
    assert done.returncode == 4  # done with exceptions (issue 18): the other files were taken in
    assert "refused memory/2026-02-30.md: the name is not a real date (2026-02-30)" in done.stderr
    assert "read 9, added 9, 0 already present, 1 refused" in done.stdout


def test_imports_are_quarantined_unless_trusted(tmp_path: Path) -> None:
    write_tree(tmp_path / "bm", BASIC_MEMORY)
    write_tree(tmp_path / "project", CLAUDE_PROJECT)
    make_home(tmp_path)
    tainted = run(tmp_path, "import", "--home", "h", "--from", "basic-memory", "bm", "--json")
    trusted = run(tmp_path, "import", "--home", "h", "--from", "claude-code", "project", "--trust", "--json")
    assert tainted.returncode == 0 and trusted.returncode == 0, tainted.stderr + trusted.stderr
    added = len(json.loads(tainted.stdout)[0]["added"])
    assert added > 0 and len(json.loads(trusted.stdout)[0]["added"]) > 0
    status = json.loads(run(tmp_path, "status", "--home", "h", "--json").stdout)
    assert status["quarantined"] == added < status["records"]


def test_trust_is_refused_for_a_memory_file(tmp_path: Path) -> None:
    done = run(tmp_path, "import", "--trust", "some.memory.json")
    assert done.returncode == 2
    assert "--trust is for --from locomo" in done.stderr and "signer" in done.stderr


def test_a_markdown_import_of_a_file_that_is_not_markdown_fails_naming_it(tmp_path: Path) -> None:
    make_home(tmp_path)
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    (tmp_path / "notes.md").write_text("# Notes\n\nhello\n", encoding="utf-8")
    before = sorted(p.name for p in (tmp_path / "h" / "notes").rglob("*"))
    refused = run(tmp_path, "import", "--home", "h", "--from", "markdown", "notes.txt")
    assert refused.returncode == 1, refused
    assert "notes.txt: is not a Markdown file (.md or .markdown)" in refused.stderr
    assert sorted(p.name for p in (tmp_path / "h" / "notes").rglob("*")) == before
    done = run(tmp_path, "import", "--home", "h", "--from", "markdown", "notes.md")
    assert done.returncode == 0 and "read 1, added 1" in done.stdout, done

"""What every folder importer refuses: links out of the folder, binary, huge and non-text files.

And what it always does: report each such file by path with its reason, import the rest, and
taint what it imports ``external`` unless the import is trusted.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from folderkit import BASIC_MEMORY, CLAUDE_PROJECT, NOTES, OPENCLAW, read, write_tree

from agent_memory.importers import import_path
from agent_memory.importers.files import MAX_FILE_BYTES
from agent_memory.memory import Memory

MARKER = "OUTSIDE-MARKER-7f3a"

# Per format: a valid folder, where a linked file and a linked folder would be read from.
LAYOUTS = {
    "openclaw": (OPENCLAW, "memory/leak.md", "memory/linked"),
    "claude-code": (CLAUDE_PROJECT, "sub/CLAUDE.md", "linked"),
    "basic-memory": (BASIC_MEMORY, "leak.md", "linked"),
    "markdown": (NOTES, "leak.md", "linked"),
}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the imported one, holding text no import may read."""
    return write_tree(
        tmp_path / "outside",
        {
            "secret.md": f"- {MARKER} in a file\n",
            "dir/CLAUDE.md": f"- {MARKER} in a folder\n",
            "dir/note.md": f"- {MARKER} in a folder\n",
            "dir/2026-01-01.md": f"- {MARKER} in a folder\n",
        },
    )


@pytest.mark.parametrize("fmt", sorted(LAYOUTS))
def test_symbolic_links_leading_out_of_the_folder_are_reported_and_never_followed(
    tmp_path: Path, outside: Path, fmt: str
) -> None:
    files, file_link, dir_link = LAYOUTS[fmt]
    root = write_tree(tmp_path / "in", files)
    (root / file_link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside / "secret.md", root / file_link)
    os.symlink(outside / "dir", root / dir_link)
    items, problems = read(fmt, root)
    assert items and not any(MARKER in item.text for item in items.values())
    reported = {p.path: p for p in problems}
    assert set(reported) == {file_link, dir_link}
    assert all(p.skipped and "symbolic link leading outside the folder" in p.reason for p in problems)


def test_a_link_to_a_file_inside_the_folder_is_read_and_a_broken_one_reported(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "n", {"real/grout.md": "Sanded grout for wide joints.\n"})
    os.symlink(root / "real" / "grout.md", root / "alias.md")
    os.symlink(root / "real", root / "again")  # a linked folder inside: read at its own place only
    os.symlink(root / "gone.md", root / "broken.md")
    items, problems = read("markdown", root)
    assert [str(p) for p in problems] == ["broken.md: a broken symbolic link"]
    assert sorted(items) == ["alias.md#L1-L1", "real/grout.md#L1-L1"]


def test_binary_huge_and_special_files_are_skipped_with_their_reason(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "n", {"good.md": "A good note.\n"})
    (root / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (root / "huge.md").write_bytes(b"a\n" * (MAX_FILE_BYTES // 2 + 1))
    os.mkfifo(root / "pipe.md")  # reading a FIFO would block the import: never opened for reading
    items, problems = read("markdown", root)
    assert list(items) == ["good.md#L1-L1"]
    assert {str(p) for p in problems} == {
        "image.md: a binary file (it holds NUL bytes)",
        f"huge.md: larger than {MAX_FILE_BYTES} bytes ({MAX_FILE_BYTES + 2} bytes)",
        "pipe.md: not a regular file",
    }
    assert all(p.skipped for p in problems)


def test_a_file_that_is_not_utf8_is_an_error_and_the_others_import(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "n", {"good.md": "A good note.\n"})
    (root / "latin1.md").write_bytes("Caf\xe9 au lait\n".encode("latin-1"))
    with Memory.in_memory(source_kind="import") as memory:
        report = import_path(memory, "markdown", str(root))
    assert report.errors == ["latin1.md: not UTF-8 text (byte 3 cannot be decoded)"]
    assert report.skipped == [] and len(report.added) == 1


def test_crlf_files_keep_their_line_numbers(tmp_path: Path) -> None:
    root = tmp_path / "n"
    root.mkdir()
    (root / "w.md").write_bytes(b"# W\r\n\r\n## Part\r\n\r\nLine five.\r\n")
    items, _ = read("markdown", root)
    assert items["w.md#L1-L5"].text == "# W\n\n## Part\n\nLine five."


@pytest.mark.parametrize("fmt", sorted(LAYOUTS))
def test_a_missing_path_is_reported_by_name_and_nothing_is_written(tmp_path: Path, fmt: str) -> None:
    with Memory.in_memory(source_kind="import") as memory:
        report = import_path(memory, fmt, str(tmp_path / "nowhere"))
        assert memory.store.list() == []
    assert report.error == f"{tmp_path / 'nowhere'}: no such file or folder"


def test_imported_records_are_quarantined_unless_the_import_is_trusted(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "n", NOTES)
    with Memory.in_memory(source_kind="import") as memory:
        report = import_path(memory, "markdown", str(root))
        tainted = [memory.get(record_id) for record_id in report.added]
        events = [e for e in memory.log.entries() if e.action == "import"]
    assert tainted and all(r.taint == ("external",) for r in tainted)
    assert all(r.provenance.kind == "import" for r in tainted)
    assert events[-1].details["taint"] == ["external"] and events[-1].details["trusted"] is False
    with Memory.in_memory(source_kind="import") as memory:
        report = import_path(memory, "markdown", str(root), trust=True)
        trusted = [memory.get(record_id) for record_id in report.added]
    assert trusted and all(r.taint is None for r in trusted)

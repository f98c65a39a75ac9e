"""The Home's change signal: one cheap value that moves with a new note folder or a longer log."""

from __future__ import annotations

import os
from pathlib import Path

from agent_memory.stores.file_tokens import change_signal


def test_the_signal_moves_with_a_new_note_folder_and_a_growing_log_and_not_otherwise(tmp_path: Path) -> None:
    notes, log = tmp_path / "notes", tmp_path / "log"
    notes.mkdir()
    log.mkdir()
    (log / "2026-05.jsonl").write_text("{}\n", encoding="utf-8")
    signal = change_signal(notes, log)
    first = signal()
    assert signal() == first  # nothing moved
    folder = notes / ("a" * 32)
    folder.mkdir()
    os.utime(notes, ns=(1, 1))  # the folder's time, set apart from any clock tick
    after_folder = signal()
    assert after_folder != first
    (folder / "000001.md").write_text("an edit in place moves nothing here", encoding="utf-8")
    os.utime(notes, ns=(1, 1))
    assert signal() == after_folder
    with (log / "2026-05.jsonl").open("a", encoding="utf-8") as lines:
        lines.write("{}\n")
    assert signal() != after_folder


def test_absent_folders_read_as_empty(tmp_path: Path) -> None:
    assert change_signal(tmp_path / "no-notes", tmp_path / "no-log")() == (0, ())

"""Writes are committed to the Home's git repository (DESIGN.md §3, §6) when a Memory closes."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from agent_memory.home import Home
from agent_memory.log.inmemory import MemoryLog
from agent_memory.memory import Memory
from agent_memory.sync.commits import STALE_GIT_LOCK_SECONDS, commit_message


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


GIT = shutil.which("git") or "git"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(root: Path, *args: str) -> str:
    return subprocess.run([GIT, *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _log(root: Path) -> list[str]:
    return _git(root, "log", "--format=%s").splitlines()


def _clean(root: Path) -> bool:
    return _git(root, "status", "--porcelain") == ""


def test_closing_a_memory_commits_what_it_wrote_with_the_actions_as_message(tmp_path: Path) -> None:
    Home.init(tmp_path / "h")
    with Memory.open(tmp_path / "h") as memory:
        memory.remember("Staging runs on db-3.", source="ticket-1")
        memory.remember("Staging runs on db-4.", source="ticket-2")
    assert _log(tmp_path / "h") == ["agent-memory: put x2", "agent-memory init"]
    assert _clean(tmp_path / "h")


def test_a_memory_that_wrote_nothing_makes_no_commit(tmp_path: Path) -> None:
    Home.init(tmp_path / "h")
    with Memory.open(tmp_path / "h") as memory:
        memory.recall("anything")
    assert _log(tmp_path / "h") == ["agent-memory init"]


def test_a_home_made_without_git_never_gets_a_repository(tmp_path: Path) -> None:
    Home.init(tmp_path / "h", git=False)
    with Memory.open(tmp_path / "h") as memory:
        memory.remember("Staging runs on db-3.", source="ticket-1")
    assert not (tmp_path / "h" / ".git").exists()


def test_a_fresh_index_lock_skips_the_commit_and_the_next_one_takes_the_changes(tmp_path: Path) -> None:
    home = Home.init(tmp_path / "h")
    lock = tmp_path / "h" / ".git" / "index.lock"
    lock.write_text("", encoding="utf-8")
    with Memory.open(tmp_path / "h") as memory:
        result = memory.remember("Staging runs on db-3.", source="ticket-1")
    assert memory.store.get(result.record_id).body == "Staging runs on db-3."
    assert _log(tmp_path / "h") == ["agent-memory init"] and not _clean(tmp_path / "h")
    lock.unlink()
    with home.writer_lock():
        assert home.autocommit("agent-memory: later")
    assert _log(tmp_path / "h")[0] == "agent-memory: later" and _clean(tmp_path / "h")


def test_an_index_lock_left_by_a_killed_git_is_removed_when_stale(tmp_path: Path) -> None:
    Home.init(tmp_path / "h")
    lock = tmp_path / "h" / ".git" / "index.lock"
    lock.write_text("", encoding="utf-8")
    old = time.time() - STALE_GIT_LOCK_SECONDS - 10
    os.utime(lock, (old, old))
    with Memory.open(tmp_path / "h") as memory:
        memory.remember("Staging runs on db-3.", source="ticket-1")
    assert _log(tmp_path / "h")[0] == "agent-memory: put" and not lock.exists()


def test_the_commit_message_counts_actions_in_order_and_names_at_most_eight() -> None:
    log = MemoryLog()
    assert commit_message(log, since_seq=0) == ""
    for action in ["put", "put", "supersede", "put"]:
        log.append(action, actor="owner")
    assert commit_message(log, since_seq=0) == "agent-memory: put x3, supersede"
    assert commit_message(log, since_seq=2) == "agent-memory: supersede, put"
    many = MemoryLog()
    for action in [
        "put",
        "supersede",
        "resolve",
        "archive",
        "review",
        "withdraw",
        "reinstate",
        "erase",
        "export",
        "import",
    ]:
        many.append(action, actor="owner")
    assert commit_message(many, since_seq=0).endswith(", and 2 more")


def test_no_commit_is_made_while_a_merge_is_unfinished(tmp_path: Path) -> None:
    Home.init(tmp_path / "h")
    head = _git(tmp_path / "h", "rev-parse", "HEAD").strip()
    (tmp_path / "h" / ".git" / "MERGE_HEAD").write_text(head + "\n", encoding="utf-8")
    with Memory.open(tmp_path / "h") as memory:
        memory.remember("Staging runs on db-3.", source="ticket-1")
    assert _log(tmp_path / "h") == ["agent-memory init"] and not _clean(tmp_path / "h")


def test_a_commit_stages_only_the_files_the_write_produced(tmp_path: Path) -> None:
    # Issue 18 item 5, outside notes/: a file dropped into the Home, a hand edit of a file of the
    # layout and a hand-made topic page, all changed before the Memory opened, stay out of the commit.
    root = tmp_path / "h"
    Home.init(root)
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    (root / "passwords.txt").write_text(f"github {token}\n", encoding="utf-8")
    (root / "topics" / "mine.md").write_text(f"# Mine\n{token}\n", encoding="utf-8")
    with (root / "conventions.md").open("a", encoding="utf-8") as handle:
        handle.write(f"- deploy with {token}\n")
    before = time.time() - 5
    for name in ("passwords.txt", "topics/mine.md", "conventions.md"):
        os.utime(root / name, (before, before))
    with Memory.open(root) as memory:
        record_id = memory.remember("Staging runs on db-3.", source="ticket-1").record_id
    committed = _git(root, "show", "--name-only", "--format=", "HEAD").split()
    month = next(p.relative_to(root).as_posix() for p in (root / "log").glob("*.jsonl"))
    assert committed == sorted([f"notes/{record_id[4:]}/000001.md", month])
    assert token not in _git(root, "log", "-p", "--all")
    left = _git(root, "status", "--porcelain", "-uall")
    assert all(name in left for name in ("passwords.txt", "topics/mine.md", "conventions.md")), left


def test_a_home_level_command_commits_the_layout_files_it_changed(tmp_path: Path) -> None:
    root = tmp_path / "h"
    home = Home.init(root)
    (root / "stray.md").write_text("not the Home's\n", encoding="utf-8")
    started = time.time()
    with (root / "inbox.md").open("a", encoding="utf-8") as handle:
        handle.write("- [mem-2026-11-29-001] (knowledge) The printer is on floor 2. (source: chat)\n")
    with home.writer_lock():
        assert home.autocommit("agent-memory: capture", since=started)
    assert _git(root, "show", "--name-only", "--format=", "HEAD").split() == ["inbox.md"]
    assert "?? stray.md" in _git(root, "status", "--porcelain")

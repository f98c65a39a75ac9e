"""The served Home's writes reach git while the server runs (:mod:`agent_memory.mcp.commits`).

The end-to-end test drives ``agent-memory serve`` over stdio with the SDK's client and reads
``git log`` while the server is still connected; the others drive a :class:`Committer` over a
real Home in-process (a merge in progress, a git failure, nothing new to commit).
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from mcp_harness import Connect, new_home

from agent_memory.cli.serve import serve
from agent_memory.errors import AgentMemoryError
from agent_memory.home import Home
from agent_memory.mcp.commits import COMMIT_DELAY, LONGEST_WAIT, Committer
from agent_memory.memory import Memory

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="needs git")
WAIT_SECONDS = 30.0


def git(home: Path, *args: str) -> str:
    assert GIT is not None
    done = subprocess.run([GIT, *args], cwd=home, capture_output=True, text=True, check=True)
    return done.stdout


def subjects(home: Path) -> list[str]:
    """The commit subjects of the Home's current branch, newest first."""
    return git(home, "log", "--format=%s").splitlines()


def git_home(path: Path) -> Path:
    """A Home that is a git repository, its BM25-only settings committed (nothing pending)."""
    root = new_home(path)
    git(root, "init", "-q", "-b", "main")
    Home.open(root).commit("a test Home")
    return root


def wait_for_commits(home: Path, count: int) -> list[str]:
    """Poll ``git log`` until the Home has ``count`` commits (the committer runs on its own clock)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        found = subjects(home)
        if len(found) >= count:
            return found
        time.sleep(0.05)
    pytest.fail(f"no commit within {WAIT_SECONDS} s; git log: {subjects(home)}")


def test_a_remember_is_committed_while_the_server_still_runs(tmp_path: Path, stdio: Connect) -> None:
    home = git_home(tmp_path / "home")
    with stdio(home, "--commit-delay", "0.2") as client:
        first = client.ok("remember", text="The staging database is db-4.", source="ops chat")["record_id"]
        log = wait_for_commits(home, 2)
        assert log[0] == "agent-memory: put"
        committed = git(home, "show", "--name-only", "--format=", "HEAD").split()
        assert f"notes/{first[4:]}/000001.md" in committed
        assert not git(home, "status", "--porcelain"), "everything the write changed is committed"
        client.ok("recall", query="staging database")  # a read commits nothing
        second = client.ok("remember", text="Deploys freeze on Fridays.", source="ops chat")["record_id"]
        log = wait_for_commits(home, 3)
        assert log[0] == "agent-memory: put", "the second commit names only its own write"
        assert (
            f"notes/{second[4:]}/000001.md" in git(home, "show", "--name-only", "--format=", "HEAD").split()
        )
        assert client.ok("status")["records"] == 2
    assert len(subjects(home)) == 3, "stopping the server finds nothing left to commit"


def test_a_failed_write_call_makes_no_commit(tmp_path: Path, stdio: Connect) -> None:
    home = git_home(tmp_path / "home")
    with stdio(home, "--commit-delay", "0") as client:
        client.error("supersede", old_id="mem:" + "0" * 32, text="x", reason="typo")
        client.ok("remember", text="Backups run nightly at 02:00.", source="runbook")
        log = wait_for_commits(home, 2)
    assert log == ["agent-memory: put", "a test Home"]


def test_a_burst_of_writes_is_one_commit_and_nothing_logged_is_none(tmp_path: Path) -> None:
    home = git_home(tmp_path / "home")
    with Memory.open(home) as memory:
        committer = Committer(Home.open(home), memory.log, delay=3600, longest=3600)
        try:
            assert not committer.commit_now(), "nothing logged since the server opened"
            for n in range(3):
                memory.remember(f"Fact number {n} about the build.", source="test")
                committer.wrote()
            assert committer.commits == 0, "the delay has not passed"
            assert committer.commit_now()
            assert subjects(home)[0] == "agent-memory: put x3"
            assert not committer.commit_now(), "the log has not moved since"
        finally:
            committer.close()


def test_a_zero_delay_commits_after_each_call_off_the_callers_thread(tmp_path: Path) -> None:
    home = git_home(tmp_path / "home")
    with Memory.open(home) as memory:
        committer = Committer(Home.open(home), memory.log, delay=0)
        try:
            memory.remember("The printer is on floor 3.", source="test")
            committer.wrote()
            assert wait_for_commits(home, 2)[0] == "agent-memory: put"
        finally:
            committer.close()
        assert committer.commits == 1


def test_no_commit_is_made_during_a_merge_and_the_next_one_takes_the_writes_along(tmp_path: Path) -> None:
    home = git_home(tmp_path / "home")
    with Memory.open(home) as memory:
        committer = Committer(Home.open(home), memory.log, delay=3600)
        try:
            memory.remember("The VPN gateway is vpn-2.", source="test")
            head = git(home, "rev-parse", "HEAD")
            (home / ".git" / "MERGE_HEAD").write_text(head, encoding="utf-8")
            assert not committer.commit_now()
            assert len(subjects(home)) == 1 and git(home, "status", "--porcelain")
            (home / ".git" / "MERGE_HEAD").unlink()
            memory.remember("The VPN gateway moved to vpn-3.", source="test")
            assert committer.commit_now()
            assert subjects(home)[0] == "agent-memory: put x2", "the refused commit's write is named"
        finally:
            committer.close()


def test_a_git_refusal_leaves_the_writes_for_the_next_commit(tmp_path: Path) -> None:
    home = git_home(tmp_path / "home")
    with Memory.open(home) as memory:
        committer = Committer(Home.open(home), memory.log, delay=3600)
        try:
            memory.remember("The wiki lives at wiki.internal.", source="test")
            lock = home / ".git" / "index.lock"
            lock.write_bytes(b"")  # another git process at work: git refuses to add
            assert not committer.commit_now()
            assert len(subjects(home)) == 1 and git(home, "status", "--porcelain")
            lock.unlink()
            assert committer.commit_now() and subjects(home)[0] == "agent-memory: put"
        finally:
            committer.close()


def test_an_error_while_committing_is_a_warning_never_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = git_home(tmp_path / "home")
    with Memory.open(home) as memory:
        committer = Committer(Home.open(home), memory.log, delay=3600)
        try:
            memory.remember("The wiki lives at wiki.internal.", source="test")

            def broken(self: Home, message: str, **_: object) -> bool:
                raise OSError(28, "No space left on device")

            with monkeypatch.context() as patch, caplog.at_level(logging.WARNING, "agent_memory.mcp.commits"):
                patch.setattr(Home, "autocommit", broken)
                assert not committer.commit_now()
            assert "stay uncommitted for now: [Errno 28] No space left on device" in caplog.text
            assert committer.commit_now() and subjects(home)[0] == "agent-memory: put"
        finally:
            committer.close()


def test_a_home_without_git_is_left_without_one(tmp_path: Path) -> None:
    home = new_home(tmp_path / "home")
    with Memory.open(home) as memory:
        committer = Committer(Home.open(home), memory.log, delay=0)
        try:
            memory.remember("The printer is on floor 3.", source="test")
            committer.wrote()
            assert not committer.commit_now()
        finally:
            committer.close()
        assert committer.commits == 0
    assert not (home / ".git").exists()


@pytest.mark.parametrize("field", ["delay", "longest"])
def test_a_negative_delay_is_refused_naming_it(tmp_path: Path, field: str) -> None:
    home = git_home(tmp_path / "home")
    with Memory.open(home) as memory, pytest.raises(AgentMemoryError, match="must be 0 or more") as info:
        Committer(Home.open(home), memory.log, **{field: -1.0})  # type: ignore[arg-type]
    assert info.value.field == field


def test_serve_refuses_a_negative_commit_delay(tmp_path: Path) -> None:
    from mcp_harness import COMMAND

    assert COMMAND is not None
    home = new_home(tmp_path / "home")
    done = subprocess.run(
        [COMMAND, "serve", "--home", str(home), "--commit-delay", "-1"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 2 and "--commit-delay" in done.stderr


def test_the_serve_option_and_its_help_state_the_committers_defaults() -> None:
    [option] = [p for p in serve.params if p.name == "commit_delay"]
    assert option.default == COMMIT_DELAY
    assert f"at least every {LONGEST_WAIT:.0f} s" in (serve.help or "")

"""The anchored log (issue 19): signed checkpoints of the head beside the key and in git trailers.

Each attack is made the way someone with write access to the Home's files alone would make
it, hash chain recomputed where that hides it from the chain; the audit must name it and the
witness that disagreed.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory.doctor.log_audit import audit_log
from agent_memory.home import Home
from agent_memory.log import month_file
from agent_memory.log.anchor import CheckpointFile, checkpoint_path, git_checkpoints, record_checkpoint
from agent_memory.log.base import GENESIS, LogEntry
from agent_memory.memory import Memory

T0 = datetime(2026, 11, 29, 9, tzinfo=UTC)
GIT = shutil.which("git") or "git"


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def make_home(tmp_path: Path, *, git: bool = False, months: int = 1) -> Home:
    """A Home with three remembered records per month (each remember is one write batch)."""
    home = Home.init(tmp_path / "home", git=git, timezone="UTC", now=T0)
    with Memory.open(home.root) as memory:
        for month in range(months):
            for n in range(3):
                memory.remember(
                    f"Fact {month}-{n} about the garden.",
                    source="test",
                    now=T0 + timedelta(days=31 * month, minutes=n),
                )
    return home


def rechain(home: Home, change: Callable[[list[LogEntry]], list[LogEntry]]) -> None:
    """Rewrite the log as ``change`` returns it, renumbering seqs and recomputing every ``prev``."""
    log = home.log()
    entries = change(list(log.entries()))
    for path in log.month_files():
        path.unlink()
    prev = GENESIS
    for seq, entry in enumerate(entries, 1):
        fixed = dataclasses.replace(entry, seq=seq, prev=prev)
        with (log.folder / f"{fixed.time:%Y-%m}.jsonl").open("ab") as file:
            file.write(fixed.line + b"\n")
        prev = fixed.digest
    assert log.verify() == len(entries)  # the chain alone sees nothing


def retime(entry: LogEntry, like: LogEntry) -> LogEntry:
    """``entry`` at ``like``'s time: a reorder that keeps time order along the chain."""
    return dataclasses.replace(entry, time=like.time)


def test_every_write_batch_leaves_a_signed_checkpoint_of_the_head_beside_the_key(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    newest, kept = CheckpointFile(checkpoint_path(home.settings.key_file, home.root)).read()
    head = home.log().last()
    assert newest is not None and head is not None and kept == []
    assert (newest.seq, newest.head, newest.home) == (head.seq, head.digest, home.settings.home_id)
    assert checkpoint_path(home.settings.key_file, home.root).parent == home.settings.key_file.parent
    assert not checkpoint_path(home.settings.key_file, home.root).is_relative_to(home.root)
    init = next(iter(home.log().entries()))
    newest.verify(str(init.details["agent"]))
    audit = audit_log(home)
    assert audit.ok and audit.warnings == () and audit.entries == head.seq


def test_a_cut_tail_is_found_against_the_checkpoint_file(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    (month,) = home.log().month_files()
    lines = month.read_bytes().splitlines(keepends=True)
    month.write_bytes(b"".join(lines[:-1]))
    assert home.log().verify() == len(lines) - 1
    audit = audit_log(home)
    assert not audit.ok
    assert any("its tail was cut" in f and "checkpoint file" in f for f in audit.failures), audit.failures


def test_a_rewritten_line_with_a_recomputed_chain_is_found(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    rechain(home, lambda es: [dataclasses.replace(e, actor="mallory") if e.seq == 2 else e for e in es])
    audit = audit_log(home)
    assert any(
        f.startswith(f"seq {len(list(home.log().entries()))} differs from checkpoint file")
        for f in audit.failures
    )
    assert "rewritten, removed, inserted or reordered" in audit.failures[0]


def test_reordered_lines_are_found_with_and_without_a_recomputed_chain(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    (month,) = home.log().month_files()
    original = month.read_bytes()
    lines = original.splitlines(keepends=True)
    lines[2], lines[3] = lines[3], lines[2]
    month.write_bytes(b"".join(lines))
    assert any("where 3 was expected" in f for f in audit_log(home).failures)
    month.write_bytes(original)
    rechain(home, lambda es: [es[0], retime(es[2], es[1]), retime(es[1], es[2]), *es[3:]])
    assert any("differs from checkpoint file" in f for f in audit_log(home).failures)


def test_a_missing_month_file_is_named(tmp_path: Path) -> None:
    home = make_home(tmp_path, months=2)
    first, last = home.log().month_files()
    last.unlink()
    failures = audit_log(home).failures
    assert any(f"missing month file log/{last.stem}.jsonl" in f for f in failures), failures
    assert any("its tail was cut" in f for f in failures)
    first.unlink()
    assert not audit_log(home).ok


def test_a_missing_first_month_file_breaks_the_chain(tmp_path: Path) -> None:
    home = make_home(tmp_path, months=2)
    home.log().month_files()[0].unlink()
    assert any("where 1 was expected" in f for f in audit_log(home).failures)


def test_a_write_after_a_cut_tail_keeps_the_lost_checkpoint_instead_of_laundering_it(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    (month,) = home.log().month_files()
    month.write_bytes(b"".join(month.read_bytes().splitlines(keepends=True)[:-1]))
    with Memory.open(home.root) as memory:
        memory.remember("A fact written after the cut.", source="test", now=T0 + timedelta(hours=1))
    newest, kept = CheckpointFile(checkpoint_path(home.settings.key_file, home.root)).read()
    assert newest is not None and len(kept) == 1
    failures = audit_log(home).failures
    assert any("(kept: the log had stopped holding it)" in f and "differs" in f for f in failures), failures


def test_a_clone_without_the_checkpoint_file_is_witnessed_by_the_git_trailers(tmp_path: Path) -> None:
    home = make_home(tmp_path, git=True)
    commits, problems = git_checkpoints(home.root)
    assert problems == [] and commits
    assert commits[0][1].seq == home.log().last().seq  # type: ignore[union-attr]
    checkpoint_path(home.settings.key_file, home.root).unlink()
    audit = audit_log(home)
    assert audit.ok and any("no checkpoint file" in w for w in audit.witnesses)
    (month,) = home.log().month_files()
    month.write_bytes(b"".join(month.read_bytes().splitlines(keepends=True)[:-1]))
    failures = audit_log(home).failures
    assert any("its tail was cut" in f and f"git commit {commits[0][0]}" in f for f in failures), failures


def test_without_a_key_trailers_are_checked_against_the_init_entry_and_the_gaps_are_said(
    tmp_path: Path,
) -> None:
    home = make_home(tmp_path, git=True)
    checkpoint_path(home.settings.key_file, home.root).unlink()
    home.settings.key_file.unlink()
    audit = audit_log(home)
    assert audit.ok and any("the log's init entry" in w for w in audit.witnesses)
    subprocess.run([GIT, "update-ref", "-d", "HEAD"], cwd=home.root, check=True)  # no history either
    bare = audit_log(home)
    assert bare.ok and any("no signed checkpoint found" in w for w in bare.warnings)


def test_a_forged_checkpoint_file_fails_as_forged(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    path = checkpoint_path(home.settings.key_file, home.root)
    wire = json.loads(path.read_bytes())
    wire["newest"]["seq"] -= 1
    path.write_text(json.dumps(wire), encoding="utf-8")
    assert any("forged or damaged" in f for f in audit_log(home).failures)


def test_entries_appended_outside_agent_memory_are_a_warning_naming_them(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    home.log().append("reinstate", actor="mallory", now=T0 + timedelta(hours=2))
    audit = audit_log(home)
    assert audit.ok
    assert any("(reinstate)" in w and "no signature covers them" in w for w in audit.warnings), audit.warnings


def test_the_write_path_reads_only_the_head_and_each_month_s_first_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = Home.init(tmp_path / "home", git=False, timezone="UTC", now=T0)
    log = home.log()
    for n in range(1500):
        log.append("put", actor="owner", record_ids=[f"mem:{n:032x}"], details={"version": 1}, now=T0)
    keys = home.identity()
    path = checkpoint_path(home.settings.key_file, home.root)
    assert record_checkpoint(log, keys, home.settings.home_id, path)  # the batch before
    log.append("put", actor="owner", record_ids=["mem:" + "f" * 32], details={"version": 1}, now=T0)
    size = sum(p.stat().st_size for p in log.month_files())
    read = [0]
    original = month_file.open_file

    class Counting:
        def __init__(self, path: Path) -> None:
            self.file = original(path)

        def __enter__(self) -> Counting:
            return self

        def __exit__(self, *exc: object) -> None:
            self.file.close()

        def read(self, n: int = -1) -> bytes:
            data = self.file.read(n)
            read[0] += len(data)
            return data

        def readline(self) -> bytes:
            data = self.file.readline()
            read[0] += len(data)
            return data

        def seek(self, *args: int) -> int:
            return self.file.seek(*args)

    monkeypatch.setattr(month_file, "open_file", Counting)
    made = record_checkpoint(log, keys, home.settings.home_id, path)
    assert made is not None and made.seq == 1502
    assert 0 < read[0] < size / 10


def test_an_erasure_that_rewrites_git_history_keeps_every_trailer_a_witness(tmp_path: Path) -> None:
    home = make_home(tmp_path, git=True)
    (first, *_) = [r.id for r in home.store().list()]
    with Memory.open(home.root) as memory:
        memory.erase([first], reason="asked by the owner", authority="owner", rewrite_git=True)
    commits, problems = git_checkpoints(home.root)
    audit = audit_log(home)
    assert problems == [] and len(commits) >= 2
    assert audit.ok and audit.warnings == (), (audit.failures, audit.warnings)

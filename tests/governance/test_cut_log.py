"""A cut log brings nothing back (issue 19): readers refuse, doctor says what was lost.

The log holds what hides a record: a withdrawal, an erasure, a supersede. Cutting its tail,
restoring an older copy of the Home, or rewriting a line would bring such a record back as
if it had never been hidden. The withdrawal gate every reader applies checks the log against
the checkpoint signed beside the Home's key and exposes nothing while the log no longer holds
it; ``doctor`` fails the log, says that readers refuse and, from git, names the lost entries.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_memory.cli import cli
from agent_memory.doctor.diagnose import doctor
from agent_memory.errors import LogError, StoreError
from agent_memory.governance.gate import Gate
from agent_memory.home import Home
from agent_memory.jobs.views import render
from agent_memory.log.anchor import checkpoint_path
from agent_memory.log.base import GENESIS
from agent_memory.memory import Memory

T0 = datetime(2026, 11, 29, 9, tzinfo=UTC)
WITHDRAWN = "The staging password rotates on Fridays."
OTHER = "Tea is served at four in the garden room."


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def made(tmp_path: Path, *, git: bool = False) -> tuple[Home, str]:
    """A rendered Home holding OTHER and WITHDRAWN, WITHDRAWN withdrawn by the last entry of its log."""
    home = Home.init(tmp_path / "home", git=git, timezone="UTC", now=T0)
    with Memory.open(home.root) as memory:
        memory.remember(OTHER, source="test", now=at(1))
        secret = memory.remember(WITHDRAWN, source="test", now=at(2)).record_id
        memory.withdraw(memory_item_ids=[secret], reason="failed-exploration", now=at(3))
    render(home)
    return home, secret


def recalled(home: Home, query: str = "staging password") -> list[str]:
    with Memory.open(home.root) as memory:
        return [r.record.id for r in memory.recall(query, now=at(60)).records]


def cut_tail(home: Home, lines: int = 1) -> None:
    (month,) = home.log().month_files()
    month.write_bytes(b"".join(month.read_bytes().splitlines(keepends=True)[:-lines]))


def test_recall_refuses_once_the_withdrawal_is_cut_off_the_log(tmp_path: Path) -> None:
    home, _ = made(tmp_path)
    assert recalled(home) == []  # withdrawn
    cut_tail(home)
    with pytest.raises(LogError) as refused:
        recalled(home)
    assert "the log ends at seq" in str(refused.value) and "entries were cut" in str(refused.value)
    assert "no record is exposed" in str(refused.value)
    assert refused.value.path == str(checkpoint_path(home.settings.key_file, home.root))
    assert refused.value.hint is not None and "git checkout -- log/" in refused.value.hint


def test_views_and_export_refuse_too_and_leave_what_they_would_have_written(tmp_path: Path) -> None:
    home, _ = made(tmp_path)
    before = (home.root / "MEMORY.md").read_bytes()
    cut_tail(home)
    with pytest.raises(LogError, match="entries were cut"):
        render(home)
    assert (home.root / "MEMORY.md").read_bytes() == before
    for extra in ([], ["--include-withdrawn"]):
        target = tmp_path / f"export{len(extra)}.json"
        result = CliRunner().invoke(cli, ["export", str(target), "--home", str(home.root), *extra])
        assert result.exit_code != 0 and "entries were cut" in str(result.exception)
        assert not target.exists()


def test_a_home_restored_from_an_older_copy_does_not_bring_back_what_was_superseded_or_erased(
    tmp_path: Path,
) -> None:
    home = Home.init(tmp_path / "home", git=False, timezone="UTC", now=T0)
    with Memory.open(home.root) as memory:
        old = memory.remember("Staging is db-1.", source="t", kind="state", subject="host:staging", now=at(1))
        gone = memory.remember(WITHDRAWN, source="test", now=at(2)).record_id
    backup = tmp_path / "backup"
    shutil.copytree(home.root, backup)
    with Memory.open(home.root) as memory:
        memory.remember("Staging is db-2.", source="t", kind="state", subject="host:staging", now=at(3))
        memory.erase([gone], reason="asked by the owner", authority="owner", now=at(4))
        assert [r.record.id for r in memory.recall("staging", now=at(60)).records] != [old.record_id]
    for folder in ("notes", "log"):  # the older copy put back over the Home
        shutil.rmtree(home.root / folder)
        shutil.copytree(backup / folder, home.root / folder)
    with pytest.raises(LogError, match="entries were cut"):
        recalled(home, "staging")
    (check,) = [c for c in doctor(home).checks if c.name == "log"]
    assert check.status == "fail" and "its tail was cut" in check.details[0]
    assert any("recall, views and export expose no record" in line for line in check.details)


def test_a_write_after_the_cut_does_not_make_it_pass(tmp_path: Path) -> None:
    home, _ = made(tmp_path)
    cut_tail(home)
    with Memory.open(home.root) as memory:
        memory.remember("Deploys go out on Tuesdays.", source="test", now=at(10))  # writes still work
    with pytest.raises(LogError, match="kept: the log had stopped holding it"):
        recalled(home)


def test_a_line_rewritten_without_its_chain_is_refused(tmp_path: Path) -> None:
    home, secret = made(tmp_path)
    (month,) = home.log().month_files()
    data = month.read_bytes()
    other = recalled(home, "tea")[0]
    month.write_bytes(data.replace(secret.encode(), other.encode()))  # the withdrawal now names OTHER
    with pytest.raises(LogError, match="does not follow the entry before it"):
        recalled(home)


def test_a_line_rewritten_with_its_chain_recomputed_is_refused(tmp_path: Path) -> None:
    home, secret = made(tmp_path)
    other = recalled(home, "tea")[0]
    log = home.log()
    entries = list(log.entries())
    last = entries[-1]
    details = json.loads(json.dumps(last.details).replace(secret, other))
    rewritten = [
        *entries[:-1],
        dataclasses.replace(last, record_ids=(last.record_ids[0], other), details=details),
    ]
    (month,) = log.month_files()
    prev, lines = GENESIS, []
    for entry in rewritten:
        fixed = dataclasses.replace(entry, prev=prev)
        lines.append(fixed.line + b"\n")
        prev = fixed.digest
    month.write_bytes(b"".join(lines))
    assert home.log().verify() == len(entries)  # the chain alone sees nothing
    with pytest.raises(LogError, match=f"no longer holds seq {last.seq} as signed"):
        recalled(home)


def test_restoring_the_log_lets_recall_answer_again_with_the_record_still_hidden(tmp_path: Path) -> None:
    home, _ = made(tmp_path)
    (month,) = home.log().month_files()
    kept = month.read_bytes()
    cut_tail(home)
    with pytest.raises(LogError):
        recalled(home)
    month.write_bytes(kept)
    assert recalled(home) == [] and recalled(home, "tea") != []


def test_the_owner_can_withdraw_again_and_accept_a_log_lost_for_good(tmp_path: Path) -> None:
    home, secret = made(tmp_path)
    cut_tail(home)
    # Reading the controls still works on a cut log; only exposing records refuses.
    with Memory.open(home.root) as memory, pytest.raises(StoreError, match="is in force for recall"):
        memory.withdraw(memory_item_ids=[secret], reason="failed-exploration", now=at(20))
    checkpoint_path(home.settings.key_file, home.root).unlink()  # the owner accepts the log as it is
    assert recalled(home) == [] and recalled(home, "tea") != []


def test_a_gate_without_a_witness_still_refuses_a_broken_chain(tmp_path: Path) -> None:
    home, secret = made(tmp_path)
    (month,) = home.log().month_files()
    month.write_bytes(month.read_bytes().replace(secret.encode(), b"mem:" + b"0" * 32))
    gate = Gate(home.log(), home.store())  # a copy without the key: no checkpoint file to ask
    with pytest.raises(LogError, match="does not follow the entry before it"):
        gate.view()
    with pytest.raises(LogError, match="does not follow"):  # controls that do not chain are not read
        gate.state()


def test_doctor_names_the_lost_withdrawal_from_git(tmp_path: Path) -> None:
    home, secret = made(tmp_path, git=True)
    cut_tail(home)
    report = doctor(home)
    (check,) = [c for c in report.checks if c.name == "log"]
    assert check.status == "fail" and not report.healthy
    text = "\n".join(check.details)
    assert "recall, views and export expose no record" in text
    assert "git HEAD still holds 1 entry the log lost" in text and "git checkout -- log/" in text
    assert f"withdraw memwd-2026-11-29-001, {secret}: lost, so what it names would be served again" in text
    (views,) = [c for c in report.checks if c.name == "views"]
    assert views.status == "fail" and "entries were cut" in views.details[0]


def test_a_head_another_writer_signed_after_the_reader_read_the_log_is_not_a_cut(tmp_path: Path) -> None:
    home, _ = made(tmp_path)
    witness = home.witness()
    assert witness is not None
    log = home.log()
    read = log.last()  # a reader reads the head; then a writer appends and signs a newer one
    with Memory.open(home.root) as writer:
        writer.remember("A later note.", source="test", now=at(5))
    assert read is not None and log.last() is not None and log.last().seq > read.seq  # type: ignore[union-attr]
    assert witness.cut(log, read) is None
    month = next((home.root / "log").glob("*.jsonl"))
    lines = month.read_bytes().splitlines(keepends=True)
    month.write_bytes(b"".join(lines[:-1]))  # a real cut is still one, whichever head was read
    assert witness.cut(log, read) is not None
    assert "cut" in (witness.cut(log, log.last()) or "")

"""doctor from a fresh user's trial: a deleted note fails, stale derived state warns, §21.19 reads content."""

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory.doctor.checklist import withdrawn_in_views
from agent_memory.doctor.diagnose import DoctorReport, doctor
from agent_memory.home import Home
from agent_memory.jobs.views import render
from agent_memory.memory import Memory
from agent_memory.records.record import MemoryRecord, Provenance

T0 = datetime(2026, 11, 29, 9, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.fixture
def home(tmp_path: Path) -> Home:
    """A Home with two remembered knowledge records, rendered."""
    made = Home.init(tmp_path / "home", git=False, timezone="UTC", now=T0)
    with Memory.open(made.root) as memory:
        memory.remember("Tea is served at four.", source="test", now=T0)
        memory.remember("Deploys go out on Tuesdays.", source="test", now=T0)
    render(made)
    return made


def status(report: DoctorReport, name: str) -> tuple[str, tuple[str, ...]]:
    (found,) = [c for c in report.checks if c.name == name]
    return found.status, found.details


def files(root: Path, *names: str) -> dict[str, bytes]:
    found = {}
    for name in names:
        for path in [root / name] if (root / name).is_file() else sorted((root / name).rglob("*")):
            if path.is_file():
                found[str(path.relative_to(root))] = path.read_bytes()
    return found


def record_id(home: Home, body: str) -> str:
    (found,) = [r.id for r in home.store().list() if r.body == body]
    return found


def test_a_note_deleted_by_hand_fails_the_notes_check_with_its_id_and_the_git_hint(home: Home) -> None:
    tea = record_id(home, "Tea is served at four.")
    shutil.rmtree(home.root / "notes" / tea.removeprefix("mem:"))
    report = doctor(home)
    verdict, details = status(report, "notes")
    assert verdict == "fail" and not report.healthy
    assert tea in details[0] and "missing from notes/" in details[0]
    assert f"git checkout -- notes/{tea.removeprefix('mem:')}" in details[1]
    other = record_id(home, "Deploys go out on Tuesdays.")
    assert other not in " ".join(details)


def test_fix_never_makes_a_deleted_note_pass_and_leaves_its_derived_copies_alone(home: Home) -> None:
    tea = record_id(home, "Tea is served at four.")
    shutil.rmtree(home.root / "notes" / tea.removeprefix("mem:"))
    before = files(home.root, "MEMORY.md", "index.md", "topics", "notes", "log")
    fixed = doctor(home, fix=True)
    assert status(fixed, "notes")[0] == "fail" and not fixed.healthy
    assert any("not rebuilt while 1 record(s)" in line for line in fixed.fixed)
    assert files(home.root, "MEMORY.md", "index.md", "topics", "notes", "log") == before
    assert "Tea is served at four." in (home.root / "MEMORY.md").read_text(encoding="utf-8")


def test_a_restored_note_makes_the_notes_check_pass_again(home: Home) -> None:
    tea = record_id(home, "Tea is served at four.")
    folder = home.root / "notes" / tea.removeprefix("mem:")
    kept = home.root.parent / "kept"
    shutil.move(folder, kept)
    assert status(doctor(home), "notes")[0] == "fail"
    shutil.move(kept, folder)
    report = doctor(home)
    assert status(report, "notes")[0] == "ok" and report.healthy


def test_an_erased_record_is_not_reported_missing(home: Home) -> None:
    tea = record_id(home, "Tea is served at four.")
    with Memory.open(home.root) as memory:
        memory.erase([tea], reason="the user asked", authority="owner", now=T0 + timedelta(hours=1))
    assert status(doctor(home), "notes")[0] == "ok"
    # Even were its tombstone folder gone, the log's erase event says the record was erased.
    shutil.rmtree(home.root / "notes" / tea.removeprefix("mem:"))
    verdict, details = status(doctor(home), "notes")
    assert verdict == "ok", details


def test_a_write_without_render_leaves_the_home_healthy_with_a_views_warning(home: Home) -> None:
    with Memory.open(home.root) as memory:
        memory.remember("Lunch is at noon.", source="test", now=T0)
    report = doctor(home)
    verdict, details = status(report, "views")
    assert verdict == "warn" and report.healthy
    assert "agent-memory render" in details[-1]
    assert report.to_json()["warnings"] == len(report.warnings) >= 1
    assert report.to_json()["checks"][5]["status"] == "warn"


def test_a_hand_edited_view_is_still_a_failure(home: Home) -> None:
    hot = home.root / "MEMORY.md"
    hot.write_bytes(hot.read_bytes() + b"my own line\n")
    report = doctor(home)
    assert status(report, "views")[0] == "fail" and not report.healthy


def test_the_readme_tour_withdrawal_of_a_successor_passes_item_19(tmp_path: Path) -> None:
    made = Home.init(tmp_path / "tour", git=False, timezone="UTC", now=T0)
    with Memory.open(made.root) as memory:
        memory.remember("Staging runs on db-3.", source="t", kind="state", subject="host:staging", now=T0)
        later = T0 + timedelta(hours=1)
        memory.remember("Staging runs on db-4.", source="t", kind="state", subject="host:staging", now=later)
    render(made)
    db4 = record_id(made, "Staging runs on db-4.")
    with Memory.open(made.root) as memory:
        memory.withdraw(memory_item_ids=[db4], reason="wrong ticket", now=T0 + timedelta(hours=2))
    render(made)
    topic = (made.root / "topics" / "host.md").read_text(encoding="utf-8")
    assert f"superseded by {db4}" in topic and "db-4." not in topic  # only the predecessor's pointer
    report = doctor(made)
    assert report.conformance is not None
    (item,) = [i for i in report.conformance.checklist if i.ref == "000 §21.19"]
    assert item.status == "pass", item.reason
    assert report.healthy


def withdrawn(body: str) -> MemoryRecord:
    return MemoryRecord.create(
        type="fact", body=body, provenance=Provenance(kind="conversation", ref="t"), created_at=T0
    )


def test_withdrawn_text_in_a_view_is_a_leak_even_without_its_id() -> None:
    record = withdrawn("The  vault code\nis 4471.")
    assert withdrawn_in_views(
        [record], "- [2026-11-29] (knowledge) The vault code is 4471. → topics/x.md"
    ) == [f"{record.id}: its text"]


def test_a_withdrawn_record_s_own_row_id_is_a_leak_and_a_pointer_to_it_is_not() -> None:
    record = withdrawn("The vault code is 4471.")
    pointer = f"- [d] (state s) Old value. Source: t. · mem:0123 ← superseded by {record.id}"
    assert withdrawn_in_views([record], f"# Topic\n{pointer}\n") == []
    row = f"- {record.id} quarantined (taint: external) → topics/x.md"
    assert withdrawn_in_views([record], f"# Topic\n{pointer}\n{row}\n") == [f"{record.id}: line 3"]


def test_long_withdrawn_text_is_found_by_its_summarised_start() -> None:
    record = withdrawn("A" * 30 + " " + "b" * 100)
    summary = ("A" * 30 + " " + "b" * 100)[:79] + "…"
    assert withdrawn_in_views([record], f"- [d] (knowledge) {summary} → topics/x.md") == [
        f"{record.id}: its text"
    ]


def must_5(home: Home) -> tuple[str, str]:
    report = doctor(home).conformance
    assert report is not None
    (item,) = [m for m in report.musts if m.ref == "003 MUST 5"]
    return item.status, item.reason


def test_jobs_only_propose_is_judged_from_what_consolidate_did(home: Home) -> None:
    # A behaviour check (issue 19 item 4): consolidate + accept pass; a job's write on main fails.

    with Memory.open(home.root) as memory:
        memory.remember("Deploys do not go out on Tuesdays.", source="test", now=T0)
        report = memory.maintenance.consolidate(now=T0 + timedelta(days=1))
        assert report.proposals
        memory.proposals.accept(everything=True, now=T0 + timedelta(days=1))
    verdict, reason = must_5(home)
    assert verdict == "pass", reason
    assert "1 maintenance run(s) in the log changed no record on the live Home" in reason


def test_a_job_that_wrote_on_main_fails_the_jobs_only_propose_must(home: Home) -> None:
    # What consolidate used to do: apply a supersede itself, logged as the consolidate job.
    tea = record_id(home, "Tea is served at four.")
    log = home.log()
    log.append(
        "supersede", actor="owner", record_ids=[tea], details={"reason": "dedup.exact (consolidation)",
                                                               "job": "consolidate"}
    )  # fmt: skip
    event = log.append(
        "consolidate", actor="owner", record_ids=[tea], details={"actions": {"dedup.exact:supersede": 1}}
    )
    verdict, reason = must_5(home)
    assert verdict == "fail"
    assert f"log seq {event.seq - 1}: the consolidate job wrote supersede on the live Home" in reason
    assert f"log seq {event.seq}: consolidate applied dedup.exact:supersede without review" in reason


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_home_checked_out_on_a_maintenance_branch_fails_the_must(tmp_path: Path) -> None:
    import subprocess

    made = Home.init(tmp_path / "githome", timezone="UTC", now=T0)
    git = shutil.which("git") or "git"
    subprocess.run([git, "checkout", "-q", "-b", "maintenance/20261129T090000Z"], cwd=made.root, check=True)
    verdict, reason = must_5(made)
    assert verdict == "fail"
    assert "checked out on maintenance/20261129T090000Z" in reason

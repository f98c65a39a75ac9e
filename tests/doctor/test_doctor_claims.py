"""Doctor's claims are behaviour (issue 19 item 5): break what each claim says, doctor must say so.

For every seed 000 §21 item and seed 003 MUST that doctor judges from the Home (not from the
test suite), one breaker does what the claim says cannot happen — a withdrawn record made
visible, a cut log, an edited archive, a tainted record in MEMORY.md, state left in
``.cache/`` … — and the item must then be found failing. An item above the level the broken
Home still meets is reported ``not-applicable`` with what was found: that still counts as
reported only when its reason says ``found: fail``.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory.doctor.checklist import FAIL, NA, PASS, Item
from agent_memory.doctor.conformance import conformance
from agent_memory.home import Home
from agent_memory.jobs.archive import archive_inbox
from agent_memory.jobs.inbox import capture
from agent_memory.jobs.views import render
from agent_memory.memory import Memory
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.signing import sign_record

T0 = datetime(2026, 11, 29, 9, tzinfo=UTC)
TEA = "Tea is served at four in the garden room."
WIKI = "The wiki lives at wiki.example, behind the VPN."


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A Home at memory:L4 (archived inbox, a consolidate pass, a review, a golden question), rendered."""
    base = tmp_path_factory.mktemp("claims")
    config = base / "config"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(config))
        home = Home.init(base / "home", git=False, timezone="UTC", now=T0)
        capture(home, "Staging runs on db-2.", source="chat", at=T0)
        archive_inbox(home, now=T0 + timedelta(minutes=1))
        with Memory.open(home.root) as memory:
            memory.remember(
                TEA, source="archive/2026-11-29.md#mem-2026-11-29-001", now=T0 + timedelta(minutes=2)
            )
            wiki = memory.remember(WIKI, source="test", taint=["external"], now=T0 + timedelta(minutes=3))
            memory.review(wiki.record_id, "approve", now=T0 + timedelta(minutes=4))
            memory.maintenance.consolidate(now=T0 + timedelta(minutes=5))
        (home.root / "golden.yaml").write_text(
            "- query: when is tea served?\n  expect: {contains: four}\n", encoding="utf-8"
        )
        render(home)
        assert conformance(home).label == "memory:L4"
    return base / "home", config


@pytest.fixture
def home(built: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    """A private copy of the L4 Home, with its key and checkpoint file."""
    root, config = built
    shutil.copytree(config, tmp_path / "config", dirs_exist_ok=True)
    shutil.copytree(root, tmp_path / "home")
    copy = Home.open(tmp_path / "home")
    assert copy.anchor() is not None  # the copy's own checkpoint file, as its first write would make
    return copy


def found(item: Item) -> str:
    """The verdict found, also for an item shown not-applicable above the Home's level."""
    if item.status != NA:
        return item.status
    match = re.search(r"\(found: ([a-z-]+):", item.reason)
    return match.group(1) if match else NA


def record_id(home: Home, body: str) -> str:
    (rid,) = [r.id for r in home.store().list() if r.body == body]
    return rid


def cut_log_tail(home: Home) -> None:
    (month,) = home.log().month_files()
    month.write_bytes(b"".join(month.read_bytes().splitlines(keepends=True)[:-1]))


def withdraw_then_show(home: Home) -> None:
    with Memory.open(home.root) as memory:
        memory.withdraw(
            memory_item_ids=[record_id(home, TEA)], reason="failed-exploration", now=T0 + timedelta(hours=1)
        )
    render(home)
    hot = home.root / "MEMORY.md"
    hot.write_text(hot.read_text(encoding="utf-8") + f"\n- {TEA}\n", encoding="utf-8")


def tainted_in_memory_md(home: Home) -> None:
    with Memory.open(home.root) as memory:
        rid = memory.remember("Mallory says the VPN is off.", source="web", taint=["external"]).record_id
    hot = home.root / "MEMORY.md"
    hot.write_text(
        hot.read_text(encoding="utf-8") + f"\n- Mallory says the VPN is off. · {rid}\n", encoding="utf-8"
    )


def record_without_source(home: Home) -> None:
    record = MemoryRecord.create(
        type="fact",
        body="A fact from nowhere.",
        created_at=T0,
        provenance=Provenance(kind="conversation", ref=""),
    )
    home.store().put(sign_record(record, home.identity()))  # a writer of this Home's, signing


def tombstone_restored(home: Home) -> None:
    rid = record_id(home, WIKI)
    folder = home.root / "notes" / rid.removeprefix("mem:")
    kept = {p.name: p.read_bytes() for p in folder.iterdir()}
    with Memory.open(home.root) as memory:
        memory.erase([rid], reason="asked by the owner", authority="owner", now=T0 + timedelta(hours=1))
    for name, data in kept.items():  # the erased content put back from a backup
        (folder / name).write_bytes(data)
    for extra in sorted(folder.iterdir()):
        if extra.name not in kept:
            extra.unlink()


def edit_archive(home: Home) -> None:
    (path,) = (home.root / "archive").glob("*.md")
    path.write_text(path.read_text(encoding="utf-8").replace("db-2", "db-9"), encoding="utf-8")


def drop_index_trigger(home: Home) -> None:
    hot = home.root / "MEMORY.md"
    hot.write_text(hot.read_text(encoding="utf-8").replace("index.md", "the index"), encoding="utf-8")


def unlink_topic(home: Home) -> None:
    index = home.root / "index.md"
    index.write_text(
        re.sub(r"^- topics/.*$", "", index.read_text(encoding="utf-8"), flags=re.M), encoding="utf-8"
    )


def undate_topics(home: Home) -> None:
    for page in (home.root / "topics").glob("*.md"):
        page.write_text(
            re.sub(r"\d{4}-\d{2}-\d{2}", "some day", page.read_text(encoding="utf-8")), encoding="utf-8"
        )


def raw_line_in_memory_md(home: Home) -> None:
    (path,) = (home.root / "archive").glob("*.md")
    raw = next(line for line in path.read_text(encoding="utf-8").splitlines() if "db-2" in line)
    hot = home.root / "MEMORY.md"
    hot.write_text(hot.read_text(encoding="utf-8") + "\n" + raw + "\n", encoding="utf-8")


def delete_a_note(home: Home) -> None:
    shutil.rmtree(home.root / "notes" / record_id(home, TEA).removeprefix("mem:"))


def damage_a_note(home: Home) -> None:
    (path,) = (home.root / "notes" / record_id(home, TEA).removeprefix("mem:")).glob("*.md")
    path.write_bytes(path.read_bytes().replace(b"four", b"five"))


def empty_golden(home: Home) -> None:
    (home.root / "golden.yaml").write_text("[]\n", encoding="utf-8")


def no_inbox(home: Home) -> None:
    (home.root / "inbox.md").unlink()


def state_in_cache(home: Home) -> None:
    (home.root / ".cache" / "salience.json").write_text(
        '{"scores": {"mem:x": {"last_touched": "2026-11-29T09:00:00.000Z", "touches": 3}}}', encoding="utf-8"
    )


def cache_not_ignored(home: Home) -> None:
    (home.root / ".gitignore").write_text("*.tmp\n", encoding="utf-8")


def successor_gone(home: Home) -> None:
    with Memory.open(home.root) as memory:
        old = memory.remember("Staging is db-1.", source="t", kind="state", subject="host:staging").record_id
        new = memory.remember("Staging is db-2.", source="t", kind="state", subject="host:staging").record_id
    assert memory.get(old).superseded_by == new
    shutil.rmtree(home.root / "notes" / new.removeprefix("mem:"))


BREAKERS: dict[str, tuple[Callable[[Home], None], str]] = {
    "000 §21.2": (drop_index_trigger, "never mentions index.md"),
    "000 §21.3": (no_inbox, "inbox.md"),
    "000 §21.4": (edit_archive, "archive"),
    "000 §21.5": (delete_a_note, "missing from notes/"),
    "000 §21.6": (unlink_topic, "topics not linked"),
    "000 §21.7": (undate_topics, "without dated items"),
    "000 §21.8": (raw_line_in_memory_md, "raw archive lines"),
    "000 §21.10": (empty_golden, "no question"),
    "000 §21.11": (record_without_source, "no provenance source"),
    "000 §21.19": (withdraw_then_show, "withdrawn records appear in the views"),
    "000 §21.21": (tombstone_restored, "not a tombstone"),
    "003 MUST 1": (damage_a_note, "unreadable note"),
    "003 MUST 2": (state_in_cache, "deleting .cache/ would change recall"),
    "003 MUST 3": (tainted_in_memory_md, "unreviewed tainted records in MEMORY.md"),
    "003 MUST 4": (successor_gone, "superseded without a linked successor"),
    "003 MUST 5": (edit_archive, "archive"),
    "003 SHOULD 1": (empty_golden, "no question"),
}


def items(home: Home) -> dict[str, Item]:
    report = conformance(home)
    return {item.ref: item for item in (*report.checklist, *report.musts)}


def test_the_untouched_home_passes_every_item_doctor_judges(home: Home) -> None:
    judged = items(home)
    expected = {**dict.fromkeys(BREAKERS, PASS), "000 §21.21": NA}  # no erasure made yet
    assert {ref: judged[ref].status for ref in BREAKERS} == expected


@pytest.mark.parametrize("ref", sorted(BREAKERS))
def test_breaking_what_an_item_claims_makes_doctor_report_it(home: Home, ref: str) -> None:
    breaker, words = BREAKERS[ref]
    breaker(home)
    item = items(home)[ref]
    assert found(item) == FAIL, item
    assert words in item.reason


def test_a_cut_log_fails_memory_l1_and_the_log_check(home: Home) -> None:
    from agent_memory.doctor.diagnose import doctor

    cut_log_tail(home)
    report = doctor(home)
    (log,) = [c for c in report.checks if c.name == "log"]
    assert log.status == "fail" and any("its tail was cut" in line for line in log.details), log.details
    assert report.conformance is not None and report.conformance.levels[1][0] is False
    assert "the operation log verifies" in report.conformance.levels[1][1]


def test_deleting_cache_is_no_failure_and_doctor_still_passes_must_2(home: Home) -> None:
    shutil.rmtree(home.cache_dir)
    assert items(home)["003 MUST 2"].status == PASS

"""Doctor judges §21 items 9, 12-15, 17, 18 and 20 from the Home it runs on (issue 19 item 5).

One Home at memory:L5 does everything those items speak of — a consolidation proposal
accepted, an erasure, a promotion accepted and one pending, retrieval and feedback, a policy
proposal, a forget, exports — and passes each item. Every breaker then does to a private copy
exactly what one item says cannot happen; that item must be found failing, naming what
broke, and the other seven must still pass.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_memory.cli import cli
from agent_memory.doctor.checklist import FAIL, NA, PASS, Item
from agent_memory.doctor.conformance import conformance
from agent_memory.home import Home
from agent_memory.jobs.archive import archive_inbox
from agent_memory.jobs.inbox import capture
from agent_memory.jobs.views import render
from agent_memory.memory import Memory
from agent_memory.records import lifecycle
from agent_memory.records.record import State

T0 = datetime(2026, 11, 29, 9, tzinfo=UTC)
TEA = "Tea is served at four in the garden room."
WIKI = "The wiki lives at wiki.example, behind the VPN."
LINT = "Run the linter before every push."
CHECKED = ("000 §21.9", "000 §21.12", "000 §21.13", "000 §21.14", "000 §21.15", "000 §21.17")
CHECKED += ("000 §21.18", "000 §21.20")


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def export(home: Path, path: Path, *extra: str) -> None:
    result = CliRunner().invoke(cli, ["export", str(path), "--home", str(home), *extra])
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A rendered Home at memory:L5 that did what the eight items speak of, and passes them."""
    base = tmp_path_factory.mktemp("governed")
    config = base / "config"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(config))
        home = Home.init(base / "home", git=False, timezone="UTC", now=T0)
        capture(home, "Staging runs on db-2.", source="chat", at=T0)
        archive_inbox(home, now=at(1))
        with Memory.open(home.root) as memory:
            tea = memory.remember(TEA, source="archive/2026-11-29.md#mem-2026-11-29-001", now=at(2))
            wiki = memory.remember(WIKI, source="test", taint=["external"], now=at(3))
            memory.review(wiki.record_id, "approve", now=at(4))
            memory.remember("Deploys happen on Tuesdays", source="t", now=at(5))
            memory.remember("Deploys happen on Tuesdays.", source="t", now=at(6))
            lint = memory.remember(LINT, source="t", now=at(7))
            memory.maintenance.consolidate(now=at(8))
            (pending,) = memory.proposals.pending()
            assert memory.proposals.accept([pending.id], now=at(9)).done == [pending.id]
            retrieval = memory.metamemory.record_retrieval([tea.record_id], task_id="task-1", now=at(10))
            feedback = memory.metamemory.attribute_feedback(
                verdict="helpful",
                attribution_confidence="medium",
                retrieval_ref=retrieval.retrieval_id,
                now=at(11),
            )
            memory.metamemory.record_outcome("task-1", "succeeded", ["runtime:tea-check"], now=at(12))
            memory.metamemory.propose_policy_change(
                "retrieval-trigger:tea",
                "Ask about tea before scheduling.",
                [feedback.event_id, tea.record_id],
                expected_benefit="fewer clashes",
                risk="one more question",
                now=at(13),
            )
            promoted = memory.promotions.propose(tea.record_id, reason="asked three times", now=at(14))
            memory.promotions.accept(promoted.proposal_id, reason="the owner agrees", now=at(15))
            memory.promotions.propose(lint.record_id, reason="seen twice", now=at(16))
            memory.withdrawals.forget(memory_item_ids=[wiki.record_id], now=at(17))
            (doomed,) = [r for r in memory.store.list() if r.state is State.ACTIVE and "Deploys" in r.body]
            memory.erase([doomed.id], reason="asked by the owner", authority="owner", now=at(18))
        (home.root / "golden.yaml").write_text(
            "- query: when is tea served?\n  expect: {contains: four}\n", encoding="utf-8"
        )
        (home.root / "exports").mkdir()
        export(home.root, home.root / "exports" / "plain.json")
        export(home.root, home.root / "exports" / "all.json", "--include-withdrawn")
        render(home)
        report = conformance(home)
        assert report.label == "memory:L5", report.levels
    return base / "home", config


@pytest.fixture
def home(built: tuple[Path, Path], tmp_path: Path) -> Home:
    """A private copy of the L5 Home, with its key and checkpoint file."""
    root, config = built
    shutil.copytree(config, tmp_path / "config", dirs_exist_ok=True)
    shutil.copytree(root, tmp_path / "home")
    return Home.open(tmp_path / "home")


def found(item: Item) -> str:
    """The verdict found, also for an item shown not-applicable above the Home's level."""
    if item.status != NA:
        return item.status
    match = re.search(r"\(found: ([a-z-]+):", item.reason)
    return match.group(1) if match else NA


def items(home: Home) -> dict[str, Item]:
    return {item.ref: item for item in conformance(home).checklist}


def record_id(home: Home, body: str) -> str:
    (rid,) = [r.id for r in home.store().list() if r.body == body]
    return rid


def cleanup_without_plan(home: Home) -> None:
    """A cleanup applied straight from a pass, as if reviewed, with no proposal ever filed."""
    with Memory.open(home.root) as memory:
        rid = record_id(home, LINT)
        archived = memory.writer.sign(lifecycle.archive(memory.store.get(rid), "stale", now=at(30)))
        with home.writer_lock():
            memory.store.put(archived)
            home.log().append(
                "archive",
                actor="owner",
                record_ids=(rid,),
                details={"job": "review", "proposal_id": "cons-00000000deadbeef", "reason": "decay.archive"},
                now=at(30),
            )


def rule_written_without_decision(home: Home) -> None:
    """An agent with file access writes the pending proposal's rule into conventions.md itself."""
    (pending,) = [
        p
        for p in (home.root / "proposals" / "promotions").glob("*.md")
        if '"pending-review"' in p.read_text(encoding="utf-8")
    ]
    conventions = home.root / "conventions.md"
    line = f"- {LINT} (promoted from {record_id(home, LINT)} by {pending.stem})\n"
    conventions.write_text(conventions.read_text(encoding="utf-8") + line, encoding="utf-8")


def outcome_written_into_the_record(home: Home) -> None:
    """The outcome recorded by rewriting the retrieved record's note instead of beside it."""
    (path,) = (home.root / "notes" / record_id(home, TEA).removeprefix("mem:")).glob("*.md")
    path.write_bytes(path.read_bytes().replace(b"four", b"four (helpful on task-1)"))


def policy_applied_by_itself(home: Home) -> None:
    """A policy proposal marked applied after one helpful outcome, with no decision."""
    (path,) = (home.root / "proposals").glob("mempolicy-*.yaml")
    path.write_bytes(path.read_bytes().replace(b'"pending-review"', b'"accepted"'))


def policy_without_references(home: Home) -> None:
    """A policy change dropped into proposals/ by hand: no event, its one ref pointing nowhere."""
    text = (
        "# Memory policy proposal (seed 000 §23.5).\n"
        + "\n".join(
            f"{key}: {json.dumps(value)}"
            for key, value in {
                "proposal_id": "mempolicy-2026-11-30-001",
                "target": "conventions",
                "proposed_change": "Never ask about tea.",
                "supporting_refs": ["memfb-2026-11-30-009"],
                "expected_benefit": "quiet",
                "risk": "none",
                "status": "pending-review",
                "proposed_by": "agent:claude",
                "proposed_at": "2026-11-30T09:00:00.000Z",
            }.items()
        )
        + "\n"
    )
    (home.root / "proposals" / "mempolicy-2026-11-30-001.yaml").write_text(text, encoding="utf-8")


def pointer_stripped(home: Home) -> None:
    """The promoted rule kept in conventions.md with its source pointer removed."""
    conventions = home.root / "conventions.md"
    text = re.sub(
        r" \(promoted from mem:[0-9a-f]{32} by mempromo-[\d-]+\)", "", conventions.read_text("utf-8")
    )
    conventions.write_text(text, encoding="utf-8")


def copied_in_to_withdraw(home: Home) -> None:
    """A failed exploration captured into Memory only so that it can be withdrawn."""
    with Memory.open(home.root) as memory:
        rid = memory.remember("Tried the blue deploy path; abandoned.", source="t", now=at(40)).record_id
        memory.withdraw(memory_item_ids=[rid], reason="failed-exploration", now=at(40))


def export_keeps_withdrawn(home: Home) -> None:
    """An export made, then a record it holds withdrawn: the copy outside exposes it."""
    export(home.root, home.root / "exports" / "before.json")
    with Memory.open(home.root) as memory:
        memory.withdraw(memory_item_ids=[record_id(home, LINT)], reason="owner decision", now=at(50))


BREAKERS: dict[str, tuple[Callable[[Home], None], str]] = {
    "000 §21.9": (cleanup_without_plan, "which no maintenance run filed before it"),
    "000 §21.12": (rule_written_without_decision, "was written without a decision"),
    "000 §21.13": (outcome_written_into_the_record, "whose note no longer verifies"),
    "000 §21.14": (policy_applied_by_itself, "something changed policy without a recorded decision"),
    "000 §21.15": (policy_without_references, "which is no event in the log"),
    "000 §21.17": (pointer_stripped, "no longer names its source"),
    "000 §21.18": (copied_in_to_withdraw, "a copy made merely to withdraw it"),
    "000 §21.20": (export_keeps_withdrawn, "without the control that withdraws it"),
}


def test_the_home_that_did_everything_passes_each_item_with_what_it_found(home: Home) -> None:
    judged = items(home)
    assert {ref: judged[ref].status for ref in CHECKED} == dict.fromkeys(CHECKED, PASS), judged
    assert "1 cleanup write(s)" in judged["000 §21.9"].reason
    assert "1 erasure receipt(s)" in judged["000 §21.9"].reason
    assert "each of the 1 rule(s)" in judged["000 §21.12"].reason
    assert "retrieval x1, outcome x1, feedback x1" in judged["000 §21.13"].reason
    assert "not kept in a Home" in judged["000 §21.17"].reason  # said, not claimed as checked
    assert (
        "2 export(s) in the log" in judged["000 §21.20"].reason
        and "(1 carry controls)" in judged["000 §21.20"].reason
    )


@pytest.mark.parametrize("ref", sorted(BREAKERS))
def test_breaking_what_an_item_says_fails_that_item_and_no_other(home: Home, ref: str) -> None:
    breaker, words = BREAKERS[ref]
    breaker(home)
    judged = items(home)
    assert found(judged[ref]) == FAIL, judged[ref]
    assert words in judged[ref].reason
    others = {other: found(judged[other]) for other in CHECKED if other != ref}
    assert others == dict.fromkeys(others, PASS), {o: judged[o].reason for o in others}


def test_exporting_every_logged_file_again_after_the_withdrawal_passes_again(home: Home) -> None:
    export_keeps_withdrawn(home)
    reason = items(home)["000 §21.20"].reason
    assert all(f"export exports/{name}.json holds" in reason for name in ("plain", "all", "before"))
    export(home.root, home.root / "exports" / "plain.json")
    export(home.root, home.root / "exports" / "before.json")
    assert found(items(home)["000 §21.20"]) == FAIL  # all.json still carries only the older controls
    export(home.root, home.root / "exports" / "all.json", "--include-withdrawn")
    assert items(home)["000 §21.20"].status == PASS


def test_below_memory_l5_the_metamemory_items_say_what_they_found(home: Home) -> None:
    (home.root / "golden.yaml").write_text("[]\n", encoding="utf-8")  # L4 no longer met
    policy_applied_by_itself(home)
    judged = items(home)
    assert judged["000 §21.14"].status == NA and found(judged["000 §21.14"]) == FAIL

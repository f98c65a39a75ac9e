"""Distill with the heuristic operator: archived lines become proposals anchored into the archive."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from jobkit import T0, at, snapshot

from agent_memory.errors import ConfigError
from agent_memory.home import Home
from agent_memory.jobs.archive import archive_inbox
from agent_memory.jobs.distill import read_ledger
from agent_memory.jobs.distill_rules import HeuristicOperator
from agent_memory.jobs.inbox import InboxItem, capture
from agent_memory.jobs.pending import PENDING_FOLDER, load_pending
from agent_memory.memory import Memory
from agent_memory.records.record import EpistemicStatus, Kind, RecordType, Scope, State
from agent_memory.search.recipes import SearchSettings, splice_search

RUN = at(hours=2)  # 2026-11-30 01:30 in Tokyo; the lines were captured on 2026-11-29 there
ACCEPT = at(hours=3)


def bm25(home: Home) -> Memory:
    toml = home.root / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
    return Memory.open(home.root)


def archived(home: Home, *lines: tuple[str, dict[str, object]]) -> list[InboxItem]:
    """Capture each ``(text, options)`` at T0 and archive the inbox an hour later."""
    items = [capture(home, text, source=f"chat:{n}", at=T0, **opts) for n, (text, opts) in enumerate(lines)]  # type: ignore[arg-type]
    archive_inbox(home, now=at(hours=1))
    return items


def test_the_heuristic_keeps_statements_and_drops_chit_chat_and_questions() -> None:
    keep = HeuristicOperator.keep
    assert keep("Caroline: Hey Mel! Good to see you! How have you been?") is None
    assert keep("Thanks, Melanie! That's really sweet. Is this your own painting?") is None
    line = "Melanie: Yeah, I painted that lake sunrise last year! It's special to me."
    assert keep(line) == "Melanie: Yeah, I painted that lake sunrise last year!"
    whole = "The staging database runs Postgres 16 on db-4."
    assert keep(whole) == whole


def test_the_heuristic_types_preferences_decisions_procedures_and_events() -> None:
    lines = [
        InboxItem(1, T0.date(), f"mem-2026-11-29-00{n}", Kind.KNOWLEDGE, text, "s", None, (), "")
        for n, text in enumerate(
            [
                "Ada prefers green tea in the morning.",
                "We decided to ship the importer on Friday.",
                "How to rotate the key: run agent-memory init-key.",
                "The deploy to staging failed twice last night.",
                "Staging runs Postgres 16.",
            ],
            start=1,
        )
    ]
    found = HeuristicOperator().extract(lines)
    assert [(c.type, c.tags, c.scope, c.rule) for c in found.candidates] == [
        ("preference", (), Scope.USER_PREFERENCE, "preference"),
        ("fact", ("decision",), None, "decision"),
        ("procedure", (), None, "procedure"),
        ("episode", (), None, "event"),
        ("fact", (), None, "fact"),
    ]
    assert [c.text for c in found.candidates] == [line.text for line in lines]


def test_distill_proposes_records_anchored_into_the_archive_carrying_the_line(home: Home) -> None:
    items = archived(
        home,
        ("Ada prefers green tea in the morning.", {"taint": ["external"]}),
        ("Staging runs on db-4.", {"kind": "state", "subject": "host:staging"}),
        ("Hey! Thanks so much!", {}),
    )
    memory = bm25(home)
    report = memory.maintenance.distill(now=RUN)
    assert len(report.proposals) == 2 and report.skipped == {items[2].anchor: report.skipped[items[2].anchor]}
    records = {p.anchors[0]: p.proposals[0].record for p in report.proposals}
    tea, host = records[items[0].anchor], records[items[1].anchor]
    assert tea is not None and host is not None
    assert (tea.provenance.kind, tea.provenance.ref) == (
        "distill",
        "archive/2026-11-29.md#mem-2026-11-29-001",
    )
    assert tea.taint == ("external",) and tea.type is RecordType.FACT and "preference" in tea.tags
    assert tea.sources == ("chat:0",) and tea.body == items[0].text
    assert tea.occurred_at == datetime(2026, 11, 28, 15, tzinfo=UTC)  # midnight in Tokyo
    assert (host.kind, host.subject, host.taint) == (Kind.STATE, "host:staging", None)
    assert tea.signed_by is not None and tea.epistemic_status is None
    assert [p.id for p in load_pending(home.root / PENDING_FOLDER)] == sorted(p.id for p in report.proposals)
    assert all(p.id.startswith("dist-") for p in report.proposals)
    assert memory.store.list() == []  # proposals only: nothing is applied
    (event,) = [e for e in memory.log.entries() if e.action == "distill"]
    assert event.seq == report.log_seq and items[0].text not in str(event.details)
    assert set(read_ledger(memory.log)) == {i.anchor for i in items}


def test_a_second_run_reads_nothing_again_and_a_dry_run_writes_nothing(home: Home) -> None:
    archived(home, ("Ada prefers green tea in the morning.", {}))
    memory = bm25(home)
    before = snapshot(home.root)
    dry = memory.maintenance.distill(now=RUN, dry_run=True)
    assert len(dry.proposals) == 1 and dry.log_seq is None
    assert {k: v for k, v in snapshot(home.root).items() if not k.startswith(".cache")} == {
        k: v for k, v in before.items() if not k.startswith(".cache")
    }
    memory.maintenance.distill(now=RUN)
    again = memory.maintenance.distill(now=at(hours=4))
    assert again.proposals == [] and again.to_json()["stats"]["already_distilled"] == 1


def test_distill_never_writes_the_inbox_conventions_or_archive(home: Home) -> None:
    archived(home, ("Ada prefers green tea in the morning.", {}))
    capture(home, "A line still in the live inbox.", source="chat:9", at=at(hours=1))
    guarded = ("inbox.md", "conventions.md", "archive/2026-11-29.md")
    before = {name: (home.root / name).read_bytes() for name in guarded}
    report = bm25(home).maintenance.distill(now=RUN)
    assert [p.anchors for p in report.proposals] == [("archive/2026-11-29.md#mem-2026-11-29-001",)]
    assert {name: (home.root / name).read_bytes() for name in guarded} == before


def test_withdrawn_archive_lines_are_skipped_before_reading_and_come_back_when_reinstated(home: Home) -> None:
    items = archived(home, ("Ada prefers green tea.", {}), ("Bo prefers coffee.", {}))
    memory = bm25(home)
    control = memory.withdraw(archive_refs=[items[0].anchor], reason="failed-exploration", now=at(hours=1.5))
    report = memory.maintenance.distill(now=RUN)
    assert [a for a, _ in report.selection.withdrawn] == [items[0].anchor]
    assert control.withdrawal_id in report.selection.withdrawn[0][1]
    assert [p.anchors for p in report.proposals] == [(items[1].anchor,)]
    memory.reinstate(control.withdrawal_id, "back in use", now=at(hours=3))
    later = memory.maintenance.distill(now=at(hours=4))
    assert [p.anchors for p in later.proposals] == [(items[0].anchor,)]


def test_an_edited_archive_file_is_not_read_and_is_reported(home: Home) -> None:
    archived(home, ("Ada prefers green tea.", {}))
    path = home.root / "archive" / "2026-11-29.md"
    path.write_text(path.read_text("utf-8").replace("green", "black"), "utf-8")
    report = bm25(home).maintenance.distill(now=RUN)
    assert report.proposals == [] and report.selection.total == 0
    assert ["archive/2026-11-29.md: edited" in p for p in report.selection.problems] == [True]


def test_a_line_already_remembered_with_the_same_text_is_held_not_proposed(home: Home) -> None:
    items = archived(home, ("Ada prefers green tea.", {}))
    memory = bm25(home)
    held = memory.remember("Ada prefers green tea.", source="chat:0", type="preference", now=T0)
    report = memory.maintenance.distill(now=RUN)
    assert report.proposals == [] and report.held == {items[0].anchor: held.record_id}


def test_a_state_line_supersedes_only_its_exact_subject_and_a_revert_brings_the_old_value_back(
    home: Home,
) -> None:
    memory = bm25(home)
    old = memory.remember(
        "Staging runs on db-3.", source="s", kind="state", subject="host:staging", now=at(hours=-24)
    )
    other = memory.remember(
        "Prod runs on db-1.", source="s", kind="state", subject="host:prod", now=at(hours=-24)
    )
    items = archived(
        home,
        ("Staging runs on db-4.", {"kind": "state", "subject": "host:staging"}),
        ("Staging runs on db-5.", {"kind": "state", "subject": "host:staging"}),
    )
    (chain,) = memory.maintenance.distill(now=RUN).proposals
    assert chain.action == "supersede" and chain.anchors == tuple(i.anchor for i in items)
    assert old.record_id in chain.basis
    outcome = memory.proposals.accept([chain.id], now=ACCEPT)
    assert outcome.done == [chain.id]
    live = memory.store.list(kind=Kind.STATE, subject="host:staging", state=State.ACTIVE)
    assert [r.body for r in live] == ["Staging runs on db-5."]
    assert memory.get(old.record_id).state is State.SUPERSEDED
    assert memory.get(other.record_id).state is State.ACTIVE
    memory.proposals.revert(chain.id, now=at(hours=4))
    live = memory.store.list(kind=Kind.STATE, subject="host:staging", state=State.ACTIVE)
    assert [(r.body, r.provenance) for r in live] == [
        ("Staging runs on db-3.", memory.get(old.record_id).provenance)
    ]
    assert live[0].state_reason == f"restored {old.record_id} by reverting maintenance proposal {chain.id}"
    chained = [i for i in chain.record_ids if i != old.record_id]
    assert {memory.get(i).state for i in chained} == {State.SUPERSEDED}


def test_a_tainted_state_line_proposes_a_dispute_and_its_revert_restores_the_old_value(home: Home) -> None:
    memory = bm25(home)
    old = memory.remember(
        "Staging runs on db-3.", source="s", kind="state", subject="host:staging", now=at(hours=-24)
    )
    archived(
        home, ("Staging runs on db-9.", {"kind": "state", "subject": "host:staging", "taint": ["external"]})
    )
    (dispute,) = memory.maintenance.distill(now=RUN).proposals
    assert dispute.action == "dispute"
    memory.proposals.accept([dispute.id], now=ACCEPT)
    assert memory.get(old.record_id).state is State.TRANSITIONAL
    new_id = next(i for i in dispute.record_ids if i != old.record_id)
    memory.proposals.revert(dispute.id, now=at(hours=4))
    assert memory.get(old.record_id).state is State.ACTIVE
    assert memory.get(new_id).state is State.SUPERSEDED
    assert memory.status()["maintenance"]["regret_rate"] == 1.0


def test_accept_refuses_a_value_whose_subject_got_another_value_meanwhile(home: Home) -> None:
    archived(home, ("Staging runs on db-4.", {"kind": "state", "subject": "host:staging"}))
    memory = bm25(home)
    (proposal,) = memory.maintenance.distill(now=RUN).proposals
    memory.remember("Staging runs on db-7.", source="s", kind="state", subject="host:staging", now=RUN)
    outcome = memory.proposals.accept([proposal.id], now=ACCEPT)
    ((_, reason),) = outcome.refused
    assert "subject host:staging would have 2 active values" in reason
    assert [r.body for r in memory.store.list(subject="host:staging")] == ["Staging runs on db-7."]


def test_accept_refuses_a_proposal_whose_line_was_withdrawn_after_the_run(home: Home) -> None:
    items = archived(home, ("Ada prefers green tea.", {}))
    memory = bm25(home)
    (proposal,) = memory.maintenance.distill(now=RUN).proposals
    memory.withdraw(archive_refs=["archive/2026-11-29.md"], reason="failed-exploration", now=RUN)
    outcome = memory.proposals.accept([proposal.id], now=ACCEPT)
    ((_, reason),) = outcome.refused
    assert reason.startswith("withdrawn: withdrawn by memwd-") and items[0].text not in reason
    assert memory.store.list() == [] and proposal.id in {p.id for p in memory.proposals.pending()}


def test_distill_needs_a_home(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="archive/"):
        Memory.in_memory().maintenance.distill(now=RUN)


def test_an_unknown_operator_name_is_refused_before_anything_is_read(home: Home) -> None:
    with pytest.raises(ConfigError, match="unknown distill operator 'magic'"):
        bm25(home).maintenance.distill(operator="magic", now=RUN)
    with pytest.raises(ConfigError, match=r"no \[llm\] table"):
        bm25(home).maintenance.distill(operator="llm", now=RUN)


def test_generated_marks_are_only_on_the_llm_operators_candidates(home: Home) -> None:
    archived(home, ("Ada prefers green tea.", {}))
    (proposal,) = bm25(home).maintenance.distill(now=RUN).proposals
    record = proposal.proposals[0].record
    assert record is not None and record.provenance.kind == "distill"
    assert record.epistemic_status is not EpistemicStatus.INFERRED


def test_a_line_an_erasure_redacted_is_not_distilled_into_its_marker(home: Home) -> None:
    items = archived(home, ("Ada keeps the spare key under the blue pot.", {}), ("Bo prefers coffee.", {}))
    memory = bm25(home)
    made = memory.remember(items[0].text, source=items[0].anchor, now=at(hours=1, days=0))
    memory.erase([made.record_id], reason="user request", authority="ada", now=at(hours=1.5))
    report = memory.maintenance.distill(now=RUN)
    assert [p.anchors for p in report.proposals] == [(items[1].anchor,)]
    assert dict(report.selection.withdrawn) == {items[0].anchor: "erased: a redaction line"}
    assert all(
        "erased by" not in (p.proposals[0].record.body if p.proposals[0].record else "")
        for p in report.proposals
    )

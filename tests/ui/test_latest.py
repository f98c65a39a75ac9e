"""The page's record list follows writes of this process and of others without reading every note again."""

from __future__ import annotations

import json

import pytest
from uikit import Filled

from agent_memory.memory import Memory
from agent_memory.ui.latest import LatestRecords
from agent_memory.ui.opened import OpenedMemory


def test_a_home_list_takes_in_records_another_process_writes_and_supersedes(
    filled: Filled, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", filled.env["XDG_CONFIG_HOME"])
    opened = OpenedMemory.open(filled.root)
    try:
        before = {r.id: r for r in opened.latest.current()}
        assert before[filled.plain].state.value == "active"
        new = filled.ok("remember", "Backups run at two in the morning").strip()
        replacement = filled.ok(
            "supersede", filled.plain, "Deploys happen on Wednesdays", "--reason", "moved"
        ).strip()
        after = {r.id: r for r in opened.latest.current()}
        assert new in after and replacement in after
        assert after[filled.plain].state.value == "superseded"
        assert set(after) == {r["id"] for r in json.loads(filled.ok("list", "--json"))}
        assert opened.latest.current() is opened.latest.current()  # nothing moved: the same list
    finally:
        opened.close()


def test_a_change_feed_store_list_follows_its_writes() -> None:
    memory = Memory.in_memory()
    latest = LatestRecords(memory)
    assert latest.current() == []
    first = memory.remember("Staging runs on db-3", source="test:1", kind="state", subject="host:staging")
    second = memory.remember("Staging runs on db-4", source="test:2", kind="state", subject="host:staging")
    states = {r.id: r.state.value for r in latest.current()}
    assert states == {first.record_id: "superseded", second.record_id: "active"}
    memory.archive(second.record_id, "retired")
    assert {r.id: r.state.value for r in latest.current()}[second.record_id] == "archived"


def test_a_note_edited_by_hand_reads_as_stale_until_sync_makes_it_a_version(
    filled: Filled, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", filled.env["XDG_CONFIG_HOME"])
    opened = OpenedMemory.open(filled.root)
    try:
        held = {r.id: r for r in opened.latest.current()}
        assert opened.latest.stale(held) == set()
        note = filled.root / "notes" / filled.plain.removeprefix("mem:") / "000001.md"
        note.write_text(note.read_text(encoding="utf-8").replace("Tuesdays", "Thursdays"), encoding="utf-8")
        assert {r.id: r for r in opened.latest.current()} == held  # not followed: nothing logged
        assert opened.latest.stale(held) == {filled.plain}
        filled.ok("sync")
        after = {r.id: r for r in opened.latest.current()}
        assert after[filled.plain].state.value == "superseded"
        assert opened.latest.stale(after) == set()
    finally:
        opened.close()


def test_a_change_feed_store_has_nothing_stale() -> None:
    memory = Memory.in_memory()
    made = memory.remember("Staging runs on db-3", source="test:1")
    latest = LatestRecords(memory)
    latest.current()
    assert latest.stale([made.record_id]) == set()

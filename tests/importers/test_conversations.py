"""LoCoMo and LongMemEval importers: episodes per turn, dated, sourced, idempotent, no answer leakage,
quarantined unless trusted."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, cast
from zoneinfo import ZoneInfo

import pytest
from importkit import LOCOMO, LONGMEMEVAL, ZONE, write_json

from agent_memory.importers import import_path
from agent_memory.memory import Memory


def _bodies(memory: Memory) -> dict[str, str]:
    return {r.provenance.ref or "": r.body for r in memory.store.list()}


def _all_text(root: Path) -> str:
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace")
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.parts
    )


def test_locomo_turns_become_dated_episodes_sourced_to_their_dialogue_ids(home: Path, tmp_path: Path) -> None:
    path = write_json(tmp_path / "locomo.json", LOCOMO)
    with Memory.open(home, source_kind="import") as memory:
        report = import_path(memory, "locomo", path)
        bodies = _bodies(memory)
        first = memory.get(report.held["locomo.json#conv-9/D1:1"])
    assert report.error is None and report.read == 3 and len(report.added) == 3
    assert bodies["locomo.json#conv-9/D1:1"] == "Ana: I adopted a grey cat called Pebble."
    assert (
        bodies["locomo.json#conv-9/D1:2"]
        == "Ben: Lovely! Send a photo. [shares a photo of a grey cat on a sofa]"
    )
    assert first.type.value == "episode"
    assert first.occurred_at == datetime(2023, 5, 8, 13, 56, tzinfo=ZoneInfo(ZONE))


def test_longmemeval_turns_skip_empty_ones_and_are_sourced_by_json_position(
    home: Path, tmp_path: Path
) -> None:
    path = write_json(tmp_path / "lme.json", LONGMEMEVAL)
    with Memory.open(home, source_kind="import") as memory:
        report = import_path(memory, "longmemeval", path)
        bodies = _bodies(memory)
        moved = memory.get(report.held["lme.json#/0/haystack_sessions/1/0"])
    assert report.read == 3, "the blanked assistant turn is skipped"
    assert bodies["lme.json#/0/haystack_sessions/1/0"] == "User: I just moved to Porto and love the tiles."
    assert bodies["lme.json#/0/haystack_sessions/1/1"] == "Assistant: Porto is lovely in spring."
    assert moved.occurred_at == datetime(2023, 5, 22, 18, 0, tzinfo=ZoneInfo(ZONE))


def test_importing_a_conversation_file_twice_adds_nothing(home: Path, tmp_path: Path) -> None:
    path = write_json(tmp_path / "locomo.json", LOCOMO)
    with Memory.open(home, source_kind="import") as memory:
        import_path(memory, "locomo", path)
        before = sorted(r.id for r in memory.store.list())
        again = import_path(memory, "locomo", path)
        after = sorted(r.id for r in memory.store.list())
    assert again.added == [] and again.present == 3
    assert after == before


def test_gold_labels_never_reach_notes_log_or_cache(home: Path, tmp_path: Path) -> None:
    with Memory.open(home, source_kind="import") as memory:
        import_path(memory, "locomo", write_json(tmp_path / "locomo.json", LOCOMO))
        import_path(memory, "longmemeval", write_json(tmp_path / "lme.json", LONGMEMEVAL))
        hits = memory.recall("Porto tiles cat Pebble", k=10)
    assert hits.records, "the index was built, so .cache holds the indexed text"
    text = _all_text(home)
    assert "Porto" in text and (home / ".cache").exists()
    for label in (
        "answer_",
        "has_answer",
        "ZEBRA-ANSWER",
        "OBSERVED-LEAK",
        "SUMMARY-LEAK",
        "q1abc",
        "sharegpt_x1",
    ):
        assert label not in text, label


def test_a_malformed_file_is_reported_and_the_next_file_still_imports(home: Path, tmp_path: Path) -> None:
    sample = cast(dict[str, Any], LOCOMO[0])
    broken = [{**sample, "conversation": {**sample["conversation"], "session_2_date_time": "someday"}}]
    bad = write_json(tmp_path / "bad.json", broken)
    good = write_json(tmp_path / "locomo.json", LOCOMO)
    with Memory.open(home, source_kind="import") as memory:
        failed = import_path(memory, "locomo", bad)
        count_after_failure = len(memory.store.list())
        ok = import_path(memory, "locomo", good)
    assert failed.error is not None and "bad.json" in failed.error and "session_2_date_time" in failed.error
    assert count_after_failure == 0, "a file that fails writes nothing"
    assert len(ok.added) == 3


def test_a_file_that_is_not_json_names_the_file(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text("{not json", encoding="utf-8")
    with Memory.open(home, source_kind="import") as memory:
        report = import_path(memory, "longmemeval", str(path))
        assert memory.store.list() == []
    assert report.error is not None and str(path) in report.error and "not a JSON file" in report.error


def test_a_refused_item_is_listed_and_the_rest_of_the_file_imports(home: Path, tmp_path: Path) -> None:
    data = [dict(LONGMEMEVAL[0])]
    leaked = "my key is AKIAIOSFODNN7EXAMPLE please keep it"
    data[0]["haystack_sessions"] = [
        [{"role": "user", "content": leaked}],
        *LONGMEMEVAL[0]["haystack_sessions"][1:],
    ]
    data[0]["haystack_dates"] = LONGMEMEVAL[0]["haystack_dates"]
    with Memory.open(home, source_kind="import") as memory:
        report = import_path(memory, "longmemeval", write_json(tmp_path / "lme.json", data))
        bodies = list(_bodies(memory).values())
    assert all("AKIAIOSFODNN7EXAMPLE" not in body for body in bodies)
    assert len(report.added) + len(report.errors) == 3


@pytest.mark.parametrize("fmt", ["locomo", "longmemeval", "git"])
def test_dataset_and_repository_imports_are_quarantined_unless_trusted(
    tmp_path: Path, repo: Path, fmt: str
) -> None:
    # Issue 11 item 4: a conversation turn or a commit message is outside content like any note.
    path = {
        "locomo": lambda: write_json(tmp_path / "locomo.json", LOCOMO),
        "longmemeval": lambda: write_json(tmp_path / "lme.json", LONGMEMEVAL),
        "git": lambda: str(repo),
    }[fmt]()
    with Memory.in_memory(source_kind="import") as memory:
        report = import_path(memory, fmt, path)
        tainted = [memory.get(record_id) for record_id in report.added]
        recalled = memory.recall(tainted[0].body, k=3, touch=False)
        event = [e for e in memory.log.entries() if e.action == "import"][-1]
    assert tainted and all(r.taint == ("external",) for r in tainted)
    assert recalled.records and all(hit.review == "quarantined" for hit in recalled.records)
    assert event.details["taint"] == ["external"] and event.details["trusted"] is False
    with Memory.in_memory(source_kind="import") as memory:
        report = import_path(memory, fmt, path, trust=True)
        trusted = [memory.get(record_id) for record_id in report.added]
        event = [e for e in memory.log.entries() if e.action == "import"][-1]
    assert len(trusted) == len(tainted) and all(r.taint is None for r in trusted)
    assert event.details["taint"] == [] and event.details["trusted"] is True

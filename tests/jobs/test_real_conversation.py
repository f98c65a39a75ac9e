"""Capture and archive the turns of a real LoCoMo conversation (read in place from ../shared)."""

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from agent_memory.home import Home
from agent_memory.jobs.archive import archive_inbox, check_archive, find_anchor
from agent_memory.jobs.inbox import capture, read_inbox

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "locomo" / "locomo.json"


@pytest.fixture(scope="module")
def conversation() -> dict[str, Any]:
    if not LOCOMO.exists():
        pytest.skip(f"the LoCoMo conversations are not at {LOCOMO} (../shared is absent)")
    data: list[dict[str, Any]] = json.loads(LOCOMO.read_text(encoding="utf-8"))
    return data[0]["conversation"]


def test_real_turns_survive_capture_and_archive_byte_for_byte_behind_stable_anchors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, conversation: dict[str, Any]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    home = Home.init(tmp_path / "home", timezone="America/New_York", git=False)
    captured = []
    for session in (1, 2, 3):
        # "1:56 pm on 8 May, 2023": no zone, so it is read in the Home's zone.
        when = datetime.strptime(conversation[f"session_{session}_date_time"], "%I:%M %p on %d %B, %Y")
        for turn in conversation[f"session_{session}"]:
            text = " ".join(turn["text"].split())
            item = capture(
                home, f"{turn['speaker']}: {text}", source=f"locomo:conv-26#{turn['dia_id']}", at=when
            )
            captured.append(item)
    assert not read_inbox(home).problems
    assert len({item.id for item in captured}) == len(captured) > 40
    result = archive_inbox(home)
    assert len(result.item_ids) == len(captured) and len(result.segments) == 3
    for item in captured:
        archived = find_anchor(home, item.anchor)
        assert (archived.id, archived.text, archived.source) == (item.id, item.text, item.source)
    assert check_archive(home) == []

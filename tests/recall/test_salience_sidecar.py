"""The salience sidecar (salience.py): each entry rendered once, the file as ``json.dumps`` writes it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from agent_memory.recall.salience import Salience

T1, T2 = datetime(2026, 1, 2, tzinfo=UTC), datetime(2026, 1, 3, 4, 5, 6, 789000, tzinfo=UTC)


def test_the_sidecar_is_the_sorted_json_of_every_count_and_reads_back_the_same(tmp_path: Path) -> None:
    path = tmp_path / "salience.json"
    salience = Salience(path, save_interval=0)
    ids = ["mem:" + "b" * 32, "mem:" + "a" * 32, 'odd "id" \\ é']
    salience.touch(ids, now=T1)
    salience.touch(ids[:1], now=T2)
    salience.forget(ids[1:2])
    expected = {
        ids[0]: {"touches": 2, "last_touched": "2026-01-03T04:05:06.789Z"},
        ids[2]: {"touches": 1, "last_touched": "2026-01-02T00:00:00.000Z"},
    }
    assert path.read_text(encoding="utf-8") == json.dumps({"scores": expected}, sort_keys=True)
    again = Salience(path)
    assert [again.count(i) for i in ids] == [2, 0, 1] and again.get(ids[0]) == salience.get(ids[0])


def test_an_empty_sidecar_is_written_as_no_scores(tmp_path: Path) -> None:
    path = tmp_path / "salience.json"
    salience = Salience(path, save_interval=0)
    salience.touch(["mem:" + "c" * 32], now=T1)
    salience.forget(["mem:" + "c" * 32])
    assert json.loads(path.read_text(encoding="utf-8")) == {"scores": {}}
